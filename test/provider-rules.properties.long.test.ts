/**
 * Whatever a history looks like, the request the model receives after the repair is one every
 * provider accepts: random broken histories of real LangChain messages, repaired with the default
 * policy, run through the OpenAI (Chat Completions and Responses) and Anthropic clients' converters
 * and Gemini's turn rules. The shapes of the clients' own messages (Responses output items, v1
 * content blocks, edited calls...) are in provider-wire.properties.long.test.ts.
 */
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { repairToolCalls } from "../src/index.js";
import { assignedLookingHistoryArb, brokenHistoryArb } from "./helpers/arbitraries.js";
import { ACCEPTED_BY_ALL, providerViolations } from "./helpers/provider-payloads.js";

// 10,000 runs in CI (`.ci/run` sets FC_NUM_RUNS); fewer in a plain `npm test`.
const RUNS = { numRuns: Number(process.env.FC_NUM_RUNS ?? 1_000) } as const;

/** The messages of a history a client can send: junk entries are no messages at all. */
function sendable(messages: readonly unknown[]): BaseMessage[] {
  return messages.filter(
    (message): message is BaseMessage =>
      message !== null && typeof message === "object" && "type" in message,
  );
}

const historyArb = fc.oneof(brokenHistoryArb, assignedLookingHistoryArb);

describe("repaired histories", () => {
  // Histories of one provider's shape included: raw OpenAI-shaped calls, Anthropic tool_use
  // blocks, ids made twice in one message. The repair lists every call in `tool_calls` under an id
  // of its own, so each client sends the calls the placeholders answer.
  const rules = {
    "OpenAI's tool-calling rules": "openai",
    "the Responses API's tool-calling rules": "responses",
    "Anthropic's tool-calling rules": "anthropic",
    "Gemini's turn rules": "gemini",
  } as const;
  for (const [name, provider] of Object.entries(rules)) {
    it(`pass ${name}`, () => {
      fc.assert(
        fc.property(historyArb, (history) => {
          const { messages } = repairToolCalls(history);
          expect(providerViolations(sendable(messages))[provider]).toEqual([]);
        }),
        RUNS,
      );
    });
  }
});

/**
 * The smallest histories the random ones found, where the providers' clients disagreed on what
 * was called before the repair listed every call in `tool_calls` (RELIABILITY.md).
 */
describe("histories of one provider's shape, sent to any provider", () => {
  const quietly = <T>(make: () => T): T => {
    const warn = console.warn;
    console.warn = () => {};
    try {
      return make();
    } finally {
      console.warn = warn;
    }
  };
  const cases: Record<string, () => unknown[]> = {
    // ChatOpenAI's shape when every call of a turn was cut off: the raw list alone.
    "a call only in the raw additional_kwargs.tool_calls": () => [
      new HumanMessage("Find x"),
      quietly(
        () =>
          new AIMessage({
            content: "",
            tool_calls: [],
            invalid_tool_calls: [],
            additional_kwargs: {
              tool_calls: [
                { id: "a", type: "function", function: { name: "search", arguments: '{"q":' } },
              ],
            },
          }),
      ),
      new HumanMessage("Go on"),
    ],
    // ChatAnthropic's shape for a call whose input was cut off.
    "a tool_use block for a call tool_calls lacks": () => [
      new AIMessage({
        content: [{ type: "tool_use", id: "a", name: "search", input: '{"q":' }],
        tool_calls: [],
        invalid_tool_calls: [
          { id: "a", name: "search", args: '{"q":', error: "cut off", type: "invalid_tool_call" },
        ],
      }),
    ],
    "a tool_use block without an id": () => [
      new AIMessage({ content: [{ type: "tool_use", id: "", name: "search", input: {} }] }),
    ],
    "one id made twice in one AI message, answered once": () => [
      new AIMessage({
        content: "",
        tool_calls: [
          { id: "a", name: "search", args: { q: "x" } },
          { id: "a", name: "search", args: { q: "y" } },
        ],
      }),
      new ToolMessage({ content: "x found", tool_call_id: "a" }),
    ],
  };

  for (const [name, history] of Object.entries(cases)) {
    it(`${name}: refused by some provider as it is, accepted by every provider repaired`, () => {
      const before = providerViolations(sendable(history()));
      expect(Object.values(before).flat()).not.toEqual([]);
      const { messages } = repairToolCalls(history());
      expect(providerViolations(sendable(messages))).toEqual(ACCEPTED_BY_ALL);
    });
  }

  it("keeps both results of an id made twice in one AI message, the second under the new id", () => {
    const history = [
      new AIMessage({
        content: "",
        tool_calls: [
          { id: "a", name: "search", args: { q: "x" } },
          { id: "a", name: "search", args: { q: "y" } },
        ],
      }),
      new ToolMessage({ content: "x found", tool_call_id: "a" }),
      new ToolMessage({ content: "y found", tool_call_id: "a" }),
    ];
    const { messages, repairs } = repairToolCalls(history);
    const [ai, first, second] = messages as [AIMessage, ToolMessage, ToolMessage];
    expect(ai.tool_calls?.map((call) => call.id)).toEqual(["a", "tcr_0_1"]);
    expect([first.tool_call_id, first.content]).toEqual(["a", "x found"]);
    expect([second.tool_call_id, second.content]).toEqual(["tcr_0_1", "y found"]);
    expect(second).toBeInstanceOf(ToolMessage);
    expect(messages).toHaveLength(3);
    expect(repairs.map((repair) => repair.kind)).toEqual(["id_assigned"]);
    expect((history[2] as ToolMessage).tool_call_id).toBe("a");
  });
});
