/**
 * The simulated fleet: agents on the real stack (`createAgent`, `MemorySaver`, the middleware),
 * fake tool-calling models named like production models, tools with latency, and conversations
 * whose runs are interrupted the way production runs are. Each interrupted thread is continued
 * with a new user message, so its dangling calls reach the middleware for real.
 *
 * The scripts are also the ground truth: the fleet counts, from the scripts alone, the tool calls
 * each model issued and the calls each interruption left dangling, so the summary can show that
 * the library's counters agree.
 */
import { getMaxListeners, setMaxListeners } from "node:events";
import { AIMessage, type BaseMessage, HumanMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { type BaseCheckpointSaver, interrupt, MemorySaver } from "@langchain/langgraph";
import { type AgentMiddleware, createAgent, tool } from "langchain";
import { z } from "zod";
import { seeded, seedOf } from "./random.js";

/** A model of the fleet: the LangChain provider id it reports and its model name. */
export interface FleetModel {
  readonly provider: string;
  readonly name: string;
  /** How much more (or less) often than the fleet's rate runs on this model are interrupted. */
  readonly interruptFactor: number;
}

/** The fleet's models: named like real ones, so dashboards show realistic labels. */
export const FLEET_MODELS: readonly FleetModel[] = Object.freeze([
  { provider: "openai", name: "gpt-4.1", interruptFactor: 1 },
  { provider: "anthropic", name: "claude-sonnet-4-5", interruptFactor: 0.6 },
  { provider: "google_genai", name: "gemini-2.5-flash", interruptFactor: 1.4 },
]);

/** A tool of the fleet and how long it takes, in milliseconds. */
interface FleetTool {
  readonly name: string;
  readonly description: string;
  readonly latency: readonly [number, number];
}

const TOOLS: readonly FleetTool[] = [
  { name: "search_docs", description: "Searches the product documentation.", latency: [20, 120] },
  { name: "fetch_page", description: "Fetches a web page.", latency: [80, 300] },
  { name: "run_sql", description: "Runs a read-only SQL query.", latency: [40, 200] },
  {
    name: "send_email",
    description: "Sends an email; some need a human's approval first.",
    latency: [30, 100],
  },
];

/** The names of the fleet's tools. */
export const FLEET_TOOL_NAMES: readonly string[] = TOOLS.map((fleetTool) => fleetTool.name);

/** How a run is interrupted. */
export type InterruptionKind = "abort" | "timeout" | "interrupt";

/** A tool call the scripts plan for a turn. */
export interface PlannedCall {
  readonly id: string;
  readonly name: string;
  readonly latency: number;
  /** Stalls until the run is aborted: the calls of an aborted or timed-out round. */
  readonly stalls: boolean;
  /** A `send_email` that waits for a human's approval through `interrupt()`. */
  readonly needsApproval: boolean;
}

/** One turn of a conversation as the scripts plan it: plain data, so it can go to a worker. */
export interface PlannedTurn {
  /** The user's message that opens the turn. */
  readonly human: { readonly id: string; readonly content: string };
  /** Rounds of tool calls that all complete, in order. */
  readonly rounds: readonly (readonly PlannedCall[])[];
  /** The last round's calls are in flight when the run is interrupted this way. */
  readonly interruption?: {
    readonly kind: InterruptionKind;
    readonly calls: readonly PlannedCall[];
  };
  /** After how many milliseconds a user presses stop, or the request times out. */
  readonly patience: number;
}

/** A thread as the scripts know it: its id, its place in the seed, its model, its turns so far. */
export interface ScriptedThread {
  readonly id: string;
  readonly index: number;
  readonly model: FleetModel;
  /** Turns it has had. */
  turn: number;
  /** Calls left dangling in its history that no model call has seen yet. */
  dangling: readonly DanglingCall[];
}

/** A call left without a result: its id and its tool. */
export interface DanglingCall {
  readonly id: string;
  readonly name: string;
}

/** Counts by model name, then by tool name. */
export type CountsByModelAndTool = Record<string, Record<string, number>>;

/** What the scripts say happened: the figures the library's counters must show. */
export interface GroundTruth {
  /** Tool calls the models issued. */
  readonly toolCalls: CountsByModelAndTool;
  /** Calls left dangling by an interruption and then seen again, when the thread went on. */
  readonly dangling: CountsByModelAndTool;
  /** The same dangling calls, by thread id. */
  readonly danglingByThread: Record<string, number>;
  /** Interruptions by kind. */
  readonly interruptions: Record<InterruptionKind, number>;
  /** Runs finished, interrupted or not. */
  runs: number;
  /** Threads that had at least one run. */
  threads: number;
}

/** What the fleet is asked to do. */
export interface FleetSettings {
  /** Conversations going on at once. */
  readonly threads: number;
  /** Runs in flight at once. */
  readonly concurrency: number;
  /**
   * Turns per thread; the fleet stops when every thread has had them. `undefined`: each
   * conversation has {@link CONVERSATION_TURNS} turns, then a new one on a new thread starts.
   */
  readonly turns: number | undefined;
  /** Seed of every script: the same seed gives the same conversations. */
  readonly seed: number;
  /** Share of runs interrupted, at this moment (the caller raises it during a burst). */
  readonly interruptRate: () => number;
  /** The middleware under demonstration, and any other. */
  readonly middleware: readonly AgentMiddleware[];
  /** Sees each request a fake model receives, the middleware's repair applied. Default: none. */
  readonly onModelRequest?: (request: ModelRequestSeen) => void;
}

/** A request as a fake model received it: after the middleware, as a real model would. */
export interface ModelRequestSeen {
  /** The model's name, such as `gpt-4.1`. */
  readonly model: string;
  /** The thread the request belongs to. */
  readonly thread: string;
  /** The messages of the request, in order. */
  readonly messages: readonly BaseMessage[];
}

/** A fleet of agents and its threads. */
export interface Fleet {
  readonly truth: GroundTruth;
  /**
   * Runs turns until `noMoreRuns` aborts or every thread has had its turns, and resolves when no
   * run is in flight. `cancel` also aborts the runs in flight.
   */
  run(signals: { readonly noMoreRuns: AbortSignal; readonly cancel: AbortSignal }): Promise<void>;
}

const STALL_LIMIT_MS = 30_000;

/** Turns of a conversation when `turns` is not set; then a new conversation takes its place. */
export const CONVERSATION_TURNS = 12;

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(done, ms);
    function done() {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }
    function onAbort() {
      clearTimeout(timer);
      reject(signal?.reason ?? new Error("aborted"));
    }
    if (signal?.aborted) onAbort();
    else signal?.addEventListener("abort", onAbort, { once: true });
  });
}

function add(counts: CountsByModelAndTool, model: string, toolName: string): void {
  const byTool = counts[model] ?? {};
  counts[model] = byTool;
  byTool[toolName] = (byTool[toolName] ?? 0) + 1;
}

/** True for the error a run ends with when its signal aborted it. */
function isAbort(error: unknown, signal: AbortSignal): boolean {
  return signal.aborted && (error === signal.reason || error instanceof Error);
}

/** The sum of counts by model and tool. */
export function totalOf(counts: CountsByModelAndTool): number {
  return Object.values(counts)
    .flatMap((byTool) => Object.values(byTool))
    .reduce((sum, count) => sum + count, 0);
}

/** An empty ground truth, to add turns to with {@link recordTurn}. */
export function emptyTruth(): GroundTruth {
  return {
    toolCalls: {},
    dangling: {},
    danglingByThread: {},
    interruptions: { abort: 0, timeout: 0, interrupt: 0 },
    runs: 0,
    threads: 0,
  };
}

/**
 * The `index`th conversation of the scripts, before its first turn. A `prefix` keeps the ids of
 * one run apart from another's in a database both use; the scripts do not depend on it.
 */
export function scriptedThread(index: number, prefix = ""): ScriptedThread {
  return {
    id: `${prefix}thread-${String(index + 1).padStart(4, "0")}`,
    index,
    model: FLEET_MODELS[index % FLEET_MODELS.length] as FleetModel,
    turn: 0,
    dangling: [],
  };
}

/**
 * Plans the thread's next turn. The plan depends on the seed, the thread and its turn number alone
 * (and on whether the run is interrupted, which `interruptRate` decides), so any process that plans
 * it plans the same turn.
 */
export function planTurn(seed: number, thread: ScriptedThread, interruptRate: number): PlannedTurn {
  const random = seeded(seedOf(seed, thread.index, thread.turn));
  const between = (low: number, high: number) => low + Math.floor(random() * (high - low + 1));
  const prefix = `${thread.id}:turn-${thread.turn}`;
  const call = (round: number, position: number, kind?: InterruptionKind): PlannedCall => {
    const fleetTool =
      kind === "interrupt"
        ? (TOOLS[3] as FleetTool)
        : (TOOLS[between(0, TOOLS.length - 1)] as FleetTool);
    return {
      id: `call_${thread.turn}_${round}_${position}`,
      name: fleetTool.name,
      latency: between(fleetTool.latency[0], fleetTool.latency[1]),
      stalls: kind === "abort" || kind === "timeout",
      needsApproval: kind === "interrupt",
    };
  };
  const interrupted = random() < Math.min(1, interruptRate * thread.model.interruptFactor);
  const roundCount = thread.turn === 0 ? between(1, 2) : between(0, 2);
  const rounds = Array.from({ length: roundCount }, (_, round) =>
    Array.from({ length: between(1, 3) }, (_, position) => call(round, position)),
  );
  const human = { id: `${prefix}:human`, content: `Message ${thread.turn + 1} on ${thread.id}` };
  const patience = between(20, 150);
  if (!interrupted) return { human, rounds, patience };
  const pick = random();
  const kind: InterruptionKind = pick < 0.45 ? "abort" : pick < 0.8 ? "timeout" : "interrupt";
  const count = kind === "interrupt" ? 1 : between(1, 3);
  const calls = Array.from({ length: count }, (_, position) => call(roundCount, position, kind));
  return { human, rounds, interruption: { kind, calls }, patience };
}

/** What happened in a turn that ran to its end or to its planned interruption. */
export interface TurnOutcome {
  /** The tool calls the model issued, in order, by tool name. */
  readonly issued: readonly string[];
  /** How the run was interrupted, and the calls it left dangling. */
  readonly interruption?: {
    readonly kind: InterruptionKind;
    readonly calls: readonly DanglingCall[];
  };
}

/**
 * Adds a turn to the ground truth and moves its thread on: the calls it issued, the dangling calls
 * its first model call saw (the thread's, from its last interruption), and what it left dangling.
 */
export function recordTurn(truth: GroundTruth, thread: ScriptedThread, outcome: TurnOutcome): void {
  if (thread.turn === 0) truth.threads += 1;
  for (const toolName of outcome.issued) add(truth.toolCalls, thread.model.name, toolName);
  recordSeen(truth, thread, thread.dangling);
  thread.dangling = outcome.interruption?.calls ?? [];
  if (outcome.interruption !== undefined) truth.interruptions[outcome.interruption.kind] += 1;
  truth.runs += 1;
  thread.turn += 1;
}

/** Adds dangling calls of the thread that a model call saw to the ground truth. */
function recordSeen(
  truth: GroundTruth,
  thread: ScriptedThread,
  seen: readonly DanglingCall[],
): void {
  for (const call of seen) add(truth.dangling, thread.model.name, call.name);
  if (seen.length > 0) {
    truth.danglingByThread[thread.id] = (truth.danglingByThread[thread.id] ?? 0) + seen.length;
  }
}

/** What a {@link TurnRunner} runs turns with. */
export interface TurnRunnerSettings {
  /** Where every thread's state lives: a `MemorySaver` in one process, PostgreSQL for a fleet. */
  readonly checkpointer: BaseCheckpointSaver;
  /** The middleware under demonstration, and any other. */
  readonly middleware: readonly AgentMiddleware[];
  /**
   * When LangGraph writes checkpoints: `"sync"` writes each step's before the next starts, so a
   * process killed mid-run leaves its last step stored. Default: LangGraph's (`"async"`).
   */
  readonly durability?: "sync" | "async";
  /** Sees each request a fake model receives, the middleware's repair applied. Default: none. */
  readonly onModelRequest?: (request: ModelRequestSeen) => void;
}

/** The agents of the fleet, one per model, running planned turns on a checkpointer. */
export interface TurnRunner {
  /**
   * Runs a planned turn on the thread. Resolves with what happened, or `undefined` when `stop`
   * aborted it; rejects when the run failed in an unplanned way.
   */
  runTurn(
    thread: Pick<ScriptedThread, "id" | "model">,
    turn: PlannedTurn,
    stop: AbortSignal,
  ): Promise<TurnOutcome | undefined>;
  /** The agent of a model, to read a thread's state with. */
  agentOf(model: string): ReturnType<typeof createAgent>;
}

/**
 * Builds one agent per model (`createAgent`, fake models that answer from the planned turn, tools
 * with latency) over the checkpointer, to run planned turns in this process.
 */
export function createTurnRunner(settings: TurnRunnerSettings): TurnRunner {
  /** The turn each human message opens, by message id: the fake models answer from it. */
  const turnsByHuman = new Map<
    string,
    { turn: PlannedTurn; issued: string[]; thread: string; model: string }
  >();
  /** Calls that stall until their run is aborted, and what to tell once one runs. */
  const stalling = new Map<string, () => void>();
  /** Every planned call of the runs in flight, by {@link callKey}. */
  const plannedCalls = new Map<string, PlannedCall>();
  /** Call ids are unique within a thread, as a provider's are within a conversation. */
  const callKey = (threadId: unknown, callId: string) => `${String(threadId)}/${callId}`;

  const tools = TOOLS.map((fleetTool) =>
    tool(
      async ({ request }, config) => {
        const key = callKey(config.configurable?.thread_id, config.toolCall?.id ?? "");
        const planned = plannedCalls.get(key);
        if (planned?.needsApproval) {
          const approved: unknown = interrupt({ question: `Send this email? ${request}` });
          return approved === true ? "sent" : "not sent";
        }
        const started = stalling.get(key);
        if (started !== undefined) {
          started();
          await sleep(STALL_LIMIT_MS, config.signal);
          throw new Error(`${fleetTool.name} stalled and its run was never aborted`);
        }
        await sleep(planned?.latency ?? fleetTool.latency[0], config.signal);
        return `${fleetTool.name}: done (${request})`;
      },
      {
        name: fleetTool.name,
        description: fleetTool.description,
        schema: z.object({ request: z.string() }),
      },
    ),
  );

  /** Answers a model call from the script of the turn the last human message opened. */
  function answer(messages: readonly BaseMessage[]): AIMessage {
    let humanAt = messages.length - 1;
    while (humanAt >= 0 && !HumanMessage.isInstance(messages[humanAt])) humanAt -= 1;
    const human = messages[humanAt];
    const entry = human?.id === undefined ? undefined : turnsByHuman.get(human.id);
    if (entry === undefined) return new AIMessage("I have lost track of this conversation.");
    settings.onModelRequest?.({ model: entry.model, thread: entry.thread, messages });
    const round = messages
      .slice(humanAt + 1)
      .filter((message) => AIMessage.isInstance(message)).length;
    const { turn } = entry;
    const id = `${human?.id}:ai-${round}`;
    const calls =
      round < turn.rounds.length
        ? turn.rounds[round]
        : round === turn.rounds.length
          ? turn.interruption?.calls
          : undefined;
    if (calls === undefined) return new AIMessage({ id, content: "Here is what I found." });
    for (const call of calls) entry.issued.push(call.name);
    return new AIMessage({
      id,
      content: "",
      tool_calls: calls.map((call) => ({
        id: call.id,
        name: call.name,
        args: { request: `step ${round + 1}` },
        type: "tool_call" as const,
      })),
    });
  }

  const agents = new Map(
    FLEET_MODELS.map((fleetModel) => {
      const model = fakeModel();
      // What a real chat model reports about itself: its name, and its provider in the
      // LangSmith parameters, where the middleware reads it.
      const ownParams = model.getLsParams.bind(model);
      Object.assign(model, {
        model: fleetModel.name,
        getLsParams: (options: Parameters<typeof ownParams>[0]) => ({
          ...ownParams(options),
          ls_provider: fleetModel.provider,
          ls_model_name: fleetModel.name,
        }),
      });
      const agent = createAgent({
        name: "support_assistant",
        model,
        tools,
        checkpointer: settings.checkpointer,
        middleware: [...settings.middleware],
      });
      const enqueue = (calls: number) => {
        for (let index = 0; index < calls; index++) model.respond((messages) => answer(messages));
      };
      return [fleetModel.name, { agent, enqueue }] as const;
    }),
  );

  async function runTurn(
    thread: Pick<ScriptedThread, "id" | "model">,
    turn: PlannedTurn,
    stop: AbortSignal,
  ): Promise<TurnOutcome | undefined> {
    const entry = agents.get(thread.model.name);
    if (entry === undefined) throw new Error(`no agent for ${thread.model.name}`);
    const issued: string[] = [];
    turnsByHuman.set(turn.human.id, {
      turn,
      issued,
      thread: thread.id,
      model: thread.model.name,
    });
    const interruption = turn.interruption;
    const calls = [...turn.rounds.flat(), ...(interruption?.calls ?? [])];
    for (const call of calls) plannedCalls.set(callKey(thread.id, call.id), call);
    entry.enqueue(turn.rounds.length + 1);

    const run = new AbortController();
    const onStop = () => run.abort(stop.reason);
    stop.addEventListener("abort", onStop, { once: true });
    let started: Promise<void> = Promise.resolve();
    if (interruption !== undefined && interruption.kind !== "interrupt") {
      started = new Promise<void>((resolve) => {
        for (const call of interruption.calls) stalling.set(callKey(thread.id, call.id), resolve);
      });
    }
    try {
      const invocation = entry.agent.invoke(
        { messages: [new HumanMessage(turn.human)] },
        {
          configurable: { thread_id: thread.id },
          signal: run.signal,
          ...(settings.durability === undefined ? {} : { durability: settings.durability }),
        },
      );
      const outcome = invocation.then(
        () => undefined,
        (error: unknown) => ({ error }),
      );
      if (interruption !== undefined && interruption.kind !== "interrupt") {
        await Promise.race([started, outcome]);
        // A user reads for a moment, then presses stop; a gateway gives up after its timeout.
        await sleep(turn.patience, stop).catch(() => undefined);
        run.abort(
          interruption.kind === "abort"
            ? new DOMException("The user pressed stop.", "AbortError")
            : new DOMException("The request timed out.", "TimeoutError"),
        );
      }
      const result = await outcome;
      if (
        result !== undefined &&
        !(interruption !== undefined && isAbort(result.error, run.signal))
      ) {
        if (stop.aborted) return undefined;
        throw result.error;
      }
      return {
        issued,
        ...(interruption === undefined
          ? {}
          : {
              interruption: {
                kind: interruption.kind,
                calls: interruption.calls.map(({ id, name }) => ({ id, name })),
              },
            }),
      };
    } finally {
      stop.removeEventListener("abort", onStop);
      for (const call of calls) {
        stalling.delete(callKey(thread.id, call.id));
        plannedCalls.delete(callKey(thread.id, call.id));
      }
      turnsByHuman.delete(turn.human.id);
    }
  }

  return {
    runTurn,
    agentOf(model) {
      const entry = agents.get(model);
      if (entry === undefined) throw new Error(`no agent for ${model}`);
      return entry.agent;
    },
  };
}

/**
 * Builds the fleet in this process: one agent per model over one shared `MemorySaver`, and
 * `threads` conversations spread over the models.
 *
 * @example
 * const fleet = createFleet({ threads: 10, concurrency: 4, turns: 3, seed: 1,
 *   interruptRate: () => 0.2, middleware: [danglingToolCallMiddleware()] });
 * const never = new AbortController().signal;
 * await fleet.run({ noMoreRuns: never, cancel: never });
 * console.log(fleet.truth.dangling);
 */
export function createFleet(settings: FleetSettings): Fleet {
  const truth = emptyTruth();
  const checkpointer = new MemorySaver();
  const runner = createTurnRunner({
    checkpointer,
    middleware: settings.middleware,
    onModelRequest: settings.onModelRequest,
  });
  const threads = Array.from({ length: settings.threads }, (_, index) => scriptedThread(index));
  let nextIndex = settings.threads;

  async function runTurn(thread: ScriptedThread, stop: AbortSignal): Promise<void> {
    const turn = planTurn(settings.seed, thread, settings.interruptRate());
    const outcome = await runner.runTurn(thread, turn, stop);
    if (outcome !== undefined) recordTurn(truth, thread, outcome);
  }

  return {
    truth,
    async run({ noMoreRuns, cancel }) {
      // Each run in flight listens to `cancel`, an interrupted one twice.
      setMaxListeners(Math.max(getMaxListeners(cancel), 2 * settings.concurrency + 10), cancel);
      await dispatchTurns({
        threads,
        concurrency: settings.concurrency,
        turns: settings.turns,
        signals: { noMoreRuns, cancel },
        runTurn: (thread) => runTurn(thread, cancel),
        nextThread: async (finished) => {
          // The conversation is over: a new one takes its place, and its checkpoints go, so a
          // long demo keeps a steady pace and memory.
          await checkpointer.deleteThread(finished.id);
          return scriptedThread(nextIndex++);
        },
      });
    },
  };
}

/** How {@link dispatchTurns} hands turns out. */
export interface Dispatch {
  /** The conversations at the start. */
  readonly threads: readonly ScriptedThread[];
  /** Turns in flight at once. */
  readonly concurrency: number;
  /** Turns per thread, or `undefined` for {@link CONVERSATION_TURNS} and then a new thread. */
  readonly turns: number | undefined;
  readonly signals: { readonly noMoreRuns: AbortSignal; readonly cancel: AbortSignal };
  /** Runs the thread's next turn; the thread's `turn` goes up when it counts. */
  runTurn(thread: ScriptedThread): Promise<void>;
  /** The thread that takes a finished conversation's place. */
  nextThread(finished: ScriptedThread): Promise<ScriptedThread>;
}

/**
 * Hands the threads' turns out, `concurrency` at a time, one turn of a thread at a time, until
 * `noMoreRuns` aborts or every thread has had its turns; resolves when no turn is in flight, and
 * rejects with the first failure.
 */
export async function dispatchTurns(dispatch: Dispatch): Promise<void> {
  const { noMoreRuns, cancel } = dispatch.signals;
  const queue = [...dispatch.threads];
  const failures: unknown[] = [];
  const slot = async () => {
    while (!noMoreRuns.aborted && !cancel.aborted && failures.length === 0) {
      const thread = queue.shift();
      if (thread === undefined) return;
      try {
        await dispatch.runTurn(thread);
      } catch (error) {
        failures.push(error);
      }
      if (dispatch.turns !== undefined) {
        if (thread.turn < dispatch.turns) queue.push(thread);
      } else if (thread.turn < CONVERSATION_TURNS) {
        queue.push(thread);
      } else {
        queue.push(await dispatch.nextThread(thread));
      }
    }
  };
  await Promise.all(Array.from({ length: dispatch.concurrency }, slot));
  if (failures.length > 0) throw failures[0];
}
