/**
 * Threads out of a LangGraph PostgreSQL checkpointer (the tables `PostgresSaver.setup()` of
 * `@langchain/langgraph-checkpoint-postgres` makes), read-only: every session is opened with
 * `default_transaction_read_only` on, and nothing here writes or calls `setup()`. Thread ids are
 * listed a page at a time (keyset pagination), and each thread's latest checkpoint is loaded by
 * the library's own `PostgresSaver.getTuple`, so a database of any size fits in memory.
 *
 * `@langchain/langgraph-checkpoint-postgres` (and the `pg` it depends on) is an optional peer,
 * and so is the `@langchain/core` the threads' messages need: they are imported only when a
 * checkpointer is read.
 */
import { createRequire } from "node:module";
import {
  LANGCHAIN_PACKAGE,
  LangChainUnavailableError,
  loadLangChain,
  missingPackageOf,
} from "./audit-thread.js";
import { redactConnectionString, redactMessage } from "./connection-string.js";

/** How many thread ids one listing query reads. */
const THREAD_PAGE_SIZE = 500;

/** How many threads are loaded at once; the report keeps their order. */
const LOADS_AT_ONCE = 4;

/** The schema `PostgresSaver` uses unless told otherwise, and the only one the audit reads. */
const SCHEMA = "public";

/** The tables `PostgresSaver.getTuple` reads. */
const TABLES = ["checkpoints", "checkpoint_blobs", "checkpoint_writes"] as const;

/** The startup option that makes every transaction of the session read-only. */
const READ_ONLY_OPTION = "-c default_transaction_read_only=on";

/** What to install to read a checkpointer. */
export const CHECKPOINTER_PACKAGE = "@langchain/langgraph-checkpoint-postgres";

/**
 * A failure that ends the reading of a checkpointer: it cannot be reached, is no checkpointer, or
 * the package to read it is missing. Its message holds no password.
 */
export class CheckpointerError extends Error {
  override readonly name = "CheckpointerError";
}

/** One thread of a checkpointer: the messages of its latest checkpoint. */
interface CheckpointerThread {
  readonly kind: "thread";
  /** 0-based position among the threads read. */
  readonly index: number;
  /** Its `thread_id`. */
  readonly id: string;
  /** `channel_values.messages` of its latest checkpoint: none when the state has no messages. */
  readonly messages: readonly unknown[];
}

/** A thread that could not be read: its checkpoint does not load, or holds no list of messages. */
interface CheckpointerThreadError {
  readonly kind: "error";
  /** 0-based position among the threads read, errors included. */
  readonly index: number;
  readonly id: string;
  /** What is wrong, to follow the thread's name: `is not in the checkpointer`, say. */
  readonly message: string;
}

/** What {@link Checkpointer.threads} yields, in `thread_id` order. */
type CheckpointerItem = CheckpointerThread | CheckpointerThreadError;

/** An open, read-only connection to a checkpointer database. */
export interface Checkpointer {
  /** The connection string with its password replaced by `***`: what the report names. */
  readonly source: string;
  /** How many threads {@link Checkpointer.threads} yields (for a progress bar). */
  count(threadId?: string): Promise<number>;
  /**
   * The latest checkpoint of every thread of the root namespace, or of the one thread named; an
   * unknown thread named comes out as an error. A failure of the database throws a
   * {@link CheckpointerError}.
   */
  threads(threadId?: string): AsyncGenerator<CheckpointerItem>;
  /** Closes the connections. */
  close(): Promise<void>;
}

/** The part of `pg`'s `Pool` the audit uses. */
interface Pool {
  query(text: string, values?: unknown[]): Promise<{ rows: Record<string, unknown>[] }>;
  on(event: "error", listener: (error: Error) => void): unknown;
  end(): Promise<void>;
}

/** The part of `PostgresSaver` the audit uses. */
interface Saver {
  getTuple(config: {
    configurable: { thread_id: string; checkpoint_ns: string };
  }): Promise<{ checkpoint: { channel_values?: Record<string, unknown> } } | undefined>;
}

interface Modules {
  readonly PostgresSaver: new (pool: Pool) => Saver;
  readonly Pool: new (config: Record<string, unknown>) => Pool;
}

/**
 * `PostgresSaver`, and `Pool` from the `pg` it depends on (resolved from the saver's own
 * directory, so a strict package manager finds it as well); and `@langchain/core`, which the
 * threads' LangChain messages need. What is not installed is named in one error, with the one
 * `npm install` that brings it all.
 */
async function loadModules(): Promise<Modules> {
  const needed: string[] = [];
  const need = (name: string) => {
    if (!needed.includes(name)) needed.push(name);
  };
  let saverModule: { PostgresSaver: Modules["PostgresSaver"] } | undefined;
  try {
    saverModule = (await import(CHECKPOINTER_PACKAGE)) as typeof saverModule;
  } catch (error) {
    const missing = missingPackageOf(error);
    if (missing === true || missing === CHECKPOINTER_PACKAGE) need(CHECKPOINTER_PACKAGE);
    // The saver is there, but not its peer: that one is named (the check below names it too).
    else if (missing === LANGCHAIN_PACKAGE) need(LANGCHAIN_PACKAGE);
    else {
      // Something inside it is missing or broken (a dependency, `pg` say): named as it is.
      throw new CheckpointerError(
        `${CHECKPOINTER_PACKAGE} cannot be loaded: ${(error as Error).message}`,
        { cause: error },
      );
    }
  }
  try {
    await loadLangChain();
  } catch (error) {
    if (!(error instanceof LangChainUnavailableError && error.missing)) {
      throw new CheckpointerError(
        `${LANGCHAIN_PACKAGE} cannot be loaded: ${((error as Error).cause as Error | undefined)?.message ?? (error as Error).message}`,
        { cause: error },
      );
    }
    need(LANGCHAIN_PACKAGE);
  }
  if (saverModule === undefined || needed.length > 0) {
    throw new CheckpointerError(
      `Reading a checkpointer needs ${needed.join(" and ")}: npm install ${needed.join(" ")}`,
    );
  }
  let pg: { Pool: Modules["Pool"] } | { default: { Pool: Modules["Pool"] } };
  try {
    const require = createRequire(import.meta.url);
    pg = createRequire(require.resolve(CHECKPOINTER_PACKAGE))("pg") as typeof pg;
  } catch {
    try {
      pg = (await import("pg")) as typeof pg;
    } catch (error) {
      throw new CheckpointerError(
        `Reading a checkpointer needs ${CHECKPOINTER_PACKAGE}, with its dependency pg: npm install ${CHECKPOINTER_PACKAGE} (${(error as Error).message})`,
        { cause: error },
      );
    }
  }
  const Pool = "Pool" in pg ? pg.Pool : pg.default.Pool;
  return { PostgresSaver: saverModule.PostgresSaver, Pool };
}

/**
 * What went wrong, in one line: a PostgreSQL error's message, or a network error's (several
 * addresses tried at once fail as one error with an empty message and the failures inside).
 */
function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const inner = (error as { errors?: unknown }).errors;
  if (error.message === "" && Array.isArray(inner) && inner.length > 0) {
    return [...new Set(inner.map((each) => describe(each)))].join("; ");
  }
  const code = (error as { code?: unknown }).code;
  if (error.message === "" && typeof code === "string") return code;
  return error.message;
}

/**
 * Whether an error is the database's or the network's (PostgreSQL's SQLSTATE, a system error's
 * code, a closed connection), which ends the audit, rather than one thread's own.
 */
function isDatabaseFailure(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  return (
    typeof code === "string" ||
    /connection|timeout|terminated|ECONN|ENOTFOUND|EAI_AGAIN/i.test(error.message)
  );
}

/**
 * The `options` the sessions start with: the caller's own (an `options` parameter of the URL, or
 * `PGOPTIONS`), then the one that makes them read-only, which a later option cannot undo. A URL's
 * `options` would replace pg's `options` setting, so it moves into the setting.
 */
function sessionSettings(url: string): { connectionString: string; options: string } {
  let connectionString = url;
  let theirs = process.env.PGOPTIONS;
  try {
    const parsed = new URL(url);
    const fromUrl = parsed.searchParams.get("options");
    if (fromUrl !== null) {
      theirs = fromUrl;
      parsed.searchParams.delete("options");
      connectionString = parsed.toString();
    }
  } catch {
    // pg reads what the URL class does not (a socket path, say); it has no `options` then.
  }
  const options = [theirs, READ_ONLY_OPTION].filter((part) => part !== undefined && part !== "");
  return { connectionString, options: options.join(" ") };
}

/** The listing query: the root namespace's thread ids after the last one read, in order. */
const FIRST_PAGE = `SELECT DISTINCT thread_id FROM "${SCHEMA}".checkpoints WHERE checkpoint_ns = '' ORDER BY thread_id LIMIT $1`;
const NEXT_PAGE = `SELECT DISTINCT thread_id FROM "${SCHEMA}".checkpoints WHERE checkpoint_ns = '' AND thread_id > $2 ORDER BY thread_id LIMIT $1`;
const COUNT = `SELECT count(DISTINCT thread_id)::text AS count FROM "${SCHEMA}".checkpoints WHERE checkpoint_ns = ''`;

/** The thread ids of the root namespace, a page at a time. */
async function* threadIds(pool: Pool, pageSize: number): AsyncGenerator<string> {
  let last: string | undefined;
  for (;;) {
    const { rows } =
      last === undefined
        ? await pool.query(FIRST_PAGE, [pageSize])
        : await pool.query(NEXT_PAGE, [pageSize, last]);
    for (const row of rows) yield String(row.thread_id);
    if (rows.length < pageSize) return;
    last = String(rows[rows.length - 1]?.thread_id);
  }
}

/** Applies `load` to each item, `width` at a time, and yields the results in the items' order. */
async function* loadInOrder<T, R>(
  items: AsyncIterable<T>,
  width: number,
  load: (item: T, index: number) => Promise<R>,
): AsyncGenerator<R> {
  const pending: Promise<R>[] = [];
  let index = 0;
  for await (const item of items) {
    pending.push(load(item, index++));
    if (pending.length >= width) yield await (pending.shift() as Promise<R>);
  }
  while (pending.length > 0) yield await (pending.shift() as Promise<R>);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Options of {@link openCheckpointer}. */
interface OpenCheckpointerOptions {
  /** How many thread ids one listing query reads; {@link THREAD_PAGE_SIZE} by default. */
  readonly pageSize?: number;
}

/**
 * Connects to a checkpointer database, read-only, and checks that it is one: it has the tables
 * `PostgresSaver.setup()` makes. Throws a {@link CheckpointerError} (its message redacted) when
 * the package is missing, the database cannot be reached, or it is no checkpointer.
 */
export async function openCheckpointer(
  url: string,
  options: OpenCheckpointerOptions = {},
): Promise<Checkpointer> {
  const pageSize = options.pageSize ?? THREAD_PAGE_SIZE;
  const { PostgresSaver, Pool } = await loadModules();
  const redact = (message: string) => redactMessage(message, url);
  const failure = (doing: string, error: unknown) =>
    new CheckpointerError(redact(`${doing}: ${describe(error)}`), { cause: error });
  let pool: Pool;
  try {
    pool = new Pool({
      ...sessionSettings(url),
      max: LOADS_AT_ONCE,
      connectionTimeoutMillis: 15_000,
      application_name: "tool-call-resilience audit",
    });
  } catch (error) {
    throw failure("cannot connect", error);
  }
  // An idle connection that breaks is the next query's failure, not the process's.
  pool.on("error", () => {});
  const close = async () => {
    await pool.end().catch(() => undefined);
  };
  try {
    const { rows } = await pool.query(
      `SELECT ${TABLES.map((table) => `to_regclass('"${SCHEMA}".${table}') IS NOT NULL AS ${table}`).join(", ")}, current_setting('transaction_read_only') AS read_only`,
    );
    const row = rows[0] ?? {};
    const missing = TABLES.filter((table) => row[table] !== true);
    if (missing.length > 0) {
      throw new CheckpointerError(
        `not a LangGraph checkpointer: the database has no table ${missing.map((table) => `${SCHEMA}.${table}`).join(", ")} (the tables PostgresSaver.setup() of ${CHECKPOINTER_PACKAGE} makes)`,
      );
    }
    if (row.read_only !== "on") {
      throw new CheckpointerError(
        "the session is not read-only: the server dropped the startup option -c default_transaction_read_only=on (a connection pooler?); nothing was read, connect to the database itself",
      );
    }
  } catch (error) {
    await close();
    if (error instanceof CheckpointerError) throw error;
    throw failure("cannot connect", error);
  }
  const saver = new PostgresSaver(pool);
  const load = async (id: string, index: number): Promise<CheckpointerItem | Error> => {
    let tuple: Awaited<ReturnType<Saver["getTuple"]>>;
    try {
      tuple = await saver.getTuple({ configurable: { thread_id: id, checkpoint_ns: "" } });
    } catch (error) {
      if (isDatabaseFailure(error)) return failure(`cannot read thread "${id}"`, error);
      return { kind: "error", index, id, message: redact(`cannot be read: ${describe(error)}`) };
    }
    if (tuple === undefined) {
      return { kind: "error", index, id, message: "is not in the checkpointer" };
    }
    const messages = tuple.checkpoint.channel_values?.messages ?? [];
    if (!Array.isArray(messages)) {
      return {
        kind: "error",
        index,
        id,
        message: "is not a thread: its `messages` channel is not an array of messages",
      };
    }
    const bad = messages.findIndex((message) => !isObject(message));
    if (bad !== -1) {
      return {
        kind: "error",
        index,
        id,
        message: `is not a thread: its message ${bad} is not an object`,
      };
    }
    return { kind: "thread", index, id, messages };
  };
  return {
    source: redactConnectionString(url),
    async count(threadId) {
      if (threadId !== undefined) return 1;
      try {
        const { rows } = await pool.query(COUNT);
        return Number(rows[0]?.count ?? 0);
      } catch (error) {
        throw failure("cannot read", error);
      }
    },
    async *threads(threadId) {
      async function* ids(): AsyncGenerator<string> {
        if (threadId !== undefined) {
          yield threadId;
          return;
        }
        try {
          yield* threadIds(pool, pageSize);
        } catch (error) {
          throw failure("cannot list the threads", error);
        }
      }
      for await (const item of loadInOrder(ids(), LOADS_AT_ONCE, load)) {
        if (item instanceof Error) throw item;
        yield item;
      }
    },
    close,
  };
}
