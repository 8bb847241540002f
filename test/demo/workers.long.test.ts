/**
 * `npm start -- --workers 3`: the fleet as production runs it, end to end. Three worker processes
 * over one real PostgreSQL, Prometheus scraping each of them, one worker killed with SIGKILL
 * mid-run and replaced. With `persist`, every worker's counters equal what it did, exactly, so
 * the fleet's sums equal the scripts' ground truth once the killed worker's unscraped increments
 * (measured) are added back. Without `persist`, the overcount is measured. Afterwards every stored
 * thread is read back from PostgreSQL: no message lost, and every history, once repaired, is one
 * that OpenAI (Chat Completions and Responses), Anthropic and Gemini accept, through their real
 * converters. The connection string has a password, and it appears nowhere.
 *
 * Without PostgreSQL or Prometheus binaries the suite is skipped, loudly; with `REQUIRE_POSTGRES=1`
 * and `REQUIRE_PROMETHEUS=1` (as in CI) it runs and fails instead.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BaseMessage } from "@langchain/core/messages";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { series } from "../../dashboards/generator/names.js";
import { totalOf } from "../../demo/fleet.js";
import { type PostgresServer, startPostgres } from "../../demo/postgres-server.js";
import { findOnPath, queryByInstance, SCRAPE_JOB } from "../../demo/prometheus-server.js";
import { checkpointerPool, storedMessages } from "../../demo/workers.js";
import type { WorkersReport } from "../../demo/workers-demo.js";
import { repairToolCalls } from "../../src/index.js";
import { printed, runDemo, startDemo, stopDemos } from "../helpers/demo.js";
import { postgresBinaries, postgresRequired, skipNote } from "../helpers/postgres.js";
import { freePort, isListening } from "../helpers/prometheus.js";
import { ACCEPTED_BY_ALL, providerViolations } from "../helpers/provider-payloads.js";

const binaries = postgresBinaries();
const prometheusBinary = findOnPath("prometheus");
const prometheusRequired = process.env.REQUIRE_PROMETHEUS === "1";
const skip =
  (binaries === undefined && !postgresRequired) ||
  (prometheusBinary === undefined && !prometheusRequired);

/** Bounded by turns, not time: twelve threads of six turns, a third of the runs interrupted. */
const FLEET = ["--workers", "3", "--threads", "12", "--turns", "6", "--interrupt-rate", "0.3"];
/** Seconds in: the fleet of 72 turns is well under way and far from done. */
const KILL_AT = "2";

/**
 * A first port of `count` consecutive free ones (a worker per port, and its replacement), none of
 * them in `besides`.
 */
async function freePorts(count: number, besides: readonly number[] = []): Promise<number> {
  for (;;) {
    const first = await freePort();
    if (first + count > 65_535) continue;
    const range = Array.from({ length: count }, (_, index) => first + index);
    if (range.some((port) => besides.includes(port))) continue;
    const taken = await Promise.all(range.slice(1).map((port) => isListening(port)));
    if (!taken.includes(true)) return first;
  }
}

/** The value of `read` once `done` holds of it, or its last value after 10 s. */
async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** The first worker's metrics port, from the report's options. */
function basePortOf(report: WorkersReport): number {
  return report.options.port;
}

describe.skipIf(skip)(`npm start -- --workers 3${skipNote(binaries)}`, () => {
  let postgres: PostgresServer;
  let password: string;
  let folder: string;

  beforeAll(async () => {
    postgres = await startPostgres();
    password = decodeURIComponent(new URL(postgres.url).password);
    folder = mkdtempSync(join(tmpdir(), "tool-call-resilience-workers-"));
  }, 60_000);

  afterAll(async () => {
    await postgres?.stop();
    if (folder !== undefined) rmSync(folder, { recursive: true, force: true });
  });

  afterEach(stopDemos);

  /**
   * Runs the fleet on the suite's PostgreSQL and returns its output and report. With
   * `whileHeld`, the demo runs with `--prometheus`, which holds it after the summary: the callback
   * gets Prometheus's URL then, and Ctrl-C ends the demo after it.
   */
  async function runFleet(
    extra: readonly string[],
    name: string,
    how: {
      /** The password in `PGPASSWORD`, not in the URL on the command line. */
      readonly passwordInEnvironment?: boolean;
      readonly whileHeld?: (prometheusUrl: string, report: WorkersReport) => Promise<void>;
    } = {},
  ) {
    const { whileHeld } = how;
    const report = join(folder, `${name}.json`);
    const prometheusPort = whileHeld === undefined ? undefined : await freePort();
    const port = await freePorts(4, prometheusPort === undefined ? [] : [prometheusPort]);
    const url = new URL(postgres.url);
    if (how.passwordInEnvironment === true) url.password = "";
    const demo = startDemo(
      [
        ...FLEET,
        "--postgres",
        url.toString(),
        "--kill-at",
        KILL_AT,
        "--port",
        String(port),
        "--report",
        report,
        ...(prometheusPort === undefined
          ? []
          : ["--prometheus", "--prometheus-port", String(prometheusPort)]),
        ...extra,
      ],
      how.passwordInEnvironment === true ? { env: { PGPASSWORD: password } } : {},
    );
    if (whileHeld !== undefined) {
      await printed(demo, "Ctrl-C to exit", 200_000);
      const prometheusUrl = /Prometheus: (http:\/\/127\.0\.0\.1:\d+)/.exec(demo.stdout())?.[1];
      expect(prometheusUrl, demo.stdout()).toBeDefined();
      try {
        await whileHeld(prometheusUrl as string, JSON.parse(readFileSync(report, "utf8")));
      } finally {
        process.kill(demo.pid, "SIGINT");
      }
    }
    const { code } = await demo.exited;
    const text = readFileSync(report, "utf8");
    return {
      code,
      stdout: demo.stdout(),
      stderr: demo.stderr(),
      text,
      report: JSON.parse(text) as WorkersReport,
    };
  }

  /** Every stored thread of the run, read back from PostgreSQL. */
  async function storedThreads(report: WorkersReport): Promise<Map<string, BaseMessage[]>> {
    const saver = new PostgresSaver(checkpointerPool(postgres.url));
    try {
      const threads = new Map<string, BaseMessage[]>();
      for (const { id } of report.threads) threads.set(id, await storedMessages(saver, id));
      return threads;
    } finally {
      await saver.end();
    }
  }

  it("with persist, every worker's counters are exact; the killed one's lost increments are measured, and the sums agree", async () => {
    let prometheusLost: number | undefined;
    const { code, stdout, stderr, text, report } = await runFleet([], "persist", {
      whileHeld: async (prometheusUrl, held) => {
        // Prometheus scraped every worker: the killed one is down, the others up, and the live
        // workers' counters sum to what the workers that lived counted.
        const killedWorker = held.workers.findIndex((worker) => worker.killedAt !== undefined);
        const victim = `127.0.0.1:${basePortOf(held) + killedWorker}`;
        const up = await eventually(
          () => queryByInstance(prometheusUrl, `up{job="${SCRAPE_JOB}"}`),
          (found) =>
            found.get(victim) === 0 && [...found.values()].filter((v) => v === 1).length === 3,
        );
        expect(up.get(victim), JSON.stringify([...up])).toBe(0);
        expect(
          [...up.values()].filter((value) => value === 1),
          JSON.stringify([...up]),
        ).toHaveLength(3);
        const survivors = held.workers
          .filter((worker) => worker.killedAt === undefined)
          .reduce((sum, worker) => sum + worker.counted.toolCalls, 0);
        // Prometheus scrapes every second: its next scrape sees the workers' final counts.
        const live = await eventually(
          async () => (await queryByInstance(prometheusUrl, `sum(${series.toolCalls})`)).get(""),
          (sum) => sum === survivors,
        );
        expect(live).toBe(survivors);
        // The killed worker was scraped before it died, so what Prometheus lost of it is what it
        // did after its last scrape: no more than what it did.
        const seen = await queryByInstance(
          prometheusUrl,
          `max_over_time(up{job="${SCRAPE_JOB}"}[1h])`,
        );
        expect(seen.get(victim)).toBe(1);
        const kept = await queryByInstance(
          prometheusUrl,
          `sum by (instance) (last_over_time(${series.toolCalls}[1h]))`,
        );
        const made = held.workers[killedWorker]?.truth.toolCalls ?? 0;
        prometheusLost = made - (kept.get(victim) ?? 0);
        expect(prometheusLost).toBeGreaterThanOrEqual(0);
        expect(prometheusLost).toBeLessThanOrEqual(made);
      },
    });
    // What the pull model lost: the killed worker's increments after Prometheus's last scrape.
    expect(stdout).toContain(`tool calls it made: ${prometheusLost} lost with the process`);
    expect(code, `${stdout}\n${stderr}`).toBe(0);
    expect(report.complete).toBe(true);
    expect(report.problems).toEqual([]);

    // Three workers, one killed and a fourth in its place.
    const killed = report.workers.filter((worker) => worker.killedAt !== undefined);
    expect(killed).toHaveLength(1);
    expect(report.workers.map((worker) => worker.name)).toEqual([
      "worker-1",
      "worker-2",
      "worker-3",
      "worker-4",
    ]);
    // The status display prints them, on standard error.
    expect(stderr).toMatch(/Killed worker-\d \(PID \d+\) with SIGKILL/);
    expect(stderr).toContain("Started worker-4");

    // Every run of the scripts was made, and threads moved between workers from turn to turn.
    expect(report.truth.runs).toBe(12 * 6);
    const moved = report.threads.filter(
      (thread) => new Set(thread.turns.map((turn) => turn.worker)).size > 1,
    );
    expect(moved.length).toBeGreaterThan(6);

    // The killed worker's turns in flight went on elsewhere: each thread whose turn it was
    // running had its next turn, on another worker.
    const victim = killed[0]?.name;
    expect(report.killedTurns.counted + report.killedTurns.redelivered).toBeGreaterThan(0);
    for (const thread of report.threads) {
      const at = thread.turns.findIndex((turn) => turn.answers === undefined);
      if (at === -1) continue;
      expect(thread.turns[at]?.worker, thread.id).toBe(victim);
    }
    // A turn handed out again ran whole on another worker: its thread has all six turns too.
    for (const thread of report.threads) expect(thread.turns, thread.id).toHaveLength(6);

    // The sums over the workers' scrapes, plus what the killed worker's last scrape missed, are
    // the ground truth exactly.
    expect(report.figures.toolCalls + report.lost.toolCalls).toBe(totalOf(report.truth.toolCalls));
    expect(report.figures.dangling + report.lost.dangling).toBe(totalOf(report.truth.dangling));
    expect(report.overcount).toEqual({ dangling: 0, repairs: 0, threadDangling: 0 });
    for (const worker of report.workers.filter((w) => w.killedAt === undefined)) {
      expect(worker.counted.toolCalls, worker.name).toBe(worker.truth.toolCalls);
      expect(worker.counted.dangling, worker.name).toBe(worker.truth.dangling);
      expect(worker.counted.repairs, worker.name).toBe(worker.truth.dangling);
    }
    expect(stdout).toContain("Every worker's counters agree exactly with what it did");

    // Read back: nothing lost, and valid for every provider once repaired.
    expect(report.stored.problems).toEqual([]);
    expect(report.stored.threads).toBe(12);
    const threads = await storedThreads(report);
    for (const [id, messages] of threads) {
      const humans = messages.filter((message) => message.type === "human").map((m) => m.id);
      expect(humans, id).toEqual(
        report.threads.find((thread) => thread.id === id)?.turns.map((turn) => turn.human),
      );
      expect(providerViolations(repairToolCalls(messages).messages), id).toEqual(ACCEPTED_BY_ALL);
    }

    // The password is nowhere: not in the output, not in the report.
    for (const output of [stdout, stderr, text]) expect(output).not.toContain(password);
    expect(stdout).toContain(":***@127.0.0.1");
  }, 240_000);

  it("without persist, the tool calls are still exact and the overcount is measured and shown", async () => {
    // The password in PGPASSWORD, as the docs advise, not on the command line.
    const { code, stdout, stderr, text, report } = await runFleet(["--no-persist"], "no-persist", {
      passwordInEnvironment: true,
    });
    expect(code, `${stdout}\n${stderr}`).toBe(0);
    expect(report.problems).toEqual([]);
    // Each later model call of a thread repairs its dangling calls again: many more repairs than
    // dangling calls, and the summary says how many.
    expect(report.overcount.repairs).toBeGreaterThan(totalOf(report.truth.dangling));
    expect(stdout).toMatch(
      new RegExp(`${report.overcount.repairs} repairs beyond one per dangling call`),
    );
    expect(stdout).toMatch(/Without persist, over \d+ dangling calls: \d+ counted more than once/);
    // The repairs are not written back: the repaired calls still dangle in the store, and the
    // histories are valid for the providers only as the middleware repairs them.
    expect(report.stored.unrepaired).toBeGreaterThan(0);
    expect(report.stored.problems).toEqual([]);
    const threads = await storedThreads(report);
    for (const [id, messages] of threads) {
      expect(providerViolations(repairToolCalls(messages).messages), id).toEqual(ACCEPTED_BY_ALL);
    }
    for (const output of [stdout, stderr, text]) expect(output).not.toContain(password);
  }, 240_000);

  it("a wrong password exits 1 with a message naming the server, its password blotted out", async () => {
    const wrong = new URL(postgres.url);
    wrong.password = "not-the-Password-42";
    const { code, stdout, stderr } = await runDemo([
      "--workers",
      "2",
      "--postgres",
      wrong.toString(),
      "--port",
      String(await freePorts(3)),
    ]);
    expect(code).toBe(1);
    expect(stderr).toContain(
      `cannot set up the checkpointer at postgres://postgres:***@${wrong.host}`,
    );
    expect(stderr).toContain("password authentication failed");
    for (const output of [stdout, stderr]) {
      expect(output).not.toContain("not-the-Password-42");
      expect(output).not.toContain(password);
    }
  }, 60_000);

  it("Ctrl-C at the terminal (SIGINT to the whole process group) stops the fleet, prints the summary and leaves nothing running", async () => {
    const demo = startDemo(
      [
        "--workers",
        "3",
        "--threads",
        "12",
        "--duration",
        "120",
        "--port",
        String(await freePorts(4)),
      ],
      { ownGroup: true },
    );
    await printed(demo, "Middleware: persist on", 60_000);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    process.kill(-demo.pid, "SIGINT");
    const { code } = await demo.exited;
    expect(code, `${demo.stdout()}\n${demo.stderr()}`).toBe(0);
    expect(demo.stdout()).toContain("Stopped early: runs in flight were cancelled");
    const pids = [...demo.stdout().matchAll(/PID (\d+)/g)].map((match) => Number(match[1]));
    expect(pids.length).toBeGreaterThanOrEqual(4);
    for (const pid of pids) expect(() => process.kill(pid, 0), `PID ${pid}`).toThrow();
  }, 120_000);

  it("without --postgres, starts a throwaway cluster for the run and stops it by its PID after", async () => {
    const port = await freePorts(2);
    const demo = startDemo([
      "--workers",
      "2",
      "--threads",
      "4",
      "--turns",
      "2",
      "--no-kill",
      "--port",
      String(port),
    ]);
    const { code } = await demo.exited;
    expect(code, `${demo.stdout()}\n${demo.stderr()}`).toBe(0);
    const started =
      /PostgreSQL: postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:\d+\/postgres, a throwaway local cluster \(PID (\d+)\)/.exec(
        demo.stdout(),
      );
    expect(started, demo.stdout()).not.toBeNull();
    const pid = Number(started?.[1]);
    expect(() => process.kill(pid, 0)).toThrow();
    expect(demo.stdout()).toContain("Every worker's counters agree exactly with what it did");
  }, 120_000);
});
