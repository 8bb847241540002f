/**
 * The AI SDK's provider-level prompt as a message format: how each part kind is read, what a
 * repair writes (placeholders, moved and renamed results, dropped orphans), and that everything
 * it need not touch comes back as the very same object, never changed.
 */
import { describe, expect, it } from "vitest";
import { AI_SDK_MARKER_KEY } from "../../src/formats/ai-sdk.js";
import { repairInFormat } from "../../src/formats/format.js";
import type { PromptMessage as FormatMessage } from "../../src/stacks/ai-sdk.js";
import {
  languageModelPromptFormat,
  languageModelPromptFormatOf,
} from "../../src/stacks/ai-sdk-prompt.js";
import {
  assistant,
  call,
  danglingPrompt,
  deepFreeze,
  type PromptMessage,
  result,
  system,
  tool,
  user,
} from "./prompts.js";

const quiet = { logger: false } as const;

/** The format's repair, over the AI SDK's prompt type or junk: the middleware's. */
const repair = (prompt: readonly unknown[], options: object = quiet) => {
  const native = prompt as readonly FormatMessage[];
  return repairInFormat(languageModelPromptFormatOf(native), native, options);
};

const INTERRUPTED = "[Tool call was interrupted and did not return a result.]";

/** The placeholder the format writes for a call of `search`. */
const placeholder = (toolCallId: string, toolName = "search") => ({
  type: "tool-result",
  toolCallId,
  toolName,
  output: { type: "error-text", value: INTERRUPTED },
  providerOptions: { [AI_SDK_MARKER_KEY]: { synthetic: true, reason: "interrupted" } },
});

const approval = {
  type: "tool-approval-response",
  approvalId: "approval_1",
  approved: true,
} as const;

/** A call the provider runs itself (a web search), and the result it carries in the same message. */
const providerCall = { ...call("ws_1", "web_search"), providerExecuted: true } as const;
const providerResult = {
  type: "tool-result" as const,
  toolCallId: "ws_1",
  toolName: "web_search",
  output: { type: "json" as const, value: { results: [] } },
};

/**
 * An MCP call the provider runs, whose approval the user denied, answered as `generateText`
 * answers it (its loop over the denied approvals): an `execution-denied` result in a tool message,
 * after the approval response.
 */
const mcpCall = { ...call("mcp_1", "mcp.create_issue"), providerExecuted: true } as const;
const denial = {
  type: "tool-approval-response",
  approvalId: "mcpr_1",
  approved: false,
  reason: "Not now.",
} as const;
const deniedResult = {
  type: "tool-result",
  toolCallId: "mcp_1",
  toolName: "mcp.create_issue",
  output: {
    type: "execution-denied",
    reason: "Not now.",
    providerOptions: { openai: { approvalId: "mcpr_1" } },
  },
} as const;

describe("the provider-level prompt format", () => {
  it("reads every part kind of a sound prompt and returns the very same array", () => {
    const prompt = deepFreeze<PromptMessage[]>([
      system("Be brief."),
      {
        role: "user",
        content: [
          { type: "text", text: "What is in this file?" },
          { type: "file", data: "aGk=", mediaType: "text/plain", filename: "a.txt" },
        ],
      },
      assistant(
        { type: "reasoning", text: "Search, then ask." },
        { type: "text", text: "Looking." },
        providerCall,
        providerResult,
        call("c_text"),
        call("c_json"),
        call("c_error"),
        call("c_error_json"),
        call("c_content"),
        call("c_denied"),
      ),
      tool(
        result("c_text"),
        { ...result("c_json"), output: { type: "json", value: { hits: 2 } } },
        { ...result("c_error"), output: { type: "error-text", value: "timeout" } },
        { ...result("c_error_json"), output: { type: "error-json", value: { code: 1 } } },
        {
          ...result("c_content"),
          output: { type: "content", value: [{ type: "text", text: "a chart" }] },
        },
        { ...result("c_denied"), output: { type: "execution-denied", reason: "no" } },
        approval,
      ),
      user("thanks"),
    ]);
    const { messages, repairs } = repair(prompt);
    expect(repairs).toEqual([]);
    expect(messages).toBe(prompt);
  });

  it("answers a call without a result with an error-text result in a tool message right after it", () => {
    const prompt = deepFreeze(danglingPrompt());
    const { messages, repairs } = repair(prompt);
    expect(messages).toEqual([
      prompt[0],
      prompt[1],
      { role: "tool", content: [placeholder("call_1")] },
      prompt[2],
    ]);
    for (const index of [0, 1]) expect(messages[index]).toBe(prompt[index]);
    expect(messages[3]).toBe(prompt[2]);
    expect(repairs).toEqual([
      expect.objectContaining({
        kind: "placeholder_inserted",
        toolCallId: "call_1",
        toolName: "search",
        callIndex: 1,
        outputIndex: 2,
      }),
    ]);
  });

  it("carries the synthetic marker only with markSynthetic", () => {
    const { messages } = repair(danglingPrompt(), { ...quiet, markSynthetic: false });
    expect(messages[2]).toEqual({
      role: "tool",
      content: [
        {
          type: "tool-result",
          toolCallId: "call_1",
          toolName: "search",
          output: { type: "error-text", value: INTERRUPTED },
        },
      ],
    });
  });

  it("writes a placeholder next to the call's other results, and keeps their approval responses", () => {
    const prompt = deepFreeze([
      assistant(call("a"), call("b", "weather"), providerCall),
      tool(approval, result("a")),
      user("go on"),
    ]);
    const { messages, repairs } = repair(prompt);
    expect(repairs.map((made) => [made.kind, made.toolCallId])).toEqual([
      ["placeholder_inserted", "b"],
    ]);
    expect(messages).toEqual([
      prompt[0],
      { role: "tool", content: [result("a"), placeholder("b", "weather"), approval] },
      prompt[2],
    ]);
  });

  it("reads approval responses after the results of their tool message: a sound prompt is not repaired", () => {
    // The AI SDK joins a step's approval responses and the results of the tools run after them.
    const prompt = deepFreeze([
      assistant(call("a"), providerCall, call("b")),
      tool(approval, result("a"), approval, result("b")),
      user("go on"),
    ]);
    const { messages, repairs } = repair(prompt);
    expect(repairs).toEqual([]);
    expect(messages).toBe(prompt);
  });

  it("drops a result no call made, keeping the approval response beside it", () => {
    const prompt = deepFreeze([tool(result("call_ghost"), approval), user("hi")]);
    const { messages, repairs } = repair(prompt);
    expect(messages).toEqual([{ role: "tool", content: [approval] }, prompt[1]]);
    expect(repairs).toEqual([
      expect.objectContaining({ kind: "orphan_dropped", toolCallId: "call_ghost", resultIndex: 0 }),
    ]);
  });

  it("moves a result written after another message back to its call", () => {
    const prompt = deepFreeze([assistant(call("a")), user("hurry"), tool(result("a"))]);
    const { messages, repairs } = repair(prompt);
    expect(messages).toEqual([prompt[0], prompt[2], prompt[1]]);
    expect(messages[1]).toBe(prompt[2]);
    expect(repairs.map((made) => made.kind)).toEqual(["result_moved"]);
  });

  it("gives a call without an id one, written on the call and on its placeholder", () => {
    const prompt = deepFreeze([assistant(call("")), user("and?")]);
    const { messages, repairs } = repair(prompt);
    const assigned = (messages[0] as unknown as { content: { toolCallId: string }[] }).content[0]
      ?.toolCallId;
    expect(assigned).toMatch(/^tcr_/);
    expect(messages[1]).toEqual({ role: "tool", content: [placeholder(assigned as string)] });
    expect(repairs.map((made) => made.kind)).toEqual(["id_assigned", "placeholder_inserted"]);
  });

  it("gives the second call of a message with a reused id a new id, which its second result takes", () => {
    const prompt = deepFreeze([
      assistant(call("a"), call("a", "weather")),
      tool(result("a"), result("a", "weather")),
    ]);
    const { messages, repairs } = repair(prompt);
    const [first, second] = (messages[0] as unknown as { content: { toolCallId: string }[] })
      .content;
    expect(first?.toolCallId).toBe("a");
    expect(second?.toolCallId).toMatch(/^tcr_/);
    expect(messages[1]).toEqual(
      tool(result("a"), { ...result("a", "weather"), toolCallId: second?.toolCallId as string }),
    );
    expect(repairs.map((made) => made.kind)).toEqual(["id_assigned"]);
  });

  it("leaves the provider's own calls alone, with or without their results in the message", () => {
    const prompt = deepFreeze([
      user("search the web"),
      assistant(providerCall, providerResult, { type: "text", text: "Found nothing." }),
      user("again"),
      assistant({ ...providerCall, toolCallId: "ws_2" }),
      user("go on"),
    ]);
    expect(repair(prompt).messages).toBe(prompt);
  });

  it("leaves the denied result of the provider's call in its tool message: a sound prompt is not repaired", () => {
    const prompt = deepFreeze([user("file it"), assistant(mcpCall), tool(denial, deniedResult)]);
    const { messages, repairs } = repair(prompt);
    expect(repairs).toEqual([]);
    expect(messages).toBe(prompt);
  });

  it("keeps that result in the tool message where a call of the client beside it gets a placeholder", () => {
    const prompt = deepFreeze([
      assistant(call("a"), call("b", "weather"), mcpCall),
      tool(result("a"), denial, deniedResult),
      user("go on"),
    ]);
    const { messages, repairs } = repair(prompt);
    expect(repairs.map((made) => [made.kind, made.toolCallId])).toEqual([
      ["placeholder_inserted", "b"],
    ]);
    expect(messages).toEqual([
      prompt[0],
      { role: "tool", content: [result("a"), placeholder("b", "weather"), denial, deniedResult] },
      prompt[2],
    ]);
  });

  it("reads a result as a result where no call of the provider has its id, or a call of the client has it too", () => {
    const orphan = deepFreeze([tool(denial, deniedResult), user("hi")]);
    expect(repair(orphan).repairs.map((made) => made.kind)).toEqual(["orphan_dropped"]);
    const shared = deepFreeze([
      assistant(call("mcp_1"), mcpCall),
      tool(result("mcp_1")),
      user("go on"),
    ]);
    expect(repair(shared).messages).toBe(shared);
    // The format without the prompt's ids reads every tool-message result as a result.
    const sound = deepFreeze([assistant(mcpCall), tool(denial, deniedResult)]);
    const unread = repairInFormat(languageModelPromptFormat, sound, quiet);
    expect(unread.repairs.map((made) => made.kind)).toEqual(["orphan_dropped"]);
  });

  it("is idempotent: a repaired prompt comes back as it is", () => {
    const { messages } = repair(deepFreeze(danglingPrompt()));
    expect(repair(messages).messages).toBe(messages);
  });

  it("reads junk as messages that make and answer no call", () => {
    const prompt = [null, 7, "text", { role: "assistant", content: "not parts" }, user("hi")];
    const { messages, repairs } = repair(prompt);
    expect(messages).toBe(prompt);
    expect(repairs).toEqual([]);
  });
});
