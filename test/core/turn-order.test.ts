/**
 * The order of turns: a repair for every wire (`"any"`) writes a short synthetic reply between
 * tool results and a user message right after them (Bedrock Converse and Mistral refuse a user
 * message there), and a synthetic gap, a user turn, before an AI message that dropped orphans left
 * first or right after another AI message (Bedrock Converse wants a user message first, and roles
 * that alternate). A repair for OpenAI or Anthropic writes neither.
 * Also: a call without a name takes its result's name, and an ambiguous id-less result is paired
 * in order rather than dropped. The providers' own chat models hold these to their rules in
 * `test/providers.turn-order.test.ts`.
 */
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { PLACEHOLDER_CATALOG, TURN_CATALOG } from "../../src/core/locales.js";
import { repairToolCallsCarefully } from "../../src/core/repair-langchain.js";
import { repairOpenAIChatMessages } from "../../src/formats/index.js";
import { type RepairTarget, repairToolCalls, syntheticReasonOf } from "../../src/index.js";
import {
  aiCalls,
  aiText,
  human,
  readmeThread,
  shapeOf,
  system,
  toolResult,
} from "../helpers/history.js";

const kinds = (repairs: readonly { kind: string }[]) => repairs.map((repair) => repair.kind);

describe("a reply between tool results and a user message", () => {
  it("is written after the placeholder of a dangling call when the user spoke next", () => {
    const { messages, repairs } = repairToolCalls(readmeThread());

    expect(shapeOf(messages)).toEqual([
      "human",
      "ai(call_deploy_1)",
      "tool(call_deploy_1)",
      "ai",
      "human",
    ]);
    const reply = messages[3] as AIMessage;
    expect(reply).toBeInstanceOf(AIMessage);
    expect(reply.text).toBe(TURN_CATALOG.en.reply);
    expect(reply.tool_calls).toEqual([]);
    expect(syntheticReasonOf(reply)).toBe("turn_order");
    expect(kinds(repairs)).toEqual(["placeholder_inserted", "turn_inserted"]);
    expect(repairs[1]).toMatchObject({
      toolCallId: "call_deploy_1",
      toolName: "deploy",
      callIndex: 1,
      outputIndex: 3,
    });
  });

  it("speaks the request's locale, and carries no marker with markSynthetic off", () => {
    const { messages } = repairToolCalls(readmeThread(), {
      locale: "de-AT",
      markSynthetic: false,
    });

    expect((messages[3] as AIMessage).text).toBe(TURN_CATALOG.de.reply);
    expect((messages[2] as ToolMessage).text).toBe(PLACEHOLDER_CATALOG.de.interrupted);
    expect(syntheticReasonOf(messages[3])).toBeUndefined();
  });

  it("is written after real results that a user message follows, the history otherwise sound", () => {
    const history = [human("find"), aiCalls("call_1"), toolResult("call_1"), human("thanks")];
    const { messages, repairs } = repairToolCalls(history);

    expect(shapeOf(messages)).toEqual(["human", "ai(call_1)", "tool(call_1)", "ai", "human"]);
    expect(messages[2]).toBe(history[2]);
    expect(kinds(repairs)).toEqual(["turn_inserted"]);
  });

  it("is not written where an AI message already follows, nor for the OpenAI and Anthropic clients", () => {
    const answered = [human("find"), aiCalls("call_1"), aiText("done"), human("thanks")];
    expect(shapeOf(repairToolCalls(answered).messages)).toEqual([
      "human",
      "ai(call_1)",
      "tool(call_1)",
      "ai",
      "human",
    ]);
    expect(kinds(repairToolCalls(answered).repairs)).toEqual(["placeholder_inserted"]);

    for (const target of [
      "openai-completions",
      "openai-responses",
      "anthropic",
    ] as RepairTarget[]) {
      const { messages } = repairToolCalls(readmeThread(), { target });
      expect(shapeOf(messages)).toEqual([
        "human",
        "ai(call_deploy_1)",
        "tool(call_deploy_1)",
        "human",
      ]);
      const clean = [human("find"), aiCalls("call_1"), toolResult("call_1"), human("thanks")];
      expect(repairToolCalls(clean, { target }).messages).toBe(clean);
    }
  });

  it("is written once per group, after its last result, with results moved back first", () => {
    const history = [
      human("find both"),
      aiCalls("call_1", "call_2"),
      human("still there?"),
      toolResult("call_2"),
      aiCalls("call_3"),
      toolResult("call_3"),
      human("and now?"),
    ];
    const { messages, repairs } = repairToolCalls(history);

    expect(shapeOf(messages)).toEqual([
      "human",
      "ai(call_1,call_2)",
      "tool(call_1)",
      "tool(call_2)",
      "ai",
      "human",
      "ai(call_3)",
      "tool(call_3)",
      "ai",
      "human",
    ]);
    expect(kinds(repairs)).toEqual([
      "placeholder_inserted",
      "result_moved",
      "turn_inserted",
      "turn_inserted",
    ]);
  });

  it("never reads a result before the window", () => {
    const history = [aiCalls("call_1"), toolResult("call_1"), human("next"), aiText("ok")];
    expect(repairToolCalls(history, { window: 2 }).messages).toBe(history);
    expect(shapeOf(repairToolCalls(history, { window: 3 }).messages)).toEqual([
      "ai(call_1)",
      "tool(call_1)",
      "ai",
      "human",
      "ai",
    ]);
  });

  it("comes back unchanged from a second repair", () => {
    const once = repairToolCalls(readmeThread());
    const twice = repairToolCalls(once.messages);
    expect(twice.messages).toBe(once.messages);
    expect(twice.repairs).toEqual([]);
  });
});

describe("a gap before an AI message that dropped orphans left first, or after another", () => {
  it("is written as a user turn after the system message of a trimmed history", () => {
    const trimmed = [
      system("You deploy services."),
      toolResult("call_cut_off", "deployed", "deploy"),
      aiText("Billing is deployed."),
      human("And the API?"),
    ];
    const { messages, repairs } = repairToolCalls(trimmed);

    expect(shapeOf(messages)).toEqual(["system", "human", "ai", "human"]);
    const gap = messages[1] as HumanMessage;
    expect(gap).toBeInstanceOf(HumanMessage);
    expect(gap.text).toBe(TURN_CATALOG.en.gap);
    expect(syntheticReasonOf(gap)).toBe("turn_order");
    expect(messages[2]).toBe(trimmed[2]);
    expect(kinds(repairs)).toEqual(["orphan_dropped", "turn_inserted"]);
    expect(repairs[1]).toMatchObject({
      toolCallId: "call_cut_off",
      toolName: "deploy",
      resultIndex: 1,
      outputIndex: 1,
    });
  });

  it("is written with no system message too, and before an AI message that makes calls", () => {
    const trimmed = [
      toolResult("call_cut_off"),
      aiCalls("call_2"),
      toolResult("call_2"),
      aiText("done"),
    ];
    expect(shapeOf(repairToolCalls(trimmed).messages)).toEqual([
      "human",
      "ai(call_2)",
      "tool(call_2)",
      "ai",
    ]);
  });

  it("is written between two AI messages that a dropped orphan stood between", () => {
    const history = [human("hi"), aiText("Deploying."), toolResult("call_gone"), aiText("Done.")];
    const { messages, repairs } = repairToolCalls(history);

    expect(shapeOf(messages)).toEqual(["human", "ai", "human", "ai"]);
    expect((messages[2] as HumanMessage).text).toBe(TURN_CATALOG.en.gap);
    expect(kinds(repairs)).toEqual(["orphan_dropped", "turn_inserted"]);
  });

  it("is not written when a user message comes first anyway, nor for the Anthropic client", () => {
    const userFirst = [toolResult("call_cut_off"), human("hi"), aiText("hello")];
    expect(shapeOf(repairToolCalls(userFirst).messages)).toEqual(["human", "ai"]);

    const trimmed = [toolResult("call_cut_off"), aiText("Billing is deployed.")];
    expect(shapeOf(repairToolCalls(trimmed, { target: "anthropic" }).messages)).toEqual(["ai"]);
  });

  it("is not written when orphans are kept, or when the window leaves the head out", () => {
    const trimmed = [toolResult("call_cut_off"), aiText("Billing is deployed.")];
    expect(repairToolCalls(trimmed, { orphans: "keep" }).messages).toBe(trimmed);
    expect(repairToolCalls(trimmed, { window: 1 }).messages).toBe(trimmed);
  });
});

describe("the shortcut and the careful analysis agree on the turns they write", () => {
  const histories = {
    "a dangling call, then the user": readmeThread(),
    "results, then the user": [aiCalls("call_1"), toolResult("call_1"), human("thanks")],
    "a dangling call of two, then the user": [
      aiCalls("call_1", "call_2"),
      toolResult("call_2"),
      human("go"),
    ],
    "a dangling call kept in place": [
      aiCalls("call_1", "call_2"),
      toolResult("call_2"),
      human("go"),
    ],
    "a trimmed head": [system("s"), toolResult("gone"), aiText("ok"), human("go")],
  };

  it.each(Object.entries(histories))("%s", (_name, history) => {
    for (const misplaced of ["regroup", "keep"] as const) {
      const fast = repairToolCalls(history, { misplaced });
      const careful = repairToolCallsCarefully(history, { misplaced });
      expect(shapeOf(fast.messages)).toEqual(shapeOf(careful.messages));
      expect(fast.repairs).toEqual(careful.repairs);
    }
  });
});

describe("names and id-less results", () => {
  it("gives a call without a name its result's name, so both name the same tool", () => {
    const history = [
      human("look it up"),
      new AIMessage({ content: "", tool_calls: [{ id: "call_1", name: "", args: {} }] }),
      new ToolMessage({ content: "42", tool_call_id: "call_1", name: "lookup" }),
      aiText("It is 42."),
    ];
    const { messages, repairs } = repairToolCalls(history);

    expect((messages[1] as AIMessage).tool_calls?.[0]?.name).toBe("lookup");
    expect(messages[2]).toBe(history[2]);
    expect(repairs).toEqual([
      expect.objectContaining({ kind: "name_assigned", toolCallId: "call_1", toolName: "lookup" }),
    ]);
  });

  it("keeps the name 'unknown' for a call without a name whose result has none either", () => {
    const history = [
      new AIMessage({ content: "", tool_calls: [{ id: "call_1", name: "", args: {} }] }),
      new ToolMessage({ content: "42", tool_call_id: "call_1" }),
    ];
    expect((repairToolCalls(history).messages[0] as AIMessage).tool_calls?.[0]?.name).toBe(
      "unknown",
    );
  });

  it("pairs one id-less result with the first of two id-less calls of its name, never dropping it", () => {
    const idless = (name: string) =>
      ({ name, args: { query: "x" } }) as { id: string; name: string; args: object };
    const history = [
      human("search twice"),
      new AIMessage({ content: "", tool_calls: [idless("search"), idless("search")] }),
      new ToolMessage({
        content: "found it",
        tool_call_id: undefined as unknown as string,
        name: "search",
      }),
      aiText("done"),
    ];
    const { messages, repairs } = repairToolCalls(history);

    expect(kinds(repairs)).not.toContain("orphan_dropped");
    const calls = (messages[1] as AIMessage).tool_calls ?? [];
    expect((messages[2] as ToolMessage).content).toBe("found it");
    expect((messages[2] as ToolMessage).tool_call_id).toBe(calls[0]?.id);
    expect((messages[3] as ToolMessage).tool_call_id).toBe(calls[1]?.id);
    expect(syntheticReasonOf(messages[3])).toBe("interrupted");
  });
});

describe("the native formats", () => {
  it("write no synthetic turns: their wires (OpenAI, Anthropic, the AI SDK) need none", () => {
    const { messages } = repairOpenAIChatMessages(
      [
        { role: "user", content: "Deploy billing" },
        {
          role: "assistant",
          content: null,
          tool_calls: [
            { id: "call_1", type: "function", function: { name: "deploy", arguments: "{}" } },
          ],
        },
        { role: "user", content: "Never mind" },
      ],
      { logger: false },
    );
    expect(messages.map((message) => message.role)).toEqual(["user", "assistant", "tool", "user"]);
  });
});
