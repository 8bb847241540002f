/**
 * A real Prometheus server for the demo (`--prometheus`) and the end-to-end test: Debian's
 * `prometheus` binary, started on 127.0.0.1 with a generated configuration (a 1 s scrape and
 * evaluation interval, the shipped recording and alert rules) in a temporary folder, and stopped
 * by its PID.
 */
import { type ChildProcess, spawn } from "node:child_process";
import {
  accessSync,
  closeSync,
  constants,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";
import { stringify } from "yaml";
import { bundleConfig } from "../dashboards/generator/config.js";

/** The shipped rule files, recording rules first. */
export const SHIPPED_RULE_FILES: readonly string[] = Object.freeze(
  ["recording-rules.yml", "alerts.yml"].map((file) =>
    fileURLToPath(new URL(`../dashboards/prometheus/${file}`, import.meta.url)),
  ),
);

/** The job name the shipped alert rules expect for the scraped agents. */
export const SCRAPE_JOB = bundleConfig.job;

/** Where a program of this name is on the `PATH`, or `undefined`. */
export function findOnPath(program: string): string | undefined {
  for (const folder of (process.env.PATH ?? "").split(delimiter)) {
    if (folder === "") continue;
    const candidate = join(folder, program);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not in this folder.
    }
  }
  return undefined;
}

/** What to start Prometheus with. */
export interface PrometheusServerOptions {
  /** The `prometheus` binary. */
  readonly binary: string;
  /** Port on 127.0.0.1. */
  readonly port: number;
  /** `host:port` targets to scrape at `/metrics`. */
  readonly targets: readonly string[];
  /** `job_name` of the scrape. Default: {@link SCRAPE_JOB}. */
  readonly job?: string;
  /**
   * Keep the `job` and `instance` labels the targets expose, as for a Collector's Prometheus
   * exporter. Default: `false`.
   */
  readonly honorLabels?: boolean;
  /** Rule files to load. Default: the shipped ones. */
  readonly ruleFiles?: readonly string[];
  /** Scrape and evaluation interval. Default: `1s`. */
  readonly interval?: string;
  /** How long to wait for the server to be ready, in milliseconds. Default: 30 s. */
  readonly readyTimeoutMs?: number;
  /** Gives up waiting (and stops the server) when this aborts. */
  readonly signal?: AbortSignal;
}

/** The port asked for is taken, by another Prometheus or anything else. */
export class PrometheusPortTakenError extends Error {
  override readonly name = "PrometheusPortTakenError";
  constructor(readonly port: number) {
    super(`port ${port} on 127.0.0.1 is already in use`);
  }
}

/** A running Prometheus server. */
export interface PrometheusServer {
  /** Its base URL, such as `http://127.0.0.1:9090`. */
  readonly url: string;
  readonly pid: number;
  /** What it printed so far (its log). */
  log(): string;
  /** Stops it by its PID and removes its folder. Safe to call twice. */
  stop(): Promise<void>;
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once("exit", () => resolve()));
}

/**
 * Starts Prometheus and waits until it answers `/-/ready`.
 *
 * @throws {PrometheusPortTakenError} when the port is taken
 * @throws {Error} when it exits or is not ready in time (its log is in the message), or when
 *   `signal` aborts
 * @example
 * const prometheus = await startPrometheus({ binary: "prometheus", port: 9090,
 *   targets: ["127.0.0.1:9464"] });
 * console.log(prometheus.url);
 * await prometheus.stop();
 */
export async function startPrometheus(options: PrometheusServerOptions): Promise<PrometheusServer> {
  const interval = options.interval ?? "1s";
  const folder = mkdtempSync(join(tmpdir(), "tool-call-resilience-prometheus-"));
  const configFile = join(folder, "prometheus.yml");
  const logFile = join(folder, "prometheus.log");
  writeFileSync(
    configFile,
    stringify({
      global: { scrape_interval: interval, evaluation_interval: interval },
      rule_files: [...(options.ruleFiles ?? SHIPPED_RULE_FILES)],
      scrape_configs: [
        {
          job_name: options.job ?? SCRAPE_JOB,
          scrape_interval: interval,
          honor_labels: options.honorLabels ?? false,
          static_configs: [{ targets: [...options.targets] }],
        },
      ],
    }),
  );
  const output = openSync(logFile, "a");
  const child = spawn(
    options.binary,
    [
      `--config.file=${configFile}`,
      `--storage.tsdb.path=${join(folder, "data")}`,
      `--web.listen-address=127.0.0.1:${options.port}`,
      "--log.level=warn",
    ],
    { stdio: ["ignore", output, output] },
  );
  // The child has its own copy of the descriptor.
  closeSync(output);
  const log = () => {
    try {
      return readFileSync(logFile, "utf8");
    } catch {
      return "";
    }
  };
  // A last resort: whatever way this process ends, Prometheus does not outlive it.
  const killOnExit = () => {
    if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
      process.kill(child.pid, "SIGTERM");
    }
    try {
      rmSync(folder, { recursive: true, force: true });
    } catch {
      // Prometheus may still be writing there as it shuts down; the folder is a temporary one.
    }
  };
  process.once("exit", killOnExit);
  const exit = exited(child);
  let stopped: Promise<void> | undefined;
  const stop = () => {
    stopped ??= (async () => {
      if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
        process.kill(child.pid, "SIGTERM");
        const killer = setTimeout(() => {
          if (child.pid !== undefined && child.exitCode === null) {
            process.kill(child.pid, "SIGKILL");
          }
        }, 10_000);
        await exit;
        clearTimeout(killer);
      }
      process.removeListener("exit", killOnExit);
      rmSync(folder, { recursive: true, force: true });
    })();
    return stopped;
  };
  const spawnError = new Promise<Error>((resolve) => child.once("error", resolve));
  const exitError = exit.then(
    () => new Error(`prometheus exited with code ${child.exitCode ?? child.signalCode}`),
  );
  const url = `http://127.0.0.1:${options.port}`;
  const deadline = Date.now() + (options.readyTimeoutMs ?? 30_000);
  try {
    for (;;) {
      options.signal?.throwIfAborted();
      const failure = await Promise.race([
        spawnError,
        exitError,
        fetch(`${url}/-/ready`, { signal: AbortSignal.timeout(1_000) }).then(
          (response) => (response.ok ? undefined : new Error(`not ready: ${response.status}`)),
          (error: unknown) => error as Error,
        ),
      ]);
      if (failure === undefined) break;
      if (/address already in use/.test(log())) {
        throw new PrometheusPortTakenError(options.port);
      }
      if (child.exitCode !== null || child.signalCode !== null || Date.now() > deadline) {
        throw new Error(`${failure.message}\n${log()}`);
      }
      if (/ENOENT/.test(failure.message)) throw failure;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return { url, pid: child.pid as number, log, stop };
}
