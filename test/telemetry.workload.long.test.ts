/**
 * End-to-end accounting: a `createAgent` workload with a known ground truth (200 threads over 3
 * models and 4 tools, a known subset of runs aborted while their tool calls run, every thread then
 * continued), run with `startTelemetry` and the middleware, and the scraped Prometheus counters
 * compared with the ground truth exactly, per model, per agent, per tool and per thread.
 *
 * Each thread runs on one of six agent stacks around the middleware (see {@link STACKS}), each
 * agent named after its stack: plain; a model that reuses short call ids (`call_0`, ...) in every
 * AI message, on threads aborted twice so that a thread holds two dangling calls of one id; a
 * model also wrapped with `withToolCallRepair`; `modelFallbackMiddleware` during an outage of the
 * agent's own model; `modelRetryMiddleware` over a model whose first attempt sometimes fails; and
 * the middleware with `persist`.
 *
 * The ground truth is computed from the scripts alone, never from the library. Without `persist`,
 * a model call is `repaired` when its thread holds a dangling call at that point (the stored
 * thread keeps it, so every later model call of the thread needs the placeholders again), and it
 * then applies one `placeholder_inserted` repair per dangling call of the thread, and one
 * `turn_inserted` repair per aborted run: the synthetic reply written between the run's
 * placeholders and the user message of the next turn, which the fake models (repair target
 * `"any"`) get. With `persist`, the `beforeModel` hook of the first model call after an abort
 * writes the placeholders and that reply to the thread: that model call is `repaired` (two
 * inspections: the hook's, `repaired`, and the request's own, `clean`) with one placeholder per
 * call the thread did not store a placeholder for yet and one reply per run it did not store a
 * reply for, and every later one is `clean`, though the model receives the stored placeholders on
 * each.
 * Every request the middleware sees is a model call of its own, under the request's model: a
 * fallback's failed attempt on the primary and its attempt on the backup, each attempt of a
 * retry. A tool call, and its dangling once, are charged to the model that made it, the one its AI
 * message names.
 */
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import type { FakeBuiltModel } from "@langchain/core/testing";
import { MemorySaver } from "@langchain/langgraph";
import {
  type AgentMiddleware,
  createAgent,
  modelFallbackMiddleware,
  modelRetryMiddleware,
  tool,
} from "langchain";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { seeded } from "../demo/random.js";
import { danglingToolCallMiddleware, withToolCallRepair } from "../src/index.js";
import { DOUBLE_ATTACHMENT_WARNING } from "../src/middleware.js";
import { type ServedTelemetryHandle, startTelemetry } from "../src/setup/index.js";
import {
  aiAnswer,
  aiToolCall,
  humanTurn,
  onThread,
  scriptedModel,
  storedMessages,
  type ThreadedAgent,
} from "./helpers/agent.js";
import { type Exposition, freePort, scrape } from "./helpers/prometheus.js";

const MODELS = ["model-a", "model-b", "model-c"] as const;
const TOOLS = ["search", "weather", "calendar", "email"] as const;
type ModelName = (typeof MODELS)[number];
type ToolName = (typeof TOOLS)[number];

/**
 * The agent stacks a thread can run on, each with the middleware:
 * - `plain`: the middleware alone;
 * - `reused-ids`: the same, but the model names its calls `call_0`, `call_1`, ... in every AI
 *   message, so ids repeat across the turns of a thread and across threads; a thread aborted is
 *   aborted twice, so it holds two dangling calls named `call_0` (see {@link abortedTurnsOf});
 * - `double-attachment`: the agent's model is also wrapped with `withToolCallRepair`;
 * - `fallback`: `modelFallbackMiddleware(model)` before ours, on an agent whose own model
 *   ({@link DOWN_MODEL}) is down, so every model call fails on it and goes to the thread's model;
 * - `retry`: `modelRetryMiddleware` (one retry) before ours, and the first attempt of some model
 *   calls fails;
 * - `persist`: the middleware alone, with `persist: true`: the first model call after an abort
 *   writes the placeholders to the thread.
 */
const STACKS = [
  "plain",
  "reused-ids",
  "double-attachment",
  "fallback",
  "retry",
  "persist",
] as const;
type StackName = (typeof STACKS)[number];

/** The name given to `createAgent` on a stack: `gen_ai.agent.name` of its model calls. */
function agentNameOf(stack: StackName): string {
  return `${stack}-agent`;
}

/** The model of the `fallback` stack's agents: down, every call to it fails. */
const DOWN_MODEL = "model-down";
/** Every fake model of the workload, by the name it reports (`.model`). */
const FAKE_MODELS = [...MODELS, DOWN_MODEL] as const;
type FakeModelName = (typeof FAKE_MODELS)[number];

const THREADS = 200;
/** Runs per thread after its first one: every aborted run is followed by one at least. */
const CONTINUATIONS = 4;
/** A thread's aborted runs, if any, follow its index modulo this (see {@link abortedTurnsOf}). */
const ABORT_CYCLE = 5;
/**
 * Consecutive threads that run one stack: every model with every abort pattern, so each stack has
 * threads of every model, aborted (from their first run, from their second) and never.
 */
const STACK_BLOCK = MODELS.length * ABORT_CYCLE;
/** Threads run at the same time; runs within a thread are sequential. */
const CONCURRENCY = 20;
/** How long a stalling tool waits for its abort before it fails the run. */
const STALL_LIMIT_MS = 10_000;

/** What the fake model reports about itself: `getLsParams().ls_provider`. */
const PROVIDER = "FakeBuiltModel";

// --- The scripts -----------------------------------------------------------------------------

interface PlannedCall {
  /** The id the model gives the call: {@link key}, or `call_<position>` on `reused-ids`. */
  readonly id: string;
  /** Unique across the workload; the call's arguments carry it, so a tool knows which call runs. */
  readonly key: string;
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
  /**
   * The model calls of the turn (0-based: each of `rounds`, then the last) whose first attempt
   * fails, so that `modelRetryMiddleware` makes a second one. Empty but on the `retry` stack.
   */
  readonly failsFirst: readonly number[];
}

interface ThreadPlan {
  readonly id: string;
  readonly model: ModelName;
  readonly stack: StackName;
  readonly turns: readonly PlannedTurn[];
}

/**
 * The runs (0-based) of thread `index` that are aborted, on its stack. Two threads in five are
 * aborted: from their first run (`index % 5 === 1`) or from their second (`index % 5 === 3`); the
 * others only finish normally. On `reused-ids` such a thread is aborted again two runs later, so
 * its second aborted AI message names its calls `call_0`, ... as the first did; on every other
 * stack it is aborted once. The last run ({@link CONTINUATIONS}) is never aborted: each dangling
 * call is seen by a later model call.
 */
function abortedTurnsOf(index: number, stack: StackName): readonly number[] {
  const first = index % ABORT_CYCLE === 1 ? 0 : index % ABORT_CYCLE === 3 ? 1 : undefined;
  if (first === undefined) return [];
  return stack === "reused-ids" ? [first, first + 2] : [first];
}

/**
 * The script of thread `index`: it talks to model `index % 3`, on stack
 * `STACKS[⌊index / 15⌋ % 6]`, and its runs {@link abortedTurnsOf} are aborted. Every thread has
 * 1 + {@link CONTINUATIONS} runs. On the `retry` stack, the first attempt of each model call fails
 * half the time.
 */
function planThread(index: number): ThreadPlan {
  const random = seeded(0x7c0ffee + index * 7919);
  const between = (low: number, high: number) => low + Math.floor(random() * (high - low + 1));
  const id = `thread-${String(index).padStart(3, "0")}`;
  const model = MODELS[index % MODELS.length] as ModelName;
  const stack = STACKS[Math.floor(index / STACK_BLOCK) % STACKS.length] as StackName;
  const abortedTurns = abortedTurnsOf(index, stack);

  const callsOf = (turn: number, round: number, count: number, aborted = false): PlannedCall[] =>
    Array.from({ length: count }, (_, position) => {
      const key = `${id}:call-${turn}.${round}.${position}`;
      return {
        id: stack === "reused-ids" ? `call_${position}` : key,
        key,
        name: TOOLS[between(0, TOOLS.length - 1)] as ToolName,
        // In an aborted round the first call always stalls, and each other one half the time; the
        // rest complete before the abort, yet the thread stores none of their results either.
        stalls: aborted && (position === 0 || random() < 0.5),
      };
    });
  const failingFirst = (modelCalls: number): number[] =>
    stack === "retry"
      ? Array.from({ length: modelCalls }, (_, call) => call).filter(() => random() < 0.5)
      : [];

  const turns: PlannedTurn[] = [];
  for (let turn = 0; turn <= CONTINUATIONS; turn++) {
    const human = humanTurn(`${id}:human-${turn}`, `message ${turn} of ${id}`);
    if (abortedTurns.includes(turn)) {
      const before = between(0, 1);
      const rounds = Array.from({ length: before }, (_, round) =>
        callsOf(turn, round, between(1, 2)),
      );
      const aborted = callsOf(turn, before, between(1, 3), true);
      turns.push({ human, rounds, aborted, failsFirst: failingFirst(before + 1) });
      continue;
    }
    // A first run always uses tools; a later one answers in plain text 60% of the time.
    const roundCount = turn === 0 ? between(1, 2) : random() < 0.6 ? 0 : between(1, 2);
    const rounds = Array.from({ length: roundCount }, (_, round) =>
      callsOf(turn, round, between(1, 3)),
    );
    turns.push({ human, rounds, failsFirst: failingFirst(roundCount + 1) });
  }
  return { id, model, stack, turns };
}

const toolCallOf = (call: PlannedCall) => ({
  id: call.id,
  name: call.name,
  args: { query: call.key },
});

/**
 * The model's answer to call `round` (0-based) of a turn; `undefined` past the script. On the
 * `fallback` stack the message names the model that made it, as real clients do
 * (`response_metadata.model_name`), so its calls are charged to it wherever they are seen.
 */
function scriptedResponse(
  plan: ThreadPlan,
  turnIndex: number,
  round: number,
): AIMessage | undefined {
  const turn = plan.turns[turnIndex];
  if (turn === undefined) return undefined;
  const messageId = `${plan.id}:ai-${turnIndex}.${round}`;
  const calls = round < turn.rounds.length ? turn.rounds[round] : turn.aborted;
  let response: AIMessage | undefined;
  if (round < turn.rounds.length || (round === turn.rounds.length && calls !== undefined)) {
    response = aiToolCall(messageId, ...(calls ?? []).map(toolCallOf));
  } else if (round === turn.rounds.length) {
    response = aiAnswer(messageId, `answer ${turnIndex} of ${plan.id}`);
  }
  if (response !== undefined && plan.stack === "fallback") {
    response.response_metadata = { ...response.response_metadata, model_name: plan.model };
  }
  return response;
}

/**
 * The models the middleware hands one model call of the script to, in order; each is one model
 * call it sees, and one invocation of that fake model. The `fallback` stack tries the model that
 * is down first, then the thread's; the `retry` stack tries the thread's model twice when the
 * call's first attempt fails; every other stack calls the thread's model once (on
 * `double-attachment`, the model behind the wrapper).
 */
function attemptsOf(plan: ThreadPlan, turn: PlannedTurn, round: number): FakeModelName[] {
  switch (plan.stack) {
    case "fallback":
      return [DOWN_MODEL, plan.model];
    case "retry":
      return turn.failsFirst.includes(round) ? [plan.model, plan.model] : [plan.model];
    default:
      return [plan.model];
  }
}

// --- The ground truth ------------------------------------------------------------------------

type Counts = Record<string, number>;

interface GroundTruth {
  /** `provider|model|tool` → tool calls the model issued. */
  readonly toolCalls: Counts;
  /** `provider|model|tool|reason` → dangling calls, each once, charged to the model that made it. */
  readonly dangling: Counts;
  /** `thread|model` → dangling calls of the thread, each once; only threads that had one. */
  readonly threadDangling: Counts;
  /**
   * `provider|model|agent|outcome` → model calls the middleware saw, by the request's model and
   * the name of the agent that made them.
   */
  readonly modelCalls: Counts;
  /** `stack|outcome` → model calls the middleware saw, to check every stack is exercised. */
  readonly modelCallsByStack: Counts;
  /**
   * `provider|model|kind` → repairs, counted on every model call they are applied to: the
   * placeholders, and the synthetic replies after them (`turn_inserted`).
   */
  readonly repairs: Counts;
  /**
   * `outcome` → inspections: one per model call, and one more (the `beforeModel` hook's) per model
   * call that writes a repair to its thread with `persist`.
   */
  readonly inspections: Counts;
  /** `model` → invocations of each fake model, to queue that many answers on it. */
  readonly callsPerModel: Record<FakeModelName, number>;
  /**
   * `thread|turn|round` → for each request of that model call (one per attempt), the ids of the
   * calls it must carry placeholders for: every call of the thread that dangled so far, whether
   * the request is repaired or, with `persist`, the thread stores the placeholders.
   */
  readonly placeholders: Record<string, string[]>;
  /** `thread` → the ids of the calls whose results (not placeholders) the thread keeps at last. */
  readonly storedResults: Record<string, string>;
  /** `thread` → the ids of the placeholders the thread stores at last: none without `persist`. */
  readonly storedPlaceholders: Record<string, string>;
  /** Agents whose model is wrapped and that have the middleware too: each warns once. */
  readonly doubleAttachedAgents: number;
  /** Threads aborted at least once. */
  readonly abortedThreads: number;
  /** Runs aborted: more than the threads, as `reused-ids` threads are aborted twice. */
  readonly abortedRuns: number;
  readonly abortedCalls: number;
  readonly totalModelCalls: number;
  /** Model calls whose `beforeModel` hook wrote a repair to the thread (`persist`). */
  readonly persistedRepairCalls: number;
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
    modelCallsByStack: {} as Counts,
    repairs: {} as Counts,
    inspections: {} as Counts,
    callsPerModel: Object.fromEntries(FAKE_MODELS.map((model) => [model, 0])) as Record<
      FakeModelName,
      number
    >,
    placeholders: {} as Record<string, string[]>,
    storedResults: {} as Record<string, string>,
    storedPlaceholders: {} as Record<string, string>,
    doubleAttachedAgents: new Set(
      plans.filter((plan) => plan.stack === "double-attachment").map((plan) => plan.model),
    ).size,
    abortedThreads: 0,
    abortedRuns: 0,
    abortedCalls: 0,
    totalModelCalls: 0,
    persistedRepairCalls: 0,
  };
  for (const plan of plans) {
    const { id, model, stack } = plan;
    const agent = agentNameOf(stack);
    const persist = stack === "persist";
    /** Every call of the thread that dangled so far, in order; ids may repeat on `reused-ids`. */
    const danglingIds: string[] = [];
    /** With `persist`: the dangling calls the stored thread has no placeholder for yet. */
    const unstored: string[] = [];
    /**
     * Aborted runs so far: each left an AI message whose placeholders the next turn's user message
     * follows, so a synthetic reply goes between them.
     */
    let abortedRunsSoFar = 0;
    /** With `persist`: the aborted runs the stored thread has no synthetic reply for yet. */
    let unstoredRuns = 0;
    /** With `persist`: the dangling calls the stored thread has a placeholder for. */
    const storedPlaceholderIds: string[] = [];
    const completedIds: string[] = [];
    for (const [turnIndex, turn] of plan.turns.entries()) {
      for (let round = 0; round <= turn.rounds.length; round++) {
        // With persist, the model call's beforeModel hook stores the placeholders the thread
        // lacks; the request then carries them as stored messages, and needs no repair.
        const persisted = persist ? unstored.splice(0) : [];
        const persistedRuns = persist ? unstoredRuns : 0;
        unstoredRuns = 0;
        storedPlaceholderIds.push(...persisted);
        const placeholders = [...danglingIds].sort().join(",");
        const requests: string[] = [];
        // Every attempt is a model call of its own, repaired alike, under the request's model.
        for (const [attempt, requested] of attemptsOf(plan, turn, round).entries()) {
          // The hook's repair is reported by the first request after it.
          const repaired = persist ? (attempt === 0 ? persisted.length : 0) : danglingIds.length;
          const replies = persist ? (attempt === 0 ? persistedRuns : 0) : abortedRunsSoFar;
          const outcome = repaired > 0 ? "repaired" : "clean";
          add(truth.modelCalls, `${PROVIDER}|${requested}|${agent}|${outcome}`);
          add(truth.modelCallsByStack, `${stack}|${outcome}`);
          if (persist && repaired > 0) {
            // The hook's inspection, then the request's own, which finds the thread repaired.
            add(truth.inspections, "repaired");
            add(truth.inspections, "clean");
            truth.persistedRepairCalls += 1;
          } else {
            add(truth.inspections, outcome);
          }
          truth.callsPerModel[requested] += 1;
          truth.totalModelCalls += 1;
          if (repaired > 0) {
            add(truth.repairs, `${PROVIDER}|${requested}|placeholder_inserted`, repaired);
          }
          if (replies > 0) add(truth.repairs, `${PROVIDER}|${requested}|turn_inserted`, replies);
          requests.push(placeholders);
        }
        truth.placeholders[`${id}|${turnIndex}|${round}`] = requests;
        // Only the thread's model answers: its calls are its own, whichever stack it runs on.
        const issued = round < turn.rounds.length ? turn.rounds[round] : turn.aborted;
        for (const call of issued ?? []) add(truth.toolCalls, `${PROVIDER}|${model}|${call.name}`);
        if (round < turn.rounds.length) completedIds.push(...(issued ?? []).map((call) => call.id));
      }
      if (turn.aborted !== undefined) {
        truth.abortedRuns += 1;
        abortedRunsSoFar += 1;
        if (persist) unstoredRuns += 1;
        for (const call of turn.aborted) {
          danglingIds.push(call.id);
          if (persist) unstored.push(call.id);
          truth.abortedCalls += 1;
          // Once, however many requests (attempts, fallbacks, later turns) it is repaired in, and
          // once more when a later AI message of the thread leaves a call of the same id dangling.
          add(truth.dangling, `${PROVIDER}|${model}|${call.name}|interrupted`);
          add(truth.threadDangling, `${id}|${model}`);
        }
      }
    }
    if (danglingIds.length > 0) truth.abortedThreads += 1;
    truth.storedResults[id] = completedIds.sort().join(",");
    truth.storedPlaceholders[id] = storedPlaceholderIds.sort().join(",");
  }
  return truth;
}

// --- Tools that stall on cue -----------------------------------------------------------------

/**
 * The aborted round of a run in flight: its calls and which of them stall (by {@link
 * PlannedCall.key}: on `reused-ids` an earlier round of the run has calls of the same ids), and
 * when all arrived.
 */
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
    calls: new Set(round.map((call) => call.key)),
    stalls: new Set(round.filter((call) => call.stalls).map((call) => call.key)),
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
 * each aborted run is found by the run's thread id, and the call by the key its `query` carries.
 */
function gatedTool(name: ToolName, gates: ReadonlyMap<string, AbortGate>) {
  return tool(
    async ({ query }, config) => {
      const threadId: unknown = config.configurable?.thread_id;
      const gate = typeof threadId === "string" ? gates.get(threadId) : undefined;
      const gated = gate?.calls.has(query) === true;
      if (gated && gate.stalls.has(query)) {
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

interface Workload {
  readonly plans: readonly ThreadPlan[];
  readonly truth: GroundTruth;
  readonly models: Record<FakeModelName, FakeBuiltModel>;
  /**
   * `thread|turn|round` → for each request the fake models received on that model call, in
   * order, the ids of the placeholders it carried.
   */
  readonly received: Record<string, string[]>;
  /** What the fake models were asked that no script answers. */
  readonly unscripted: string[];
  /** The warnings about a model wrapped with `withToolCallRepair` in an agent with the middleware. */
  readonly attachmentWarnings: number;
  /**
   * `thread` → the ids of the calls whose results the thread stores after the workload,
   * placeholders aside.
   */
  readonly storedResults: Record<string, string>;
  /** `thread` → the ids of the placeholders the thread stores after the workload. */
  readonly storedPlaceholders: Record<string, string>;
  readonly exposition: Exposition;
}

type Agent = ThreadedAgent;
type AgentTools = Parameters<typeof createAgent>[0]["tools"];

/**
 * A `createAgent` agent named after its stack ({@link agentNameOf}), with a `MemorySaver` so
 * threads persist. (`agentWith` of the helpers gives its agents no name.)
 */
function namedAgent(
  stack: StackName,
  options: {
    readonly model: FakeBuiltModel;
    readonly tools: AgentTools;
    readonly middleware: readonly AgentMiddleware[];
  },
): Agent {
  return createAgent({
    name: agentNameOf(stack),
    model: options.model,
    tools: options.tools ?? [],
    checkpointer: new MemorySaver(),
    middleware: options.middleware,
  });
}

/**
 * The agent of one stack over one of the scripted models, with the middleware (see
 * {@link STACKS}). `down` is the model that is down; `warn` hears the middleware's warnings on
 * `double-attachment`.
 */
function stackedAgent(
  stack: StackName,
  model: FakeBuiltModel,
  down: FakeBuiltModel,
  tools: AgentTools,
  warn: (message: string) => void,
): Agent {
  const ours = danglingToolCallMiddleware({ logger: false });
  switch (stack) {
    case "plain":
    case "reused-ids":
      return namedAgent(stack, { model, tools, middleware: [ours] });
    case "double-attachment":
      return namedAgent(stack, {
        model: withToolCallRepair(model, { logger: false }),
        tools,
        middleware: [danglingToolCallMiddleware({ logger: { warn } })],
      });
    case "fallback":
      return namedAgent(stack, {
        model: down,
        tools,
        middleware: [modelFallbackMiddleware(model), ours],
      });
    case "retry":
      return namedAgent(stack, {
        model,
        tools,
        middleware: [
          modelRetryMiddleware({ maxRetries: 1, initialDelayMs: 0, jitter: false }),
          ours,
        ],
      });
    case "persist":
      return namedAgent(stack, {
        model,
        tools,
        middleware: [danglingToolCallMiddleware({ persist: true, logger: false })],
      });
  }
}

function isPlaceholder(message: BaseMessage): message is ToolMessage {
  return ToolMessage.isInstance(message) && message.response_metadata?.synthetic === true;
}

async function runWorkload(handle: ServedTelemetryHandle): Promise<Workload> {
  const plans = Array.from({ length: THREADS }, (_, index) => planThread(index));
  const truth = groundTruthOf(plans);
  const turnOf = new Map<string, { plan: ThreadPlan; turn: number }>();
  for (const plan of plans) {
    for (const [turn, { human }] of plan.turns.entries()) {
      turnOf.set(String(human.id), { plan, turn });
    }
  }

  const received: Record<string, string[]> = {};
  const unscripted: string[] = [];
  /** Model calls answered with their script: a later request for one is not scripted. */
  const answered = new Set<string>();
  /** Model calls whose failing first attempt was made. */
  const failed = new Set<string>();
  /**
   * The model call a request makes: the last human message names the thread and the turn, the
   * AI messages after it the round. A fallback's or a retry's request has the same messages, so
   * it is the same model call. Records the placeholders the request carries.
   */
  const modelCallOf = (messages: BaseMessage[]) => {
    let humanAt = -1;
    for (const [index, message] of messages.entries()) {
      if (HumanMessage.isInstance(message)) humanAt = index;
    }
    const found = turnOf.get(String(messages[humanAt]?.id));
    const round = messages
      .slice(humanAt + 1)
      .filter((message) => AIMessage.isInstance(message)).length;
    const key = `${found?.plan.id}|${found?.turn}|${round}`;
    const receive = () => {
      const placeholders = messages.filter(isPlaceholder).map((message) => message.tool_call_id);
      received[key] = [...(received[key] ?? []), placeholders.sort().join(",")];
    };
    return { found, round, key, receive };
  };
  /**
   * The scripted models answer by the request instead of by a global order, so threads can run at
   * once. The first attempt of a call the script says fails first is answered with an error.
   */
  const answer = (messages: BaseMessage[]): BaseMessage | Error => {
    const { found, round, key, receive } = modelCallOf(messages);
    const response = found && scriptedResponse(found.plan, found.turn, round);
    if (found === undefined || response === undefined || answered.has(key)) {
      unscripted.push(key);
      return new Error(`no scripted answer for ${key}`);
    }
    receive();
    if (found.plan.turns[found.turn]?.failsFirst.includes(round) && !failed.has(key)) {
      failed.add(key);
      return new Error(`overloaded on the first attempt of ${key}`);
    }
    answered.add(key);
    return response;
  };
  /** The model that is down: it receives the request of a `fallback` thread, then fails. */
  const outage = (messages: BaseMessage[]): Error => {
    const { found, key, receive } = modelCallOf(messages);
    if (found?.plan.stack !== "fallback" || answered.has(key)) unscripted.push(key);
    receive();
    return new Error(`${DOWN_MODEL} is down`);
  };

  const gates = new Map<string, AbortGate>();
  const tools = TOOLS.map((name) => gatedTool(name, gates));
  // Each fake model is given as many answers as it is invoked, over all the stacks it serves.
  const models = {} as Record<FakeModelName, FakeBuiltModel>;
  for (const name of FAKE_MODELS) {
    const model = Object.assign(scriptedModel(), { model: name });
    const respond = name === DOWN_MODEL ? outage : answer;
    for (let call = 0; call < truth.callsPerModel[name]; call++) model.respond(respond);
    models[name] = model;
  }
  let attachmentWarnings = 0;
  const warn = (message: string) => {
    if (message === `[tool-call-resilience] ${DOUBLE_ATTACHMENT_WARNING}`) attachmentWarnings += 1;
  };
  const agents = new Map<string, Agent>();
  for (const name of MODELS) {
    for (const stack of STACKS) {
      const agent = stackedAgent(stack, models[name], models[DOWN_MODEL], tools, warn);
      agents.set(`${name}|${stack}`, agent);
    }
  }
  const agentOf = (plan: ThreadPlan) => agents.get(`${plan.model}|${plan.stack}`) as Agent;

  await inPool(plans, CONCURRENCY, async (plan) => {
    const agent = agentOf(plan);
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
      // call has a result after it. (Calls that answered before the abort may show up here as
      // pending writes; the next run drops them, which the stored threads checked below confirm.)
      const afterAbort = await storedMessages(agent, plan.id);
      const aiIndexes = afterAbort.flatMap((message, index) =>
        AIMessage.isInstance(message) ? [index] : [],
      );
      const lastAiAt = aiIndexes.at(-1) ?? -1;
      expect(afterAbort[lastAiAt]?.id).toBe(`${plan.id}:ai-${turnIndex}.${turn.rounds.length}`);
      const stalled = new Set(turn.aborted.filter((call) => call.stalls).map((call) => call.id));
      const answered = afterAbort
        .slice(lastAiAt + 1)
        .filter((message) => ToolMessage.isInstance(message))
        .map((message) => message.tool_call_id);
      expect(answered.filter((id) => stalled.has(id))).toEqual([]);
    }
  });

  const storedResults: Record<string, string> = {};
  const storedPlaceholders: Record<string, string> = {};
  /** The sorted ids of these tool messages, comma-joined. */
  const idsOf = (messages: readonly ToolMessage[]) =>
    messages
      .map((message) => message.tool_call_id)
      .sort()
      .join(",");
  for (const plan of plans) {
    const stored = await storedMessages(agentOf(plan), plan.id);
    const results = stored.filter(
      (message): message is ToolMessage =>
        ToolMessage.isInstance(message) && !isPlaceholder(message),
    );
    storedResults[plan.id] = idsOf(results);
    storedPlaceholders[plan.id] = idsOf(stored.filter(isPlaceholder));
  }

  const exposition = await scrape(handle.metricsUrl);
  return {
    plans,
    truth,
    models,
    received,
    unscripted,
    attachmentWarnings,
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

/** `counts` summed by the parts of the key at `positions`, joined with `|` in that order. */
function byPart(counts: Counts, ...positions: number[]): Counts {
  const grouped: Counts = {};
  for (const [key, value] of Object.entries(counts)) {
    const parts = key.split("|");
    add(grouped, positions.map((position) => parts[position]).join("|"), value);
  }
  return grouped;
}

/** The ids of the calls a thread's script leaves dangling, in order; repeated on `reused-ids`. */
function danglingIdsOf(plan: ThreadPlan): string[] {
  return plan.turns.flatMap((turn) => turn.aborted ?? []).map((call) => call.id);
}

/** Whether some id occurs twice in `ids`. */
function hasRepeat(ids: readonly string[]): boolean {
  return new Set(ids).size < ids.length;
}

// --- The test --------------------------------------------------------------------------------

describe("a createAgent workload of 200 threads over 3 models, 4 tools and 6 agent stacks", () => {
  let handle: ServedTelemetryHandle | undefined;
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
    expect(truth.abortedRuns).toBe(
      plans.flatMap((plan) => plan.turns).filter((t) => t.aborted).length,
    );
    expect(truth.abortedRuns).toBeGreaterThan(truth.abortedThreads);
    expect(truth.abortedCalls).toBeGreaterThan(truth.abortedRuns);
    for (const name of FAKE_MODELS) {
      expect(models[name].callCount, name).toBe(truth.callsPerModel[name]);
    }
    // Every request of every model call happened as the stack makes them (a fallback's on the
    // model that is down, then on the backup; a retry's twice), each with exactly the
    // placeholders the script expects.
    expect(received).toEqual(truth.placeholders);
  });

  it("runs every stack on every model, with aborted threads, clean and repaired model calls", () => {
    const { truth, plans } = workload;
    for (const stack of STACKS) {
      for (const model of MODELS) {
        const threads = plans.filter((plan) => plan.stack === stack && plan.model === model);
        const aborted = threads.filter((plan) => plan.turns.some((t) => t.aborted));
        expect(aborted.length, `aborted ${stack} threads on ${model}`).toBeGreaterThan(0);
        expect(threads.length, `${stack} threads on ${model}`).toBeGreaterThan(aborted.length);
      }
      expect(truth.modelCallsByStack[`${stack}|clean`], stack).toBeGreaterThan(0);
      expect(truth.modelCallsByStack[`${stack}|repaired`], stack).toBeGreaterThan(0);
    }
    // The retry stack retries clean model calls and repaired ones.
    const retryThreads = new Set(plans.filter((p) => p.stack === "retry").map((p) => p.id));
    const retried = Object.entries(truth.placeholders)
      .filter(([key, requests]) => retryThreads.has(key.split("|")[0] ?? "") && requests.length > 1)
      .map(([, requests]) => requests[0]);
    expect(retried).toContain("");
    expect(retried.filter((placeholders) => placeholders !== "")).not.toEqual([]);
    // On reused-ids, calls dangle under the ids of calls of their thread that have a result.
    const reusedAgain = plans.filter((plan) => {
      const results = truth.storedResults[plan.id]?.split(",") ?? [];
      const dangling = plan.turns.flatMap((turn) => turn.aborted ?? []);
      return plan.stack === "reused-ids" && dangling.some((call) => results.includes(call.id));
    });
    expect(reusedAgain).not.toEqual([]);
  });

  it("aborts reused-ids threads twice: a thread holds two dangling calls with one id", () => {
    const { truth, plans, exposition, received } = workload;
    const reused = plans.filter((plan) => plan.stack === "reused-ids");
    for (const plan of reused) {
      const abortedRuns = plan.turns.filter((turn) => turn.aborted).length;
      expect([0, 2], plan.id).toContain(abortedRuns);
    }
    // Each aborted round names its calls call_0, call_1, ...: the second abort's ids repeat the
    // first's, in another AI message of the same thread.
    const twice = reused.filter((plan) => hasRepeat(danglingIdsOf(plan)));
    expect(twice, "some reused-ids thread holds two dangling calls with one id").not.toEqual([]);
    expect(twice).toEqual(reused.filter((plan) => danglingIdsOf(plan).length > 0));
    // Each counted on its own: keyed by thread and call id alone, the second would be dropped.
    const scraped = seriesOf(exposition, "tool_call_resilience_thread_recent_dangling_tool_calls", [
      "gen_ai_conversation_id",
      "gen_ai_request_model",
    ]);
    for (const plan of twice) {
      const ids = danglingIdsOf(plan);
      expect(truth.threadDangling[`${plan.id}|${plan.model}`], plan.id).toBe(ids.length);
      expect(scraped[`${plan.id}|${plan.model}`], plan.id).toBe(ids.length);
      expect(ids.length).toBeGreaterThan(new Set(ids).size);
      // And the model receives a placeholder for each, after the AI message that made it.
      const last = plan.turns.length - 1;
      const lastRound = plan.turns[last]?.rounds.length ?? 0;
      expect(received[`${plan.id}|${last}|${lastRound}`], plan.id).toEqual([ids.sort().join(",")]);
    }
  });

  it("with persist, expects one repaired model call per abort, and its placeholders stored", () => {
    const { truth, plans } = workload;
    const persisted = plans.filter((plan) => plan.stack === "persist");
    const abortedRuns = persisted.flatMap((plan) => plan.turns).filter((t) => t.aborted).length;
    expect(abortedRuns).toBeGreaterThan(0);
    // Every abort is followed by one repaired model call, whose hook inspects it too; the thread
    // then stores a placeholder for every call that dangled.
    expect(truth.persistedRepairCalls).toBe(abortedRuns);
    expect(truth.modelCallsByStack["persist|repaired"]).toBe(abortedRuns);
    for (const plan of persisted) {
      expect(truth.storedPlaceholders[plan.id], plan.id).toBe(danglingIdsOf(plan).sort().join(","));
    }
  });

  it("calls the model behind withToolCallRepair, and says so once per agent", () => {
    // Counted once: the totals below include the double-attachment threads' model calls once.
    expect(workload.truth.doubleAttachedAgents).toBe(MODELS.length);
    expect(workload.attachmentWarnings).toBe(workload.truth.doubleAttachedAgents);
  });

  it("stores no result of an aborted round, and placeholders on persist threads alone", () => {
    const { truth, plans, storedResults, storedPlaceholders } = workload;
    // After an abort, getState() shows the results of the calls that had answered as pending
    // writes; the next run's input discards them, so every call of the aborted round dangles.
    expect(storedResults).toEqual(truth.storedResults);
    // With persist, one placeholder per dangling call, written by the first model call after the
    // abort; without, the stored thread is left as it was.
    expect(storedPlaceholders).toEqual(truth.storedPlaceholders);
    const holding = plans.filter((plan) => storedPlaceholders[plan.id] !== "");
    expect(holding.map((plan) => plan.stack)).not.toEqual([]);
    expect(new Set(holding.map((plan) => plan.stack))).toEqual(new Set(["persist"]));
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
    // The model that is down issued none: the backup's calls are the backup's.
    expect(Object.keys(byPart(scraped, 1)).sort()).toEqual([...MODELS].sort());
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
    // Charged to the model that made the call, though a fallback first sees it in a request to
    // the model that is down.
    expect(Object.keys(byPart(scraped, 1)).sort()).toEqual([...MODELS].sort());
    expect(Object.keys(byPart(scraped, 3))).toEqual(["interrupted"]);
    expect(total(scraped)).toBe(truth.abortedCalls);
  });

  it("counts each thread's dangling calls once, with a series only for threads that had one", () => {
    const { truth, exposition, plans } = workload;
    // All within the window (15 minutes) and the default threadSeriesLimit: every such thread.
    expect(truth.abortedThreads).toBeLessThanOrEqual(100);
    const scraped = seriesOf(exposition, "tool_call_resilience_thread_recent_dangling_tool_calls", [
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
        exposition.find("tool_call_resilience_thread_recent_dangling_tool_calls", {
          gen_ai_conversation_id: plan.id,
        }),
      ).toEqual([]);
    }
  });

  it("counts every model call by outcome, per model, each attempt under its request's model", () => {
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
    const byModel = byPart(scraped, 1, 3);
    for (const model of FAKE_MODELS) {
      expect(byModel[`${model}|clean`], model).toBeGreaterThan(0);
      expect(byModel[`${model}|repaired`], model).toBeGreaterThan(0);
    }
    // Each agent under the name given to createAgent, with the model calls of its stack.
    const byAgent = byPart(scraped, 2, 3);
    expect(Object.keys(byPart(scraped, 2)).sort()).toEqual(STACKS.map(agentNameOf).sort());
    for (const stack of STACKS) {
      for (const outcome of ["clean", "repaired"]) {
        expect(byAgent[`${agentNameOf(stack)}|${outcome}`], `${stack} ${outcome}`).toBe(
          truth.modelCallsByStack[`${stack}|${outcome}`],
        );
      }
    }
    // The model that is down is called by the fallback stack's agent alone.
    expect(Object.keys(byPart(scraped, 1, 2)).filter((key) => key.startsWith(DOWN_MODEL))).toEqual([
      `${DOWN_MODEL}|${agentNameOf("fallback")}`,
    ]);
    // More model calls than the scripts have answers: fallbacks and retries add attempts.
    expect(total(scraped)).toBeGreaterThan(Object.keys(truth.placeholders).length);
  });

  it("counts every placeholder inserted, and the reply after it, on every model call that needed it, per model", () => {
    const { truth, exposition } = workload;
    const scraped = seriesOf(exposition, "tool_call_resilience_repairs_total", [
      "gen_ai_provider_name",
      "gen_ai_request_model",
      "tool_call_resilience_repair_kind",
    ]);
    expect(scraped).toEqual(truth.repairs);
    expect(Object.keys(byPart(scraped, 2)).sort()).toEqual([
      "placeholder_inserted",
      "turn_inserted",
    ]);
    // Applied in the request to the model that is down as well as in the backup's.
    expect(Object.keys(byPart(scraped, 1)).sort()).toEqual([...FAKE_MODELS].sort());
    // Re-patched on every later call: more placeholders than dangling calls, each counted once
    // above, and more replies than aborted runs.
    const byKind = byPart(scraped, 2);
    expect(byKind.placeholder_inserted).toBeGreaterThan(truth.abortedCalls);
    expect(byKind.turn_inserted).toBeGreaterThan(truth.abortedRuns);
  });

  it("times one inspection per model call, and the persist hook's where it repaired", () => {
    const { truth, exposition } = workload;
    const scraped = seriesOf(exposition, "tool_call_resilience_repair_duration_count", [
      "tool_call_resilience_outcome",
    ]);
    expect(scraped).toEqual(truth.inspections);
    expect(truth.persistedRepairCalls).toBeGreaterThan(0);
    expect(total(scraped)).toBe(truth.totalModelCalls + truth.persistedRepairCalls);
  });

  it("keeps every series within its cardinality limit", () => {
    const overflow = workload.exposition.samples.filter(
      (sample) => sample.labels.otel_metric_overflow !== undefined,
    );
    expect(overflow).toEqual([]);
  });
});
