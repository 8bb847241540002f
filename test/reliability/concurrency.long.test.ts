/**
 * Load: 1,000 agent threads at once in one process, one middleware shared by all of them, a
 * seeded third of the runs aborted while their tools run and every thread continued. The counters
 * must match the ground truth exactly, each span must name its own thread, and no thread may see
 * another's placeholders, although half the threads use the very same tool call ids. Then the
 * memory that counts each dangling call once holds its bound after 1,000,000 distinct calls, with
 * the heap's growth measured after garbage collection.
 */

import { getHeapStatistics, setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import type { FakeBuiltModel } from "@langchain/core/testing";
import type { MeterProvider } from "@opentelemetry/api";
import { describe, expect, it } from "vitest";
import { seeded } from "../../demo/random.js";
import { danglingToolCallMiddleware, syntheticReasonOf } from "../../src/index.js";
import {
  DEFAULT_COUNT_ONCE_MEMORY,
  sharedCountOnceMemory,
} from "../../src/telemetry/count-once.js";
import {
  ATTR_DANGLING_COUNT,
  ATTR_GEN_AI_CONVERSATION_ID,
  ATTR_OUTCOME,
  ATTR_REPAIR_KIND,
  ATTR_TOOL_CALL_IDS,
  METRIC_DANGLING_TOOL_CALLS,
  METRIC_MODEL_CALLS,
  METRIC_REPAIRS,
  METRIC_THREAD_RECENT_DANGLING_TOOL_CALLS,
  METRIC_TOOL_CALLS,
  OUTCOME_VALUE_CLEAN,
  OUTCOME_VALUE_REPAIRED,
  REPAIR_KIND_VALUE_PLACEHOLDER_INSERTED,
  REPAIR_KIND_VALUE_TURN_INSERTED,
  SPAN_REPAIR_TOOL_CALLS,
} from "../../src/telemetry/semconv.js";
import {
  DEFAULT_THREAD_SERIES_LIMIT,
  sharedThreadActivity,
  trackedSeriesBound,
} from "../../src/telemetry/thread-activity.js";
import {
  abortMidTool,
  agentWith,
  aiAnswer,
  aiToolCall,
  humanTurn,
  onThread,
  scriptedModel,
  searchTool,
  stallingSearchTool,
} from "../helpers/agent.js";
import { aiCalls, human } from "../helpers/history.js";
import { metricsHarness, tracingHarness } from "../helpers/telemetry.js";

const THREADS = 1_000;

interface Plan {
  readonly threadId: string;
  /** The ids of the calls of the first run's model answer. */
  readonly callIds: readonly string[];
  /** Whether the first run is aborted while those calls run. */
  readonly aborted: boolean;
}

/**
 * Thread `index`: 1 to 3 calls, aborted with probability 1/3. Even threads name their calls
 * `call_0`, `call_1`...: the same ids in hundreds of threads, as fake or replayed ids are.
 */
function planOf(index: number, random: () => number): Plan {
  const threadId = `thread-${String(index).padStart(4, "0")}`;
  const count = 1 + Math.floor(random() * 3);
  const prefix = index % 2 === 0 ? "" : `${threadId}:`;
  const callIds = Array.from({ length: count }, (_, position) => `${prefix}call_${position}`);
  return { threadId, callIds, aborted: random() < 1 / 3 };
}

/**
 * The model calls of a thread: the first run asks for the tools, then (unless aborted) answers
 * once their results are in; the second and third runs answer in text.
 */
function modelFor(plan: Plan): FakeBuiltModel {
  const calls = plan.callIds.map((id) => ({ id, name: "search", args: { query: id } }));
  const answers = [aiToolCall(`${plan.threadId}:ai-0`, ...calls)];
  if (!plan.aborted) answers.push(aiAnswer(`${plan.threadId}:ai-1`, "found"));
  answers.push(aiAnswer(`${plan.threadId}:ai-2`, "on it"), aiAnswer(`${plan.threadId}:ai-3`, "ok"));
  return scriptedModel(...answers);
}

/** Runs the thread's three turns through its own agent and the shared middleware. */
async function runThread(plan: Plan, middleware: ReturnType<typeof danglingToolCallMiddleware>) {
  const model = modelFor(plan);
  const stalling = stallingSearchTool();
  const agent = agentWith({
    model,
    tools: [plan.aborted ? stalling.tool : searchTool()],
    middleware: [middleware],
  });
  const first = humanTurn(`${plan.threadId}:h-0`, "find it");
  if (plan.aborted) {
    const error = await abortMidTool(agent, stalling.started, plan.threadId, first);
    if (error === undefined) throw new Error(`${plan.threadId}: the aborted run finished`);
  } else {
    await agent.invoke({ messages: [first] }, onThread(plan.threadId));
  }
  for (const turn of [1, 2]) {
    await agent.invoke(
      { messages: [humanTurn(`${plan.threadId}:h-${turn}`, `turn ${turn}`)] },
      onThread(plan.threadId),
    );
  }
  return model;
}

/** The ids of the placeholders a model request carried (synthetic tool messages). */
function placeholderIds(messages: readonly BaseMessage[]): string[] {
  return messages
    .filter((message) => message instanceof ToolMessage && syntheticReasonOf(message) !== undefined)
    .map((message) => (message as ToolMessage).tool_call_id);
}

/**
 * The synthetic replies a model request carried, each as the messages right before and right
 * after it; each must be an AI message without calls.
 */
function replies(messages: readonly BaseMessage[]): { before: BaseMessage; after: BaseMessage }[] {
  return messages.flatMap((message, index) => {
    if (syntheticReasonOf(message) !== "turn_order") return [];
    expect(message).toBeInstanceOf(AIMessage);
    expect((message as AIMessage).tool_calls).toEqual([]);
    return [
      { before: messages[index - 1] as BaseMessage, after: messages[index + 1] as BaseMessage },
    ];
  });
}

describe("1,000 concurrent agent threads with interleaved aborts", () => {
  it("counts exactly what happened, per thread, and no thread sees another's repairs", async () => {
    const random = seeded(0x5eed);
    const plans = Array.from({ length: THREADS }, (_, index) => planOf(index, random));
    const aborted = plans.filter((plan) => plan.aborted);
    const metrics = metricsHarness();
    const tracing = tracingHarness();
    // One middleware for every agent: its count-once memory and span attributes are shared state.
    const middleware = danglingToolCallMiddleware({
      logger: false,
      meterProvider: metrics.meterProvider,
      tracerProvider: tracing.tracerProvider,
      threadSeriesLimit: THREADS,
    });

    const models = await Promise.all(plans.map((plan) => runThread(plan, middleware)));

    // The ground truth, from the plans alone.
    const callsOf = (plans: readonly Plan[]) =>
      plans.reduce((sum, plan) => sum + plan.callIds.length, 0);
    const danglingCalls = callsOf(aborted);
    expect(aborted.length).toBeGreaterThan(250);
    expect(aborted.length).toBeLessThan(420);

    // Each model saw its own thread: after an abort, its two later calls carry exactly its own
    // placeholders, right after its own AI message, and one synthetic reply between the last of
    // them and its own next human turn; a finished thread never gets either.
    plans.forEach((plan, index) => {
      const model = models[index] as FakeBuiltModel;
      const requests = model.calls.map((call) => call.messages);
      expect(requests).toHaveLength(plan.aborted ? 3 : 4);
      const expected = plan.aborted ? [[], plan.callIds, plan.callIds] : [[], [], [], []];
      expect(requests.map(placeholderIds)).toEqual(expected);
      const lastCall = plan.callIds.at(-1);
      const expectedReplies = plan.aborted
        ? [[], [[lastCall, `${plan.threadId}:h-1`]], [[lastCall, `${plan.threadId}:h-1`]]]
        : [[], [], [], []];
      expect(
        requests.map((messages) =>
          replies(messages).map(({ before, after }) => [
            (before as ToolMessage).tool_call_id,
            after.id,
          ]),
        ),
      ).toEqual(expectedReplies);
      const strangers = requests
        .flat()
        .filter((message) =>
          message instanceof ToolMessage
            ? !plan.callIds.includes(message.tool_call_id)
            : syntheticReasonOf(message) !== "turn_order" && !message.id?.startsWith(plan.threadId),
        );
      expect(strangers).toEqual([]);
    });

    expect(await metrics.sum(METRIC_TOOL_CALLS)).toBe(callsOf(plans));
    expect(await metrics.sum(METRIC_MODEL_CALLS)).toBe(4 * THREADS - aborted.length);
    expect(await metrics.sum(METRIC_MODEL_CALLS, { [ATTR_OUTCOME]: OUTCOME_VALUE_REPAIRED })).toBe(
      2 * aborted.length,
    );
    expect(await metrics.sum(METRIC_MODEL_CALLS, { [ATTR_OUTCOME]: OUTCOME_VALUE_CLEAN })).toBe(
      4 * THREADS - 3 * aborted.length,
    );
    // Counted once although repaired on two calls, and once per thread although ids repeat.
    expect(await metrics.sum(METRIC_DANGLING_TOOL_CALLS)).toBe(danglingCalls);
    // A placeholder for each dangling call and a reply before the next human turn, on both calls.
    expect(
      await metrics.sum(METRIC_REPAIRS, {
        [ATTR_REPAIR_KIND]: REPAIR_KIND_VALUE_PLACEHOLDER_INSERTED,
      }),
    ).toBe(2 * danglingCalls);
    expect(
      await metrics.sum(METRIC_REPAIRS, { [ATTR_REPAIR_KIND]: REPAIR_KIND_VALUE_TURN_INSERTED }),
    ).toBe(2 * aborted.length);
    expect(await metrics.sum(METRIC_REPAIRS)).toBe(2 * danglingCalls + 2 * aborted.length);
    const perThread = Object.fromEntries(
      (await metrics.points(METRIC_THREAD_RECENT_DANGLING_TOOL_CALLS)).map((point) => [
        point.attributes[ATTR_GEN_AI_CONVERSATION_ID],
        point.value,
      ]),
    );
    expect(perThread).toEqual(
      Object.fromEntries(aborted.map((plan) => [plan.threadId, plan.callIds.length])),
    );

    // One span per repaired call, each naming its own thread and that thread's calls only.
    const spans = tracing.spans(SPAN_REPAIR_TOOL_CALLS);
    expect(spans).toHaveLength(2 * aborted.length);
    const planOfThread = new Map(plans.map((plan) => [plan.threadId, plan]));
    const spansPerThread = new Map<string, number>();
    for (const span of spans) {
      const threadId = String(span.attributes[ATTR_GEN_AI_CONVERSATION_ID]);
      const plan = planOfThread.get(threadId);
      expect(plan?.aborted).toBe(true);
      expect(span.attributes[ATTR_TOOL_CALL_IDS]).toEqual(plan?.callIds);
      expect(span.attributes[ATTR_DANGLING_COUNT]).toBe(plan?.callIds.length);
      spansPerThread.set(threadId, (spansPerThread.get(threadId) ?? 0) + 1);
    }
    expect([...spansPerThread.values()].every((count) => count === 2)).toBe(true);
    expect(spansPerThread.size).toBe(aborted.length);
  }, 120_000);
});

/** The `gc` function, exposed at run time for this process. */
function exposedGc(): () => void {
  setFlagsFromString("--expose-gc");
  return runInNewContext("gc") as () => void;
}

function settledHeapBytes(gc: () => void): number {
  gc();
  gc();
  return getHeapStatistics().used_heap_size;
}

describe("the memories that count each dangling call once, and per thread", () => {
  it("hold their bounds after 1,000,000 distinct dangling calls on 1,000 threads, and the heap grows by less than 20 MB", async () => {
    const CALLS_PER_REQUEST = 1_000;
    const REQUESTS = 1_000;
    const metrics = metricsHarness();
    const middleware = danglingToolCallMiddleware({
      logger: false,
      meterProvider: metrics.meterProvider,
    });
    const hook = middleware.wrapModelCall as unknown as (
      request: object,
      handler: (request: { messages: unknown[] }) => unknown,
    ) => unknown;
    const memory = sharedCountOnceMemory(metrics.meterProvider as unknown as MeterProvider);
    const gc = exposedGc();
    const answer = aiAnswer("answer", "fine");
    const requestOf = (index: number) => {
      const ids = Array.from({ length: CALLS_PER_REQUEST }, (_, call) => `r${index}-c${call}`);
      const messages = [human("go"), aiCalls(...ids), human("go on")];
      // A thread per request: the per-thread store must stay bounded too.
      const configurable = { thread_id: `t${index}` };
      return { messages, runtime: { configurable }, state: {}, model: {} };
    };

    let placeholders = 0;
    const handler = (request: { messages: unknown[] }) => {
      placeholders += request.messages.filter((m) => m instanceof ToolMessage).length;
      return answer;
    };
    // A first tenth fills the memory; what follows must not grow it.
    for (let index = 0; index < REQUESTS / 10; index++) hook(requestOf(index), handler);
    const filled = settledHeapBytes(gc);
    for (let index = REQUESTS / 10; index < REQUESTS; index++) hook(requestOf(index), handler);
    const after = settledHeapBytes(gc);

    const distinct = CALLS_PER_REQUEST * REQUESTS;
    expect(placeholders).toBe(distinct);
    expect(await metrics.sum(METRIC_DANGLING_TOOL_CALLS)).toBe(distinct);
    expect(memory.size).toBe(DEFAULT_COUNT_ONCE_MEMORY);
    const activity = sharedThreadActivity(metrics.meterProvider as unknown as MeterProvider);
    const bound = trackedSeriesBound(DEFAULT_THREAD_SERIES_LIMIT);
    expect(activity.size).toBeLessThanOrEqual(bound);
    expect(activity.size).toBeGreaterThanOrEqual(bound - bound / 10);
    expect(await metrics.points(METRIC_THREAD_RECENT_DANGLING_TOOL_CALLS)).toHaveLength(
      DEFAULT_THREAD_SERIES_LIMIT,
    );
    const growth = after - filled;
    console.info(
      `count-once memory: ${memory.size} keys, per-thread store: ${activity.size} series, after ${distinct} distinct calls on ${REQUESTS} threads; heap growth over the last 900,000: ${(growth / 1_048_576).toFixed(2)} MB`,
    );
    expect(growth).toBeLessThan(20 * 1_048_576);
    // The latest calls are remembered: seen again, they are not counted again. Calls seen long
    // ago are forgotten and counted again if they dangle again: the price of the bound.
    hook(requestOf(REQUESTS - 1), handler);
    expect(await metrics.sum(METRIC_DANGLING_TOOL_CALLS)).toBe(distinct);
    hook(requestOf(0), handler);
    expect(await metrics.sum(METRIC_DANGLING_TOOL_CALLS)).toBe(distinct + CALLS_PER_REQUEST);
  }, 120_000);
});
