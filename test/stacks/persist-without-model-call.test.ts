/**
 * With `persist`, the repair is written to the thread in `beforeModel`, and the model call that
 * follows reports it with its model and tools. A later middleware may end the run before that
 * model call (`modelCallLimitMiddleware` with `exitBehavior: "end"`): the stored thread is clean
 * from then on, so no later call, in any process, would count the call. A repair whose model
 * call has not come within `MODEL_CALL_WAIT_MS` is recorded without it. The tests run on fake
 * timers that also advance with real time, so LangGraph runs as usual and the wait can be skipped.
 */
import { MemorySaver } from "@langchain/langgraph";
import { createAgent, modelCallLimitMiddleware } from "langchain";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { danglingToolCallMiddleware, syntheticReasonOf } from "../../src/index.js";
import { MODEL_CALL_WAIT_MS } from "../../src/telemetry/pending-inspections.js";
import {
  ATTR_GEN_AI_CONVERSATION_ID,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_REPAIR_KIND,
  METRIC_DANGLING_TOOL_CALLS,
  METRIC_MODEL_CALLS,
  METRIC_REPAIR_DURATION,
  METRIC_REPAIRS,
  METRIC_THREAD_RECENT_DANGLING_TOOL_CALLS,
  METRIC_TOOL_CALLS,
  REPAIR_KIND_VALUE_PLACEHOLDER_INSERTED,
  REPAIR_KIND_VALUE_TURN_INSERTED,
} from "../../src/telemetry/semconv.js";
import {
  abortMidTool,
  aiToolCall,
  humanTurn,
  onThread,
  scriptedModel,
  stallingTool,
  storedMessages,
} from "../helpers/agent.js";
import { metricsHarness } from "../helpers/telemetry.js";

const THREAD = "limited";
const CALL = { id: "call_1", name: "search", args: { query: "flights" } };

beforeEach(() => {
  vi.useFakeTimers({ shouldAdvanceTime: true });
});
afterEach(() => {
  vi.useRealTimers();
});

describe("a persisted repair whose model call never comes", () => {
  it("is counted exactly once, under the model and tools of the agent's last model call", async () => {
    const harness = metricsHarness();
    const search = stallingTool("search");
    const agent = createAgent({
      model: Object.assign(scriptedModel(aiToolCall("ai_1", CALL)), { model: "fake-gpt" }),
      tools: [search.tool],
      checkpointer: new MemorySaver(),
      middleware: [
        danglingToolCallMiddleware({
          persist: true,
          logger: false,
          meterProvider: harness.meterProvider,
        }),
        // One model call per thread: turn 2 ends before its model call.
        modelCallLimitMiddleware({ threadLimit: 1, exitBehavior: "end" }),
      ],
    });

    await abortMidTool(agent, search.nextStart(), THREAD, humanTurn("h1", "Flights?"));
    await agent.invoke({ messages: [humanTurn("h2", "Well?")] }, onThread(THREAD));
    // Nothing is recorded while the repair may still be waiting for its model call.
    expect(await harness.sum(METRIC_DANGLING_TOOL_CALLS)).toBe(0);
    vi.advanceTimersByTime(MODEL_CALL_WAIT_MS);
    await agent.invoke({ messages: [humanTurn("h3", "Hello?")] }, onThread(THREAD));
    vi.advanceTimersByTime(MODEL_CALL_WAIT_MS);

    // The repair was written, once: the stored thread answers call_1 with a placeholder, and a
    // synthetic reply stands between it and h2 (the limit's own message ends turns 2 and 3).
    const stored = await storedMessages(agent, THREAD);
    expect(stored.map((message) => message.type)).toEqual([
      "human",
      "ai",
      "tool",
      "ai",
      "human",
      "ai",
      "human",
      "ai",
    ]);
    expect(stored.map((message) => syntheticReasonOf(message) ?? null)).toEqual([
      null,
      null,
      "interrupted",
      "turn_order",
      null,
      null,
      null,
      null,
    ]);
    expect(stored.filter((message) => message.type === "tool")).toHaveLength(1);
    // Ground truth: one model call (turn 1), one tool call, which dangles; one repair written,
    // once: its placeholder and its reply.
    const model = { [ATTR_GEN_AI_REQUEST_MODEL]: "fake-gpt" };
    expect(await harness.sum(METRIC_MODEL_CALLS)).toBe(1);
    expect(await harness.sum(METRIC_TOOL_CALLS, model)).toBe(1);
    expect(
      await harness.sum(METRIC_DANGLING_TOOL_CALLS, {
        ...model,
        [ATTR_GEN_AI_TOOL_NAME]: "search",
      }),
    ).toBe(1);
    expect(
      await harness.sum(METRIC_THREAD_RECENT_DANGLING_TOOL_CALLS, {
        [ATTR_GEN_AI_CONVERSATION_ID]: THREAD,
      }),
    ).toBe(1);
    expect(
      await harness.sum(METRIC_REPAIRS, {
        [ATTR_REPAIR_KIND]: REPAIR_KIND_VALUE_PLACEHOLDER_INSERTED,
      }),
    ).toBe(1);
    expect(
      await harness.sum(METRIC_REPAIRS, { [ATTR_REPAIR_KIND]: REPAIR_KIND_VALUE_TURN_INSERTED }),
    ).toBe(1);
    expect(await harness.sum(METRIC_REPAIRS)).toBe(2);
    // Inspections: turn 1's model call, turn 2's beforeModel repair (its model call never came).
    const durations = await harness.points(METRIC_REPAIR_DURATION);
    const inspections = durations.reduce(
      (total, point) => total + (point.value as { count: number }).count,
      0,
    );
    expect(inspections).toBe(2);
  });

  it("is labelled unknown when the middleware has seen no model call yet", async () => {
    const harness = metricsHarness();
    const checkpointer = new MemorySaver();
    const search = stallingTool("search");
    const withLimit = (threadLimit: number) =>
      createAgent({
        model: scriptedModel(aiToolCall("ai_1", CALL)),
        tools: [search.tool],
        checkpointer,
        middleware: [
          danglingToolCallMiddleware({
            persist: true,
            logger: false,
            meterProvider: threadLimit === 1 ? harness.meterProvider : undefined,
          }),
          modelCallLimitMiddleware({ threadLimit, exitBehavior: "end" }),
        ],
      });
    // Another process (another agent, another telemetry) made the call that dangles.
    await abortMidTool(withLimit(2), search.nextStart(), THREAD, humanTurn("h1", "Flights?"));
    await withLimit(1).invoke({ messages: [humanTurn("h2", "Well?")] }, onThread(THREAD));
    vi.advanceTimersByTime(MODEL_CALL_WAIT_MS);

    expect(
      await harness.sum(METRIC_DANGLING_TOOL_CALLS, {
        [ATTR_GEN_AI_REQUEST_MODEL]: "unknown",
        [ATTR_GEN_AI_TOOL_NAME]: "_OTHER",
      }),
    ).toBe(1);
    expect(await harness.sum(METRIC_MODEL_CALLS)).toBe(0);
  });
});
