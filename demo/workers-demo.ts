/**
 * `npm start -- --workers n`: the fleet of worker processes over one PostgreSQL checkpointer,
 * PostgreSQL started for it when no `--postgres` is given, Prometheus scraping every worker when
 * asked, one worker killed mid-run, and a summary that sums the workers' scrapes and checks them
 * against the scripts' ground truth, worker by worker, then reads every thread back.
 */
import { writeFileSync } from "node:fs";
import { series } from "../dashboards/generator/names.js";
import { redactConnectionString } from "../src/cli/connection-string.js";
import { type GroundTruth, totalOf } from "./fleet.js";
import { checkFleet, type FleetCheck, formatFleetCheck } from "./fleet-report.js";
import { type DemoOptions, interruptRateAt } from "./options.js";
import { firstTakenPort, portInUseMessage, suggestPort } from "./port-in-use.js";
import { PostgresNotFoundError, type PostgresServer, startPostgres } from "./postgres-server.js";
import { queryByInstance, scrapedAtLeastOnce, startDemoPrometheus } from "./prometheus-server.js";
import { formatRepairedExample } from "./repaired-example.js";
import { burstNotice, type StatusDisplay } from "./status.js";
import {
  checkStoredThreads,
  formatStoredThreads,
  type StoredThreadsCheck,
} from "./stored-threads.js";
import { type Figures, figuresFrom, formatSummary } from "./summary.js";
import {
  fleetExposition,
  startWorkerFleet,
  type ThreadRecord,
  type WorkerFleet,
  WorkerStartError,
} from "./workers.js";

const STATUS_EVERY_MS = 1_000;

/** What `--report` writes for a fleet of workers. */
export interface WorkersReport {
  /** The options, the connection string's password blotted out. */
  readonly options: DemoOptions;
  /** Whether the run went to its end (no Ctrl-C). */
  readonly complete: boolean;
  /** The summary's figures: the sums over the workers' last scrapes. */
  readonly figures: Figures;
  /** What the scripts say the fleet did. */
  readonly truth: GroundTruth;
  readonly workers: FleetCheck["workers"];
  readonly lost: FleetCheck["lost"];
  readonly overcount: FleetCheck["overcount"];
  readonly problems: FleetCheck["problems"];
  readonly killedTurns: WorkerFleet["killedTurns"];
  readonly stored: StoredThreadsCheck;
  /** Each thread and its turns: the human message, how many answers, and the worker. */
  readonly threads: readonly { readonly id: string; readonly turns: ThreadRecord["turns"] }[];
}

/** What the demo's entry point hands over. */
export interface WorkersDemo {
  readonly settings: DemoOptions & { readonly workers: number };
  readonly display: StatusDisplay;
  /** Ctrl-C: cancel the runs in flight. */
  readonly cancel: AbortSignal;
  /** The deadline or Ctrl-C: start no new run. */
  readonly noMoreRuns: AbortController;
}

/**
 * Runs the fleet of workers and prints its summary.
 *
 * @returns the exit code: 0 when the counters agree (with `persist`) and every stored thread is
 *   whole and valid, 1 otherwise, 2 for a setting that cannot work
 */
export async function runWorkersDemo(demo: WorkersDemo): Promise<number> {
  const { settings, display, cancel, noMoreRuns } = demo;
  let postgres: PostgresServer | undefined;
  let postgresUrl = settings.postgres;
  // A killed worker's replacement serves on the next port: Prometheus scrapes it from the start.
  const workerPorts = Array.from(
    { length: settings.workers + (settings.killAt === undefined ? 0 : 1) },
    (_, index) => settings.port + index,
  );
  const portTaken = async (taken: number) => {
    display.stop();
    const suggestion = await suggestPort(settings.port, workerPorts.length);
    process.stderr.write(
      `${portInUseMessage({
        taken,
        suggestion,
        workers: { count: settings.workers, ports: workerPorts },
      })}\n`,
    );
    return 1;
  };
  // Before PostgreSQL starts: a taken port is then told at once, not once the workers start.
  const taken = await firstTakenPort(workerPorts);
  if (taken !== undefined) return portTaken(taken);
  if (postgresUrl === undefined) {
    try {
      postgres = await startPostgres({ signal: cancel, besidesPorts: workerPorts });
    } catch (error) {
      display.stop();
      if (error instanceof PostgresNotFoundError) {
        process.stderr.write(`${error.message}\nOr give a server with --postgres <url>.\n`);
        return 1;
      }
      throw error;
    }
    postgresUrl = postgres.url;
    console.log(
      `PostgreSQL: ${redactConnectionString(postgres.url)}, a throwaway local cluster (PID ${postgres.pid}), stopped on exit`,
    );
  } else {
    console.log(`PostgreSQL: ${redactConnectionString(postgresUrl)}`);
  }
  let fleet: Awaited<ReturnType<typeof startWorkerFleet>> | undefined;
  // Seconds into the run, from when the workers are ready: the burst (--spike-at) is timed by it.
  let startedAt = Date.now();
  const elapsed = () => (Date.now() - startedAt) / 1000;
  let prometheus: Awaited<ReturnType<typeof startDemoPrometheus>> | undefined;
  try {
    try {
      fleet = await startWorkerFleet({
        workers: settings.workers,
        postgresUrl,
        persist: settings.persist,
        locale: settings.locale,
        basePort: settings.port,
        threads: settings.threads,
        concurrency: settings.concurrency,
        turns: settings.turns,
        seed: settings.seed,
        interruptRate: () => interruptRateAt(settings, elapsed()),
        otlp: settings.otlp,
        log: (line) => display.log(line),
      });
    } catch (error) {
      if (!(error instanceof WorkerStartError)) throw error;
      if (error.portInUse !== undefined) return await portTaken(error.portInUse);
      display.stop();
      process.stderr.write(`${error.message}\n`);
      return 1;
    }
    const workers = fleet.workers;
    for (const worker of workers) {
      console.log(`${worker.name}: PID ${worker.pid}, metrics on ${worker.metricsUrl}`);
    }
    console.log(
      `Middleware: persist ${settings.persist ? "on" : "off"}; threads of this run: ${fleet.runId}:thread-*`,
    );
    prometheus = await startDemoPrometheus(
      settings,
      workerPorts.map((port) => `127.0.0.1:${port}`),
      cancel,
    );

    if (prometheus !== undefined) {
      // Prometheus's view of each worker starts with the worker: what it later lost of one is
      // then the increments after its last scrape, not a worker it never saw.
      await scrapedAtLeastOnce(
        prometheus.url,
        workers.map((worker) => new URL(worker.metricsUrl).host),
      );
    }
    startedAt = Date.now();
    const totalRuns = settings.turns === undefined ? undefined : settings.turns * settings.threads;
    const progress = () =>
      Math.max(
        elapsed() / settings.duration,
        totalRuns === undefined ? 0 : (fleet?.truth.runs ?? 0) / totalRuns,
      );
    const noticeBurst = burstNotice(settings, display);
    const refresh = async () => {
      noticeBurst(elapsed());
      await fleet?.scrapeAll();
      const figures: Figures = figuresFrom(fleetExposition(workers));
      display.update(progress(), {
        threads: fleet?.truth.threads ?? 0,
        modelCalls: figures.modelCalls,
        dangling: figures.dangling,
        repairs: figures.repairs,
      });
    };
    // One refresh at a time, and the last one awaited: a scrape that started before the final
    // one must not land after it.
    let refreshing: Promise<void> = Promise.resolve();
    const ticker = setInterval(() => {
      refreshing = refreshing
        .then(refresh)
        .catch((error: unknown) => display.log(`status: ${(error as Error).message}`));
    }, STATUS_EVERY_MS);
    const deadline = setTimeout(() => noMoreRuns.abort(), settings.duration * 1000);
    let kill: Promise<unknown> = Promise.resolve();
    let killFailed: string | undefined;
    const killer =
      settings.killAt === undefined
        ? undefined
        : setTimeout(() => {
            kill = (fleet?.killOne() ?? Promise.resolve()).catch((error: unknown) => {
              killFailed = (error as Error).message;
              display.log(`killing a worker failed: ${killFailed}`);
            });
          }, settings.killAt * 1000);
    try {
      await fleet.run({ noMoreRuns: noMoreRuns.signal, cancel });
    } finally {
      clearInterval(ticker);
      clearTimeout(deadline);
      if (killer !== undefined) clearTimeout(killer);
      await kill;
      await refreshing;
    }
    await refresh();
    display.stop();

    const complete = !cancel.aborted;
    const figures = figuresFrom(fleetExposition(workers));
    console.log("");
    console.log(formatSummary(figures, undefined, settings.persist));
    if (!complete) {
      console.log("Stopped early: runs in flight were cancelled, so the scripts are not compared.");
      return 0;
    }
    const truth = fleet.truth;
    console.log(
      `Interrupted runs: ${Object.entries(truth.interruptions)
        .map(([kind, count]) => `${count} ${kind}`)
        .join(
          ", ",
        )}, out of ${truth.runs} runs on ${truth.threads} threads and ${workers.length} workers.`,
    );
    if (killFailed !== undefined) {
      console.log(`No worker was killed: ${killFailed}.`);
    } else if (
      workers.every((worker) => worker.killedAt === undefined) &&
      settings.killAt !== undefined
    ) {
      console.log(`No worker was killed: the fleet finished before ${settings.killAt} s.`);
    }
    const crashed = workers.filter((worker) => worker.exitedUnexpectedly);
    for (const worker of crashed) {
      console.log(`${worker.name} exited unexpectedly at ${worker.killedAt?.toFixed(1)} s.`);
    }
    const killedTurns = fleet.killedTurns;
    if (killedTurns.counted + killedTurns.redelivered > 0) {
      console.log(
        `Turns in flight on the killed worker: ${killedTurns.counted} read back from PostgreSQL and continued on other workers, ${killedTurns.redelivered} handed out again (their message never reached the store).`,
      );
    }
    console.log("");
    const check = checkFleet(
      workers.map((worker) => ({
        name: worker.name,
        pid: worker.pid,
        killedAt: worker.killedAt,
        truth: worker.truth,
        exposition: worker.lastScrape,
      })),
      settings.persist,
    );
    console.log(formatFleetCheck(check, truth));
    if (prometheus !== undefined) {
      // What the pull model lost: the killed worker's increments after Prometheus's last scrape.
      // (Within the hour: a process that died keeps the samples Prometheus took of it.)
      const scraped = await queryByInstance(
        prometheus.url,
        `sum by (instance) (last_over_time(${series.toolCalls}[1h]))`,
      );
      for (const worker of workers.filter((candidate) => candidate.killedAt !== undefined)) {
        const last = scraped.get(new URL(worker.metricsUrl).host);
        const made = totalOf(worker.truth.toolCalls);
        console.log(
          last === undefined
            ? `Prometheus never scraped ${worker.name}'s tool calls: all ${made} it made were lost with the process.`
            : `Prometheus's last scrape of ${worker.name} had ${last} of the ${made} tool calls it made: ${made - last} lost with the process.`,
        );
      }
    }
    const stored = await checkStoredThreads(
      fleet.threadRecords(),
      (thread) => fleet?.readThread(thread) ?? Promise.resolve([]),
      settings.persist,
    );
    console.log(formatStoredThreads(stored, settings.persist));
    console.log("");
    console.log(formatRepairedExample(fleet.repairedExample));
    if (settings.report !== undefined) {
      const report: WorkersReport = {
        options: {
          ...settings,
          postgres: settings.postgres && redactConnectionString(settings.postgres),
        },
        complete,
        figures,
        truth,
        workers: check.workers,
        lost: check.lost,
        overcount: check.overcount,
        problems: check.problems,
        killedTurns,
        stored,
        threads: fleet.threadRecords().map((record) => ({
          id: record.thread.id,
          turns: record.turns,
        })),
      };
      writeFileSync(settings.report, `${JSON.stringify(report, null, 2)}\n`);
    }
    const exitCode =
      check.problems.length > 0 || stored.problems.length > 0 || crashed.length > 0 ? 1 : 0;
    if (settings.hold && !cancel.aborted) {
      console.log(
        `\nServing the workers' metrics${prometheus ? ` to ${prometheus.url}` : ""}; Ctrl-C to exit.`,
      );
      await new Promise<void>((resolve) => cancel.addEventListener("abort", () => resolve()));
    }
    return exitCode;
  } finally {
    display.stop();
    await prometheus?.stop();
    await fleet?.stop();
    await postgres?.stop();
  }
}
