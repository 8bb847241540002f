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
export class PrometheusPortTakenError extends Error {
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
