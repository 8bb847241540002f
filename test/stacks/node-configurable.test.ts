/**
 * `withToolCallRepair` in a `StateGraph` node that passes a `configurable` of its own: the call's
 * config then holds that `configurable` only, without the run's `thread_id`. The wrapper reads the
 * thread the way LangGraph recovers the run's config (LangChain's async-local storage), so the
 * per-thread series and the count-once memory still know the thread.
 */
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { MemorySaver, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { withToolCallRepair } from "../../src/index.js";
import {
  ATTR_GEN_AI_CONVERSATION_ID,
  METRIC_DANGLING_TOOL_CALLS,
  METRIC_THREAD_RECENT_DANGLING_TOOL_CALLS,
} from "../../src/telemetry/semconv.js";
import { aiAnswer, onThread, scriptedModel } from "../helpers/agent.js";
import { metricsHarness } from "../helpers/telemetry.js";

/** The history each thread is started with: `ai_1`'s `call_1` has no result. */
function brokenHistory() {
  return [
    new HumanMessage({ id: "h1", content: "Flights?" }),
    new AIMessage({
      id: "ai_1",
      content: "",
      tool_calls: [{ id: "call_1", name: "search", args: { query: "flights" } }],
    }),
    new HumanMessage({ id: "h2", content: "Well?" }),
  ];
}

describe("withToolCallRepair in a node that passes its own configurable", () => {
  it("keeps each thread's series, and counts the same call id on two threads twice", async () => {
    const harness = metricsHarness();
    const model = withToolCallRepair(
      scriptedModel(aiAnswer("answer_a", "none"), aiAnswer("answer_b", "none")),
      { logger: false, meterProvider: harness.meterProvider },
    );
    const graph = new StateGraph(MessagesAnnotation)
      .addNode("agent", async (state) => ({
        messages: [await model.invoke(state.messages, { configurable: { user_tier: "pro" } })],
      }))
      .addEdge(START, "agent")
      .compile({ checkpointer: new MemorySaver() });

    await graph.invoke({ messages: brokenHistory() }, onThread("thread-a"));
    await graph.invoke({ messages: brokenHistory() }, onThread("thread-b"));

    // Ground truth: each thread holds one dangling call (the same ids, two conversations).
    expect(await harness.sum(METRIC_DANGLING_TOOL_CALLS)).toBe(2);
    for (const thread of ["thread-a", "thread-b"]) {
      expect(
        await harness.sum(METRIC_THREAD_RECENT_DANGLING_TOOL_CALLS, {
          [ATTR_GEN_AI_CONVERSATION_ID]: thread,
        }),
      ).toBe(1);
    }
  });
});

describe("withToolCallRepair outside a LangGraph run", () => {
  it("takes the thread from the call's own configurable", async () => {
    const harness = metricsHarness();
    const model = withToolCallRepair(scriptedModel(aiAnswer("answer", "none")), {
      logger: false,
      meterProvider: harness.meterProvider,
    });
    await model.invoke(brokenHistory(), onThread("given"));
    expect(
      await harness.sum(METRIC_THREAD_RECENT_DANGLING_TOOL_CALLS, {
        [ATTR_GEN_AI_CONVERSATION_ID]: "given",
      }),
    ).toBe(1);
  });

  it("has no thread without one: no per-thread series, the call still counted once by its message", async () => {
    const harness = metricsHarness();
    const model = withToolCallRepair(
      scriptedModel(aiAnswer("first", "none"), aiAnswer("second", "none")),
      { logger: false, meterProvider: harness.meterProvider },
    );
    await model.invoke(brokenHistory());
    await model.invoke(brokenHistory());
    expect(await harness.points(METRIC_THREAD_RECENT_DANGLING_TOOL_CALLS)).toEqual([]);
    // The AI message has an id of its own: the same call, seen twice, is one dangling call.
    expect(await harness.sum(METRIC_DANGLING_TOOL_CALLS)).toBe(1);
  });
});
