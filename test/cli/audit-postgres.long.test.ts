/**
 * `tool-call-resilience audit --checkpointer`: a throwaway PostgreSQL cluster filled by the real
 * stack (`PostgresSaver.setup()`, `createAgent` on a fake tool-calling model, a plain
 * `StateGraph`), then audited through the command line, read-only, as a user runs it. The suites
 * that need PostgreSQL are skipped, loudly, without its binaries (they fail with
 * `REQUIRE_POSTGRES=1`); the usage errors and the missing package need none.
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { Annotation, emptyCheckpoint, StateGraph } from "@langchain/langgraph";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { createAgent } from "langchain";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type PostgresServer, startPostgres } from "../../demo/postgres-server.js";
import { checkpointerPool } from "../../demo/workers.js";
import { USAGE } from "../../src/cli/arguments.js";
import { redactConnectionString } from "../../src/cli/connection-string.js";
import { openCheckpointer } from "../../src/cli/postgres.js";
import {
  aiAnswer,
  aiToolCall,
  humanTurn,
  onThread,
  scriptedModel,
  searchTool,
  stallingSearchTool,
} from "../helpers/agent.js";
import { audit, type Run } from "../helpers/cli.js";
import { postgresBinaries, postgresRequired, skipNote } from "../helpers/postgres.js";

/** A URL of the cluster with another database, user or password. */
function urlOf(base: string, change: { database?: string; password?: string; port?: number }) {
  const url = new URL(base);
  if (change.database !== undefined) url.pathname = `/${change.database}`;
  if (change.password !== undefined) url.password = change.password;
  if (change.port !== undefined) url.port = String(change.port);
  return url.toString();
}

function passwordOf(url: string): string {
  return decodeURIComponent(new URL(url).password);
}

/** What a run printed, all of it. */
const printed = (run: Run) => `${run.stdout}\n${run.stderr}`;

/** Runs SQL on one database of the cluster as its superuser. */
async function sql<Row = Record<string, unknown>>(
  url: string,
  text: string,
  values: unknown[] = [],
): Promise<Row[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text, values)).rows as Row[];
  } finally {
    await client.end();
  }
}

/** Everything the checkpointer's tables hold, as one digest, and how many rows each has. */
async function contentsOf(url: string) {
  const [row] = await sql(
    url,
    `SELECT
       (SELECT count(*) FROM checkpoints)::int AS checkpoints,
       (SELECT count(*) FROM checkpoint_blobs)::int AS blobs,
       (SELECT count(*) FROM checkpoint_writes)::int AS writes,
       (SELECT count(*) FROM checkpoint_migrations)::int AS migrations,
       (SELECT md5(string_agg(c::text, ',' ORDER BY thread_id, checkpoint_id)) FROM checkpoints c) AS digest`,
  );
  return row;
}

/**
 * A saver over a pool that survives the server going away: a session the server ends (the
 * connection-lost case, the cluster stopping after the suite) is an `error` of the pool, which
 * without a listener would fail the run as an uncaught exception.
 */
function saverFor(url: string): PostgresSaver {
  return new PostgresSaver(checkpointerPool(url));
}

/** A saver on a database of the cluster, its tables made. */
async function saverOn(url: string): Promise<PostgresSaver> {
  const saver = saverFor(url);
  await saver.setup();
  return saver;
}

const CALL = { id: "call_1", name: "search", args: { query: "flights" } };

/** Savers whose runs were aborted: ended at the end, when whatever the abort left is written. */
const abortedSavers: PostgresSaver[] = [];

/**
 * Aborts a `createAgent` run on the thread while its tool runs, leaving its call dangling. The
 * run checkpoints each step before the next starts (`durability: "sync"`), so the model's call is
 * stored before the tool starts; the abort's own writes may land after `invoke` has thrown, so
 * its saver stays open until the suite ends.
 */
async function abortWhileToolRuns(url: string, threadId: string): Promise<void> {
  const saver = saverFor(url);
  abortedSavers.push(saver);
  const { tool, started } = stallingSearchTool();
  const agent = createAgent({
    model: scriptedModel(aiToolCall("b1", { ...CALL, id: "call_dangling" })),
    tools: [tool],
    checkpointer: saver,
  });
  const controller = new AbortController();
  const outcome = agent
    .invoke(
      { messages: [humanTurn("h3", "Find hotels")] },
      { ...onThread(threadId), signal: controller.signal, durability: "sync" },
    )
    .then(
      () => undefined,
      (error: unknown) => error,
    );
  await Promise.race([started, outcome]);
  controller.abort();
  expect(await outcome).toBeInstanceOf(Error);
  const { values } = await agent.graph.getState(onThread(threadId));
  const stored = (values as { messages: { id?: string }[] }).messages;
  expect(stored.map((message) => message.id)).toEqual(["h3", "b1"]);
}

/**
 * Threads written by `createAgent` over a `PostgresSaver`: `clean-1` (a call and its result, an
 * answer), `clean-2` (an answer), `aborted` (a run aborted while its tool ran: the call
 * dangles), and `counter`, a `StateGraph` with no `messages` channel.
 */
async function fillWithAgents(url: string, options: { broken: boolean }): Promise<void> {
  const saver = await saverOn(url);
  try {
    const agent = createAgent({
      model: scriptedModel(
        aiToolCall("a1", CALL),
        aiAnswer("a2", "Found two flights."),
        aiAnswer("a3", "Hello."),
      ),
      tools: [searchTool()],
      checkpointer: saver,
    });
    await agent.invoke({ messages: [humanTurn("h1", "Find flights")] }, onThread("clean-1"));
    await agent.invoke({ messages: [humanTurn("h2", "Hi")] }, onThread("clean-2"));
    if (options.broken) await abortWhileToolRuns(url, "aborted");
    const counter = new StateGraph(Annotation.Root({ count: Annotation<number> }))
      .addNode("increment", (state) => ({ count: (state.count ?? 0) + 1 }))
      .addEdge("__start__", "increment")
      .compile({ checkpointer: saver });
    await counter.invoke({ count: 1 }, onThread("counter"));
  } finally {
    await saver.end();
  }
}

const binaries = postgresBinaries();

describe.skipIf(binaries === undefined && !postgresRequired)(
  `audit --checkpointer: a LangGraph PostgreSQL checkpointer${skipNote(binaries)}`,
  () => {
    let server: PostgresServer;
    /** The superuser's URL of each database. */
    const db = { agents: "", clean: "", many: "", plain: "", odd: "" };
    let password: string;

    beforeAll(async () => {
      server = await startPostgres();
      password = passwordOf(server.url);
      for (const name of Object.keys(db) as (keyof typeof db)[]) {
        await sql(server.url, `CREATE DATABASE ${name}`);
        db[name] = urlOf(server.url, { database: name });
      }
      await fillWithAgents(db.agents, { broken: true });
      await fillWithAgents(db.clean, { broken: false });
    }, 120_000);

    // Stopping the cluster writes a last checkpoint to disk: seconds on a busy machine.
    afterAll(async () => {
      for (const saver of abortedSavers) await saver.end();
      await server?.stop();
    }, 60_000);

    it("names the thread whose tool call dangles, by its thread_id, and exits 1", async () => {
      const run = await audit(["audit", "--checkpointer", db.agents]);
      expect(run.code).toBe(1);
      const source = redactConnectionString(db.agents);
      expect(source).toContain("***");
      expect(run.stdout.split("\n")).toEqual([
        `${source}: thread 0 "aborted" (langchain): 1 dangling`,
        "Audited 4 thread(s), 8 message(s) (4 langchain): 1 with problems: 1 dangling.",
        "",
      ]);
      expect(run.stderr).toBe("");
      expect(printed(run)).not.toContain(password);
    });

    it("gives the same JSON report as for a file: the thread, its repairs, the summary", async () => {
      const run = await audit(["audit", "--checkpointer", db.agents, "--format", "json"]);
      expect(run.code).toBe(1);
      expect(run.stdout).not.toContain(password);
      const report = JSON.parse(run.stdout);
      expect(report.source).toBe(redactConnectionString(db.agents));
      expect(report.threads).toEqual([
        {
          index: 0,
          id: "aborted",
          line: null,
          format: "langchain",
          problems: { dangling: 1 },
          repairs: [
            expect.objectContaining({ kind: "placeholder_inserted", toolCallId: "call_dangling" }),
          ],
        },
      ]);
      expect(report.errors).toEqual([]);
      expect(report.summary).toMatchObject({
        threads: 4,
        threadsWithProblems: 1,
        messages: 8,
        formats: { langchain: 4 },
        problems: { dangling: 1 },
        errors: 0,
      });
    });

    it("exits 0 on a checkpointer whose threads are all whole", async () => {
      const run = await audit(["audit", "--checkpointer", db.clean]);
      expect(run.code).toBe(0);
      expect(run.stdout).toBe(
        "Audited 3 thread(s), 6 message(s) (3 langchain): no problems found.\n",
      );
    });

    it("reads only the thread --thread names; an unknown one is an error, exit 2", async () => {
      const clean = await audit(["audit", "--checkpointer", db.agents, "--thread", "clean-1"]);
      expect(clean.code).toBe(0);
      expect(clean.stdout).toContain("Audited 1 thread(s), 4 message(s)");
      const broken = await audit(["audit", "--checkpointer", db.agents, "--thread", "aborted"]);
      expect(broken.code).toBe(1);
      expect(broken.stdout).toContain('thread 0 "aborted" (langchain): 1 dangling');
      expect(broken.stdout).toContain("Audited 1 thread(s)");
      const unknown = await audit(["audit", "--checkpointer", db.agents, "--thread", "nope"]);
      expect(unknown.code).toBe(2);
      // Named by its id alone (its position means nothing), and never "no problems found".
      expect(unknown.stderr).toBe(
        `tool-call-resilience: ${redactConnectionString(db.agents)}: Thread "nope" is not in the checkpointer\n`,
      );
      expect(unknown.stdout).toBe("No thread audited: 1 error(s), on standard error.\n");
    });

    it("counts a state without messages as a thread with none, as a file's empty thread", async () => {
      const run = await audit(["audit", "--checkpointer", db.agents, "--thread", "counter"]);
      expect(run.code).toBe(0);
      expect(run.stdout).toBe(
        "Audited 1 thread(s), 0 message(s) (1 langchain): no problems found.\n",
      );
    });

    it("draws its progress bar on a terminal, in threads", async () => {
      const run = await audit(["audit", "--checkpointer", db.agents], { tty: true });
      expect(run.code).toBe(1);
      expect(run.stderr).toContain("100% | 4 thread(s)");
      expect(run.stderr).not.toContain(password);
    });

    it("reads in read-only sessions: a write fails there, and nothing changes", async () => {
      const before = await contentsOf(db.agents);
      const writes: unknown[] = [];
      const getTuple = PostgresSaver.prototype.getTuple;
      const spy = vi.spyOn(PostgresSaver.prototype, "getTuple").mockImplementation(async function (
        this: PostgresSaver,
        config,
      ) {
        // The audit's own pool (a private field of the saver), mid-audit: what a stray write meets.
        const { pool } = this as unknown as { pool: pg.Pool };
        writes.push(
          await pool.query("INSERT INTO checkpoint_migrations (v) VALUES (999)").then(
            () => "written",
            (error: { code?: string }) => error.code,
          ),
        );
        return getTuple.call(this, config);
      });
      try {
        const run = await audit(["audit", "--checkpointer", db.agents]);
        expect(run.code).toBe(1);
      } finally {
        spy.mockRestore();
      }
      // 25006: read_only_sql_transaction.
      expect(writes).toEqual(["25006", "25006", "25006", "25006"]);
      expect(await contentsOf(db.agents)).toEqual(before);
    });

    it("keeps the sessions read-only when the URL's own options try to undo it", async () => {
      const url = new URL(db.agents);
      url.searchParams.set("options", "-c default_transaction_read_only=off");
      const run = await audit(["audit", "--checkpointer", url.toString()]);
      expect(run.code).toBe(1);
      expect(run.stdout).toContain('"aborted" (langchain): 1 dangling');
    });

    it("audits 2,000 threads a page at a time, each once, the latest checkpoint of each", async () => {
      const saver = await saverOn(db.many);
      const ids = Array.from({ length: 2_000 }, (_, index) => `t-${index}`);
      const broken = new Set(ids.filter((_, index) => index % 250 === 7));
      const messagesOf = (id: string, dangling: boolean) => [
        new HumanMessage({ id: `${id}-h`, content: "Find flights" }),
        dangling
          ? new AIMessage({
              id: `${id}-a`,
              content: "",
              tool_calls: [{ ...CALL, id: `${id}-call`, type: "tool_call" }],
            })
          : new AIMessage({ id: `${id}-a`, content: "Here they are." }),
      ];
      const put = (id: string, checkpointId: string, dangling: boolean) =>
        saver.put(
          { configurable: { thread_id: id, checkpoint_ns: "" } },
          {
            ...emptyCheckpoint(),
            id: checkpointId,
            channel_values: { messages: messagesOf(id, dangling) },
            channel_versions: { messages: checkpointId },
          },
          { source: "loop", step: 1, parents: {} },
          { messages: checkpointId },
        );
      try {
        for (let start = 0; start < ids.length; start += 100) {
          await Promise.all(
            ids.slice(start, start + 100).map((id) => put(id, "0001", broken.has(id))),
          );
        }
        // A later checkpoint decides: t-1 was broken and is whole now, t-3 the other way round.
        await put("t-1", "0000", true);
        await put("t-3", "0002", true);
        broken.add("t-3");
      } finally {
        await saver.end();
      }
      const run = await audit(["audit", "--checkpointer", db.many, "--format", "json"]);
      expect(run.code).toBe(1);
      const report = JSON.parse(run.stdout);
      expect(report.summary).toMatchObject({ threads: 2_000, messages: 4_000, errors: 0 });
      const reported = report.threads.map((thread: { id: string }) => thread.id);
      expect(reported.sort()).toEqual([...broken].sort());
      // In thread_id order, each index its position among all 2,000.
      const sorted = [...ids].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      for (const thread of report.threads) expect(sorted[thread.index]).toBe(thread.id);
      // Pages that end mid-way (7 ids a page): every thread once, in order, none left out.
      const checkpointer = await openCheckpointer(db.many, { pageSize: 7 });
      try {
        const read: string[] = [];
        for await (const item of checkpointer.threads()) {
          expect(item.kind).toBe("thread");
          read.push(item.id);
        }
        expect(read).toEqual(sorted);
        expect(await checkpointer.count()).toBe(2_000);
      } finally {
        await checkpointer.close();
      }
    }, 120_000);

    it("names a thread whose `messages` are no messages, exit 2, and audits the others", async () => {
      const saver = await saverOn(db.odd);
      try {
        const graph = new StateGraph(Annotation.Root({ messages: Annotation<string> }))
          .addNode("echo", (state) => ({ messages: `${state.messages}!` }))
          .addEdge("__start__", "echo")
          .compile({ checkpointer: saver });
        await graph.invoke({ messages: "hi" }, onThread("a-text"));
        const agent = createAgent({
          model: scriptedModel(aiAnswer("a1", "Hello.")),
          tools: [],
          checkpointer: saver,
        });
        await agent.invoke({ messages: [humanTurn("h1", "Hi")] }, onThread("b-chat"));
      } finally {
        await saver.end();
      }
      const run = await audit(["audit", "--checkpointer", db.odd, "--format", "json"]);
      expect(run.code).toBe(2);
      const report = JSON.parse(run.stdout);
      expect(report.errors).toEqual([
        {
          file: redactConnectionString(db.odd),
          line: null,
          message:
            'Thread "a-text" is not a thread: its `messages` channel is not an array of messages',
        },
      ]);
      expect(report.summary).toMatchObject({ threads: 1, messages: 2, errors: 1 });
    });

    it("stops at a connection lost mid-audit: exit 2, the summary, no password", async () => {
      const getTuple = PostgresSaver.prototype.getTuple;
      let calls = 0;
      const spy = vi.spyOn(PostgresSaver.prototype, "getTuple").mockImplementation(async function (
        this: PostgresSaver,
        config,
      ) {
        if (++calls === 3) {
          // The database goes away for the audit: its sessions end, and no new one is let in.
          // (Only the audit's: the test's own savers keep their sessions.)
          await sql(server.url, "ALTER DATABASE agents ALLOW_CONNECTIONS false");
          await sql(
            server.url,
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = 'agents' AND application_name = 'tool-call-resilience audit'",
          );
        }
        return getTuple.call(this, config);
      });
      let run: Run;
      try {
        run = await audit(["audit", "--checkpointer", db.agents]);
      } finally {
        spy.mockRestore();
        await sql(server.url, "ALTER DATABASE agents ALLOW_CONNECTIONS true");
      }
      expect(run.code).toBe(2);
      const lines = run.stderr.split("\n");
      expect(lines).toHaveLength(2);
      expect(lines[0]).toMatch(
        /^tool-call-resilience: postgres:\/\/postgres:\*\*\*@[^ ]+\/agents: cannot read thread "[a-z0-9-]+": (terminating connection|database "agents" is not currently accepting connections)/,
      );
      expect(run.stdout).toMatch(/^Audited \d thread\(s\).* 1 error\(s\), on standard error\.$/m);
      expect(printed(run)).not.toContain(password);
    });

    it("exits 2 on a database that is no checkpointer, and creates nothing there", async () => {
      for (const format of ["text", "json"]) {
        const run = await audit(["audit", "--checkpointer", db.plain, "--format", format]);
        expect(run.code).toBe(2);
        expect(printed(run)).toContain(
          "not a LangGraph checkpointer: the database has no table public.checkpoints",
        );
        expect(printed(run)).not.toContain(password);
      }
      const tables = await sql(
        db.plain,
        "SELECT tablename FROM pg_tables WHERE schemaname = 'public'",
      );
      expect(tables).toEqual([]);
    });

    it("exits 2 on a wrong password, a missing database or a closed port, naming no password", async () => {
      const wrong = "not-the-password-0f9e";
      const closed = urlOf(server.url, { port: 1 });
      const cases: [string, RegExp][] = [
        [urlOf(db.agents, { password: wrong }), /cannot connect: password authentication failed/],
        [
          urlOf(server.url, { database: "missing" }),
          /cannot connect: database "missing" does not exist/,
        ],
        [closed, /cannot connect: .*ECONNREFUSED/],
      ];
      for (const [url, message] of cases) {
        for (const format of ["text", "json"]) {
          const run = await audit(["audit", "--checkpointer", url, "--format", format]);
          expect(run.code).toBe(2);
          expect(run.stderr).toMatch(message);
          expect(run.stderr).toContain(`tool-call-resilience: ${redactConnectionString(url)}: `);
          expect(printed(run)).not.toContain(password);
          expect(printed(run)).not.toContain(wrong);
          if (format === "json") {
            expect(JSON.parse(run.stdout)).toMatchObject({
              source: redactConnectionString(url),
              threads: [],
              errors: [{ file: redactConnectionString(url), line: null, message }],
              summary: { threads: 0, errors: 1 },
            });
          }
        }
      }
    });
  },
);

describe("audit --checkpointer: usage", () => {
  const url = "postgres://app:s3cret-pass-9@127.0.0.1:1/app";

  it.each([
    [["--fix", "--out", "fixed.jsonl"], "--fix and --out are not for --checkpointer"],
    [["--out", "fixed.jsonl"], "--fix and --out are not for --checkpointer"],
    [["threads.jsonl"], "--checkpointer reads the threads: give no file as well"],
    [["-"], "--checkpointer reads the threads: give no file as well"],
    [[url], "--checkpointer reads the threads: give no file as well"],
  ])("refuses --checkpointer with %j, exit 2", async (extra, message) => {
    const run = await audit(["audit", "--checkpointer", url, ...extra]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(message);
    expect(run.stderr).toContain("Run 'tool-call-resilience audit --help' for usage.");
    expect(printed(run)).not.toContain("s3cret-pass-9");
    expect(run.stdout).toBe("");
  });

  it("refuses --thread without --checkpointer, and a connection string given as a file", async () => {
    const thread = await audit(["audit", "threads.jsonl", "--thread", "t1"]);
    expect(thread.code).toBe(2);
    expect(thread.stderr).toContain("--thread is only for --checkpointer");
    const asFile = await audit(["audit", url]);
    expect(asFile.code).toBe(2);
    expect(asFile.stderr).toContain("A connection string is read with --checkpointer <url>");
    expect(printed(asFile)).not.toContain("s3cret-pass-9");
    const notPostgres = await audit([
      "audit",
      "--checkpointer",
      "mysql://app:s3cret-pass-9@db/app",
    ]);
    expect(notPostgres.code).toBe(2);
    expect(notPostgres.stderr).toContain("--checkpointer must be a PostgreSQL URL");
    expect(printed(notPostgres)).not.toContain("s3cret-pass-9");
  });

  it("documents --checkpointer and --thread in --help", () => {
    expect(USAGE).toMatch(/^ {2}--checkpointer <url>$/m);
    expect(USAGE).toMatch(/^ {2}--thread <id> /m);
  });

  it("says to install @langchain/langgraph-checkpoint-postgres when it is missing, exit 2", async () => {
    const scratch = await mkdtemp(join(tmpdir(), "tcr-no-postgres-"));
    try {
      // A module hook that makes the package not found, as in a project without it.
      const hooks = `export async function resolve(specifier, context, next) {
        if (specifier === "@langchain/langgraph-checkpoint-postgres") {
          const error = new Error("Cannot find package '" + specifier + "' imported from " + context.parentURL);
          error.code = "ERR_MODULE_NOT_FOUND";
          throw error;
        }
        return next(specifier, context);
      }`;
      const register = join(scratch, "register.mjs");
      await writeFile(join(scratch, "hooks.mjs"), hooks);
      await writeFile(
        register,
        `import { register } from "node:module";\nregister(${JSON.stringify(pathToFileURL(join(scratch, "hooks.mjs")).href)});\n`,
      );
      const main = fileURLToPath(new URL("../../src/cli/main.ts", import.meta.url));
      const failure = await promisify(execFile)(process.execPath, [
        "--import",
        register,
        "--import",
        "tsx",
        main,
        "audit",
        "--checkpointer",
        url,
      ]).then(
        () => undefined,
        (error: { code: number; stdout: string; stderr: string }) => error,
      );
      expect(failure?.code).toBe(2);
      expect(failure?.stderr).toContain(
        "Reading a checkpointer needs @langchain/langgraph-checkpoint-postgres: npm install @langchain/langgraph-checkpoint-postgres",
      );
      expect(`${failure?.stdout}${failure?.stderr}`).not.toContain("s3cret-pass-9");
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  }, 60_000);
});
