/**
 * A server binary run for the demo and the tests (Prometheus, Alertmanager): started on 127.0.0.1
 * in a temporary folder of its own, with its output in a log there, ready once it answers
 * `/-/ready`, and stopped by its PID, folder removed. Whatever way this process ends, the server
 * does not outlive it.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** What to start a local server with. */
export interface LocalServerOptions {
  /** What the server is, for error messages and its folder's name: `prometheus`. */
  readonly name: string;
  /** The binary. */
  readonly binary: string;
  /** Port on 127.0.0.1 it listens on. */
  readonly port: number;
  /** Its command-line arguments, given its folder (to write its configuration and data in). */
  readonly args: (folder: string) => readonly string[];
  /**
   * The error to throw, given what it printed, when it could not take its port; by default the
   * generic one, with its log.
   */
  readonly portTaken?: (log: string) => Error | undefined;
  /** How long to wait for it to be ready, in milliseconds. Default: 30 s. */
  readonly readyTimeoutMs?: number;
  /** Gives up waiting (and stops the server) when this aborts. */
  readonly signal?: AbortSignal;
}

/** A running local server. */
export interface LocalServer {
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
 * Starts a server and waits until it answers `/-/ready`.
 *
 * @throws {Error} when it exits or is not ready in time (its log is in the message), when
 *   `portTaken` recognizes its log, or when `signal` aborts
 * @example
 * const server = await startLocalServer({ name: "alertmanager", binary, port: 9093,
 *   args: (folder) => [`--storage.path=${folder}/data`] });
 * await server.stop();
 */
export async function startLocalServer(options: LocalServerOptions): Promise<LocalServer> {
  const folder = mkdtempSync(join(tmpdir(), `tool-call-resilience-${options.name}-`));
  const logFile = join(folder, `${options.name}.log`);
  const args = options.args(folder);
  const output = openSync(logFile, "a");
  const child = spawn(options.binary, [...args], { stdio: ["ignore", output, output] });
  // The child has its own copy of the descriptor.
  closeSync(output);
  const log = () => {
    try {
      return readFileSync(logFile, "utf8");
    } catch {
      return "";
    }
  };
  // A last resort: whatever way this process ends, the server does not outlive it.
  const killOnExit = () => {
    if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
      process.kill(child.pid, "SIGTERM");
    }
    try {
      rmSync(folder, { recursive: true, force: true });
    } catch {
      // The server may still be writing there as it shuts down; the folder is a temporary one.
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
    () => new Error(`${options.name} exited with code ${child.exitCode ?? child.signalCode}`),
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
      const taken = /address already in use/.test(log()) ? options.portTaken?.(log()) : undefined;
      if (taken !== undefined) throw taken;
      if (child.exitCode !== null || child.signalCode !== null || Date.now() > deadline) {
        throw new Error(`${options.name}: ${failure.message}\n${log()}`);
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
