/**
 * A real Prometheus server for the demo (`--prometheus`) and the end-to-end test: Debian's
 * `prometheus` binary, started on 127.0.0.1 with a generated configuration (a 1 s scrape and
 * evaluation interval, the shipped recording and alert rules) in a temporary folder, and stopped
 * by its PID.
 */
import { accessSync, constants, writeFileSync } from "node:fs";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";
import { stringify } from "yaml";
import { bundleConfig } from "../dashboards/generator/config.js";
import { type LocalServer, startLocalServer } from "./local-server.js";
import { type DemoOptions, DemoOptionsError } from "./options.js";

/** The shipped rule files, recording rules first. */
const SHIPPED_RULE_FILES: readonly string[] = Object.freeze(
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
  /**
   * Labels every scraped series gets, as service discovery gives a target (`cluster`,
   * `namespace`). Default: none.
   */
  readonly targetLabels?: Readonly<Record<string, string>>;
  /** Rule files to load. Default: the shipped ones. */
  readonly ruleFiles?: readonly string[];
  /** Scrape and evaluation interval. Default: `1s`. */
  readonly interval?: string;
  /** `host:port` of Alertmanagers to send the alerts to (API v2). Default: none. */
  readonly alertmanagers?: readonly string[];
  /** More command-line flags, such as `--rules.alert.resend-delay=1s`. Default: none. */
  readonly flags?: readonly string[];
  /** How long to wait for the server to be ready, in milliseconds. Default: 30 s. */
  readonly readyTimeoutMs?: number;
  /** Gives up waiting (and stops the server) when this aborts. */
  readonly signal?: AbortSignal;
}

/** The port asked for is taken, by another Prometheus or anything else. */
class PrometheusPortTakenError extends Error {
  override readonly name = "PrometheusPortTakenError";
  constructor(readonly port: number) {
    super(`port ${port} on 127.0.0.1 is already in use`);
  }
}

/** A running Prometheus server. */
export type PrometheusServer = LocalServer;

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
  return startLocalServer({
    name: "prometheus",
    binary: options.binary,
    port: options.port,
    args: (folder) => {
      const configFile = join(folder, "prometheus.yml");
      writeFileSync(
        configFile,
        stringify({
          global: { scrape_interval: interval, evaluation_interval: interval },
          rule_files: [...(options.ruleFiles ?? SHIPPED_RULE_FILES)],
          ...(options.alertmanagers === undefined || options.alertmanagers.length === 0
            ? {}
            : {
                alerting: {
                  alertmanagers: [
                    {
                      api_version: "v2",
                      static_configs: [{ targets: [...options.alertmanagers] }],
                    },
                  ],
                },
              }),
          scrape_configs: [
            {
              job_name: options.job ?? SCRAPE_JOB,
              scrape_interval: interval,
              honor_labels: options.honorLabels ?? false,
              static_configs: [
                {
                  targets: [...options.targets],
                  ...(options.targetLabels === undefined
                    ? {}
                    : { labels: { ...options.targetLabels } }),
                },
              ],
            },
          ],
        }),
      );
      return [
        `--config.file=${configFile}`,
        `--storage.tsdb.path=${join(folder, "data")}`,
        `--web.listen-address=127.0.0.1:${options.port}`,
        "--log.level=warn",
        ...(options.flags ?? []),
      ];
    },
    portTaken: () => new PrometheusPortTakenError(options.port),
    ...(options.readyTimeoutMs === undefined ? {} : { readyTimeoutMs: options.readyTimeoutMs }),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  });
}

/**
 * Starts Prometheus for the demo when `--prometheus` asks for it and the binary is on the `PATH`,
 * scraping these targets, and prints where it is; `undefined` otherwise.
 *
 * @throws {DemoOptionsError} when `--prometheus-port` is taken
 */
export async function startDemoPrometheus(
  settings: Pick<DemoOptions, "prometheus" | "prometheusPort">,
  targets: readonly string[],
  signal: AbortSignal,
): Promise<PrometheusServer | undefined> {
  if (!settings.prometheus) return undefined;
  const binary = findOnPath("prometheus");
  if (binary === undefined) {
    console.log("--prometheus: no prometheus binary on the PATH; going on without it.");
    return undefined;
  }
  let prometheus: PrometheusServer;
  try {
    prometheus = await startPrometheus({
      binary,
      port: settings.prometheusPort,
      targets,
      signal,
    });
  } catch (error) {
    if (!(error instanceof PrometheusPortTakenError)) throw error;
    // Installing Debian's package may have started its own Prometheus on 9090.
    throw new DemoOptionsError(
      `--prometheus-port ${error.port} is taken (by another Prometheus?); choose another one`,
    );
  }
  console.log(`Prometheus: ${prometheus.url} (PID ${prometheus.pid}), with the shipped rules`);
  console.log(`  alerts: ${prometheus.url}/alerts`);
  return prometheus;
}

/**
 * An instant query's samples by their `instance` label (`""` for a sample without one, such as a
 * plain `sum`).
 *
 * @throws {Error} when Prometheus does not answer with a vector
 */
export async function queryByInstance(
  prometheusUrl: string,
  query: string,
): Promise<Map<string, number>> {
  const response = await fetch(`${prometheusUrl}/api/v1/query?query=${encodeURIComponent(query)}`);
  const body = (await response.json()) as {
    status?: string;
    error?: string;
    data?: { result?: { metric: { instance?: string }; value: [number, string] }[] };
  };
  if (body.status !== "success") throw new Error(`${query}: ${body.error ?? response.status}`);
  return new Map(
    (body.data?.result ?? []).map((entry) => [entry.metric.instance ?? "", Number(entry.value[1])]),
  );
}

/**
 * Waits until Prometheus has scraped each of these targets successfully (`up` is 1), so that
 * what it shows of a process starts with the process.
 *
 * @throws {Error} after `timeoutMs`, naming the targets it has not scraped
 */
export async function scrapedAtLeastOnce(
  prometheusUrl: string,
  targets: readonly string[],
  timeoutMs = 30_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const up = await queryByInstance(prometheusUrl, `up{job="${SCRAPE_JOB}"}`);
    const missing = targets.filter((target) => up.get(target) !== 1);
    if (missing.length === 0) return;
    if (Date.now() > deadline) {
      throw new Error(`Prometheus has not scraped ${missing.join(", ")} in ${timeoutMs / 1000} s`);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
