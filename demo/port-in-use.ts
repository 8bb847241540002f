/**
 * A metrics port already taken (`--port`, and with `--workers` the ports after it): recognising
 * the error, finding a taken port before anything starts, and the one line that tells the user
 * which port to choose instead.
 */
import { createServer } from "node:net";

/** The interface the demo's metrics endpoints listen on. */
const HOST = "127.0.0.1";

/** Ports tried after the taken one for a suggestion that is free. */
const CANDIDATES = 100;

/**
 * Whether an error, or an error it was caused by, is a port already in use (`EADDRINUSE`).
 *
 * @example
 * isPortInUse(new Error("cannot listen", { cause: Object.assign(new Error(), { code: "EADDRINUSE" }) })); // true
 */
export function isPortInUse(error: unknown): boolean {
  const seen = new Set<unknown>();
  for (let current = error; current instanceof Error && !seen.has(current); ) {
    seen.add(current);
    if ((current as NodeJS.ErrnoException).code === "EADDRINUSE") return true;
    current = current.cause;
  }
  return false;
}

/** Whether something could listen on this port of 127.0.0.1 a moment ago. */
export function isPortFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen({ host: HOST, port }, () => {
      server.close(() => resolve(true));
    });
  });
}

/** The first of these ports that is taken on 127.0.0.1, or `undefined` when all are free. */
export async function firstTakenPort(ports: readonly number[]): Promise<number | undefined> {
  for (const port of ports) if (!(await isPortFree(port))) return port;
  return undefined;
}

/**
 * A `--port` to suggest instead of `port`: the first one after it from which `span` ports in a row
 * are free (the workers take `--port` and the ports after it), or simply the next one when none
 * of the first candidates is.
 */
export async function suggestPort(port: number, span = 1): Promise<number> {
  for (let candidate = port + 1; candidate <= port + CANDIDATES; candidate++) {
    if (candidate + span - 1 > 65_535) break;
    const range = Array.from({ length: span }, (_, index) => candidate + index);
    if ((await firstTakenPort(range)) === undefined) return candidate;
  }
  return port + 1 <= 65_535 ? port + 1 : 1024;
}

/** What {@link portInUseMessage} tells. */
export interface PortInUse {
  /** The port found taken. */
  readonly taken: number;
  /** The `--port` to suggest instead. */
  readonly suggestion: number;
  /** With `--workers`: their number, and the ports they take from `--port` on. */
  readonly workers?: { readonly count: number; readonly ports: readonly number[] };
}

/**
 * The one line the demo exits with when a metrics port is taken.
 *
 * @example
 * portInUseMessage({ taken: 9464, suggestion: 9465 });
 * // "Port 9464 is in use; choose another with --port, e.g. npm start -- --port 9465"
 */
export function portInUseMessage(problem: PortInUse): string {
  const { taken, suggestion, workers } = problem;
  if (workers === undefined) {
    return `Port ${taken} is in use; choose another with --port, e.g. npm start -- --port ${suggestion}`;
  }
  const first = Math.min(...workers.ports);
  const last = Math.max(...workers.ports);
  return `Port ${taken} is in use (the workers' metrics take ports ${first} to ${last}); choose another with --port, e.g. npm start -- --workers ${workers.count} --port ${suggestion}`;
}
