/**
 * End-to-end accounting: a `createAgent` workload with a known ground truth (200 threads over 3
 * models and 4 tools, a known subset of runs aborted while their tool calls run, every thread then
 * continued), run with `startTelemetry` and the middleware, and the scraped Prometheus counters
 * compared with the ground truth exactly, per model, per tool and per thread.
 *
 * Each thread runs on one of five agent stacks around the middleware (see {@link STACKS}): plain;
 * a model that reuses short call ids (`call_0`, ...) on every turn; a model also wrapped with
 * `withToolCallRepair`; `modelFallbackMiddleware` during an outage of the agent's own model; and
 * `modelRetryMiddleware` over a model whose first attempt sometimes fails.
 *
 * The ground truth is computed from the scripts alone, never from the library: a model call is
 * `repaired` when its thread holds a dangling call at that point (without `persist` the stored
 * thread keeps it, so every later model call of the thread needs the placeholders again), and it
 * then applies one `placeholder_inserted` repair per dangling call of the thread. Every request
 * the middleware sees is a model call of its own, under the request's model: a fallback's failed
 * attempt on the primary and its attempt on the backup, each attempt of a retry. A tool call, and
 * its dangling once, are charged to the model that made it, the one its AI message names.
 */
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import type { FakeBuiltModel } from "@langchain/core/testing";
import { modelFallbackMiddleware, modelRetryMiddleware, tool } from "langchain";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { seeded } from "../demo/random.js";
import {
  DOUBLE_ATTACHMENT_WARNING,
  danglingToolCallMiddleware,
  withToolCallRepair,
} from "../src/index.js";
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

/**
 * The agent stacks a thread can run on, each with the middleware:
 * - `plain`: the middleware alone;
 * - `reused-ids`: the same, but the model names its calls `call_0`, `call_1`, ... in every AI
 *   message, so ids repeat across the turns of a thread and across threads;
 * - `double-attachment`: the agent's model is also wrapped with `withToolCallRepair`;
 * - `fallback`: `modelFallbackMiddleware(model)` before ours, on an agent whose own model
 *   ({@link DOWN_MODEL}) is down, so every model call fails on it and goes to the thread's model;
 * - `retry`: `modelRetryMiddleware` (one retry) before ours, and the first attempt of some model
 *   calls fails.
 */
const STACKS = ["plain", "reused-ids", "double-attachment", "fallback", "retry"] as const;
type StackName = (typeof STACKS)[number];

/** The model of the `fallback` stack's agents: down, every call to it fails. */
const DOWN_MODEL = "model-down";
/** Every fake model of the workload, by the name it reports (`.model`). */
const FAKE_MODELS = [...MODELS, DOWN_MODEL] as const;
type FakeModelName = (typeof FAKE_MODELS)[number];

const THREADS = 200;
/** Runs per thread after its first one. */
const CONTINUATIONS = 3;
/** A thread is aborted once or not at all by its index modulo this (see {@link planThread}). */
const ABORT_CYCLE = 5;
/**
 * Consecutive threads that run one stack: every model with every abort pattern, so each stack has
 * threads of every model, aborted in their first run, in their second, and never.
 */
const STACK_BLOCK = MODELS.length * ABORT_CYCLE;
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
 * The script of thread `index`: it talks to model `index % 3`, on stack
 * `STACKS[⌊index / 15⌋ % 5]`. Two threads in five are aborted once, in their first run
 * (`index % 5 === 1`) or their second (`index % 5 === 3`); the others only finish normally. Every
 * thread has 1 + {@link CONTINUATIONS} runs. On the `retry` stack, the first attempt of each model
 * call fails half the time.
 */
function planThread(index: number): ThreadPlan {
  const random = seeded(0x7c0ffee + index * 7919);
  const between = (low: number, high: number) => low + Math.floor(random() * (high - low + 1));
  const id = `thread-${String(index).padStart(3, "0")}`;
  const model = MODELS[index % MODELS.length] as ModelName;
  const stack = STACKS[Math.floor(index / STACK_BLOCK) % STACKS.length] as StackName;
  const abortedTurn = index % ABORT_CYCLE === 1 ? 0 : index % ABORT_CYCLE === 3 ? 1 : undefined;

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
    if (turn === abortedTurn) {
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
  /** `provider|model|agent|outcome` → model calls the middleware saw, by the request's model. */
  readonly modelCalls: Counts;
  /** `stack|outcome` → model calls the middleware saw, to check every stack is exercised. */
  readonly modelCallsByStack: Counts;
  /** `provider|model|kind` → repairs, counted on every model call they are applied to. */
  readonly repairs: Counts;
  /** `outcome` → inspections: one per model call without `persist`. */
  readonly inspections: Counts;
  /** `model` → invocations of each fake model, to queue that many answers on it. */
  readonly callsPerModel: Record<FakeModelName, number>;
  /**
   * `thread|turn|round` → for each request of that model call (one per attempt), the ids of the
   * calls it must carry placeholders for.
   */
  readonly placeholders: Record<string, string[]>;
  /** `thread` → the ids of the calls whose results the thread stores in the end. */
  readonly storedResults: Record<string, string>;
  /** Agents whose model is wrapped and that have the middleware too: each warns once. */
  readonly doubleAttachedAgents: number;
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
    modelCallsByStack: {} as Counts,
    repairs: {} as Counts,
    inspections: {} as Counts,
    callsPerModel: Object.fromEntries(FAKE_MODELS.map((model) => [model, 0])) as Record<
      FakeModelName,
      number
    >,
    placeholders: {} as Record<string, string[]>,
    storedResults: {} as Record<string, string>,
    doubleAttachedAgents: new Set(
      plans.filter((plan) => plan.stack === "double-attachment").map((plan) => plan.model),
    ).size,
    abortedThreads: 0,
    abortedCalls: 0,
    totalModelCalls: 0,
  };
  for (const plan of plans) {
    const { id, model, stack } = plan;
    const danglingIds: string[] = [];
    const completedIds: string[] = [];
    for (const [turnIndex, turn] of plan.turns.entries()) {
      for (let round = 0; round <= turn.rounds.length; round++) {
        const outcome = danglingIds.length > 0 ? "repaired" : "clean";
        const placeholders = [...danglingIds].sort().join(",");
        const requests: string[] = [];
        // Every attempt is a model call of its own, repaired alike, under the request's model.
        for (const requested of attemptsOf(plan, turn, round)) {
          add(truth.modelCalls, `${PROVIDER}|${requested}|${AGENT}|${outcome}`);
          add(truth.modelCallsByStack, `${stack}|${outcome}`);
          add(truth.inspections, outcome);
          truth.callsPerModel[requested] += 1;
          truth.totalModelCalls += 1;
          if (danglingIds.length > 0) {
            add(truth.repairs, `${PROVIDER}|${requested}|placeholder_inserted`, danglingIds.length);
          }
          requests.push(placeholders);
        }
        truth.placeholders[`${id}|${turnIndex}|${round}`] = requests;
        // Only the thread's model answers: its calls are its own, whichever stack it runs on.
        const issued = round < turn.rounds.length ? turn.rounds[round] : turn.aborted;
        for (const call of issued ?? []) add(truth.toolCalls, `${PROVIDER}|${model}|${call.name}`);
        if (round < turn.rounds.length) completedIds.push(...(issued ?? []).map((call) => call.id));
      }
      if (turn.aborted !== undefined) {
        truth.abortedThreads += 1;
        for (const call of turn.aborted) {
          danglingIds.push(call.id);
          truth.abortedCalls += 1;
          // Once, however many requests (attempts, fallbacks, later turns) it is repaired in.
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
  /** `thread` → the ids of the calls whose results the thread stores after the workload. */
  readonly storedResults: Record<string, string>;
  /** `thread` → how many placeholders the thread stores after the workload. */
  readonly storedPlaceholders: Record<string, number>;
  readonly exposition: Exposition;
}

type Agent = ReturnType<typeof agentWith>;

/**
 * The agent of one stack over one of the scripted models, with the middleware (see
 * {@link STACKS}). `down` is the model that is down; `warn` hears the middleware's warnings on
 * `double-attachment`.
 */
function stackedAgent(
  stack: StackName,
  model: FakeBuiltModel,
  down: FakeBuiltModel,
  tools: Parameters<typeof agentWith>[0]["tools"],
  warn: (message: string) => void,
): Agent {
  const ours = danglingToolCallMiddleware({ logger: false });
  switch (stack) {
    case "plain":
    case "reused-ids":
      return agentWith({ model, tools, middleware: [ours] });
    case "double-attachment":
      return agentWith({
        model: withToolCallRepair(model, { logger: false }),
        tools,
        middleware: [danglingToolCallMiddleware({ logger: { warn } })],
      });
    case "fallback":
      return agentWith({ model: down, tools, middleware: [modelFallbackMiddleware(model), ours] });
    case "retry":
      return agentWith({
        model,
        tools,
        middleware: [
          modelRetryMiddleware({ maxRetries: 1, initialDelayMs: 0, jitter: false }),
          ours,
        ],
      });
  }
}

function isPlaceholder(message: BaseMessage): message is ToolMessage {
  return ToolMessage.isInstance(message) && message.response_metadata?.synthetic === true;
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
    if (message === DOUBLE_ATTACHMENT_WARNING) attachmentWarnings += 1;
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
  const storedPlaceholders: Record<string, number> = {};
  for (const plan of plans) {
    const stored = await storedMessages(agentOf(plan), plan.id);
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

/** `counts` summed by the part of the key at `position`. */
function byPart(counts: Counts, position: number): Counts {
  const grouped: Counts = {};
  for (const [key, value] of Object.entries(counts)) {
    add(grouped, key.split("|")[position] as string, value);
  }
  return grouped;
}

// --- The test --------------------------------------------------------------------------------

describe("a createAgent workload of 200 threads over 3 models, 4 tools and 5 agent stacks", () => {
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
      const threads = plans.filter((plan) => plan.stack === stack);
      expect(new Set(threads.map((plan) => plan.model)).size, stack).toBe(MODELS.length);
      expect(threads.filter((plan) => plan.turns.some((t) => t.aborted)).length).toBeGreaterThan(0);
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

  it("calls the model behind withToolCallRepair, and says so once per agent", () => {
    // Counted once: the totals below include the double-attachment threads' model calls once.
    expect(workload.truth.doubleAttachedAgents).toBe(MODELS.length);
    expect(workload.attachmentWarnings).toBe(workload.truth.doubleAttachedAgents);
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
    for (const model of FAKE_MODELS) {
      expect(scraped[`${PROVIDER}|${model}|${AGENT}|clean`]).toBeGreaterThan(0);
      expect(scraped[`${PROVIDER}|${model}|${AGENT}|repaired`]).toBeGreaterThan(0);
    }
    // More model calls than the scripts have answers: fallbacks and retries add attempts.
    expect(total(scraped)).toBeGreaterThan(Object.keys(truth.placeholders).length);
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
    // Applied in the request to the model that is down as well as in the backup's.
    expect(Object.keys(byPart(scraped, 1)).sort()).toEqual([...FAKE_MODELS].sort());
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
