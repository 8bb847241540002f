import { AIMessage, ToolMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { PLACEHOLDER_CATALOG } from "../../src/core/locales.js";
import {
  createRepairPolicy,
  repairToolCalls,
  syntheticReasonOf,
  type ToolCallRepair,
  ToolCallResilienceOptionsError,
} from "../../src/index.js";
import { aiCalls, aiText, human, shapeOf, system, toolResult } from "../helpers/history.js";

const INTERRUPTED = "[Tool call was interrupted and did not return a result.]";

/** A projection of a history that changes when any message in it is mutated. */
function snapshot(messages: readonly unknown[]): string {
  return JSON.stringify(messages);
}

describe("dangling calls", () => {
  it("inserts a placeholder right after the AI message that made the call, not at the end", () => {
    const history = [human("find it"), aiCalls(["call_1", "search"]), human("go on")];
    const { messages, repairs } = repairToolCalls(history);

    // The synthetic reply after the placeholder keeps the turns in an order every wire accepts.
    expect(shapeOf(messages)).toEqual(["human", "ai(call_1)", "tool(call_1)", "ai", "human"]);
    const placeholder = messages[2] as ToolMessage;
    expect(placeholder).toBeInstanceOf(ToolMessage);
    expect(placeholder.content).toBe(INTERRUPTED);
    expect(placeholder.status).toBe("error");
    expect(placeholder.tool_call_id).toBe("call_1");
    expect(placeholder.name).toBe("search");
    expect(repairs).toEqual([
      {
        kind: "placeholder_inserted",
        toolCallId: "call_1",
        toolName: "search",
        reason: "interrupted",
        callIndex: 1,
        outputIndex: 2,
      },
      {
        kind: "turn_inserted",
        toolCallId: "call_1",
        toolName: "search",
        callIndex: 1,
        outputIndex: 3,
      },
    ]);
    expect(syntheticReasonOf(messages[3])).toBe("turn_order");
    expect(messages[4]).toBe(history[2]);
  });

  it("uses exactly the default English text", () => {
    expect(PLACEHOLDER_CATALOG.en.interrupted).toBe(INTERRUPTED);
  });

  it("names the placeholder 'unknown' when the call has no name", () => {
    const history = [
      { type: "ai", content: "", tool_calls: [{ id: "call_1", args: {} }] },
      human("next"),
    ];
    const { messages } = repairToolCalls(history);
    expect((messages[1] as ToolMessage).name).toBe("unknown");
  });

  it("repairs a dangling call at the very end of the history", () => {
    const { messages } = repairToolCalls([human("hi"), aiCalls("call_1")]);
    expect(shapeOf(messages)).toEqual(["human", "ai(call_1)", "tool(call_1)"]);
  });
});

describe("clean histories", () => {
  it("returns the very same array and no repairs", () => {
    const history = [
      system("be brief"),
      human("hi"),
      aiCalls("call_1", "call_2"),
      toolResult("call_2"),
      toolResult("call_1"),
      aiText("done"),
    ];
    const result = repairToolCalls(history);
    expect(result.messages).toBe(history);
    expect(result.repairs).toEqual([]);
  });

  it("returns an empty history as it is", () => {
    const history: unknown[] = [];
    expect(repairToolCalls(history).messages).toBe(history);
  });
});

describe("several dangling calls", () => {
  it("repairs each AI message in its own place", () => {
    const history = [
      aiCalls("call_1"),
      human("stop"),
      aiCalls("call_2"),
      human("stop again"),
      aiText("ok"),
    ];
    const { messages, repairs } = repairToolCalls(history);
    expect(shapeOf(messages)).toEqual([
      "ai(call_1)",
      "tool(call_1)",
      "ai",
      "human",
      "ai(call_2)",
      "tool(call_2)",
      "ai",
      "human",
      "ai",
    ]);
    expect(repairs.map((repair) => [repair.kind, repair.toolCallId, repair.outputIndex])).toEqual([
      ["placeholder_inserted", "call_1", 1],
      ["turn_inserted", "call_1", 2],
      ["placeholder_inserted", "call_2", 5],
      ["turn_inserted", "call_2", 6],
    ]);
  });

  it("answers only the unanswered ones among parallel calls, in the order of the calls", () => {
    const history = [aiCalls("call_1", "call_2", "call_3"), toolResult("call_2"), human("next")];
    const { messages, repairs } = repairToolCalls(history);
    expect(shapeOf(messages)).toEqual([
      "ai(call_1,call_2,call_3)",
      "tool(call_1)",
      "tool(call_2)",
      "tool(call_3)",
      "ai",
      "human",
    ]);
    expect(messages[2]).toBe(history[1]);
    expect(repairs.map((repair) => [repair.kind, repair.toolCallId])).toEqual([
      ["placeholder_inserted", "call_1"],
      ["placeholder_inserted", "call_3"],
      ["turn_inserted", "call_3"],
    ]);
  });
});

describe("duplicate ids", () => {
  // Gemini counts calls, not ids: each of two calls with one id needs a response of its own.
  it("gives the second of two calls with one id in one AI message an id of its own, and answers each", () => {
    const history = [aiCalls("call_1", "call_1"), human("next")];
    const { messages, repairs } = repairToolCalls(history);
    expect(shapeOf(messages)).toEqual([
      "ai(call_1,tcr_0_1)",
      "tool(call_1)",
      "tool(tcr_0_1)",
      "ai",
      "human",
    ]);
    expect(repairs.map((repair) => [repair.kind, repair.toolCallId])).toEqual([
      ["id_assigned", "tcr_0_1"],
      ["placeholder_inserted", "call_1"],
      ["placeholder_inserted", "tcr_0_1"],
      ["turn_inserted", "tcr_0_1"],
    ]);
  });

  it("lets a second result for an id made twice in one AI message answer the second call, under its new id", () => {
    const history = [aiCalls("call_1", "call_1"), toolResult("call_1"), toolResult("call_1")];
    const { messages, repairs } = repairToolCalls(history);
    expect(shapeOf(messages)).toEqual(["ai(call_1,tcr_0_1)", "tool(call_1)", "tool(tcr_0_1)"]);
    expect(messages[1]).toBe(history[1]);
    const second = messages[2] as ToolMessage;
    expect(second).toBeInstanceOf(ToolMessage);
    expect(second.content).toBe((history[2] as ToolMessage).content);
    expect((history[2] as ToolMessage).tool_call_id).toBe("call_1");
    expect(repairs.map((repair) => repair.kind)).toEqual(["id_assigned"]);
  });

  it("finds an id made twice in one AI message with another call between them", () => {
    const history = [
      aiCalls("call_1", "call_2", "call_1"),
      toolResult("call_1"),
      toolResult("call_2"),
      toolResult("call_1"),
    ];
    const { messages, repairs } = repairToolCalls(history);
    expect(shapeOf(messages)).toEqual([
      "ai(call_1,call_2,tcr_0_2)",
      "tool(call_1)",
      "tool(call_2)",
      "tool(tcr_0_2)",
    ]);
    expect(repairs.map((repair) => repair.kind)).toEqual(["id_assigned"]);
  });

  it("tells apart ids of the same length and last character", () => {
    const history = [aiCalls("tcr_0_1", "tcr_1_1"), toolResult("tcr_0_1"), toolResult("tcr_1_1")];
    expect(repairToolCalls(history).messages).toBe(history);
  });

  it("gives the second call of a repeated id a placeholder when one result answers the id", () => {
    const history = [aiCalls("call_1", "call_1"), toolResult("call_1")];
    const { messages } = repairToolCalls(history);
    expect(shapeOf(messages)).toEqual(["ai(call_1,tcr_0_1)", "tool(call_1)", "tool(tcr_0_1)"]);
    expect(syntheticReasonOf(messages[2])).toBe("interrupted");
  });

  it("gives a placeholder to the second of two turns that reuse an id when only the first is answered", () => {
    const history = [aiCalls("call_1"), toolResult("call_1"), aiCalls("call_1"), human("next")];
    const { messages, repairs } = repairToolCalls(history);
    expect(shapeOf(messages)).toEqual([
      "ai(call_1)",
      "tool(call_1)",
      "ai(call_1)",
      "tool(call_1)",
      "ai",
      "human",
    ]);
    expect(messages[1]).toBe(history[1]);
    expect(syntheticReasonOf(messages[3])).toBe("interrupted");
    expect(repairs[0]?.callIndex).toBe(2);
    expect(repairs.map((repair) => repair.kind)).toEqual(["placeholder_inserted", "turn_inserted"]);
  });

  it("lets one result answer one call: a result in its own group is not taken by an earlier turn", () => {
    const history = [aiCalls("call_1"), human("again"), aiCalls("call_1"), toolResult("call_1")];
    const { messages } = repairToolCalls(history);
    expect(shapeOf(messages)).toEqual([
      "ai(call_1)",
      "tool(call_1)",
      "ai",
      "human",
      "ai(call_1)",
      "tool(call_1)",
    ]);
    expect(syntheticReasonOf(messages[1])).toBe("interrupted");
    expect(syntheticReasonOf(messages[2])).toBe("turn_order");
    expect(messages[5]).toBe(history[3]);
  });

  it("drops a second result for a call that is already answered", () => {
    const history = [aiCalls("call_1"), toolResult("call_1"), toolResult("call_1", "again")];
    const { messages, repairs } = repairToolCalls(history);
    expect(messages).toEqual([history[0], history[1]]);
    expect(repairs).toEqual([
      { kind: "orphan_dropped", toolCallId: "call_1", toolName: "search", resultIndex: 2 },
    ]);
  });
});

describe("messages without usable tool calls", () => {
  it.each([
    ["missing", { type: "ai", content: "hi" }],
    ["null", { type: "ai", content: "hi", tool_calls: null }],
    ["empty", { type: "ai", content: "hi", tool_calls: [] }],
    ["not an array", { type: "ai", content: "hi", tool_calls: { id: "call_1" } }],
    ["a string", { type: "ai", content: "hi", tool_calls: "call_1" }],
  ])("skips tool_calls that are %s", (_label, message) => {
    const history = [human("hi"), message, human("next")];
    expect(repairToolCalls(history).messages).toBe(history);
  });

  it("skips call entries that are not objects without throwing", () => {
    const history = [{ type: "ai", tool_calls: [null, 7, "x"] }, human("next")];
    expect(repairToolCalls(history).messages).toBe(history);
  });

  it("answers the real calls among junk entries", () => {
    const history = [{ type: "ai", tool_calls: [null, { id: "call_1", name: "a" }, 7] }];
    expect(shapeOf(repairToolCalls(history).messages)).toEqual(["ai(,call_1,)", "tool(call_1)"]);
  });
});

describe("invalid calls", () => {
  // ChatOpenAI, when every call of a turn was cut off: no parsed calls, the raw ones sent as they are.
  const openAiTruncated = () =>
    new AIMessage({
      content: "",
      tool_calls: [],
      invalid_tool_calls: [
        { id: "call_9", name: "search", args: '{"query": "wea', error: "Unexpected end of JSON" },
      ],
      additional_kwargs: {
        tool_calls: [
          {
            id: "call_9",
            type: "function",
            function: { name: "search", arguments: '{"query": "wea' },
          },
        ],
      },
    });
  // ChatAnthropic: every call is a tool_use block; the one whose input broke is an invalid call.
  const anthropicTruncated = () =>
    new AIMessage({
      content: [
        { type: "tool_use", id: "call_1", name: "search", input: { query: "x" } },
        { type: "tool_use", id: "call_2", name: "fetch", input: {} },
      ],
      tool_calls: [{ id: "call_1", name: "search", args: { query: "x" } }],
      invalid_tool_calls: [{ id: "call_2", name: "fetch", args: '{"url": "ht', error: "bad JSON" }],
    });

  const placeholdersOf = (repairs: readonly ToolCallRepair[]) =>
    repairs.filter((repair) => repair.kind === "placeholder_inserted");

  it("counts an invalid call the provider receives as unanswered, with its own reason and text", () => {
    const { messages, repairs } = repairToolCalls([openAiTruncated(), human("next")]);
    // Listed in tool_calls (so the Anthropic client sends it too), and still invalid.
    expect(shapeOf(messages)).toEqual(["ai(call_9,call_9)", "tool(call_9)", "ai", "human"]);
    expect((messages[0] as AIMessage).tool_calls).toEqual([
      { id: "call_9", name: "search", args: {}, type: "tool_call" },
    ]);
    expect(repairs[0]).toMatchObject({ kind: "call_listed", toolCallId: "call_9" });
    expect(placeholdersOf(repairs)[0]).toMatchObject({
      toolCallId: "call_9",
      reason: "invalid_arguments",
    });
    expect((messages[1] as ToolMessage).content).toBe(PLACEHOLDER_CATALOG.en.invalid_arguments);
    expect(PLACEHOLDER_CATALOG.en.invalid_arguments).toMatch(/arguments could not be parsed/);
    expect(syntheticReasonOf(messages[1])).toBe("invalid_arguments");
    expect(repairs.at(-1)).toMatchObject({ kind: "turn_inserted", toolCallId: "call_9" });
    expect(syntheticReasonOf(messages[2])).toBe("turn_order");
  });

  it("counts an invalid call sent as an Anthropic tool_use block, in call order", () => {
    const { messages, repairs } = repairToolCalls([anthropicTruncated(), human("next")]);
    expect(shapeOf(messages)).toEqual([
      "ai(call_1,call_2,call_2)",
      "tool(call_1)",
      "tool(call_2)",
      "ai",
      "human",
    ]);
    expect(repairs.at(-1)).toMatchObject({ kind: "turn_inserted", toolCallId: "call_2" });
    expect(
      placeholdersOf(repairs).map((repair) => [repair.toolCallId, repair.toolName, repair.reason]),
    ).toEqual([
      ["call_1", "search", "interrupted"],
      ["call_2", "fetch", "invalid_arguments"],
    ]);
  });

  // The OpenAI client sends tool_calls only: without the listing, its result would answer nothing.
  it("lists an answered call that only a tool_use block makes, so that every client sends it", () => {
    const history = [
      anthropicTruncated(),
      toolResult("call_1"),
      toolResult("call_2", "bad arguments"),
    ];
    const { messages, repairs } = repairToolCalls(history);
    expect(repairs.map((repair) => [repair.kind, repair.toolCallId])).toEqual([
      ["call_listed", "call_2"],
    ]);
    const [listed, added] = (messages[0] as AIMessage).tool_calls ?? [];
    expect(listed).toBe((history[0] as AIMessage).tool_calls?.[0]);
    expect(added).toEqual({ id: "call_2", name: "fetch", args: {}, type: "tool_call" });
    expect((messages[0] as AIMessage).content).toBe((history[0] as AIMessage).content);
    expect(messages.slice(1)).toEqual(history.slice(1));
    expect(repairToolCalls(messages).messages).toBe(messages);
  });

  it("gives no result to an invalid call the provider never receives, as that would be refused", () => {
    // ChatOpenAI with one good and one cut-off call: the converter sends tool_calls only.
    const mixed = new AIMessage({
      content: "",
      tool_calls: [{ id: "call_1", name: "search", args: {} }],
      invalid_tool_calls: [{ id: "call_2", name: "search", args: "{", error: "bad" }],
      additional_kwargs: {
        tool_calls: [
          { id: "call_1", type: "function", function: { name: "search", arguments: "{}" } },
          { id: "call_2", type: "function", function: { name: "search", arguments: "{" } },
        ],
      },
    });
    const history = [mixed, toolResult("call_1")];
    expect(repairToolCalls(history).messages).toBe(history);
    expect(shapeOf(repairToolCalls([mixed]).messages)).toEqual([
      "ai(call_1,call_2)",
      "tool(call_1)",
    ]);
  });
});

describe("raw OpenAI-shaped calls", () => {
  const raw = (id: string, args = '{"q":"x"}') => ({
    role: "assistant",
    content: null,
    additional_kwargs: {
      tool_calls: [{ id, type: "function", function: { name: "lookup", arguments: args } }],
    },
  });

  it("counts calls present only in additional_kwargs.tool_calls", () => {
    const { messages, repairs } = repairToolCalls([
      raw("call_7"),
      { role: "user", content: "next" },
    ]);
    expect(shapeOf(messages)).toEqual(["ai(call_7)", "tool(call_7)", "ai", "user"]);
    expect(repairs.map((repair) => repair.kind)).toEqual([
      "call_listed",
      "placeholder_inserted",
      "turn_inserted",
    ]);
    expect(repairs[1]).toMatchObject({
      toolCallId: "call_7",
      toolName: "lookup",
      reason: "interrupted",
    });
  });

  // The Anthropic client sends tool_calls only: without the listing, its result would answer nothing.
  it("lists a raw call in tool_calls, with its arguments parsed, even when it is answered", () => {
    const history = [raw("call_7"), { role: "tool", tool_call_id: "call_7", content: "42" }];
    const { messages, repairs } = repairToolCalls(history);
    expect(repairs.map((repair) => [repair.kind, repair.toolCallId, repair.outputIndex])).toEqual([
      ["call_listed", "call_7", 0],
    ]);
    expect(messages[0]).toEqual({
      ...history[0],
      tool_calls: [{ id: "call_7", name: "lookup", args: { q: "x" }, type: "tool_call" }],
    });
    expect(messages[1]).toBe(history[1]);
    expect(repairToolCalls(messages).messages).toBe(messages);
  });

  it("reads unparsable raw arguments as invalid_arguments, and lists the call with no arguments", () => {
    const { messages, repairs } = repairToolCalls([raw("call_7", '{"q": "tru')]);
    expect(repairs.find((repair) => repair.kind === "placeholder_inserted")?.reason).toBe(
      "invalid_arguments",
    );
    expect((messages[0] as unknown as { tool_calls: unknown[] }).tool_calls).toEqual([
      { id: "call_7", name: "lookup", args: {}, type: "tool_call" },
    ]);
  });

  it("reads top-level OpenAI-shaped tool_calls by function name", () => {
    const message = {
      role: "assistant",
      tool_calls: [
        { id: "call_3", type: "function", function: { name: "weather", arguments: "{}" } },
      ],
    };
    const { repairs } = repairToolCalls([message]);
    expect(repairs[0]).toMatchObject({ toolCallId: "call_3", toolName: "weather" });
  });

  it("ignores stale raw calls when tool_calls is set, as provider converters do", () => {
    const message = new AIMessage({
      content: "",
      tool_calls: [{ id: "call_1", name: "search", args: {} }],
      additional_kwargs: {
        tool_calls: [{ id: "stale", type: "function", function: { name: "x", arguments: "{}" } }],
      },
    });
    const history = [message, toolResult("call_1")];
    expect(repairToolCalls(history).messages).toBe(history);
  });
});

describe("calls without ids", () => {
  it("gives the call a deterministic id in a copy of its AI message, and answers it", () => {
    const original = new AIMessage({
      content: "",
      tool_calls: [
        { id: "call_1", name: "search", args: {} },
        { id: "", name: "fetch", args: {} },
      ],
    });
    const history = [human("hi"), original, toolResult("call_1"), human("next")];
    const before = snapshot(history);
    const { messages, repairs } = repairToolCalls(history);

    expect(shapeOf(messages)).toEqual([
      "human",
      "ai(call_1,tcr_1_1)",
      "tool(call_1)",
      "tool(tcr_1_1)",
      "ai",
      "human",
    ]);
    const copy = messages[1] as AIMessage;
    expect(copy).not.toBe(original);
    expect(AIMessage.isInstance(copy)).toBe(true);
    expect(copy.id).toBe(original.id);
    expect(copy.content).toBe(original.content);
    expect((copy.lc_kwargs as { tool_calls: { id: string }[] }).tool_calls[1]?.id).toBe("tcr_1_1");
    expect(original.tool_calls?.[1]?.id).toBe("");
    expect(snapshot(history)).toBe(before);
    expect(repairs.map((repair) => [repair.kind, repair.toolCallId, repair.toolName])).toEqual([
      ["id_assigned", "tcr_1_1", "fetch"],
      ["placeholder_inserted", "tcr_1_1", "fetch"],
      ["turn_inserted", "tcr_1_1", "fetch"],
    ]);
    expect(repairToolCalls(messages).messages).toBe(messages);
  });

  it("never gives an id that another call of the same message already has", () => {
    const message = new AIMessage({
      content: "",
      tool_calls: [
        { id: "tcr_0_1", name: "search", args: {} }, // assigned by an earlier, persisted repair
        { id: "", name: "calc", args: {} },
      ],
    });
    const { messages } = repairToolCalls([message]);
    expect(shapeOf(messages)).toEqual([
      "ai(tcr_0_1,tcr_0_1_1)",
      "tool(tcr_0_1)",
      "tool(tcr_0_1_1)",
    ]);
    expect(repairToolCalls(messages).messages).toBe(messages);
  });

  it("never gives an id that a call or result elsewhere in the history already has", () => {
    const input = [
      human("hi"),
      aiCalls(["tcr_3_0", "search"]), // persisted by an earlier repair, before the history shifted
      toolResult("tcr_3_0"),
      { type: "ai", tool_calls: [{ name: "fetch", args: {} }] },
    ];
    const { messages } = repairToolCalls(input);
    expect(shapeOf(messages)).toEqual([
      "human",
      "ai(tcr_3_0)",
      "tool(tcr_3_0)",
      "ai(tcr_3_0_1)",
      "tool(tcr_3_0_1)",
    ]);
  });

  it("copies a message whose class computes tool_calls in a getter without calling a setter", () => {
    class ComputedAiMessage {
      readonly type = "ai";
      readonly calls = [{ id: "", name: "search", args: {} }];
      get tool_calls() {
        return this.calls;
      }
    }
    const original = new ComputedAiMessage();
    const { messages } = repairToolCalls([original]);
    const copy = messages[0] as ComputedAiMessage;
    expect(copy).toBeInstanceOf(ComputedAiMessage);
    expect(copy.tool_calls[0]?.id).toBe("tcr_0_0");
    expect(original.tool_calls[0]?.id).toBe("");
  });

  it("gives the same ids on every call, so repeated repairs agree", () => {
    const history = [{ type: "ai", tool_calls: [{ name: "x", args: {} }] }, human("next")];
    const first = repairToolCalls(history);
    const second = repairToolCalls(history);
    expect(shapeOf(first.messages)).toEqual(shapeOf(second.messages));
  });

  it("patches ids of raw-only calls in a copy of additional_kwargs", () => {
    const message = {
      role: "assistant",
      additional_kwargs: {
        tool_calls: [{ type: "function", function: { name: "f", arguments: "{}" } }],
      },
    };
    const { messages } = repairToolCalls([message]);
    const copy = messages[0] as typeof message & {
      additional_kwargs: { tool_calls: { id: string }[] };
    };
    expect(copy.additional_kwargs.tool_calls[0]?.id).toBe("tcr_0_0");
    expect((message.additional_kwargs.tool_calls[0] as { id?: string }).id).toBeUndefined();
  });
});

describe("misplaced results", () => {
  const history = () => [
    aiCalls("call_1", "call_2"),
    toolResult("call_2"),
    human("wait"),
    toolResult("call_1"),
  ];

  it("moves a result separated from its call by another message into the call's group (regroup)", () => {
    const input = history();
    const { messages, repairs } = repairToolCalls(input);
    expect(shapeOf(messages)).toEqual([
      "ai(call_1,call_2)",
      "tool(call_1)",
      "tool(call_2)",
      "ai",
      "human",
    ]);
    expect(messages[1]).toBe(input[3]);
    expect(repairs).toEqual([
      {
        kind: "result_moved",
        toolCallId: "call_1",
        toolName: "search",
        callIndex: 0,
        resultIndex: 3,
        outputIndex: 1,
      },
      {
        kind: "turn_inserted",
        toolCallId: "call_2",
        toolName: "search",
        callIndex: 0,
        outputIndex: 3,
      },
    ]);
  });

  it("moves a result that landed in a later AI message's group back to its own", () => {
    const input = [
      aiCalls("call_1"),
      aiCalls("call_2"),
      toolResult("call_1"),
      toolResult("call_2"),
    ];
    const { messages } = repairToolCalls(input);
    expect(shapeOf(messages)).toEqual(["ai(call_1)", "tool(call_1)", "ai(call_2)", "tool(call_2)"]);
  });

  it("leaves the result where it is with misplaced: 'keep', and adds no placeholder", () => {
    const input = history();
    const result = repairToolCalls(input, { misplaced: "keep" });
    // Only the reply between the result and the human message is written; nothing moves.
    expect(shapeOf(result.messages)).toEqual([
      "ai(call_1,call_2)",
      "tool(call_2)",
      "ai",
      "human",
      "tool(call_1)",
    ]);
    expect(result.messages.filter((message) => syntheticReasonOf(message) === undefined)).toEqual(
      input,
    );
    input.forEach((message, index) => {
      expect(result.messages[index < 2 ? index : index + 1]).toBe(message);
    });
    expect(result.repairs).toEqual([
      {
        kind: "turn_inserted",
        toolCallId: "call_2",
        toolName: "search",
        callIndex: 0,
        outputIndex: 2,
      },
    ]);
  });
});

describe("orphan results", () => {
  it("drops a tool result that answers no earlier call (orphans: 'drop')", () => {
    const input = [human("hi"), toolResult("ghost", "boo", "haunt"), aiText("hello")];
    const { messages, repairs } = repairToolCalls(input);
    expect(messages).toEqual([input[0], input[2]]);
    expect(repairs).toEqual([
      { kind: "orphan_dropped", toolCallId: "ghost", toolName: "haunt", resultIndex: 1 },
    ]);
  });

  it("moves a result that stands before its call after it, when no other call or result has its id", () => {
    const input = [toolResult("call_1", "42"), aiCalls("call_1")];
    const { messages, repairs } = repairToolCalls(input);
    // Moved away from the head, the result leaves the AI message first: a gap goes before it.
    expect(shapeOf(messages)).toEqual(["human", "ai(call_1)", "tool(call_1)"]);
    expect(syntheticReasonOf(messages[0])).toBe("turn_order");
    expect(messages[1]).toBe(input[1]);
    expect(messages[2]).toBe(input[0]);
    expect(repairs).toEqual([
      {
        kind: "turn_inserted",
        toolCallId: "call_1",
        toolName: "search",
        resultIndex: 0,
        outputIndex: 0,
      },
      {
        kind: "result_moved",
        toolCallId: "call_1",
        toolName: "search",
        callIndex: 1,
        resultIndex: 0,
        outputIndex: 2,
      },
    ]);
  });

  it("drops a result that stands before its call when the id is on two calls, and answers both", () => {
    const input = [toolResult("call_1"), aiCalls("call_1"), human("again"), aiCalls("call_1")];
    const { messages, repairs } = repairToolCalls(input);
    // The dropped result leaves the AI message first: a gap (a user turn) goes before it, and a
    // reply after the first placeholder.
    expect(shapeOf(messages)).toEqual([
      "human",
      "ai(call_1)",
      "tool(call_1)",
      "ai",
      "human",
      "ai(call_1)",
      "tool(call_1)",
    ]);
    expect(syntheticReasonOf(messages[0])).toBe("turn_order");
    expect(syntheticReasonOf(messages[2])).toBe("interrupted");
    expect(syntheticReasonOf(messages[3])).toBe("turn_order");
    expect(syntheticReasonOf(messages[6])).toBe("interrupted");
    expect(repairs.map((repair) => repair.kind)).toEqual([
      "orphan_dropped",
      "turn_inserted",
      "placeholder_inserted",
      "turn_inserted",
      "placeholder_inserted",
    ]);
  });

  it("leaves a result before its call where it is with misplaced: 'keep', and answers the call", () => {
    const input = [toolResult("call_1"), aiCalls("call_1")];
    const { messages } = repairToolCalls(input, { misplaced: "keep", orphans: "keep" });
    expect(shapeOf(messages)).toEqual(["tool(call_1)", "ai(call_1)", "tool(call_1)"]);
    expect(syntheticReasonOf(messages[2])).toBe("interrupted");
  });

  it("keeps it with orphans: 'keep'", () => {
    const input = [human("hi"), toolResult("ghost"), aiText("hello")];
    expect(repairToolCalls(input, { orphans: "keep" }).messages).toBe(input);
  });

  it("drops tool messages without a tool_call_id", () => {
    const input = [human("hi"), { type: "tool", content: "?" }];
    expect(repairToolCalls(input).messages).toEqual([input[0]]);
  });
});

describe("keep and keep behave like the original design", () => {
  it("only inserts placeholders directly after the AI message and moves nothing", () => {
    const input = [
      toolResult("ghost"),
      aiCalls("call_1", "call_2"),
      toolResult("call_2"),
      human("wait"),
      toolResult("call_3"),
    ];
    const { messages } = repairToolCalls(input, { orphans: "keep", misplaced: "keep" });
    expect(shapeOf(messages)).toEqual([
      "tool(ghost)",
      "ai(call_1,call_2)",
      "tool(call_1)",
      "tool(call_2)",
      "ai",
      "human",
      "tool(call_3)",
    ]);
    expect(syntheticReasonOf(messages[2])).toBe("interrupted");
    expect(syntheticReasonOf(messages[4])).toBe("turn_order");
    expect(messages.filter((message) => syntheticReasonOf(message) === undefined)).toEqual(input);
  });
});

describe("lenient reading", () => {
  it("reads plain objects with role or type like LangChain messages", () => {
    const input = [
      { role: "user", content: "hi" },
      { role: "assistant", content: "", tool_calls: [{ id: "call_1", name: "search", args: {} }] },
      { type: "human", content: "next" },
    ];
    expect(shapeOf(repairToolCalls(input).messages)).toEqual([
      "user",
      "ai(call_1)",
      "tool(call_1)",
      "ai",
      "human",
    ]);
  });

  it("passes junk entries through untouched and never throws", () => {
    const junk = [null, undefined, 42, "text", {}, [], { type: 7 }, { role: null }];
    const input = [...junk, aiCalls("call_1"), ...junk];
    const { messages } = repairToolCalls(input);
    expect(messages.slice(0, junk.length)).toEqual(junk);
    expect(shapeOf([messages[junk.length + 1]])).toEqual(["tool(call_1)"]);
    expect(messages.slice(junk.length + 2)).toEqual(junk);
  });

  it("returns a non-array argument as it is", () => {
    const notAnArray = { length: 3 } as unknown as unknown[];
    expect(repairToolCalls(notAnArray).messages).toBe(notAnArray);
  });

  it("refuses the state in place of its messages, saying to pass the array", () => {
    const state = { messages: [aiCalls("call_1")] };
    expect(() => repairToolCalls(state as never)).toThrow(ToolCallResilienceOptionsError);
    expect(() => repairToolCalls(state as never)).toThrow(
      "Invalid repairToolCalls arguments:\n- expected the message array (state.messages), got an object with a messages field",
    );
  });
});

describe("purity", () => {
  it("never mutates the input array or any message in it", () => {
    const input = [
      aiCalls("call_1", "call_2"),
      toolResult("call_2"),
      human("wait"),
      toolResult("call_1"),
      toolResult("ghost"),
      { type: "ai", tool_calls: [{ name: "x" }] },
    ];
    const copy = [...input];
    const before = snapshot(input);
    repairToolCalls(input);
    expect(input).toEqual(copy);
    input.forEach((message, index) => {
      expect(message).toBe(copy[index]);
    });
    expect(snapshot(input)).toBe(before);
  });
});

describe("window", () => {
  const long = () => [
    aiCalls("old_1"), // dangling, but before the window
    human("a"),
    aiCalls("call_1"),
    toolResult("call_1"),
    toolResult("old_1"), // its call lies before the window
    human("b"),
    aiCalls("call_2"), // dangling, inside the window
    human("c"),
  ];

  it("repairs only calls in the last N messages and leaves the rest untouched", () => {
    const input = long();
    const { messages, repairs } = repairToolCalls(input, { window: 6 });
    // Inside the window: a reply after the result of old_1 (its call lies before the window), and
    // the dangling call_2's placeholder and reply. Nothing before the window changes.
    expect(repairs.map((repair) => [repair.kind, repair.toolCallId])).toEqual([
      ["turn_inserted", "old_1"],
      ["placeholder_inserted", "call_2"],
      ["turn_inserted", "call_2"],
    ]);
    expect(shapeOf(messages)).toEqual([
      "ai(old_1)",
      "human",
      "ai(call_1)",
      "tool(call_1)",
      "tool(old_1)",
      "ai",
      "human",
      "ai(call_2)",
      "tool(call_2)",
      "ai",
      "human",
    ]);
    input.slice(0, 5).forEach((message, index) => {
      expect(messages[index]).toBe(message);
    });
    expect(messages[6]).toBe(input[5]);
  });

  it("never drops a result inside the window whose call lies before it", () => {
    const input = long();
    const { messages } = repairToolCalls(input, { window: 4 });
    expect(messages).toContain(input[4]);
  });

  it("takes the tool messages that open the window as answers to a call before it", () => {
    const input = [
      aiCalls("call_1", "call_2"),
      toolResult("call_1"),
      toolResult("call_2"),
      human("x"),
    ];
    // Kept, not dropped as orphans; the human message after them gets its reply.
    const { messages, repairs } = repairToolCalls(input, { window: 2 });
    expect(shapeOf(messages)).toEqual([
      "ai(call_1,call_2)",
      "tool(call_1)",
      "tool(call_2)",
      "ai",
      "human",
    ]);
    input.slice(0, 3).forEach((message, index) => {
      expect(messages[index]).toBe(message);
    });
    // The reply is recorded under the call its result answers; the AI message that made it lies
    // before the window, which the engine does not read.
    expect(repairs).toEqual([
      {
        kind: "turn_inserted",
        toolCallId: "call_2",
        toolName: "search",
        outputIndex: 3,
      },
    ]);
    const answered = [aiCalls("call_1"), toolResult("call_1"), aiText("done"), human("x")];
    expect(repairToolCalls(answered, { window: 3 }).messages).toBe(answered);
  });

  it("never reads a message before the window, on the clean path or the repair path", () => {
    const unreadable = new Proxy(
      {},
      {
        get() {
          throw new Error("a message before the window was read");
        },
      },
    );
    const clean = [unreadable, unreadable, human("hi"), aiCalls("call_1"), toolResult("call_1")];
    expect(repairToolCalls(clean, { window: 3 }).messages).toBe(clean);
    const broken = [unreadable, unreadable, human("hi"), aiCalls("call_1"), human("next")];
    const { messages } = repairToolCalls(broken, { window: 3 });
    expect(messages[0] === unreadable && messages[1] === unreadable).toBe(true);
    expect(shapeOf(messages.slice(2))).toEqual([
      "human",
      "ai(call_1)",
      "tool(call_1)",
      "ai",
      "human",
    ]);
  });

  it("behaves as no window when the window covers the whole history", () => {
    const input = long();
    const whole = repairToolCalls(input);
    const windowed = repairToolCalls(input, { window: input.length });
    expect(shapeOf(windowed.messages)).toEqual(shapeOf(whole.messages));
  });
});

describe("synthetic marker", () => {
  it("marks inserted messages with response_metadata.synthetic and their reason", () => {
    const { messages } = repairToolCalls([aiCalls("call_1")]);
    expect((messages[1] as ToolMessage).response_metadata).toEqual({
      synthetic: true,
      synthetic_reason: "interrupted",
    });
  });

  it("leaves the marker out with markSynthetic: false, and changes nothing else", () => {
    const marked = repairToolCalls([aiCalls("call_1")]).messages[1] as ToolMessage;
    const plain = repairToolCalls([aiCalls("call_1")], { markSynthetic: false })
      .messages[1] as ToolMessage;
    expect(plain.response_metadata).toEqual({});
    expect(syntheticReasonOf(plain)).toBeUndefined();
    expect({ ...plain.toDict().data, response_metadata: {}, id: undefined }).toEqual({
      ...marked.toDict().data,
      response_metadata: {},
      id: undefined,
    });
  });
});

describe("policy reuse", () => {
  it("takes a prebuilt policy or plain options alike", () => {
    const input = [aiCalls("call_1")];
    const policy = createRepairPolicy({ placeholder: "stopped {tool_name}" });
    const fromPolicy = repairToolCalls(input, policy).messages[1] as ToolMessage;
    const fromOptions = repairToolCalls(input, { placeholder: "stopped {tool_name}" })
      .messages[1] as ToolMessage;
    expect(fromPolicy.content).toBe("stopped search");
    expect(fromOptions.content).toBe("stopped search");
  });

  it("asks a context locale resolver once, and uses the policy's locale if it throws", () => {
    const input = [aiCalls("call_1", "call_2")];
    const policy = createRepairPolicy({ locale: "ru" });
    let asked = 0;
    const texts = (locale: () => string) =>
      repairToolCalls(input, policy, { locale })
        .messages.slice(1)
        .map((message) => (message as ToolMessage).content);
    expect(
      texts(() => {
        asked++;
        return "de";
      }),
    ).toEqual([PLACEHOLDER_CATALOG.de.interrupted, PLACEHOLDER_CATALOG.de.interrupted]);
    expect(asked).toBe(1);
    expect(
      texts(() => {
        throw new Error("no locale");
      }),
    ).toEqual([PLACEHOLDER_CATALOG.ru.interrupted, PLACEHOLDER_CATALOG.ru.interrupted]);
  });

  it("uses the context locale over the policy's", () => {
    const input = [aiCalls("call_1")];
    const policy = createRepairPolicy({ locale: "fr" });
    const text = (repairToolCalls(input, policy, { locale: "ko" }).messages[1] as ToolMessage)
      .content;
    expect(text).toBe(PLACEHOLDER_CATALOG.ko.interrupted);
  });
});

describe("unreadable entries", () => {
  const throwingType = () => ({
    get type(): string {
      throw new Error("type");
    },
  });
  const throwingProxy = () =>
    new Proxy(
      {},
      {
        get() {
          throw new Error("get");
        },
        ownKeys() {
          throw new Error("ownKeys");
        },
      },
    );

  it("repairs around entries whose reads throw, which stay where they are", () => {
    const unreadable = throwingType();
    const proxy = throwingProxy();
    const history = [aiCalls("call_1"), unreadable, proxy, human("next")];
    const { messages, repairs } = repairToolCalls(history);
    expect(repairs.map((repair) => repair.kind)).toEqual(["placeholder_inserted"]);
    expect(messages[0]).toBe(history[0]);
    expect(syntheticReasonOf(messages[1])).toBe("interrupted");
    expect(messages).toHaveLength(5);
    expect(messages[2]).toBe(unreadable);
    expect(messages[3]).toBe(proxy);
    expect(messages[4]).toBe(history[3]);
  });

  it("returns the very same array when nothing else needs repair", () => {
    const history = [human("hi"), throwingType(), aiText("hello")];
    expect(repairToolCalls(history).messages).toBe(history);
  });

  it("reads an AI message whose call throws as junk, since no client could send it", () => {
    const ai = aiCalls("call_1");
    Object.defineProperty((ai as AIMessage).tool_calls?.[0], "id", {
      get() {
        throw new Error("id");
      },
    });
    const history = [ai, human("next")];
    expect(repairToolCalls(history)).toEqual({ messages: history, repairs: [] });
  });

  it("passes a history whose array itself throws on read on as it is", () => {
    const history = new Proxy([aiCalls("call_1")], {
      get(target, key) {
        if (key === "0") throw new Error("index");
        return Reflect.get(target, key);
      },
    });
    expect(repairToolCalls(history).messages).toBe(history);
  });
});

describe("an array standing where a message is", () => {
  // Junk a store can hold: an array carrying a message's fields. Its fields are read like any
  // object's, so its kind, its calls and its result agree, and nothing real is dropped.
  const arrayMessage = (fields: Record<string, unknown>) => Object.assign([], fields);
  const kindsAndIds = (repairs: readonly ToolCallRepair[]) =>
    repairs.map((repair) => `${repair.kind}:${repair.toolCallId}`);

  it("takes an array tool message as the result it carries", () => {
    const history = [
      aiCalls(["a", "search"], ["b", "fetch"]),
      arrayMessage({ type: "tool", tool_call_id: "a", content: "found" }),
    ];
    expect(kindsAndIds(repairToolCalls(history).repairs)).toEqual(["placeholder_inserted:b"]);
  });

  it("moves an array tool message back to its call like any result", () => {
    const history = [
      aiCalls(["a", "search"], ["b", "fetch"]),
      human("go on"),
      arrayMessage({ type: "tool", tool_call_id: "a", content: "found" }),
    ];
    expect(kindsAndIds(repairToolCalls(history).repairs)).toEqual([
      "result_moved:a",
      "placeholder_inserted:b",
      "turn_inserted:b",
    ]);
  });

  it("reads an array AI message's calls, and keeps the result that answers one", () => {
    const history = [
      arrayMessage({ type: "ai", content: "", tool_calls: [{ id: "a", args: {} }] }),
      toolResult("a", "found"),
    ];
    const { messages, repairs } = repairToolCalls(history);
    expect(kindsAndIds(repairs)).toEqual(["name_assigned:a"]);
    expect(messages).toHaveLength(2);
  });
});
