/**
 * The fleet as production runs it (`npm start -- --workers n`): worker processes over one
 * PostgreSQL checkpointer, each serving its own metrics, and a coordinator that hands each turn of
 * each thread to whichever worker is least busy, so a thread moves between workers from turn to
 * turn. The coordinator keeps the scripts' ground truth, for the fleet and for each worker, and
 * can kill a worker with SIGKILL mid-run: a new one takes its place, and the killed worker's turns
 * in flight are read back from PostgreSQL to learn how far they got.
 */
import { type ChildProcess, fork } from "node:child_process";
import { randomBytes } from "node:crypto";
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import type { BaseCheckpointSaver } from "@langchain/langgraph";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import pg from "pg";
import { redactMessage } from "../src/cli/connection-string.js";
import { type Exposition, parseExposition, scrape } from "./exposition.js";
import {
  type DanglingCall,
  dispatchTurns,
  emptyTruth,
  type GroundTruth,
  type PlannedTurn,
  planTurn,
  recordTurn,
  type ScriptedThread,
  scriptedThread,
  type TurnOutcome,
} from "./fleet.js";
import type { RepairedExample } from "./repaired-example.js";
import type { FromWorker, ToWorker } from "./worker.js";

/** What the fleet of workers is asked to do. */
export interface WorkerFleetSettings {
  /** Worker processes at once. */
  readonly workers: number;
  /** The checkpointer's database. */
  readonly postgresUrl: string;
  /** The middleware's `persist` option, in every worker. */
  readonly persist: boolean;
  readonly locale: string;
  /** Worker n serves its metrics on `basePort + n - 1`; the replacement of a killed one on the next free one. */
  readonly basePort: number;
  /** Conversations going on at once. */
  readonly threads: number;
  /** Turns in flight at once, over all workers. */
  readonly concurrency: number;
  /** Turns per thread, or `undefined` for new conversations all along. */
  readonly turns: number | undefined;
  readonly seed: number;
  /** Share of runs interrupted, at this moment. */
  readonly interruptRate: () => number;
  /** Base URL of an OTLP/HTTP receiver each worker pushes its metrics to as well, if any. */
  readonly otlp?: string | undefined;
  /** Prints a line about the fleet (a worker killed, its replacement). */
  readonly log: (line: string) => void;
}

/** A worker process, as the coordinator knows it. */
export interface WorkerProcess {
  /** `worker-1`, `worker-2`, ...; the replacement of a killed worker gets the next number. */
  readonly name: string;
  readonly pid: number;
  readonly port: number;
  readonly metricsUrl: string;
  /** What the scripts say this worker did: the figures its own counters must show. */
  readonly truth: GroundTruth;
  /** Its latest scrape by the coordinator (every second, and at the end). */
  lastScrape: Exposition | undefined;
  /** Seconds into the run at which it was killed (or died), if it was. */
  killedAt: number | undefined;
  /** It died without being killed: a crash, a kill from outside. */
  exitedUnexpectedly: boolean;
  /** Turns it has in flight. */
  readonly inFlight: number;
}

/** A fleet of worker processes. */
export interface WorkerFleet {
  /** What the scripts say the whole fleet did. */
  readonly truth: GroundTruth;
  /** Every worker started, the killed one among them. */
  readonly workers: readonly WorkerProcess[];
  /** Turns a killed worker had in flight: read back from PostgreSQL, or handed out again. */
  readonly killedTurns: { counted: number; redelivered: number };
  /** Prefix of every thread id of this run, so runs on one database never share a thread. */
  readonly runId: string;
  /** The first repaired request a worker reported, or `undefined` before any. */
  readonly repairedExample: RepairedExample | undefined;
  /** Runs turns until `noMoreRuns` aborts or every thread has had its turns. */
  run(signals: { readonly noMoreRuns: AbortSignal; readonly cancel: AbortSignal }): Promise<void>;
  /** Scrapes every live worker, keeping each one's scrape as its latest. */
  scrapeAll(): Promise<void>;
  /** Kills the busiest live worker with SIGKILL and starts a new one in its place. */
  killOne(): Promise<WorkerProcess | undefined>;
  /** Every thread of the run, with the human messages and AI answers its turns stored. */
  threadRecords(): readonly ThreadRecord[];
  /** A thread's stored messages, read back from PostgreSQL: see {@link storedMessages}. */
  readThread(thread: ScriptedThread): Promise<BaseMessage[]>;
  /** Stops every worker and closes the coordinator's connections. */
  stop(): Promise<void>;
}

/** What a thread's turns should have left in its stored history. */
export interface ThreadRecord {
  readonly thread: ScriptedThread;
  /** Each recorded turn's human message id, and how many AI messages it answered with (`undefined` for a killed turn). */
  readonly turns: {
    readonly human: string;
    readonly answers: number | undefined;
    /** The worker that ran it. */
    readonly worker: string;
  }[];
}

/** The worker's answer to a turn it never answered: it was killed. */
class WorkerGoneError extends Error {
  override readonly name = "WorkerGoneError";
}

/** A worker that did not start; the message names it and never holds a password. */
export class WorkerStartError extends Error {
  override readonly name = "WorkerStartError";
  /** The metrics port the worker could not listen on because it was taken, if that was why. */
  readonly portInUse: number | undefined;

  constructor(message: string, options: { readonly portInUse?: number } = {}) {
    super(message);
    this.portInUse = options.portInUse;
  }
}

const READY_TIMEOUT_MS = 60_000;

interface LiveWorker extends WorkerProcess {
  readonly child: ChildProcess;
  readonly pending: Map<number, { resolve(reply: FromWorker): void; reject(error: Error): void }>;
  inFlight: number;
  alive: boolean;
  /** The coordinator ended it (killed it, or stopped it): its exit is no surprise. */
  ending: boolean;
}

/**
 * The messages of a thread's latest checkpoint: what its next run starts from. Not LangGraph's
 * `getState()`, which also shows the writes of a step that never finished (a model's answer, a
 * tool's result, the input of a run killed before its first step): a new input discards those.
 */
export async function storedMessages(
  saver: BaseCheckpointSaver,
  threadId: string,
): Promise<BaseMessage[]> {
  return (await storedThread(saver, threadId)).messages;
}

/** A thread's latest checkpoint's messages, and those of the writes of its unfinished step. */
async function storedThread(
  saver: BaseCheckpointSaver,
  threadId: string,
): Promise<{ messages: BaseMessage[]; unfinished: BaseMessage[] }> {
  const stored = await saver.getTuple({ configurable: { thread_id: threadId, checkpoint_ns: "" } });
  return {
    messages: (stored?.checkpoint.channel_values.messages as BaseMessage[] | undefined) ?? [],
    unfinished: (stored?.pendingWrites ?? [])
      .filter(([, channel]) => channel === "messages")
      .flatMap(([, , value]) => (Array.isArray(value) ? value : [value]) as BaseMessage[]),
  };
}

/**
 * A pool of connections to the checkpointer's database that survives the server going away: a
 * dropped idle connection (PostgreSQL stopping, a session ended by an administrator) is an
 * `error` event of the pool, which without a listener would end the process; the next query
 * connects again, and fails in the open if the server is gone.
 */
export function checkpointerPool(postgresUrl: string, max?: number): pg.Pool {
  const pool = new pg.Pool({
    connectionString: postgresUrl,
    ...(max === undefined ? {} : { max }),
  });
  pool.on("error", () => undefined);
  return pool;
}

/** The connection string with an `application_name`, which names the sessions of a worker. */
function withApplicationName(postgresUrl: string, name: string): string {
  const url = new URL(postgresUrl);
  url.searchParams.set("application_name", name);
  return url.toString();
}

/** Tool calls without a result and without a later AI message: what the next model call sees dangling. */
export function danglingAtEnd(messages: readonly BaseMessage[]): DanglingCall[] {
  const answered = new Set(
    messages.filter((message) => ToolMessage.isInstance(message)).map((m) => m.tool_call_id),
  );
  let lastAi = messages.length - 1;
  while (lastAi >= 0 && !AIMessage.isInstance(messages[lastAi])) lastAi -= 1;
  const last = messages[lastAi];
  if (last === undefined || !AIMessage.isInstance(last)) return [];
  return (last.tool_calls ?? [])
    .filter((call) => call.id !== undefined && !answered.has(call.id))
    .map((call) => ({ id: call.id as string, name: call.name }));
}

/**
 * Starts the workers (the checkpointer's tables are set up first) and returns the fleet, ready to
 * run.
 *
 * @throws {WorkerStartError} when a worker does not start
 */
export async function startWorkerFleet(settings: WorkerFleetSettings): Promise<WorkerFleet> {
  const saver = new PostgresSaver(checkpointerPool(settings.postgresUrl));
  try {
    await saver.setup();
  } catch (error) {
    await saver.end().catch(() => undefined);
    throw new WorkerStartError(
      redactMessage(
        `cannot set up the checkpointer at ${settings.postgresUrl}: ${(error as Error).message}`,
        settings.postgresUrl,
      ),
    );
  }
  const sessions = checkpointerPool(settings.postgresUrl, 1);
  const runId = `run-${randomBytes(3).toString("hex")}`;
  const truth = emptyTruth();
  const workers: LiveWorker[] = [];
  const killedTurns = { counted: 0, redelivered: 0 };
  const records = new Map<string, ThreadRecord>();
  /** When the run started: the killed worker's time is told from it. */
  let startedAt = Date.now();
  let requests = 0;
  let spawned = 0;
  let example: RepairedExample | undefined;
  /** Every worker process forked, ready or not: none outlives a fleet that failed to start. */
  const children = new Set<ChildProcess>();
  /** Replacements of workers that died on their own, being started. */
  const replacements: Promise<unknown>[] = [];
  let stopping = false;
  const elapsed = () => (Date.now() - startedAt) / 1000;

  /** Marks a worker gone, once: its requests in flight fail with {@link WorkerGoneError}. */
  function gone(worker: LiveWorker, why: string): void {
    worker.alive = false;
    for (const { reject } of worker.pending.values()) {
      reject(new WorkerGoneError(`${worker.name} ${why}`));
    }
    worker.pending.clear();
  }

  /**
   * Sends a worker a message; `false` when its channel is closed. A worker killed a moment ago
   * closes its channel before its exit is seen, and a send then would fail.
   */
  function sendTo(worker: LiveWorker, message: ToWorker): boolean {
    if (!worker.alive || !worker.child.connected) {
      gone(worker, "is gone");
      return false;
    }
    worker.child.send(message, (error) => {
      if (error !== null && error !== undefined)
        gone(worker, `could not be reached: ${error.message}`);
    });
    return true;
  }

  async function startWorker(): Promise<LiveWorker> {
    spawned += 1;
    const name = `worker-${spawned}`;
    const port = settings.basePort + spawned - 1;
    const child = fork(new URL("./worker.ts", import.meta.url), [], {
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    children.add(child);
    child.once("exit", () => children.delete(child));
    // A send to a channel that just closed: `sendTo` has its callback, this keeps it from
    // becoming an uncaught error.
    child.on("error", () => undefined);
    const ready = new Promise<string>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new WorkerStartError(`${name} was not ready in time`)),
        READY_TIMEOUT_MS,
      );
      child.on("message", (message: FromWorker) => {
        if (message.type === "ready") resolve(message.metricsUrl);
        if (message.type === "failed") {
          reject(
            new WorkerStartError(`${name}: ${message.message}`, {
              portInUse: message.portInUse,
            }),
          );
        }
        if (message.type !== "ready" && message.type !== "failed") return;
        clearTimeout(timer);
      });
      child.once("exit", (code, signal) => {
        clearTimeout(timer);
        reject(new WorkerStartError(`${name} exited (${signal ?? code}) before it was ready`));
      });
    });
    const start: ToWorker = {
      type: "start",
      postgresUrl: withApplicationName(settings.postgresUrl, `${runId}:${name}`),
      persist: settings.persist,
      locale: settings.locale,
      port,
      threadSeriesLimit: 100_000,
      otlp: settings.otlp,
    };
    child.send(start);
    const metricsUrl = await ready.catch((error: unknown) => {
      child.kill("SIGKILL");
      throw error;
    });
    const worker: LiveWorker = {
      name,
      pid: child.pid as number,
      port,
      metricsUrl,
      truth: emptyTruth(),
      lastScrape: undefined,
      killedAt: undefined,
      exitedUnexpectedly: false,
      child,
      pending: new Map(),
      inFlight: 0,
      alive: true,
      ending: false,
    };
    child.on("message", (message: FromWorker) => {
      if (message.type === "repaired-example") example ??= message.example;
      if (!("request" in message)) return;
      worker.pending.get(message.request)?.resolve(message);
      worker.pending.delete(message.request);
    });
    child.once("disconnect", () => gone(worker, "closed its channel"));
    child.once("exit", (code, signal) => {
      gone(worker, `exited (${signal ?? code})`);
      if (worker.ending || stopping) return;
      // Nobody asked it to go: a crash, or a kill from outside. A new one takes its place.
      worker.exitedUnexpectedly = true;
      worker.killedAt = elapsed();
      settings.log(
        `${name} (PID ${worker.pid}) exited unexpectedly (${signal ?? code}); starting another`,
      );
      replacements.push(
        startWorker().catch((error: unknown) =>
          settings.log(`no worker took ${name}'s place: ${(error as Error).message}`),
        ),
      );
    });
    workers.push(worker);
    return worker;
  }

  function request(worker: LiveWorker, thread: ScriptedThread, turn: PlannedTurn) {
    const id = ++requests;
    return new Promise<FromWorker>((resolve, reject) => {
      if (!worker.alive) {
        reject(new WorkerGoneError(`${worker.name} is gone`));
        return;
      }
      worker.pending.set(id, { resolve, reject });
      sendTo(worker, {
        type: "turn",
        request: id,
        thread: { id: thread.id, model: thread.model.name },
        turn,
      });
    });
  }

  function recordOf(thread: ScriptedThread): ThreadRecord {
    const record = records.get(thread.id) ?? { thread, turns: [] };
    records.set(thread.id, record);
    return record;
  }

  /** Records a turn in the fleet's truth and the worker's, then moves the thread on. */
  function record(worker: LiveWorker, thread: ScriptedThread, outcome: TurnOutcome): void {
    recordTurn(worker.truth, { ...thread }, outcome);
    recordTurn(truth, thread, outcome);
  }

  /**
   * Waits until the killed worker's database sessions are gone. A statement it sent just before
   * it died still runs to its end, and commits: reading the thread before then would miss it.
   */
  async function sessionsEnded(worker: LiveWorker): Promise<void> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const { rows } = await sessions.query<{ count: string }>(
        "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1",
        [`${runId}:${worker.name}`],
      );
      if (Number(rows[0]?.count ?? 0) === 0) return;
      if (Date.now() > deadline) throw new Error(`${worker.name}'s database sessions did not end`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /**
   * What a killed worker's turn left in the thread's stored history: the calls its model calls
   * issued, which of the thread's dangling calls a model call saw, and what dangles now. `false`
   * when the turn's human message never reached the store: the turn is handed out again.
   */
  async function readBack(
    worker: LiveWorker,
    thread: ScriptedThread,
    turn: PlannedTurn,
  ): Promise<boolean> {
    const { messages, unfinished } = await storedThread(saver, thread.id);
    if (!messages.some((message) => message.id === turn.human.id)) return false;
    // A model call whose answer is only a write of its unfinished step was made all the same:
    // its calls were issued (and counted), though the next input discards them.
    const issued = [...messages, ...unfinished]
      .filter(
        (message) =>
          AIMessage.isInstance(message) && message.id?.startsWith(`${turn.human.id}:ai-`) === true,
      )
      .flatMap((message) => (message as AIMessage).tool_calls ?? [])
      .map((call) => call.name);
    const left = danglingAtEnd(messages);
    const stillDangling = new Set(left.map((call) => call.id));
    const seen = thread.dangling.filter((call) => !stillDangling.has(call.id));
    recordTurn(worker.truth, { ...thread, dangling: seen }, { issued });
    thread.dangling = seen;
    recordTurn(truth, thread, { issued });
    thread.dangling = left;
    recordOf(thread).turns.push({ human: turn.human.id, answers: undefined, worker: worker.name });
    return true;
  }

  async function readThread(thread: ScriptedThread): Promise<BaseMessage[]> {
    return storedMessages(saver, thread.id);
  }

  async function runTurn(thread: ScriptedThread, cancel: AbortSignal): Promise<void> {
    for (;;) {
      const live = workers.filter((worker) => worker.alive);
      const worker = live.sort((a, b) => a.inFlight - b.inFlight)[0];
      if (worker === undefined) throw new Error("no worker is alive");
      const turn = planTurn(settings.seed, thread, settings.interruptRate());
      worker.inFlight += 1;
      let reply: FromWorker;
      try {
        reply = await request(worker, thread, turn);
      } catch (error) {
        if (!(error instanceof WorkerGoneError) || cancel.aborted) throw error;
        await sessionsEnded(worker);
        if (await readBack(worker, thread, turn)) {
          killedTurns.counted += 1;
          return;
        }
        killedTurns.redelivered += 1;
        continue;
      } finally {
        worker.inFlight -= 1;
      }
      if (reply.type === "turn-cancelled") return;
      if (reply.type === "turn-failed") throw new Error(`${worker.name}: ${reply.message}`);
      if (reply.type !== "turn-done") throw new Error(`${worker.name} answered ${reply.type}`);
      recordOf(thread).turns.push({
        human: turn.human.id,
        answers: turn.rounds.length + 1,
        worker: worker.name,
      });
      record(worker, thread, reply.outcome);
      return;
    }
  }

  try {
    // One at a time would take a few seconds each: they load the same modules.
    await Promise.all(Array.from({ length: settings.workers }, () => startWorker()));
    workers.sort((a, b) => a.port - b.port);
  } catch (error) {
    // Those still starting too: each would be ready later, and run on unattended.
    stopping = true;
    for (const child of children) child.kill("SIGKILL");
    await saver.end().catch(() => undefined);
    await sessions.end().catch(() => undefined);
    throw error;
  }

  const fleet: WorkerFleet = {
    truth,
    workers,
    killedTurns,
    runId,
    get repairedExample() {
      return example;
    },
    readThread,
    async run({ noMoreRuns, cancel }) {
      startedAt = Date.now();
      const onCancel = () => {
        for (const worker of workers) if (worker.alive) sendTo(worker, { type: "cancel" });
      };
      cancel.addEventListener("abort", onCancel, { once: true });
      let nextIndex = settings.threads;
      try {
        await dispatchTurns({
          threads: Array.from({ length: settings.threads }, (_, index) =>
            scriptedThread(index, `${runId}:`),
          ),
          concurrency: settings.concurrency,
          turns: settings.turns,
          signals: { noMoreRuns, cancel },
          runTurn: (thread) => runTurn(thread, cancel),
          // Finished conversations stay stored, to be read back and checked at the end.
          nextThread: async () => scriptedThread(nextIndex++, `${runId}:`),
        });
      } finally {
        cancel.removeEventListener("abort", onCancel);
      }
    },
    async scrapeAll() {
      await Promise.all(
        workers
          .filter((worker) => worker.alive)
          .map(async (worker) => {
            const exposition = await scrape(worker.metricsUrl).catch(() => undefined);
            // A worker killed while its scrape was on the way keeps its previous one.
            if (exposition !== undefined && worker.alive) worker.lastScrape = exposition;
          }),
      );
    },
    async killOne() {
      const live = workers.filter((worker) => worker.alive);
      const victim = live.sort((a, b) => b.inFlight - a.inFlight)[0];
      if (victim === undefined) return undefined;
      victim.ending = true;
      const exited = new Promise((resolve) => victim.child.once("exit", resolve));
      victim.child.kill("SIGKILL");
      await exited;
      victim.killedAt = elapsed();
      settings.log(
        `Killed ${victim.name} (PID ${victim.pid}) with SIGKILL at ${victim.killedAt.toFixed(1)} s, ${victim.inFlight} turns in flight`,
      );
      const replacement = await startWorker();
      settings.log(
        `Started ${replacement.name} (PID ${replacement.pid}) in its place, metrics on ${replacement.metricsUrl}`,
      );
      return victim;
    },
    threadRecords: () => [...records.values()],
    async stop() {
      stopping = true;
      await Promise.allSettled(replacements);
      await Promise.all(
        workers
          .filter((worker) => worker.child.exitCode === null && worker.child.signalCode === null)
          .map(async (worker) => {
            worker.ending = true;
            const exited = new Promise((resolve) => worker.child.once("exit", resolve));
            if (!sendTo(worker, { type: "stop" })) worker.child.kill("SIGKILL");
            const timer = setTimeout(() => worker.child.kill("SIGKILL"), 10_000);
            await exited;
            clearTimeout(timer);
          }),
      );
      await saver.end().catch(() => undefined);
      await sessions.end().catch(() => undefined);
    },
  };
  return fleet;
}

/** Every live worker's latest scrape and the killed ones' last, as one exposition to sum. */
export function fleetExposition(workers: readonly WorkerProcess[]): Exposition {
  return parseExposition(workers.map((worker) => worker.lastScrape?.text ?? "").join("\n"));
}
