/**
 * End-to-end accounting: a `createAgent` workload with a known ground truth (200 threads over 3
 * models and 4 tools, a known subset of runs aborted while their tool calls run, every thread then
 * continued), run with `startTelemetry` and the middleware, and the scraped Prometheus counters
 * compared with the ground truth exactly, per model, per tool and per thread.
 *
 * The ground truth is computed from the scripts alone, never from the library: a model call is
 * `repaired` when its thread holds a dangling call at that point (without `persist` the stored
 * thread keeps it, so every later model call of the thread needs the placeholders again), and it
 * then applies one `placeholder_inserted` repair per dangling call of the thread.
 */
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import type { FakeBuiltModel } from "@langchain/core/testing";
import { tool } from "langchain";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { seeded } from "../demo/random.js";
import { danglingToolCallMiddleware } from "../src/index.js";
import { startTelemetry, type TelemetryHandle } from "../src/setup/index.js";
import {
  agentWith,
  aiAnswer,
  aiToolCall,
  humanTurn,
  onThread,
  scriptedModel,
  storedMessages,
} from "./helpers/agent.js";
import { type Exposition, freePort, scrape } from "./helpers/prometheus.js";

const MODELS = ["model-a", "model-b", "model-c"] as const;
const TOOLS = ["search", "weather", "calendar", "email"] as const;
type ModelName = (typeof MODELS)[number];
type ToolName = (typeof TOOLS)[number];

const THREADS = 200;
/** Runs per thread after its first one. */
const CONTINUATIONS = 3;
/** Threads run at the same time; runs within a thread are sequential. */
const CONCURRENCY = 20;
/** How long a stalling tool waits for its abort before it fails the run. */
const STALL_LIMIT_MS = 10_000;

/** What the fake model reports about itself: `getLsParams().ls_provider`. */
const PROVIDER = "FakeBuiltModel";
/** `agentWith` gives `createAgent` no name. */
const AGENT = "unknown";

// --- The scripts -----------------------------------------------------------------------------

interface PlannedCall {
  readonly id: string;
  readonly name: ToolName;
  /** In an aborted round: the call stalls until the run is aborted. Others answer at once. */
  readonly stalls: boolean;
}

interface PlannedTurn {
  /** The `invoke` of this turn sends this one human message. */
  readonly human: HumanMessage;
  /** Model responses with tool calls whose tools all complete, in order. */
  readonly rounds: readonly (readonly PlannedCall[])[];
  /**
   * The last model response of an aborted run: its tool calls are in flight when the run is
   * aborted. Absent: the turn ends with a text answer.
   */
  readonly aborted?: readonly PlannedCall[];
}

interface ThreadPlan {
  readonly id: string;
  readonly model: ModelName;
  readonly turns: readonly PlannedTurn[];
}

/**
 * The script of thread `index`: it talks to model `index % 3`. Two threads in five are aborted
 * once, in their first run (`index % 5 === 1`) or their second (`index % 5 === 3`); the others
 * only finish normally. Every thread has 1 + {@link CONTINUATIONS} runs.
 */
function planThread(index: number): ThreadPlan {
  const random = seeded(0x7c0ffee + index * 7919);
  const between = (low: number, high: number) => low + Math.floor(random() * (high - low + 1));
  const id = `thread-${String(index).padStart(3, "0")}`;
  const model = MODELS[index % MODELS.length] as ModelName;
  const abortedTurn = index % 5 === 1 ? 0 : index % 5 === 3 ? 1 : undefined;

  const callsOf = (turn: number, round: number, count: number, aborted = false): PlannedCall[] =>
    Array.from({ length: count }, (_, position) => ({
      id: `${id}:call-${turn}.${round}.${position}`,
      name: TOOLS[between(0, TOOLS.length - 1)] as ToolName,
      // In an aborted round the first call always stalls, and each other one half the time; the
      // rest complete before the abort, yet the thread stores none of their results either.
      stalls: aborted && (position === 0 || random() < 0.5),
    }));

  const turns: PlannedTurn[] = [];
  for (let turn = 0; turn <= CONTINUATIONS; turn++) {
    const human = humanTurn(`${id}:human-${turn}`, `message ${turn} of ${id}`);
    if (turn === abortedTurn) {
      const before = between(0, 1);
      const rounds = Array.from({ length: before }, (_, round) =>
        callsOf(turn, round, between(1, 2)),
      );
      turns.push({ human, rounds, aborted: callsOf(turn, before, between(1, 3), true) });
      continue;
    }
    // A first run always uses tools; a later one answers in plain text 60% of the time.
    const roundCount = turn === 0 ? between(1, 2) : random() < 0.6 ? 0 : between(1, 2);
    const rounds = Array.from({ length: roundCount }, (_, round) =>
      callsOf(turn, round, between(1, 3)),
    );
    turns.push({ human, rounds });
  }
  return { id, model, turns };
}

const toolCallOf = (call: PlannedCall) => ({
  id: call.id,
  name: call.name,
  args: { query: call.id },
});

/** The model's answer to call `round` (0-based) of a turn; `undefined` past the script. */
function scriptedResponse(
  plan: ThreadPlan,
  turnIndex: number,
  round: number,
): AIMessage | undefined {
  const turn = plan.turns[turnIndex];
  if (turn === undefined) return undefined;
  const messageId = `${plan.id}:ai-${turnIndex}.${round}`;
  const calls = round < turn.rounds.length ? turn.rounds[round] : turn.aborted;
  if (round < turn.rounds.length || (round === turn.rounds.length && calls !== undefined)) {
    return aiToolCall(messageId, ...(calls ?? []).map(toolCallOf));
  }
  if (round === turn.rounds.length) return aiAnswer(messageId, `answer ${turnIndex} of ${plan.id}`);
  return undefined;
}

// --- The ground truth ------------------------------------------------------------------------

type Counts = Record<string, number>;

interface GroundTruth {
  /** `provider|model|tool` → tool calls the model issued. */
  readonly toolCalls: Counts;
  /** `provider|model|tool|reason` → dangling calls, each once. */
  readonly dangling: Counts;
  /** `thread|model` → dangling calls of the thread, each once; only threads that had one. */
  readonly threadDangling: Counts;
  /** `provider|model|agent|outcome` → model calls. */
  readonly modelCalls: Counts;
  /** `provider|model|kind` → repairs, counted on every model call they are applied to. */
  readonly repairs: Counts;
  /** `outcome` → inspections: one per model call without `persist`. */
  readonly inspections: Counts;
  /** `model` → model calls, to queue that many answers on each fake model. */
  readonly callsPerModel: Record<ModelName, number>;
  /** `thread|turn|round` → the ids of the calls the model request must carry placeholders for. */
  readonly placeholders: Record<string, string>;
  /** `thread` → the ids of the calls whose results the thread stores in the end. */
  readonly storedResults: Record<string, string>;
  readonly abortedThreads: number;
  readonly abortedCalls: number;
  readonly totalModelCalls: number;
}

function add(counts: Counts, key: string, amount = 1): void {
  counts[key] = (counts[key] ?? 0) + amount;
}

function groundTruthOf(plans: readonly ThreadPlan[]): GroundTruth {
  const truth = {
    toolCalls: {} as Counts,
    dangling: {} as Counts,
    threadDangling: {} as Counts,
    modelCalls: {} as Counts,
    repairs: {} as Counts,
    inspections: {} as Counts,
    callsPerModel: Object.fromEntries(MODELS.map((model) => [model, 0])) as Record<
      ModelName,
      number
    >,
    placeholders: {} as Record<string, string>,
    storedResults: {} as Record<string, string>,
    abortedThreads: 0,
    abortedCalls: 0,
    totalModelCalls: 0,
  };
  for (const plan of plans) {
    const { id, model } = plan;
    const danglingIds: string[] = [];
    const completedIds: string[] = [];
    for (const [turnIndex, turn] of plan.turns.entries()) {
      for (let round = 0; round <= turn.rounds.length; round++) {
        const outcome = danglingIds.length > 0 ? "repaired" : "clean";
        add(truth.modelCalls, `${PROVIDER}|${model}|${AGENT}|${outcome}`);
        add(truth.inspections, outcome);
        truth.callsPerModel[model] += 1;
        truth.totalModelCalls += 1;
        if (danglingIds.length > 0) {
          add(truth.repairs, `${PROVIDER}|${model}|placeholder_inserted`, danglingIds.length);
        }
        truth.placeholders[`${id}|${turnIndex}|${round}`] = [...danglingIds].sort().join(",");
        const issued = round < turn.rounds.length ? turn.rounds[round] : turn.aborted;
        for (const call of issued ?? []) add(truth.toolCalls, `${PROVIDER}|${model}|${call.name}`);
        if (round < turn.rounds.length) completedIds.push(...(issued ?? []).map((call) => call.id));
      }
      if (turn.aborted !== undefined) {
        truth.abortedThreads += 1;
        for (const call of turn.aborted) {
          danglingIds.push(call.id);
          truth.abortedCalls += 1;
          add(truth.dangling, `${PROVIDER}|${model}|${call.name}|interrupted`);
          add(truth.threadDangling, `${id}|${model}`);
        }
      }
    }
    truth.storedResults[id] = completedIds.sort().join(",");
  }
  return truth;
}

// --- Tools that stall on cue -----------------------------------------------------------------

/** The aborted round of a run in flight: its calls, which of them stall, and when all arrived. */
interface AbortGate {
  readonly calls: ReadonlySet<string>;
  readonly stalls: ReadonlySet<string>;
  /** Resolves once every stalling call runs and every other call of the round has answered. */
  readonly ready: Promise<void>;
  arrive(): void;
}

function abortGate(round: readonly PlannedCall[]): AbortGate {
  let remaining = round.length;
  let open!: () => void;
  const ready = new Promise<void>((resolve) => {
    open = resolve;
  });
  return {
    calls: new Set(round.map((call) => call.id)),
    stalls: new Set(round.filter((call) => call.stalls).map((call) => call.id)),
    ready,
    arrive() {
      remaining -= 1;
      if (remaining === 0) open();
    },
  };
}

/** Waits until the signal aborts (rejecting with its reason), or fails after a long while. */
function untilAborted(signal: AbortSignal | undefined): Promise<never> {
  return new Promise<never>((_, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`the run was not aborted within ${STALL_LIMIT_MS} ms`)),
      STALL_LIMIT_MS,
    );
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason ?? new Error("aborted"));
    };
    if (signal?.aborted) onAbort();
    else signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * A tool of this name that answers at once, except for a call its thread's open gate says stalls:
 * that one stalls until the run is aborted. One instance serves every thread at once; the gate of
 * each aborted run is found by the run's thread id, and the call by its id.
 */
function gatedTool(name: ToolName, gates: ReadonlyMap<string, AbortGate>) {
  return tool(
    async ({ query }, config) => {
      const threadId: unknown = config.configurable?.thread_id;
      const callId = config.toolCall?.id;
      const gate = typeof threadId === "string" ? gates.get(threadId) : undefined;
      const gated = gate !== undefined && callId !== undefined && gate.calls.has(callId);
      if (gated && gate.stalls.has(callId)) {
        gate.arrive();
        return untilAborted(config.signal);
      }
      const answer = `${name} answered ${query}`;
      if (gated) gate.arrive();
      return answer;
    },
    {
      name,
      description: `The ${name} tool.`,
      schema: z.object({ query: z.string() }),
    },
  );
}

// --- Running the workload --------------------------------------------------------------------

/** Runs `work` on every item, `size` at a time; stops taking items after a failure, then throws. */
async function inPool<T>(
  items: readonly T[],
  size: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const failures: unknown[] = [];
  const worker = async () => {
    while (failures.length === 0 && next < items.length) {
      const item = items[next++] as T;
      try {
        await work(item);
      } catch (error) {
        failures.push(error);
      }
    }
  };
  await Promise.all(Array.from({ length: size }, worker));
  if (failures.length > 0) throw failures[0];
}

function isPlaceholder(message: BaseMessage): message is ToolMessage {
  return ToolMessage.isInstance(message) && message.response_metadata?.synthetic === true;
}

interface Workload {
  readonly plans: readonly ThreadPlan[];
  readonly truth: GroundTruth;
  readonly models: Record<ModelName, FakeBuiltModel>;
  /** `thread|turn|round` → the ids of the placeholders the model received on that call. */
  readonly received: Record<string, string>;
  /** What the fake models were asked that no script answers. */
  readonly unscripted: string[];
  /** `thread` → the ids of the calls whose results the thread stores after the workload. */
  readonly storedResults: Record<string, string>;
  /** `thread` → how many placeholders the thread stores after the workload. */
  readonly storedPlaceholders: Record<string, number>;
  readonly exposition: Exposition;
}

async function runWorkload(handle: TelemetryHandle): Promise<Workload> {
  const plans = Array.from({ length: THREADS }, (_, index) => planThread(index));
  const truth = groundTruthOf(plans);
  const turnOf = new Map<string, { plan: ThreadPlan; turn: number }>();
  for (const plan of plans) {
    for (const [turn, { human }] of plan.turns.entries()) {
      turnOf.set(String(human.id), { plan, turn });
    }
  }

  const received: Record<string, string> = {};
  const unscripted: string[] = [];
  /**
   * The fake models answer by the request instead of by a global order, so threads can run at
   * once: the last human message names the thread and the turn, the AI messages after it the
   * round. Each model is given as many of these answers as its threads make model calls.
   */
  const answer = (messages: BaseMessage[]): BaseMessage | Error => {
    let humanAt = -1;
    for (const [index, message] of messages.entries()) {
      if (HumanMessage.isInstance(message)) humanAt = index;
    }
    const humanId = String(messages[humanAt]?.id);
    const found = turnOf.get(humanId);
    const round = messages
      .slice(humanAt + 1)
      .filter((message) => AIMessage.isInstance(message)).length;
    const key = `${found?.plan.id}|${found?.turn}|${round}`;
    const response = found && scriptedResponse(found.plan, found.turn, round);
    if (response === undefined || key in received) {
      unscripted.push(key);
      return new Error(`no scripted answer for ${key}`);
    }
    received[key] = messages
      .filter(isPlaceholder)
      .map((message) => message.tool_call_id)
      .sort()
      .join(",");
    return response;
  };

  const gates = new Map<string, AbortGate>();
  const tools = TOOLS.map((name) => gatedTool(name, gates));
  const models = {} as Record<ModelName, FakeBuiltModel>;
  const agents = {} as Record<ModelName, ReturnType<typeof agentWith>>;
  for (const name of MODELS) {
    const model = Object.assign(scriptedModel(), { model: name });
    for (let call = 0; call < truth.callsPerModel[name]; call++) model.respond(answer);
    models[name] = model;
    agents[name] = agentWith({
      model,
      tools,
      middleware: [danglingToolCallMiddleware({ logger: false })],
    });
  }

  await inPool(plans, CONCURRENCY, async (plan) => {
    const agent = agents[plan.model];
    for (const [turnIndex, turn] of plan.turns.entries()) {
      if (turn.aborted === undefined) {
        const result = (await agent.invoke({ messages: [turn.human] }, onThread(plan.id))) as {
          messages: BaseMessage[];
        };
        expect(result.messages.at(-1)?.id).toBe(`${plan.id}:ai-${turnIndex}.${turn.rounds.length}`);
        continue;
      }
      const gate = abortGate(turn.aborted);
      gates.set(plan.id, gate);
      const controller = new AbortController();
      const outcome = agent
        .invoke({ messages: [turn.human] }, { ...onThread(plan.id), signal: controller.signal })
        .then(
          () => undefined,
          (error: unknown) => error,
        );
      await Promise.race([gate.ready, outcome]);
      // Let the calls that answered finish their task, so their results are written as pending
      // writes of the aborted step before the abort.
      await new Promise((resolve) => setTimeout(resolve, 5));
      controller.abort();
      const error = await outcome;
      gates.delete(plan.id);
      expect(error, `the aborted run of ${plan.id}`).toMatchObject({ name: "AbortError" });
      // Right after the abort the thread ends with the aborted round's AI message, and no stalled
      // call has a result. (Calls that answered before the abort may show up here as pending
      // writes; the next run drops them, which the stored threads checked below confirm.)
      const afterAbort = await storedMessages(agent, plan.id);
      const lastAi = afterAbort.filter((message) => AIMessage.isInstance(message)).at(-1);
      expect(lastAi?.id).toBe(`${plan.id}:ai-${turnIndex}.${turn.rounds.length}`);
      const answered = afterAbort
        .filter((message) => ToolMessage.isInstance(message))
        .map((message) => message.tool_call_id);
      expect(answered.filter((id) => gate.stalls.has(id))).toEqual([]);
    }
  });

  const storedResults: Record<string, string> = {};
  const storedPlaceholders: Record<string, number> = {};
  for (const plan of plans) {
    const stored = await storedMessages(agents[plan.model], plan.id);
    const results = stored.filter((message) => ToolMessage.isInstance(message));
    storedResults[plan.id] = results
      .map((message) => message.tool_call_id)
      .sort()
      .join(",");
    storedPlaceholders[plan.id] = stored.filter(isPlaceholder).length;
  }

  const exposition = await scrape(handle.metricsUrl);
  return {
    plans,
    truth,
    models,
    received,
    unscripted,
    storedResults,
    storedPlaceholders,
    exposition,
  };
}

// --- Reading the scrape ----------------------------------------------------------------------

const SCOPE_LABELS = ["otel_scope_name", "otel_scope_version"];

/**
 * The samples of one metric as `label|label|...` → value. Fails when a sample carries other
 * labels than these (an overflow series, say) or when two samples have the same key.
 */
function seriesOf(exposition: Exposition, name: string, labels: readonly string[]): Counts {
  const series: Counts = {};
  for (const sample of exposition.find(name)) {
    expect(Object.keys(sample.labels).sort(), `the labels of ${name}`).toEqual(
      [...labels, ...SCOPE_LABELS].sort(),
    );
    const key = labels.map((label) => sample.labels[label]).join("|");
    expect(key in series, `a second ${name} sample for ${key}`).toBe(false);
    series[key] = sample.value;
  }
  return series;
}

function total(counts: Counts): number {
  return Object.values(counts).reduce((sum, value) => sum + value, 0);
}

/** `counts` summed by the part of the key at `position`. */
function byPart(counts: Counts, position: number): Counts {
  const grouped: Counts = {};
  for (const [key, value] of Object.entries(counts)) {
    add(grouped, key.split("|")[position] as string, value);
  }
  return grouped;
}

// --- The test --------------------------------------------------------------------------------

describe("a createAgent workload of 200 threads over 3 models and 4 tools", () => {
  let handle: TelemetryHandle | undefined;
  let workload: Workload;

  beforeAll(async () => {
    handle = await startTelemetry({ port: await freePort() });
    try {
      workload = await runWorkload(handle);
    } finally {
      await handle.shutdown();
    }
  }, 120_000);

  afterAll(async () => {
    // Harmless after the shutdown above; stops the endpoint if the workload never got there.
    await handle?.shutdown();
  });

  it("ran the scripts it meant to run", () => {
    const { truth, plans, models, received, unscripted } = workload;
    expect(unscripted).toEqual([]);
    expect(truth.abortedThreads).toBe(
      plans.filter((plan) => plan.turns.some((t) => t.aborted)).length,
    );
    expect(truth.abortedThreads).toBeGreaterThan(0);
    expect(truth.abortedCalls).toBeGreaterThan(truth.abortedThreads);
    for (const name of MODELS) expect(models[name].callCount).toBe(truth.callsPerModel[name]);
    // Every model call happened once and carried exactly the placeholders the script expects.
    expect(received).toEqual(truth.placeholders);
  });

  it("stores no result of an aborted round, and no placeholder, on any thread", () => {
    // After an abort, getState() shows the results of the calls that had answered as pending
    // writes; the next run's input discards them, so every call of the aborted round dangles.
    expect(workload.storedResults).toEqual(workload.truth.storedResults);
    expect(total(workload.storedPlaceholders)).toBe(0);
  });

  it("counts every tool call the models issued, per model and per tool", () => {
    const { truth, exposition } = workload;
    const scraped = seriesOf(exposition, "tool_call_resilience_tool_calls_total", [
      "gen_ai_provider_name",
      "gen_ai_request_model",
      "gen_ai_tool_name",
    ]);
    expect(scraped).toEqual(truth.toolCalls);
    expect(Object.keys(byPart(scraped, 2)).sort()).toEqual([...TOOLS].sort());
    expect(total(scraped)).toBe(total(truth.toolCalls));
  });

  it("counts each dangling call once, per model and per tool, however often it is repaired", () => {
    const { truth, exposition } = workload;
    const scraped = seriesOf(exposition, "tool_call_resilience_dangling_tool_calls_total", [
      "gen_ai_provider_name",
      "gen_ai_request_model",
      "gen_ai_tool_name",
      "tool_call_resilience_reason",
    ]);
    expect(scraped).toEqual(truth.dangling);
    expect(Object.keys(byPart(scraped, 2)).sort()).toEqual([...TOOLS].sort());
    expect(Object.keys(byPart(scraped, 3))).toEqual(["interrupted"]);
    expect(total(scraped)).toBe(truth.abortedCalls);
  });

  it("counts each thread's dangling calls once, with a series only for threads that had one", () => {
    const { truth, exposition, plans } = workload;
    const scraped = seriesOf(exposition, "tool_call_resilience_thread_dangling_tool_calls_total", [
      "gen_ai_conversation_id",
      "gen_ai_request_model",
    ]);
    expect(scraped).toEqual(truth.threadDangling);
    expect(Object.keys(scraped)).toHaveLength(truth.abortedThreads);
    expect(total(scraped)).toBe(truth.abortedCalls);
    const cleanThreads = plans.filter((plan) => plan.turns.every((turn) => !turn.aborted));
    expect(cleanThreads.length).toBe(THREADS - truth.abortedThreads);
    for (const plan of cleanThreads) {
      expect(
        exposition.find("tool_call_resilience_thread_dangling_tool_calls_total", {
          gen_ai_conversation_id: plan.id,
        }),
      ).toEqual([]);
    }
  });

  it("counts every model call by outcome, per model", () => {
    const { truth, exposition } = workload;
    const scraped = seriesOf(exposition, "tool_call_resilience_model_calls_total", [
      "gen_ai_provider_name",
      "gen_ai_request_model",
      "gen_ai_agent_name",
      "tool_call_resilience_outcome",
    ]);
    expect(scraped).toEqual(truth.modelCalls);
    expect(total(scraped)).toBe(truth.totalModelCalls);
    expect(Object.keys(byPart(scraped, 3)).sort()).toEqual(["clean", "repaired"]);
    for (const model of MODELS) {
      expect(scraped[`${PROVIDER}|${model}|${AGENT}|clean`]).toBeGreaterThan(0);
      expect(scraped[`${PROVIDER}|${model}|${AGENT}|repaired`]).toBeGreaterThan(0);
    }
  });

  it("counts every placeholder inserted, on every model call that needed it, per model", () => {
    const { truth, exposition } = workload;
    const scraped = seriesOf(exposition, "tool_call_resilience_repairs_total", [
      "gen_ai_provider_name",
      "gen_ai_request_model",
      "tool_call_resilience_repair_kind",
    ]);
    expect(scraped).toEqual(truth.repairs);
    expect(Object.keys(byPart(scraped, 2))).toEqual(["placeholder_inserted"]);
    // Re-patched on every later call: more repairs than dangling calls, each counted once above.
    expect(total(scraped)).toBeGreaterThan(truth.abortedCalls);
  });

  it("times one inspection per model call", () => {
    const { truth, exposition } = workload;
    const scraped = seriesOf(exposition, "tool_call_resilience_repair_duration_count", [
      "tool_call_resilience_outcome",
    ]);
    expect(scraped).toEqual(truth.inspections);
    expect(total(scraped)).toBe(truth.totalModelCalls);
  });

  it("keeps every series within its cardinality limit", () => {
    const overflow = workload.exposition.samples.filter(
      (sample) => sample.labels.otel_metric_overflow !== undefined,
    );
    expect(overflow).toEqual([]);
  });
});
