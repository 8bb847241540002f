/**
 * `danglingToolCallMiddleware` stacked with LangChain's `summarizationMiddleware` in a real
 * `createAgent`: what the dangling counter says when a summary removes an AI message whose tool
 * calls dangle before any model call has seen it.
 *
 * The rule under test: `tool_call_resilience.dangling_tool_calls` counts the calls that would have
 * reached the provider without a result. A call summarized away before the model call never does,
 * so it counts in `tool_calls` and not as dangling. To count it anyway, give the middleware
 * `persist: true` and list it before `summarizationMiddleware`: its `beforeModel` hook then runs
 * first, repairs and counts the call, and the summary is made of the repaired history. Without
 * `persist` the repair runs only in `wrapModelCall`, after every `beforeModel` hook, so the order
 * of the two middleware does not matter.
 *
 * The scenario, on one checkpointed thread:
 * - turn 1: the model calls `search` twice in one AI message; the run is aborted while the tools
 *   run, so the thread is left as `[h1, ai_search]` and both calls dangle;
 * - turn 2: the human writes again; the summary triggers (3 messages or more) and keeps only the
 *   last message, so `ai_search` is summarized away before the model call.
 */

import type { BaseMessage } from "@langchain/core/messages";
import { MemorySaver } from "@langchain/langgraph";
import { type AgentMiddleware, createAgent, summarizationMiddleware } from "langchain";
import { describe, expect, it } from "vitest";
import { PLACEHOLDER_CATALOG } from "../../src/core/locales.js";
import { danglingToolCallMiddleware } from "../../src/index.js";
import {
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_OUTCOME,
  ATTR_REASON,
  ATTR_REPAIR_KIND,
  METRIC_DANGLING_TOOL_CALLS,
  METRIC_MODEL_CALLS,
  METRIC_REPAIRS,
  METRIC_THREAD_RECENT_DANGLING_TOOL_CALLS,
  METRIC_TOOL_CALLS,
  OUTCOME_VALUE_CLEAN,
  OUTCOME_VALUE_REPAIRED,
  REASON_VALUE_INTERRUPTED,
  REPAIR_KIND_VALUE_PLACEHOLDER_INSERTED,
  REPAIR_KIND_VALUE_TURN_INSERTED,
} from "../../src/telemetry/semconv.js";
import {
  abortMidTool,
  aiAnswer,
  aiToolCall,
  humanTurn,
  onThread,
  receivedBy,
  scriptedModel,
  searchTool,
  stallingSearchTool,
  storedMessages,
} from "../helpers/agent.js";
import { metricsHarness } from "../helpers/telemetry.js";

const THREAD = "summarized-thread";
const MODEL_NAME = "fake-gpt";
const SEARCH_CALLS = [
  { id: "call_search_a", name: "search", args: { query: "flights to Lisbon" } },
  { id: "call_search_b", name: "search", args: { query: "hotels in Lisbon" } },
] as const;
const SUMMARY_PREFIX = "Here is a summary of the conversation to date:";
const PLACEHOLDER = PLACEHOLDER_CATALOG.en.interrupted;

/** Where our middleware stands in the `middleware` list, relative to `summarizationMiddleware`. */
type Placement = "before summarization" | "after summarization";

/** The stack of one case: how our middleware is configured and where it is listed. */
interface StackOptions {
  readonly persist: boolean;
  readonly placement: Placement;
  /** How many messages the summary keeps (default 1: only the human's new message). */
  readonly keep?: number;
}

/**
 * The real stack: `createAgent` with a `MemorySaver`, `summarizationMiddleware` over a fake
 * summary model, and our middleware reporting to an in-memory meter provider. The agent's model
 * calls `search` twice, then answers each later turn with text.
 */
function summarizedStack({ persist, placement, keep = 1 }: StackOptions) {
  const harness = metricsHarness();
  const model = Object.assign(
    scriptedModel(
      aiToolCall("ai_search", ...SEARCH_CALLS),
      aiAnswer("answer_2", "Nothing came back from the searches; shall I try again?"),
      aiAnswer("answer_3", "Still here."),
    ),
    { model: MODEL_NAME },
  );
  const summaryModel = scriptedModel(
    aiAnswer("summary_1", "The user asked for flights and hotels in Lisbon."),
    aiAnswer("summary_2", "The user is planning a trip to Lisbon."),
  );
  const ours = danglingToolCallMiddleware({
    persist,
    logger: false,
    meterProvider: harness.meterProvider,
  });
  const summarization = summarizationMiddleware({
    model: summaryModel,
    // Turn 1 reaches the model with 1 message; turn 2 with 3 or more, so it is summarized.
    trigger: { messages: 3 },
    keep: { messages: keep },
  });
  const middleware: AgentMiddleware[] =
    placement === "before summarization" ? [ours, summarization] : [summarization, ours];
  const { tool, started } = stallingSearchTool();
  const agent = createAgent({
    model,
    tools: [tool],
    checkpointer: new MemorySaver(),
    middleware,
  });
  return { agent, model, summaryModel, harness, started };
}

/** Runs the scenario: turn 1 aborted mid-tool (both calls dangle), then turn 2. */
async function runScenario(options: StackOptions) {
  const stack = summarizedStack(options);
  await abortMidTool(
    stack.agent,
    stack.started,
    THREAD,
    humanTurn("h1", "Find flights and hotels."),
  );
  await stack.agent.invoke({ messages: [humanTurn("h2", "Anything yet?")] }, onThread(THREAD));
  return stack;
}

/** The ids of the tool calls in `messages` that no later `ToolMessage` answers. */
function unansweredCalls(messages: readonly BaseMessage[]): string[] {
  const answered = new Set(
    messages.flatMap((message) =>
      message.type === "tool" && "tool_call_id" in message ? [String(message.tool_call_id)] : [],
    ),
  );
  return messages
    .flatMap((message) =>
      "tool_calls" in message && Array.isArray(message.tool_calls) ? message.tool_calls : [],
    )
    .map((call: { id?: string }) => call.id ?? "")
    .filter((id) => !answered.has(id));
}

/** The text of the prompt the summary model got on its `index`-th call. */
function summaryPrompt(summaryModel: ReturnType<typeof scriptedModel>, index = 0): string {
  return String(receivedBy(summaryModel, index)[0]?.content);
}

/** How often `text` occurs in `within`. */
function occurrences(within: string, text: string): number {
  return within.split(text).length - 1;
}

/**
 * Every counter of the scenario, read for the agent's model and the `search` tool. Each total is
 * read without attributes too, so a series under any other model, tool or reason would show.
 */
async function countersOf(harness: ReturnType<typeof metricsHarness>) {
  const model = { [ATTR_GEN_AI_REQUEST_MODEL]: MODEL_NAME };
  const search = { ...model, [ATTR_GEN_AI_TOOL_NAME]: "search" };
  return {
    toolCalls: await harness.sum(METRIC_TOOL_CALLS, search),
    toolCallsAnywhere: await harness.sum(METRIC_TOOL_CALLS),
    dangling: await harness.sum(METRIC_DANGLING_TOOL_CALLS, {
      ...search,
      [ATTR_REASON]: REASON_VALUE_INTERRUPTED,
    }),
    danglingAnywhere: await harness.sum(METRIC_DANGLING_TOOL_CALLS),
    threadDangling: await harness.sum(METRIC_THREAD_RECENT_DANGLING_TOOL_CALLS, model),
    repairs: await harness.sum(METRIC_REPAIRS, {
      ...model,
      [ATTR_REPAIR_KIND]: REPAIR_KIND_VALUE_PLACEHOLDER_INSERTED,
    }),
    turns: await harness.sum(METRIC_REPAIRS, {
      ...model,
      [ATTR_REPAIR_KIND]: REPAIR_KIND_VALUE_TURN_INSERTED,
    }),
    repairsAnywhere: await harness.sum(METRIC_REPAIRS),
    cleanModelCalls: await harness.sum(METRIC_MODEL_CALLS, {
      ...model,
      [ATTR_OUTCOME]: OUTCOME_VALUE_CLEAN,
    }),
    repairedModelCalls: await harness.sum(METRIC_MODEL_CALLS, {
      ...model,
      [ATTR_OUTCOME]: OUTCOME_VALUE_REPAIRED,
    }),
  };
}

/*
 * Ground truth, worked out by hand.
 *
 * Turn 1: the model is called with [h1] (clean) and issues `ai_search` with two `search` calls:
 * tool_calls{search} = 2, whatever the stack. The run is aborted in the tools step, so the thread
 * stores [h1, ai_search] and both calls dangle. The summary does not trigger (1 message).
 *
 * Turn 2, without our `beforeModel` hook (no persist), or with it listed after the summary: the
 * summary sees [h1, ai_search, h2] (3 messages, it triggers), keeps the last message, and
 * summarizes [h1, ai_search]. The state becomes [summary, h2]. The model request holds no tool
 * call at all, so no call reaches the provider unanswered: dangling 0, repairs 0, both model calls
 * clean. The two calls were issued (2) and never dangled at a model call (0).
 *
 * Turn 2, with persist and our middleware listed before the summary: our hook runs first, sees
 * [h1, ai_search, h2], finds two dangling calls (reason `interrupted`), and writes
 * [h1, ai_search, placeholder_a, placeholder_b, reply, h2]: dangling 2, repairs 3 (2 placeholders,
 * and the synthetic reply that keeps h2 from following tool results: the fake model's wire is
 * `"any"`). The summary then sees 6 messages, keeps h2, and summarizes the repaired
 * [h1, ai_search, placeholder_a, placeholder_b, reply].
 * The model gets [summary, h2], clean; the call is reported as `repaired` on behalf of the hook,
 * with the model's name, and the calls are counted there once. Model calls: 1 clean, 1 repaired.
 */
const TRUTH = {
  summarizedAway: {
    toolCalls: 2,
    toolCallsAnywhere: 2,
    dangling: 0,
    danglingAnywhere: 0,
    threadDangling: 0,
    repairs: 0,
    turns: 0,
    repairsAnywhere: 0,
    cleanModelCalls: 2,
    repairedModelCalls: 0,
  },
  repairedBeforeSummary: {
    toolCalls: 2,
    toolCallsAnywhere: 2,
    dangling: 2,
    danglingAnywhere: 2,
    threadDangling: 2,
    repairs: 2,
    turns: 1,
    repairsAnywhere: 3,
    cleanModelCalls: 1,
    repairedModelCalls: 1,
  },
} as const;

describe("danglingToolCallMiddleware stacked with summarizationMiddleware", () => {
  describe("baseline: tools that answer", () => {
    it("counts 2 tool calls and 0 dangling, with every model call clean", async () => {
      // The same stack (persist, ours first) with a search that answers. Turn 1 calls the model
      // twice ([h1], then [summary, ai_search, result_a, result_b]: the summary moves its cut back
      // to keep the calls with their results), turn 2 once: 3 clean calls, nothing dangles.
      const harness = metricsHarness();
      const model = Object.assign(
        scriptedModel(
          aiToolCall("ai_search", ...SEARCH_CALLS),
          aiAnswer("answer_1", "Found both."),
          aiAnswer("answer_2", "Anything else?"),
        ),
        { model: MODEL_NAME },
      );
      const agent = createAgent({
        model,
        tools: [searchTool()],
        checkpointer: new MemorySaver(),
        middleware: [
          danglingToolCallMiddleware({
            persist: true,
            logger: false,
            meterProvider: harness.meterProvider,
          }),
          summarizationMiddleware({
            model: scriptedModel(
              aiAnswer("summary_1", "Searched."),
              aiAnswer("summary_2", "Done."),
            ),
            trigger: { messages: 3 },
            keep: { messages: 1 },
          }),
        ],
      });
      await agent.invoke(
        { messages: [humanTurn("h1", "Find flights and hotels.")] },
        onThread(THREAD),
      );
      expect(receivedBy(model, 1).map((message) => message.type)).toEqual([
        "human",
        "ai",
        "tool",
        "tool",
      ]);
      await agent.invoke({ messages: [humanTurn("h2", "Anything yet?")] }, onThread(THREAD));
      expect(await countersOf(harness)).toEqual({ ...TRUTH.summarizedAway, cleanModelCalls: 3 });
    });
  });

  describe("case 1: default placement, no persist", () => {
    it.each<Placement>(["after summarization", "before summarization"])(
      "counts 2 tool calls and 0 dangling, listed %s",
      async (placement) => {
        const { model, harness } = await runScenario({ persist: false, placement });
        expect(await countersOf(harness)).toEqual(TRUTH.summarizedAway);
        // Turn 2's request is valid: the summary and the new message, no call without a result.
        const request = receivedBy(model, 1);
        expect(request.map((message) => message.type)).toEqual(["human", "human"]);
        expect(String(request[0]?.content)).toContain(SUMMARY_PREFIX);
        expect(unansweredCalls(request)).toEqual([]);
      },
    );

    it("summarizes the calls as they were stored: made, with no result", async () => {
      const { summaryModel } = await runScenario({
        persist: false,
        placement: "after summarization",
      });
      const prompt = summaryPrompt(summaryModel);
      for (const call of SEARCH_CALLS) expect(prompt).toContain(call.id);
      expect(prompt).not.toContain("Tool:");
      expect(prompt).not.toContain(PLACEHOLDER);
    });
  });

  describe("case 2: persist, listed before summarization", () => {
    it("counts the 2 dangling calls once, under the model and tool that made them", async () => {
      const { harness } = await runScenario({ persist: true, placement: "before summarization" });
      expect(await countersOf(harness)).toEqual(TRUTH.repairedBeforeSummary);
    });

    it("summarizes the repaired history, and leaves the thread and the request clean", async () => {
      const { agent, model, summaryModel } = await runScenario({
        persist: true,
        placement: "before summarization",
      });
      // The summary model read both calls, each followed by its placeholder result.
      const prompt = summaryPrompt(summaryModel);
      for (const call of SEARCH_CALLS) expect(prompt).toContain(call.id);
      expect(occurrences(prompt, `Tool: search, ${PLACEHOLDER}`)).toBe(2);
      expect(unansweredCalls(receivedBy(model, 1))).toEqual([]);
      const stored = await storedMessages(agent, THREAD);
      expect(stored.map((message) => message.type)).toEqual(["human", "human", "ai"]);
      expect(unansweredCalls(stored)).toEqual([]);
    });

    it("counts nothing again on a later turn", async () => {
      const { agent, harness } = await runScenario({
        persist: true,
        placement: "before summarization",
      });
      await agent.invoke({ messages: [humanTurn("h3", "Still there?")] }, onThread(THREAD));
      expect(await countersOf(harness)).toEqual({
        ...TRUTH.repairedBeforeSummary,
        cleanModelCalls: TRUTH.repairedBeforeSummary.cleanModelCalls + 1,
      });
    });
  });

  describe("case 3: persist, listed after summarization", () => {
    // The summary's beforeModel runs first and removes ai_search; ours then finds [summary, h2]
    // clean and writes nothing. The numbers are those of case 1: persist changes nothing here.
    it("counts 2 tool calls and 0 dangling, as without persist", async () => {
      const { harness } = await runScenario({ persist: true, placement: "after summarization" });
      expect(await countersOf(harness)).toEqual(TRUTH.summarizedAway);
    });

    it("summarizes the unrepaired calls, and stores no placeholder", async () => {
      const { agent, model, summaryModel } = await runScenario({
        persist: true,
        placement: "after summarization",
      });
      const prompt = summaryPrompt(summaryModel);
      for (const call of SEARCH_CALLS) expect(prompt).toContain(call.id);
      expect(prompt).not.toContain(PLACEHOLDER);
      expect(unansweredCalls(receivedBy(model, 1))).toEqual([]);
      const stored = await storedMessages(agent, THREAD);
      expect(stored.map((message) => message.type)).toEqual(["human", "human", "ai"]);
      expect(stored.some((message) => message.type === "tool")).toBe(false);
    });
  });
});

describe("what summarizationMiddleware does with a dangling AI message", () => {
  it("may keep it, first of the kept messages, and then the request counts it as dangling", async () => {
    // keep 2 of [h1, ai_search, h2]: the cut falls before ai_search. No ToolMessage ties it to
    // anything, so nothing moves the cut, and the model request carries both dangling calls:
    // our wrapModelCall repairs and counts them (2), with no persist, and writes a synthetic
    // reply between their placeholders and h2.
    const { model, harness } = await runScenario({
      persist: false,
      placement: "after summarization",
      keep: 2,
    });
    const request = receivedBy(model, 1);
    expect(request.map((message) => message.type)).toEqual([
      "human",
      "ai",
      "tool",
      "tool",
      "ai",
      "human",
    ]);
    expect(unansweredCalls(request)).toEqual([]);
    expect(await countersOf(harness)).toEqual({
      toolCalls: 2,
      toolCallsAnywhere: 2,
      dangling: 2,
      danglingAnywhere: 2,
      threadDangling: 2,
      repairs: 2,
      turns: 1,
      repairsAnywhere: 3,
      cleanModelCalls: 1,
      repairedModelCalls: 1,
    });
  });

  it("keeps a repaired call with its placeholders: a cut on a result moves back to the call", async () => {
    // persist before the summary: it sees [h1, ai_search, placeholder_a, placeholder_b, reply,
    // h2]; keep 3 would cut at placeholder_b, so the summary moves the cut back to ai_search.
    const { agent, model } = await runScenario({
      persist: true,
      placement: "before summarization",
      keep: 3,
    });
    expect(receivedBy(model, 1).map((message) => message.type)).toEqual([
      "human",
      "ai",
      "tool",
      "tool",
      "ai",
      "human",
    ]);
    const stored = await storedMessages(agent, THREAD);
    expect(stored.map((message) => message.type)).toEqual([
      "human",
      "ai",
      "tool",
      "tool",
      "ai",
      "human",
      "ai",
    ]);
    expect(unansweredCalls(stored)).toEqual([]);
  });
});
