/**
 * What `persist: true` costs per model call when the thread lives in PostgreSQL: one
 * `createAgent` call (a new user message, the model node, the answer) over a real
 * `PostgresSaver`, on a thread of 100 messages with dangling calls, with `persist: true`, with
 * `persist: false`, with a pass-through middleware and with no middleware, measured side by side
 * in rounds.
 *
 * Two calls are timed on each thread: the first after the interruption, where `persist` writes
 * the repaired history to the thread (its `beforeModel` step: one more checkpoint, with the whole
 * message list), and the next, where the thread is clean for `persist` (the step still runs and
 * is checkpointed, with nothing to write) and still broken without it (the request is repaired
 * again, nothing is stored). The checkpointer's reads and writes of each call are counted too.
 *
 * The server is a throwaway local cluster (`demo/postgres-server.ts`); without the PostgreSQL
 * binaries the measurement is skipped, and says so.
 */
import { AIMessage, type BaseMessage, HumanMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { type AgentMiddleware, createAgent, createMiddleware } from "langchain";
import pg from "pg";
import { danglingToolCallMiddleware } from "tool-call-resilience";
import { PostgresNotFoundError, startPostgres } from "../demo/postgres-server.js";
import { buildHistory } from "./histories.js";
import { median, percentile } from "./measure.js";
import { duration, ratio, table } from "./report.js";

/**
 * What runs around the model call: nothing; a middleware whose `wrapModelCall` only calls the
 * handler (what `createAgent` charges for any such middleware: it reads the thread's whole state
 * once more per `invoke`); ours without `persist`; ours with it.
 */
export const PERSIST_CONTENDERS = [
  "none",
  "pass-through",
  "persist-false",
  "persist-true",
] as const;
export type PersistContender = (typeof PERSIST_CONTENDERS)[number];

/** Which call of a thread: the first after the interruption, or the one after it. */
export const PERSIST_CALLS = ["first", "next"] as const;
export type PersistCall = (typeof PERSIST_CALLS)[number];

/** What a call asked of the checkpointer. */
export interface CheckpointOperations {
  /** `getTuple`: a checkpoint read, the whole history deserialized. */
  readonly reads: number;
  /** `put`: a checkpoint written. */
  readonly writes: number;
  /** Of those, the ones that stored a new version of the message list (the whole list). */
  readonly messageLists: number;
  /** `putWrites`: a step's pending writes stored. */
  readonly pendingWrites: number;
}

/** One contender on one call. */
export interface PersistRow {
  readonly call: PersistCall;
  readonly contender: PersistContender;
  /** Median over the rounds, in nanoseconds. */
  readonly medianNs: number;
  /** Median of the rounds' ratios to no middleware, and their middle half. */
  readonly versusNone: Ratio;
  /** Median of the rounds' ratios to `persist: false`, and their middle half. */
  readonly versusPersistFalse: Ratio;
  readonly operations: CheckpointOperations;
}

export interface Ratio {
  readonly ratio: number;
  readonly spread: readonly [low: number, high: number];
}

/** The measurement, or why it did not run. */
export type PersistResult =
  | {
      readonly skipped: false;
      /** The server's `SELECT version()`, up to its platform. */
      readonly server: string;
      readonly rounds: number;
      readonly messages: number;
      readonly dangling: number;
      readonly rows: readonly PersistRow[];
    }
  | { readonly skipped: true; readonly reason: string };

/** The history every thread starts from: 100 messages, every tenth call dangling (2 of 25). */
const HISTORY = buildHistory(100, "ten-percent-dangling");

const LABELS: Record<PersistContender, string> = {
  none: "no middleware",
  "pass-through": "pass-through middleware",
  "persist-false": "persist: false",
  "persist-true": "persist: true",
};

const CALL_LABELS: Record<PersistCall, string> = {
  first: "first call after the interruption",
  next: "next call (steady state)",
};

interface Contender {
  readonly agent: ReturnType<typeof createAgent>;
  readonly model: ReturnType<typeof fakeModel>;
}

/**
 * Runs the comparison on a throwaway PostgreSQL cluster, stopped before it returns: each round
 * seeds one thread per contender with the interrupted history, then times the first call on each,
 * then the next call on each, in an order that rotates from round to round. Resolves with
 * `skipped: true` when the PostgreSQL binaries are not installed; rejects on any other failure.
 */
export async function measurePersistOnPostgres(options: {
  readonly rounds: number;
  readonly warmUpRounds: number;
  readonly onProgress?: (step: string) => void;
}): Promise<PersistResult> {
  let postgres: Awaited<ReturnType<typeof startPostgres>>;
  try {
    postgres = await startPostgres();
  } catch (error) {
    if (error instanceof PostgresNotFoundError) return { skipped: true, reason: error.message };
    throw error;
  }
  const pool = new pg.Pool({ connectionString: postgres.url });
  // An idle connection's error is the pool's to emit: unheard, it would end the process.
  let poolError: unknown;
  pool.on("error", (error) => {
    poolError ??= error;
  });
  const saver = new PostgresSaver(pool);
  try {
    await saver.setup();
    const server = await serverVersion(postgres.url);
    const counter = countOperations(saver);
    const contenders = new Map<PersistContender, Contender>(
      PERSIST_CONTENDERS.map((name) => [name, contender(saver, name)]),
    );
    // Seeds each thread: an agent without any middleware, so nothing is repaired on the way in.
    const seeder = contender(saver, "none");
    const times = new Map<string, number[]>();
    const ratios = new Map<string, number[]>();
    const operations = new Map<string, CheckpointOperations>();
    let threads = 0;
    for (let round = 0; round < options.warmUpRounds + options.rounds; round++) {
      const threadOf = new Map<PersistContender, string>();
      for (const name of PERSIST_CONTENDERS) {
        const threadId = `persist-bench-${threads++}`;
        await seed(seeder, threadId);
        threadOf.set(name, threadId);
      }
      const order = rotate(PERSIST_CONTENDERS, round);
      const measured = new Map<string, number>();
      for (const call of PERSIST_CALLS) {
        for (const name of order) {
          const entry = contenders.get(name) as Contender;
          const before = counter.snapshot();
          const started = performance.now();
          await callModel(entry, threadOf.get(name) as string, round, call);
          measured.set(`${call}/${name}`, (performance.now() - started) * 1e6);
          if (round === 0) operations.set(`${call}/${name}`, counter.since(before));
        }
      }
      if (round === 0) await checkStored(contenders, threadOf);
      // The fake models keep every request they got; nothing reads them after round 0.
      for (const entry of contenders.values()) entry.model.calls.splice(0);
      seeder.model.calls.splice(0);
      for (const threadId of threadOf.values()) await saver.deleteThread(threadId);
      if (round < options.warmUpRounds) continue;
      for (const [key, ns] of measured) push(times, key, ns);
      for (const call of PERSIST_CALLS) {
        const at = (name: PersistContender) => measured.get(`${call}/${name}`) as number;
        for (const name of PERSIST_CONTENDERS) {
          push(ratios, `${call}/${name}/none`, at(name) / at("none"));
          push(ratios, `${call}/${name}/persist-false`, at(name) / at("persist-false"));
        }
      }
      const done = round + 1 - options.warmUpRounds;
      if (done % 25 === 0 || done === options.rounds) {
        options.onProgress?.(`persist on PostgreSQL, round ${done} of ${options.rounds}`);
      }
    }
    const ratioOf = (key: string): Ratio => {
      const perRound = ratios.get(key) as number[];
      return {
        ratio: median(perRound),
        spread: [percentile(perRound, 0.25), percentile(perRound, 0.75)],
      };
    };
    const rows = PERSIST_CALLS.flatMap((call) =>
      PERSIST_CONTENDERS.map(
        (name): PersistRow => ({
          call,
          contender: name,
          medianNs: median(times.get(`${call}/${name}`) as number[]),
          versusNone: ratioOf(`${call}/${name}/none`),
          versusPersistFalse: ratioOf(`${call}/${name}/persist-false`),
          operations: operations.get(`${call}/${name}`) as CheckpointOperations,
        }),
      ),
    );
    if (poolError !== undefined) throw poolError;
    return {
      skipped: false,
      server,
      rounds: options.rounds,
      messages: HISTORY.messages.length,
      dangling: HISTORY.dangling,
      rows,
    };
  } finally {
    await closePool(pool);
    await postgres.stop();
  }
}

/**
 * Ends the pool and waits until every connection is closed. `Pool.end()` resolves as soon as it
 * has asked its idle connections to close; a server stopped before they have would end them with
 * an error ("terminating connection due to administrator command").
 */
async function closePool(pool: pg.Pool): Promise<void> {
  const open = pool.totalCount;
  const closed = new Promise<void>((resolve) => {
    let removed = 0;
    if (open === 0) resolve();
    pool.on("remove", () => {
      removed += 1;
      if (removed === open) resolve();
    });
    // Never wait long for a connection that does not say it closed.
    setTimeout(resolve, 5_000).unref();
  });
  await pool.end().catch(() => undefined);
  await closed;
}

/**
 * Counts the checkpointer's reads and writes, wrapping the saver's methods (the same wrapper for
 * every contender). The calls are timed one at a time, so a snapshot before and after one call
 * reads that call's operations.
 */
function countOperations(saver: PostgresSaver) {
  const counts = { reads: 0, writes: 0, messageLists: 0, pendingWrites: 0 };
  const getTuple = saver.getTuple.bind(saver);
  const put = saver.put.bind(saver);
  const putWrites = saver.putWrites.bind(saver);
  saver.getTuple = (...args) => {
    counts.reads += 1;
    return getTuple(...args);
  };
  saver.put = (...args) => {
    counts.writes += 1;
    if ("messages" in args[3]) counts.messageLists += 1;
    return put(...args);
  };
  saver.putWrites = (...args) => {
    counts.pendingWrites += 1;
    return putWrites(...args);
  };
  return {
    snapshot: (): CheckpointOperations => ({ ...counts }),
    since: (before: CheckpointOperations): CheckpointOperations => ({
      reads: counts.reads - before.reads,
      writes: counts.writes - before.writes,
      messageLists: counts.messageLists - before.messageLists,
      pendingWrites: counts.pendingWrites - before.pendingWrites,
    }),
  };
}

const passThrough = createMiddleware({
  name: "PassThrough",
  wrapModelCall: (request, handler) => handler(request),
});

function contender(saver: PostgresSaver, name: PersistContender): Contender {
  const model = fakeModel();
  const middleware: AgentMiddleware[] =
    name === "none"
      ? []
      : name === "pass-through"
        ? [passThrough]
        : [danglingToolCallMiddleware({ persist: name === "persist-true", logger: false })];
  const agent = createAgent({ model, tools: [], checkpointer: saver, middleware });
  return { agent, model };
}

/** Stores the interrupted history on a new thread (one model call, untimed). */
async function seed(seeder: Contender, threadId: string): Promise<void> {
  seeder.model.respond(new AIMessage({ id: `${threadId}:seeded`, content: "Seeded." }));
  await seeder.agent.invoke(
    // Built anew for each thread: no two threads share a message instance.
    { messages: [...buildHistory(HISTORY.messages.length, HISTORY.shape).messages] },
    { configurable: { thread_id: threadId } },
  );
}

/** One model call on the thread: a new user message, the model's answer. */
async function callModel(
  entry: Contender,
  threadId: string,
  round: number,
  call: PersistCall,
): Promise<void> {
  const answerId = `${threadId}:${call}:answer`;
  entry.model.respond(new AIMessage({ id: answerId, content: "Done." }));
  const state = await entry.agent.invoke(
    {
      messages: [new HumanMessage({ id: `${threadId}:${call}:human`, content: `Round ${round}?` })],
    },
    { configurable: { thread_id: threadId } },
  );
  const last = state.messages.at(-1);
  if (!AIMessage.isInstance(last) || last.id !== answerId) {
    throw new Error(`the ${call} call on ${threadId} did not end with the model's answer`);
  }
}

/**
 * The comparison means something only if the contenders did their jobs: with the middleware the
 * model saw every dangling call answered, and only `persist: true` stored the placeholders.
 */
async function checkStored(
  contenders: ReadonlyMap<PersistContender, Contender>,
  threadOf: ReadonlyMap<PersistContender, string>,
): Promise<void> {
  // The seeded history and its answer, then per call a question and an answer.
  const seeded = HISTORY.messages.length + 1;
  const stored = seeded + 2 * PERSIST_CALLS.length;
  for (const [name, entry] of contenders) {
    const lastRequest = entry.model.calls.at(-1)?.messages.length;
    // The last request: everything stored before it, and the new question.
    const repaired = name === "persist-false" || name === "persist-true";
    // Repaired: a placeholder per dangling call, and a synthetic reply per turn the user's stop
    // follows (the bench's fake model is no OpenAI or Anthropic client: its wire is any).
    const written = HISTORY.dangling + HISTORY.turns;
    const expectedRequest = stored - 1 + (repaired ? written : 0);
    if (lastRequest !== expectedRequest) {
      throw new Error(
        `${name}: the model got ${lastRequest} messages, expected ${expectedRequest}`,
      );
    }
    const state = await entry.agent.graph.getState({
      configurable: { thread_id: threadOf.get(name) },
    });
    const messages = (state.values as { messages?: BaseMessage[] }).messages ?? [];
    const expected = stored + (name === "persist-true" ? written : 0);
    if (messages.length !== expected) {
      throw new Error(
        `${name}: the thread stored ${messages.length} messages, expected ${expected}`,
      );
    }
  }
}

function rotate<T>(items: readonly T[], by: number): T[] {
  const start = by % items.length;
  return [...items.slice(start), ...items.slice(0, start)];
}

function push(lists: Map<string, number[]>, key: string, value: number): void {
  const list = lists.get(key) ?? [];
  list.push(value);
  lists.set(key, list);
}

/** `PostgreSQL 15.18 (Debian 15.18-0+deb12u1)`: the server's version, without its platform. */
async function serverVersion(url: string): Promise<string> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ version: string }>("SELECT version()");
    // `PostgreSQL 15.18 (Debian 15.18-0+deb12u1) on x86_64-pc-linux-gnu, compiled by ...`
    return (rows[0]?.version ?? "unknown").split(" on ")[0] as string;
  } finally {
    await client.end();
  }
}

/** The table of the measurement, or the loud line that says why it did not run. */
export function formatPersist(result: PersistResult): string {
  if (result.skipped) {
    return `SKIPPED  persist on PostgreSQL, not measured: ${result.reason}`;
  }
  const lines = result.rows.map((row) => [
    `${CALL_LABELS[row.call]}: ${LABELS[row.contender]}`,
    duration(row.medianNs),
    row.contender === "none" ? "" : withSpread(row.versusNone),
    row.contender === "persist-true" ? withSpread(row.versusPersistFalse) : "",
    `${row.operations.reads} / ${row.operations.writes} / ${row.operations.messageLists} / ${row.operations.pendingWrites}`,
  ]);
  return [
    `createAgent call over PostgresSaver (${result.server}): thread of ${result.messages} messages, ${result.dangling} dangling calls; ${result.rounds} rounds (ratio: median of the rounds' ratios, middle half in brackets)`,
    table(
      [
        "call on the thread: what runs around the model",
        "median",
        "/ no middleware",
        "/ persist: false",
        "reads / writes / lists / pending",
      ],
      lines,
    ),
  ].join("\n");
}

/** `1.21x (1.15x-1.30x)`: the median of the rounds' ratios and their middle half. */
function withSpread(value: Ratio): string {
  return `${ratio(value.ratio)} (${ratio(value.spread[0])}-${ratio(value.spread[1])})`;
}
