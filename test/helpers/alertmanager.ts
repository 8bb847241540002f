/**
 * A real Alertmanager for the tests: Debian's `prometheus-alertmanager` (or an upstream
 * `alertmanager`) on 127.0.0.1 with a given configuration, in a temporary folder, without
 * clustering, stopped by its PID.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { stringify } from "yaml";
import { type LocalServer, startLocalServer } from "../../demo/local-server.js";
import { findOnPath } from "../../demo/prometheus-server.js";

/** The Alertmanager binary on the `PATH`, under Debian's name or upstream's, or `undefined`. */
export function findAlertmanager(): string | undefined {
  return findOnPath("prometheus-alertmanager") ?? findOnPath("alertmanager");
}

/** A running Alertmanager. */
export interface AlertmanagerServer extends LocalServer {
  /** `host:port`, for Prometheus's `alerting` configuration. */
  readonly address: string;
}

/**
 * Starts Alertmanager with `config` (an object written as its YAML configuration) and waits until
 * it answers `/-/ready`.
 */
export async function startAlertmanager(options: {
  readonly binary: string;
  readonly port: number;
  readonly config: unknown;
}): Promise<AlertmanagerServer> {
  const server = await startLocalServer({
    name: "alertmanager",
    binary: options.binary,
    port: options.port,
    args: (folder) => {
      const configFile = join(folder, "alertmanager.yml");
      writeFileSync(configFile, stringify(options.config));
      return [
        `--config.file=${configFile}`,
        `--storage.path=${join(folder, "data")}`,
        `--web.listen-address=127.0.0.1:${options.port}`,
        // No gossip: a single, local instance.
        "--cluster.listen-address=",
        "--log.level=warn",
      ];
    },
  });
  return { ...server, address: `127.0.0.1:${options.port}` };
}
