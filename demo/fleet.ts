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
import { interrupt, MemorySaver } from "@langchain/langgraph";
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

interface PlannedCall {
  readonly id: string;
  readonly name: string;
  readonly latency: number;
  /** Stalls until the run is aborted: the calls of an aborted or timed-out round. */
  readonly stalls: boolean;
  /** A `send_email` that waits for a human's approval through `interrupt()`. */
  readonly needsApproval: boolean;
}

interface PlannedTurn {
  readonly human: HumanMessage;
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

/** Counts by model name, then by tool name. */
export type CountsByModelAndTool = Record<string, Record<string, number>>;

/** What the scripts say happened: the figures the library's counters must show. */
export interface GroundTruth {
  /** Tool calls the models issued. */
  readonly toolCalls: CountsByModelAndTool;
  /** Calls left dangling by an interruption and then seen again, when the thread went on. */
  readonly dangling: CountsByModelAndTool;
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

/**
 * Builds the fleet: one agent per model over one shared `MemorySaver`, and `threads`
 * conversations spread over the models.
 *
 * @example
 * const fleet = createFleet({ threads: 10, concurrency: 4, turns: 3, seed: 1,
 *   interruptRate: () => 0.2, middleware: [danglingToolCallMiddleware()] });
 * const never = new AbortController().signal;
 * await fleet.run({ noMoreRuns: never, cancel: never });
 * console.log(fleet.truth.dangling);
 */
export function createFleet(settings: FleetSettings): Fleet {
  const truth: GroundTruth = {
    toolCalls: {},
    dangling: {},
    interruptions: { abort: 0, timeout: 0, interrupt: 0 },
    runs: 0,
    threads: 0,
  };
  /** The turn each human message opens, by message id: the fake models answer from it. */
  const turnsByHuman = new Map<string, { turn: PlannedTurn; model: FleetModel }>();
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
  function answer(model: FleetModel, messages: readonly BaseMessage[]): AIMessage {
    let humanAt = messages.length - 1;
    while (humanAt >= 0 && !HumanMessage.isInstance(messages[humanAt])) humanAt -= 1;
    const human = messages[humanAt];
    const entry = human?.id === undefined ? undefined : turnsByHuman.get(human.id);
    if (entry === undefined) return new AIMessage("I have lost track of this conversation.");
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
    for (const call of calls) add(truth.toolCalls, model.name, call.name);
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

  const checkpointer = new MemorySaver();
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
        checkpointer,
        middleware: [...settings.middleware],
      });
      const enqueue = (calls: number) => {
        for (let index = 0; index < calls; index++) {
          model.respond((messages) => answer(fleetModel, messages));
        }
      };
      return [fleetModel.name, { agent, enqueue }] as const;
    }),
  );

  interface ThreadState {
    readonly id: string;
    readonly index: number;
    readonly model: FleetModel;
    turn: number;
    /** Calls an interruption left dangling, not yet seen by a model call. */
    dangling: readonly PlannedCall[];
  }
  const threadAt = (index: number): ThreadState => ({
    id: `thread-${String(index + 1).padStart(4, "0")}`,
    index,
    model: FLEET_MODELS[index % FLEET_MODELS.length] as FleetModel,
    turn: 0,
    dangling: [],
  });
  const threads: ThreadState[] = Array.from({ length: settings.threads }, (_, index) =>
    threadAt(index),
  );
  let nextIndex = settings.threads;

  function planTurn(thread: ThreadState): PlannedTurn {
    const random = seeded(seedOf(settings.seed, thread.index, thread.turn));
    const between = (low: number, high: number) => low + Math.floor(random() * (high - low + 1));
    const prefix = `${thread.id}:turn-${thread.turn}`;
    const call = (round: number, position: number, kind?: InterruptionKind): PlannedCall => {
      const fleetTool =
        kind === "interrupt"
          ? (TOOLS[3] as FleetTool)
          : (TOOLS[between(0, TOOLS.length - 1)] as FleetTool);
      const planned = {
        id: `call_${thread.turn}_${round}_${position}`,
        name: fleetTool.name,
        latency: between(fleetTool.latency[0], fleetTool.latency[1]),
        stalls: kind === "abort" || kind === "timeout",
        needsApproval: kind === "interrupt",
      };
      plannedCalls.set(callKey(thread.id, planned.id), planned);
      return planned;
    };
    const interrupted =
      random() < Math.min(1, settings.interruptRate() * thread.model.interruptFactor);
    const roundCount = thread.turn === 0 ? between(1, 2) : between(0, 2);
    const rounds = Array.from({ length: roundCount }, (_, round) =>
      Array.from({ length: between(1, 3) }, (_, position) => call(round, position)),
    );
    const human = new HumanMessage({
      id: `${prefix}:human`,
      content: `Message ${thread.turn + 1} on ${thread.id}`,
    });
    const patience = between(20, 150);
    if (!interrupted) return { human, rounds, patience };
    const pick = random();
    const kind: InterruptionKind = pick < 0.45 ? "abort" : pick < 0.8 ? "timeout" : "interrupt";
    const count = kind === "interrupt" ? 1 : between(1, 3);
    const calls = Array.from({ length: count }, (_, position) => call(roundCount, position, kind));
    return { human, rounds, interruption: { kind, calls }, patience };
  }

  async function runTurn(thread: ThreadState, stop: AbortSignal): Promise<void> {
    const turn = planTurn(thread);
    const entry = agents.get(thread.model.name);
    if (entry === undefined) throw new Error(`no agent for ${thread.model.name}`);
    turnsByHuman.set(turn.human.id as string, { turn, model: thread.model });
    entry.enqueue(turn.rounds.length + 1);
    if (thread.turn === 0) truth.threads += 1;

    const run = new AbortController();
    const onStop = () => run.abort(stop.reason);
    stop.addEventListener("abort", onStop, { once: true });
    const interruption = turn.interruption;
    let started: Promise<void> = Promise.resolve();
    if (interruption !== undefined && interruption.kind !== "interrupt") {
      started = new Promise<void>((resolve) => {
        for (const call of interruption.calls) stalling.set(callKey(thread.id, call.id), resolve);
      });
    }
    // The model call that opens this run sees the calls the last interruption left dangling.
    const seenDangling = thread.dangling;
    try {
      const invocation = entry.agent.invoke(
        { messages: [turn.human] },
        { configurable: { thread_id: thread.id }, signal: run.signal },
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
      for (const call of seenDangling) add(truth.dangling, thread.model.name, call.name);
      thread.dangling = [];
      if (
        result !== undefined &&
        !(interruption !== undefined && isAbort(result.error, run.signal))
      ) {
        if (stop.aborted) return;
        throw result.error;
      }
      if (interruption !== undefined) {
        truth.interruptions[interruption.kind] += 1;
        thread.dangling = interruption.calls;
      }
      truth.runs += 1;
      thread.turn += 1;
    } finally {
      stop.removeEventListener("abort", onStop);
      for (const call of [...turn.rounds.flat(), ...(interruption?.calls ?? [])]) {
        stalling.delete(callKey(thread.id, call.id));
        plannedCalls.delete(callKey(thread.id, call.id));
      }
      turnsByHuman.delete(turn.human.id as string);
    }
  }

  return {
    truth,
    async run({ noMoreRuns, cancel }) {
      // Each run in flight listens to `cancel`, an interrupted one twice.
      setMaxListeners(Math.max(getMaxListeners(cancel), 2 * settings.concurrency + 10), cancel);
      const queue = [...threads];
      const failures: unknown[] = [];
      const worker = async () => {
        while (!noMoreRuns.aborted && !cancel.aborted && failures.length === 0) {
          const thread = queue.shift();
          if (thread === undefined) return;
          try {
            await runTurn(thread, cancel);
          } catch (error) {
            failures.push(error);
          }
          if (settings.turns !== undefined) {
            if (thread.turn < settings.turns) queue.push(thread);
          } else if (thread.turn < CONVERSATION_TURNS) {
            queue.push(thread);
          } else {
            // The conversation is over: a new one takes its place, and its checkpoints go, so a
            // long demo keeps a steady pace and memory.
            await checkpointer.deleteThread(thread.id);
            queue.push(threadAt(nextIndex++));
          }
        }
      };
      await Promise.all(Array.from({ length: settings.concurrency }, worker));
      if (failures.length > 0) throw failures[0];
    },
  };
}
