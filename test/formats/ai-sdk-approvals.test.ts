/**
 * `ModelMessage` histories of tool approvals, as the AI SDK itself writes them (`generateText`
 * over a scripted model, `convertToModelMessages`), repaired by `repairModelMessages` and by the
 * middleware's `repairMessages`. A denied approval of a call the provider runs is answered with an
 * `execution-denied` result in a tool message; a call of the client that asks for approval is
 * answered by an approval response in a tool message of its own, and then by its result, which
 * `generateText` writes in the next tool message. Sound histories, each: nothing to repair.
 */
import {
  convertToModelMessages,
  generateText,
  jsonSchema,
  type ModelMessage,
  tool,
  type UIMessage,
} from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { describe, expect, it } from "vitest";
import {
  modelMessageFormat,
  modelMessageFormatOf,
  repairModelMessages,
} from "../../src/formats/ai-sdk.js";
import { repairInFormat } from "../../src/formats/format.js";
import { ATTR_OUTCOME, METRIC_MODEL_CALLS, METRIC_REPAIRS } from "../../src/telemetry/semconv.js";
import { answer, deepFreeze, type GenerateResult, instrumented } from "../ai-sdk/prompts.js";

const quiet = { logger: false } as const;

/** A model stand-in that answers `script.next()`, and what it was sent. */
function scripted() {
  const script = { next: (): GenerateResult => answer({ type: "text", text: "Done." }) };
  const model = new MockLanguageModelV3({ doGenerate: async () => script.next() });
  return { model, script };
}

/** The tool-message parts of a history, wherever they stand. */
const toolParts = (messages: readonly ModelMessage[]) =>
  messages.flatMap((message) => (message.role === "tool" ? message.content : []));

/** The kinds and call ids of a repair's repairs. */
const made = (repairs: readonly { kind: string; toolCallId?: string }[]) =>
  repairs.map((repair) => [repair.kind, repair.toolCallId]);

/**
 * The history of a denied MCP call: the model asks for approval of a call the provider runs (as
 * `@ai-sdk/openai` reports an `mcp_approval_request`), the user denies it, and `generateText`
 * answers the call with an `execution-denied` result in a tool message of its response.
 */
async function deniedProviderCall(): Promise<ModelMessage[]> {
  const { model, script } = scripted();
  script.next = () =>
    answer(
      {
        type: "tool-call",
        toolCallId: "mcp_1",
        toolName: "mcp.create_issue",
        input: '{"title":"Flaky test"}',
        providerExecuted: true,
        dynamic: true,
      },
      { type: "tool-approval-request", approvalId: "mcpr_1", toolCallId: "mcp_1" },
    );
  const asked = await generateText({ model, prompt: "File an issue about the flaky test." });
  const denied: ModelMessage[] = [
    { role: "user", content: "File an issue about the flaky test." },
    ...asked.response.messages,
    {
      role: "tool",
      content: [
        {
          type: "tool-approval-response",
          approvalId: "mcpr_1",
          approved: false,
          reason: "Not now.",
          providerExecuted: true,
        },
      ],
    },
  ];
  script.next = () => answer({ type: "text", text: "I did not file it." });
  const answered = await generateText({ model, messages: denied });
  const history = [...denied, ...answered.response.messages];
  // What the tests stand on: the AI SDK's own answer to the denial, in a tool message.
  expect(toolParts(history)).toContainEqual(
    expect.objectContaining({
      type: "tool-result",
      toolCallId: "mcp_1",
      output: expect.objectContaining({ type: "execution-denied" }),
    }),
  );
  return deepFreeze(history);
}

describe("a denied approval of a call the provider runs, in a ModelMessage history", () => {
  it("comes back as the same array, with no repair", async () => {
    const history = await deniedProviderCall();
    const { messages, repairs } = repairModelMessages(history, quiet);
    expect(repairs).toEqual([]);
    expect(messages).toBe(history);
    // The format that reads one message at a time cannot know the call: it drops the denial.
    const unread = repairInFormat(modelMessageFormat, history, quiet);
    expect(made(unread.repairs)).toEqual([["orphan_dropped", "mcp_1"]]);
  });

  it("keeps the denial where another call of the client gets its placeholder", async () => {
    const history = await deniedProviderCall();
    const interrupted: ModelMessage[] = deepFreeze([
      ...history,
      { role: "user", content: "Then look for similar issues." },
      {
        role: "assistant",
        content: [{ type: "tool-call", toolCallId: "c_lost", toolName: "search", input: {} }],
      },
      { role: "user", content: "Go on." },
    ]);
    const { messages, repairs } = repairModelMessages(interrupted, quiet);
    expect(made(repairs)).toEqual([["placeholder_inserted", "c_lost"]]);
    expect(messages.slice(0, -2)).toEqual(interrupted.slice(0, -1));
    for (const [index, message] of messages.slice(0, -3).entries()) {
      expect(message).toBe(interrupted[index]);
    }
    expect(messages.at(-2)).toMatchObject({ role: "tool", content: [{ toolCallId: "c_lost" }] });
    // The AI SDK takes the repaired history, and sends the provider its denial.
    const { model } = scripted();
    await generateText({ model, messages: messages as ModelMessage[] });
    const sent = model.doGenerateCalls[0]?.prompt ?? [];
    expect(sent.flatMap((message) => (message.role === "tool" ? message.content : []))).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          toolCallId: "mcp_1",
          output: expect.objectContaining({ type: "execution-denied" }),
        }),
      ]),
    );
  });

  it("reads a result as the result of a client call that has the provider call's id too", () => {
    const shared: ModelMessage[] = deepFreeze([
      {
        role: "assistant",
        content: [
          { type: "tool-call", toolCallId: "mcp_1", toolName: "search", input: {} },
          {
            type: "tool-call",
            toolCallId: "mcp_1",
            toolName: "mcp.create_issue",
            input: {},
            providerExecuted: true,
          },
        ],
      },
      {
        role: "tool",
        content: [
          {
            type: "tool-result",
            toolCallId: "mcp_1",
            toolName: "search",
            output: { type: "text", value: "found" },
          },
        ],
      },
      { role: "user", content: "Thanks." },
    ]);
    const { messages, repairs } = repairModelMessages(shared, quiet);
    expect(repairs).toEqual([]);
    expect(messages).toBe(shared);
  });

  it("is no repair for the middleware's repairMessages either, nor recorded as one", async () => {
    const history = await deniedProviderCall();
    const { metrics, middleware, model } = instrumented();
    const { messages, repairs } = middleware.repairMessages(history, { threadId: "t-1" });
    expect(repairs).toEqual([]);
    expect(messages).toBe(history);
    await generateText({
      model,
      messages,
      providerOptions: { toolCallResilience: { threadId: "t-1" } },
    });
    expect(await metrics.sum(METRIC_MODEL_CALLS, { [ATTR_OUTCOME]: "clean" })).toBe(1);
    expect(await metrics.sum(METRIC_MODEL_CALLS, { [ATTR_OUTCOME]: "repaired" })).toBe(0);
    expect(await metrics.points(METRIC_REPAIRS)).toEqual([]);
  });
});

/**
 * A call of the client's `search` tool, which asks for approval: the history the model's call
 * ends (its assistant message with the approval request), the user's answer in a tool message,
 * and the history `generateText` answers, running the call or writing its denial.
 */
async function clientApproval(approved: boolean) {
  const runs: string[] = [];
  const tools = {
    search: tool({
      inputSchema: jsonSchema<{ query: string }>({
        type: "object",
        properties: { query: { type: "string" } },
      }),
      needsApproval: true,
      execute: async ({ query }) => {
        runs.push(query);
        return `found ${query}`;
      },
    }),
  };
  const { model, script } = scripted();
  script.next = () =>
    answer({ type: "tool-call", toolCallId: "c1", toolName: "search", input: '{"query":"q"}' });
  const asked = await generateText({ model, tools, prompt: "Find it." });
  const request = asked.content.find((part) => part.type === "tool-approval-request");
  script.next = () => answer({ type: "text", text: "Here it is." });
  const pending: ModelMessage[] = deepFreeze([
    { role: "user", content: "Find it." },
    ...asked.response.messages,
    {
      role: "tool",
      content: [
        { type: "tool-approval-response", approvalId: request?.approvalId ?? "", approved },
      ],
    },
  ]);
  /** Sends a history on, as the application would: the AI SDK answers the approval first. */
  const send = async (messages: ModelMessage[]) => {
    const result = await generateText({ model, tools, messages });
    return { sent: model.doGenerateCalls.at(-1)?.prompt ?? [], result };
  };
  return { pending, runs, send };
}

describe("a call of the client that asks for approval, in a ModelMessage history", () => {
  it("waits on its approval response, which the AI SDK answers: no placeholder beside its result", async () => {
    const { pending, runs, send } = await clientApproval(true);
    const { messages, repairs } = repairModelMessages(pending, quiet);
    expect(repairs).toEqual([]);
    expect(messages).toBe(pending);
    const { sent } = await send(messages);
    expect(runs).toEqual(["q"]);
    const results = sent.flatMap((message) => (message.role === "tool" ? message.content : []));
    expect(results).toEqual([
      expect.objectContaining({ toolCallId: "c1", output: { type: "text", value: "found q" } }),
    ]);
  });

  it.each([
    ["approved", true],
    ["denied", false],
  ])(
    "is sound once %s and answered by generateText: the same array, no result moved",
    async (_, approved) => {
      const { pending, send } = await clientApproval(approved);
      const { result } = await send(pending);
      const history = deepFreeze([...pending, ...result.response.messages]);
      expect(history.filter((message) => message.role === "tool")).toHaveLength(2);
      const { messages, repairs } = repairModelMessages(history, quiet);
      expect(repairs).toEqual([]);
      expect(messages).toBe(history);
    },
  );

  it("reads approval responses after the results of their tool message, as convertToModelMessages writes them", async () => {
    const search = (toolCallId: string, id: string) => ({
      type: "tool-search" as const,
      toolCallId,
      input: {},
      approval: { id, approved: true as const },
    });
    const ui: UIMessage[] = [
      { id: "u1", role: "user", parts: [{ type: "text", text: "Find both." }] },
      {
        id: "a1",
        role: "assistant",
        parts: [
          { ...search("c1", "ap1"), state: "output-available", output: "found" },
          { ...search("c2", "ap2"), state: "approval-responded" },
        ],
      },
    ];
    const history = deepFreeze(await convertToModelMessages(ui));
    // One tool message: ap1's response, c1's result, and ap2's response, which is still waiting.
    expect(toolParts(history).map((part) => part.type)).toEqual([
      "tool-approval-response",
      "tool-result",
      "tool-approval-response",
    ]);
    const { messages, repairs } = repairModelMessages(history, quiet);
    expect(repairs).toEqual([]);
    expect(messages).toBe(history);
  });

  it("is a call without a result where the AI SDK will not answer its approval: not in the last message", async () => {
    const { pending } = await clientApproval(true);
    const movedOn = deepFreeze([...pending, { role: "user" as const, content: "Never mind." }]);
    const { messages, repairs } = repairModelMessages(movedOn, quiet);
    expect(made(repairs)).toEqual([["placeholder_inserted", "c1"]]);
    expect(messages).toHaveLength(movedOn.length + 1);
  });

  it("takes a placeholder of another call beside its approval response, which the AI SDK then answers", async () => {
    const { pending, runs, send } = await clientApproval(true);
    const [first, asked, approval] = pending;
    if (asked?.role !== "assistant" || typeof asked.content === "string") throw new Error("shape");
    const lost = {
      type: "tool-call" as const,
      toolCallId: "c_lost",
      toolName: "search",
      input: {},
    };
    const history = deepFreeze([first, { ...asked, content: [...asked.content, lost] }, approval]);
    const { messages, repairs } = repairModelMessages(history as ModelMessage[], quiet);
    expect(made(repairs)).toEqual([["placeholder_inserted", "c_lost"]]);
    expect(messages).toHaveLength(3);
    expect(toolParts(messages as ModelMessage[]).map((part) => part.type)).toEqual([
      "tool-approval-response",
      "tool-result",
    ]);
    const { sent } = await send(messages as ModelMessage[]);
    expect(runs).toEqual(["q"]);
    const results = sent.flatMap((message) => (message.role === "tool" ? message.content : []));
    expect(results.map((part) => part.type === "tool-result" && part.toolCallId)).toEqual([
      "c_lost",
      "c1",
    ]);
  });
});

describe("the format made for a history", () => {
  it("is the shared one where the history names neither provider calls nor approvals", () => {
    expect(modelMessageFormatOf([{ role: "user", content: "hi" }])).toBe(modelMessageFormat);
  });

  it("reads a history whose messages throw when read as one it cannot know: the repair fails open", () => {
    const hostile = [
      {
        get role(): string {
          throw new Error("unreadable");
        },
      },
    ];
    expect(() => modelMessageFormatOf(hostile)).not.toThrow();
    expect(repairModelMessages(hostile, quiet).messages).toBe(hostile);
  });
});
