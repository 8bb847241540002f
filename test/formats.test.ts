/**
 * The native-format adapters: OpenAI Chat Completions, Anthropic Messages and the AI SDK's
 * ModelMessage, repaired with the same engine, policy and telemetry as the middleware.
 */
import type { MessageParam } from "@anthropic-ai/sdk/resources/messages";
import type { ModelMessage } from "ai";
import type { ChatCompletionMessageParam } from "openai/resources/chat/completions";
import { describe, expect, expectTypeOf, it, vi } from "vitest";
import { AI_SDK_MARKER_KEY, modelMessageFormat } from "../src/formats/ai-sdk.js";
import { anthropicFormat } from "../src/formats/anthropic.js";
import { repairInFormat } from "../src/formats/format.js";
import type { MessageFormat, RepairedItem } from "../src/formats/message-format.js";
import { openAIChatFormat } from "../src/formats/openai-chat.js";
import {
  repairAnthropicMessages,
  repairModelMessages,
  repairOpenAIChatMessages,
  ToolCallResilienceOptionsError,
} from "../src/index.js";
import {
  METRIC_DANGLING_TOOL_CALLS,
  METRIC_MODEL_CALLS,
  METRIC_THREAD_RECENT_DANGLING_TOOL_CALLS,
} from "../src/telemetry/semconv.js";
import { aiSdkRefusal } from "./helpers/native-formats.js";
import { anthropicViolations, openAIViolations } from "./helpers/provider-rules.js";
import { metricsHarness } from "./helpers/telemetry.js";

const quiet = { logger: false } as const;

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object") {
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
    Object.freeze(value);
  }
  return value;
}

const openAICall = (id: string, name = "search", args = "{}") => ({
  id,
  type: "function",
  function: { name, arguments: args },
});

describe("repairOpenAIChatMessages", () => {
  const dangling = () =>
    deepFreeze([
      { role: "system", content: "Be brief." },
      { role: "user", content: "Find x and y" },
      { role: "assistant", content: null, tool_calls: [openAICall("a"), openAICall("b", "fetch")] },
      { role: "tool", tool_call_id: "a", content: "x found" },
      { role: "user", content: "Go on" },
    ]);

  it("answers a call without a result right after its assistant message, and OpenAI accepts it", () => {
    const history = dangling();
    expect(openAIViolations(history)).not.toEqual([]);
    const { messages, repairs } = repairOpenAIChatMessages(history, quiet);
    expect(openAIViolations(messages)).toEqual([]);
    expect(messages[4]).toEqual({
      role: "tool",
      tool_call_id: "b",
      content: "[Tool call was interrupted and did not return a result.]",
    });
    expect(repairs).toEqual([
      expect.objectContaining({
        kind: "placeholder_inserted",
        toolCallId: "b",
        toolName: "fetch",
        callIndex: 2,
        outputIndex: 4,
      }),
    ]);
  });

  it("keeps every message that needed nothing as the same object, and never mutates the input", () => {
    const history = dangling();
    const { messages } = repairOpenAIChatMessages(history, quiet);
    for (const index of [0, 1, 2, 3]) expect(messages[index]).toBe(history[index]);
    expect(messages[5]).toBe(history[4]);
  });

  it("returns the very same array when nothing needs repair", () => {
    const history = deepFreeze([
      { role: "user", content: "Find x" },
      { role: "assistant", content: null, tool_calls: [openAICall("a")] },
      { role: "tool", tool_call_id: "a", content: "x" },
    ]);
    const result = repairOpenAIChatMessages(history, quiet);
    expect(result.messages).toBe(history);
    expect(result.repairs).toEqual([]);
  });

  it("is idempotent: the repaired history comes back as it is", () => {
    const { messages } = repairOpenAIChatMessages(dangling(), quiet);
    expect(repairOpenAIChatMessages(messages, quiet).messages).toBe(messages);
  });

  it("drops orphans, moves misplaced results back and gives calls without an id one", () => {
    const history = deepFreeze([
      { role: "tool", tool_call_id: "ghost", content: "orphan" },
      { role: "assistant", content: null, tool_calls: [openAICall("a")] },
      { role: "user", content: "hurry" },
      { role: "tool", tool_call_id: "a", content: "late" },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ type: "function", function: { name: "f", arguments: "{}" } }],
      },
    ]);
    const { messages, repairs } = repairOpenAIChatMessages(history, quiet);
    expect(openAIViolations(messages)).toEqual([]);
    expect(messages.map((message) => (message as { role: string }).role)).toEqual([
      "assistant",
      "tool",
      "user",
      "assistant",
      "tool",
    ]);
    expect(messages[1]).toBe(history[3]);
    const assigned = (messages[3] as { tool_calls: { id: string }[] }).tool_calls[0]?.id;
    expect(assigned).toMatch(/^tcr_/);
    expect(messages[4]).toMatchObject({ role: "tool", tool_call_id: assigned });
    expect(repairs.map((repair) => repair.kind).sort()).toEqual([
      "id_assigned",
      "orphan_dropped",
      "placeholder_inserted",
      "result_moved",
    ]);
    expect(repairs.find((repair) => repair.kind === "orphan_dropped")?.resultIndex).toBe(0);
  });

  it("tells a call whose arguments were cut off from one that was interrupted", () => {
    const history = [
      { role: "assistant", content: null, tool_calls: [openAICall("a", "search", '{"q": "x')] },
    ];
    const { messages, repairs } = repairOpenAIChatMessages(history, quiet);
    expect(repairs[0]?.reason).toBe("invalid_arguments");
    expect((messages[1] as { content: string }).content).toBe(
      "[Tool call was not run: its arguments could not be parsed.]",
    );
  });

  it("follows the policy: templates, a locale per call, a window", () => {
    const options = { ...quiet, placeholder: "{tool_name} ({tool_call_id}) never answered" };
    const templated = repairOpenAIChatMessages(dangling(), options).messages[4];
    expect((templated as { content: string }).content).toBe("fetch (b) never answered");
    const german = repairOpenAIChatMessages(dangling(), quiet, { locale: "de" }).messages[4];
    expect((german as { content: string }).content).not.toBe(
      "[Tool call was interrupted and did not return a result.]",
    );
    // Only the last two messages are looked at: the call before them is left as it is.
    const windowed = repairOpenAIChatMessages(dangling(), { ...quiet, window: 2 });
    expect(windowed.repairs).toEqual([]);
  });

  it("refuses bad options at once, naming them", () => {
    expect(() => repairOpenAIChatMessages([], { window: 0 })).toThrow(
      ToolCallResilienceOptionsError,
    );
    expect(() => repairOpenAIChatMessages([], { window: 0 })).toThrow(/window/);
    expect(() => repairOpenAIChatMessages([], { placeholder: "{nope}" } as never)).toThrow(/nope/);
  });

  it("records the repair with the same metrics as the middleware, per model, tool and thread", async () => {
    const harness = metricsHarness();
    const options = { ...quiet, meterProvider: harness.meterProvider };
    const context = {
      threadId: "thread-7",
      model: "gpt-4.1",
      tools: [{ type: "function", function: { name: "fetch" } }],
    };
    repairOpenAIChatMessages(dangling(), options, context);
    repairOpenAIChatMessages(dangling(), options, context); // the same call again: counted once
    expect(
      await harness.sum(METRIC_DANGLING_TOOL_CALLS, {
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "gpt-4.1",
        "gen_ai.tool.name": "fetch",
      }),
    ).toBe(1);
    expect(
      await harness.sum(METRIC_THREAD_RECENT_DANGLING_TOOL_CALLS, {
        "gen_ai.conversation.id": "thread-7",
      }),
    ).toBe(1);
    expect(
      await harness.sum(METRIC_MODEL_CALLS, { "tool_call_resilience.outcome": "repaired" }),
    ).toBe(2);
    await harness.shutdown();
  });

  it("fails open: a history it cannot read comes back unchanged, logged and counted", async () => {
    const harness = metricsHarness();
    const logger = { warn: vi.fn(), error: vi.fn() };
    const hostile = {
      get role(): string {
        throw new Error("no reading me");
      },
    };
    const history = [{ role: "user", content: "hi" }, hostile];
    const result = repairOpenAIChatMessages(history, {
      logger,
      meterProvider: harness.meterProvider,
    });
    expect(result.messages).toBe(history);
    expect(logger.error).toHaveBeenCalledWith(
      expect.stringContaining("failed; passing the messages on unchanged"),
      expect.objectContaining({ error: expect.any(Error) }),
    );
    expect(
      await harness.sum(METRIC_MODEL_CALLS, { "tool_call_resilience.outcome": "failed_open" }),
    ).toBe(1);
    await harness.shutdown();
  });
});

describe("repairAnthropicMessages", () => {
  const toolUse = (id: string, name = "search") => ({ type: "tool_use", id, name, input: {} });
  const toolResult = (id: string) => ({
    type: "tool_result",
    tool_use_id: id,
    content: `result of ${id}`,
  });

  it("answers a tool_use in the next user message, before its text, and Anthropic accepts it", () => {
    const history = deepFreeze([
      { role: "user", content: "Find x and y" },
      {
        role: "assistant",
        content: [{ type: "text", text: "Looking" }, toolUse("a"), toolUse("b", "fetch")],
      },
      { role: "user", content: [toolResult("a"), { type: "text", text: "Go on" }] },
    ]);
    expect(anthropicViolations(history)).not.toEqual([]);
    const { messages, repairs } = repairAnthropicMessages(history, quiet);
    expect(anthropicViolations(messages)).toEqual([]);
    expect(messages).toHaveLength(3);
    expect(messages[1]).toBe(history[1]);
    expect((messages[2] as { content: unknown[] }).content).toEqual([
      history[2]?.content[0],
      {
        type: "tool_result",
        tool_use_id: "b",
        content: "[Tool call was interrupted and did not return a result.]",
        is_error: true,
      },
      { type: "text", text: "Go on" },
    ]);
    expect(repairs).toEqual([
      expect.objectContaining({
        kind: "placeholder_inserted",
        toolCallId: "b",
        callIndex: 1,
        outputIndex: 2,
      }),
    ]);
  });

  it("gives a user message of its own when the next message is plain text, and keeps that message", () => {
    const history = deepFreeze([
      { role: "assistant", content: [toolUse("a")] },
      { role: "user", content: "Never mind, just say hi" },
    ]);
    const { messages } = repairAnthropicMessages(history, quiet);
    expect(anthropicViolations(messages)).toEqual([]);
    expect(messages[0]).toBe(history[0]);
    expect(messages[1]).toMatchObject({
      role: "user",
      content: [{ type: "tool_result", tool_use_id: "a" }],
    });
    expect(messages[2]).toBe(history[1]);
  });

  it("moves a tool_result written after text to the front, and one a message late back", () => {
    const history = deepFreeze([
      { role: "assistant", content: [toolUse("a"), toolUse("b")] },
      { role: "user", content: [{ type: "text", text: "here:" }, toolResult("a")] },
      { role: "assistant", content: [{ type: "text", text: "waiting" }] },
      { role: "user", content: [toolResult("b")] },
    ]);
    const { messages } = repairAnthropicMessages(history, quiet);
    expect(anthropicViolations(messages)).toEqual([]);
    expect((messages[1] as { content: { type: string; tool_use_id?: string }[] }).content).toEqual([
      toolResult("a"),
      toolResult("b"),
      { type: "text", text: "here:" },
    ]);
  });

  it("writes results from two user messages into the one right after their calls", () => {
    // Found by the property test: the late result's message moved whole, next to the first one.
    const history = deepFreeze([
      { role: "assistant", content: [toolUse("a"), toolUse("b")] },
      { role: "user", content: [toolResult("a")] },
      { role: "user", content: "still there?" },
      { role: "user", content: [toolResult("b")] },
    ]);
    const { messages } = repairAnthropicMessages(history, quiet);
    expect(anthropicViolations(messages)).toEqual([]);
    expect(messages).toEqual([
      history[0],
      { role: "user", content: [toolResult("a"), toolResult("b")] },
      history[2],
    ]);
    expect(messages[2]).toBe(history[2]);
  });

  it("records the repair as Anthropic's, with the model of the call", async () => {
    const harness = metricsHarness();
    repairAnthropicMessages(
      [{ role: "assistant", content: [toolUse("a")] }],
      { ...quiet, meterProvider: harness.meterProvider },
      { model: "claude-sonnet-4-5" },
    );
    expect(
      await harness.sum(METRIC_DANGLING_TOOL_CALLS, {
        "gen_ai.provider.name": "anthropic",
        "gen_ai.request.model": "claude-sonnet-4-5",
      }),
    ).toBe(1);
    await harness.shutdown();
  });

  it("returns the same array for a clean history, and the window counts messages, not blocks", () => {
    const clean = deepFreeze([
      { role: "assistant", content: [toolUse("a"), toolUse("b")] },
      { role: "user", content: [toolResult("a"), toolResult("b"), { type: "text", text: "ok" }] },
    ]);
    expect(repairAnthropicMessages(clean, quiet).messages).toBe(clean);
    const history = deepFreeze([
      { role: "assistant", content: [toolUse("a")] },
      { role: "user", content: [toolResult("x"), toolResult("y"), { type: "text", text: "t" }] },
      { role: "assistant", content: [toolUse("c")] },
      { role: "user", content: "next" },
    ]);
    // Window 3: the three last messages, whatever their blocks; "a" is left alone, "c" answered.
    const { repairs } = repairAnthropicMessages(history, { ...quiet, window: 3 });
    expect(
      repairs.filter((repair) => repair.kind === "placeholder_inserted").map((r) => r.toolCallId),
    ).toEqual(["c"]);
  });

  it("gives an id to a tool_use without one, and marks a cut-off input as invalid arguments", () => {
    const history = [
      { role: "assistant", content: [{ type: "tool_use", name: "search", input: '{"q": "x' }] },
    ];
    const { messages, repairs } = repairAnthropicMessages(history, quiet);
    expect(anthropicViolations(messages)).toEqual([]);
    const id = (messages[0] as unknown as { content: { id: string }[] }).content[0]?.id;
    expect(id).toMatch(/^tcr_/);
    expect(repairs.find((repair) => repair.kind === "placeholder_inserted")?.reason).toBe(
      "invalid_arguments",
    );
  });
});

describe("repairModelMessages (AI SDK)", () => {
  const call = (id: string, toolName = "search") => ({
    type: "tool-call",
    toolCallId: id,
    toolName,
    input: {},
  });
  const result = (id: string, toolName = "search") => ({
    type: "tool-result",
    toolCallId: id,
    toolName,
    output: { type: "text", value: `result of ${id}` },
  });

  it("answers a tool-call in a tool message, which the AI SDK then accepts", async () => {
    const history = deepFreeze([
      { role: "user", content: "Find x and y" },
      { role: "assistant", content: [call("a"), call("b", "fetch")] },
      { role: "tool", content: [result("a")] },
      { role: "user", content: "Go on" },
    ]);
    expect(await aiSdkRefusal(history)).toMatch(/MissingToolResultsError/);
    const { messages } = repairModelMessages(history, quiet);
    expect(await aiSdkRefusal(messages)).toBeUndefined();
    expect(messages[1]).toBe(history[1]);
    expect(messages[2]).toEqual({
      role: "tool",
      content: [
        result("a"),
        {
          type: "tool-result",
          toolCallId: "b",
          toolName: "fetch",
          output: {
            type: "error-text",
            value: "[Tool call was interrupted and did not return a result.]",
          },
          providerOptions: { [AI_SDK_MARKER_KEY]: { synthetic: true, reason: "interrupted" } },
        },
      ],
    });
    expect(messages[3]).toBe(history[3]);
  });

  it("records under the provider the options name, since the AI SDK serves them all", async () => {
    const harness = metricsHarness();
    const options = { ...quiet, meterProvider: harness.meterProvider, providerName: "gcp.gemini" };
    repairModelMessages([{ role: "assistant", content: [call("a")] }], options, {
      model: "gemini-2.5-flash",
      threadId: "t-ai",
    });
    expect(
      await harness.sum(METRIC_DANGLING_TOOL_CALLS, {
        "gen_ai.provider.name": "gcp.gemini",
        "gen_ai.request.model": "gemini-2.5-flash",
      }),
    ).toBe(1);
    await harness.shutdown();
  });

  it("carries the marker only when markSynthetic is on", () => {
    const history = [{ role: "assistant", content: [call("a")] }];
    const { messages } = repairModelMessages(history, { ...quiet, markSynthetic: false });
    expect((messages[1] as { content: Record<string, unknown>[] }).content[0]).not.toHaveProperty(
      "providerOptions",
    );
  });

  it("leaves calls the provider ran itself alone", () => {
    const history = deepFreeze([
      {
        role: "assistant",
        content: [
          {
            type: "tool-call",
            toolCallId: "w",
            toolName: "web_search",
            input: {},
            providerExecuted: true,
          },
          {
            type: "tool-result",
            toolCallId: "w",
            toolName: "web_search",
            output: { type: "text", value: "…" },
          },
        ],
      },
      { role: "user", content: "thanks" },
    ]);
    expect(repairModelMessages(history, quiet).messages).toBe(history);
  });
});

describe("the adapters' types", () => {
  it("give back what each SDK's own message type accepts", () => {
    const openAI: ChatCompletionMessageParam[] = [{ role: "user", content: "hi" }];
    const anthropic: MessageParam[] = [{ role: "user", content: "hi" }];
    const aiSdk: ModelMessage[] = [{ role: "user", content: "hi" }];
    // Assignable without a cast: the repaired history goes straight to the SDK's call.
    const sentToOpenAI: ChatCompletionMessageParam[] = repairOpenAIChatMessages(openAI).messages;
    const sentToAnthropic: MessageParam[] = repairAnthropicMessages(anthropic).messages;
    const sentToAiSdk: ModelMessage[] = repairModelMessages(aiSdk).messages;
    expectTypeOf(sentToOpenAI).toEqualTypeOf<ChatCompletionMessageParam[]>();
    expect([sentToOpenAI, sentToAnthropic, sentToAiSdk]).toEqual([openAI, anthropic, aiSdk]);
  });
});

describe("repairInFormat", () => {
  interface Note {
    readonly from: "me" | "bot" | "tool";
    readonly calls?: readonly string[];
    readonly answers?: string;
  }
  const notes: MessageFormat<Note> = {
    name: "notes",
    provider: undefined,
    partsOf: (note) => [
      note.calls !== undefined
        ? { role: "assistant", calls: note.calls.map((id) => ({ id, name: "look" })) }
        : note.from === "tool"
          ? { role: "tool", toolCallId: note.answers }
          : { role: "user" },
    ],
    write: (items) =>
      items.map((item, index) => ({
        message:
          item.kind === "placeholder"
            ? { from: "tool", answers: item.placeholder.toolCallId }
            : item.kind === "message" || item.kind === "part"
              ? item.message
              : item.kind === "renamed_calls"
                ? { ...item.message, calls: item.ids }
                : { ...item.message, answers: item.toolCallId },
        items: [index],
      })),
  };

  it("repairs a format of the user's own through the same engine", () => {
    const history: Note[] = [{ from: "bot", calls: ["a"] }, { from: "me" }];
    const { messages } = repairInFormat(notes, history, quiet);
    expect(messages).toEqual([history[0], { from: "tool", answers: "a" }, history[1]]);
  });

  it("takes the shipped formats as they are, with the same result as their adapters", () => {
    const openAI = [
      { role: "assistant", content: null, tool_calls: [openAICall("a")] },
      { role: "user", content: "Go on" },
    ];
    expect(repairInFormat(openAIChatFormat, openAI, quiet)).toEqual(
      repairOpenAIChatMessages(openAI, quiet),
    );
    const anthropic = [
      { role: "assistant", content: [{ type: "tool_use", id: "a", name: "search", input: {} }] },
      { role: "user", content: "Go on" },
    ];
    expect(repairInFormat(anthropicFormat, anthropic, quiet)).toEqual(
      repairAnthropicMessages(anthropic, quiet),
    );
    const aiSdk = [
      {
        role: "assistant",
        content: [{ type: "tool-call", toolCallId: "a", toolName: "search", input: {} }],
      },
      { role: "user", content: "Go on" },
    ];
    expect(repairInFormat(modelMessageFormat, aiSdk, quiet)).toEqual(
      repairModelMessages(aiSdk as ModelMessage[], quiet),
    );
  });

  it("lets a format of the user's own build on a shipped one, which no one can change in place", () => {
    interface Stored {
      readonly id: number;
      readonly message: unknown;
    }
    // Items taken from the input carry the stored record: hand OpenAI's format its message.
    const unwrapped = (item: RepairedItem<Stored>): RepairedItem<unknown> =>
      "message" in item ? { ...item, message: item.message.message } : item;
    const stored: MessageFormat<Stored> = {
      name: "stored-openai-chat",
      provider: "openai",
      partsOf: (record) => openAIChatFormat.partsOf(record.message),
      write: (items) =>
        openAIChatFormat.write(items.map(unwrapped)).map((written, index) => ({
          ...written,
          message: { id: -1 - index, message: written.message },
        })),
    };
    const history: Stored[] = [
      { id: 1, message: { role: "assistant", content: null, tool_calls: [openAICall("a")] } },
      { id: 2, message: { role: "user", content: "Go on" } },
    ];
    const { messages, repairs } = repairInFormat(stored, history, quiet);
    expect(repairs.map((repair) => repair.kind)).toEqual(["placeholder_inserted"]);
    expect(messages.map((record) => record.message)).toEqual(
      repairOpenAIChatMessages(
        history.map((record) => record.message),
        quiet,
      ).messages,
    );
    expect(Object.isFrozen(openAIChatFormat)).toBe(true);
    expect(Object.isFrozen(anthropicFormat)).toBe(true);
    expect(Object.isFrozen(modelMessageFormat)).toBe(true);
  });
});
