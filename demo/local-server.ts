/**
 * A server binary run for the demo and the tests (Prometheus, Alertmanager, PostgreSQL): started
 * on 127.0.0.1 in a temporary folder of its own, with its output in a log there, ready once it
 * answers `/-/ready` (or another check of its own), and stopped by its PID, folder removed.
 * Whatever way this process ends, short of SIGKILL (which no process can act on), the server does
 * not outlive it. It runs in a process group of its own, so a Ctrl-C at the terminal reaches this
 * process alone, which stops the server in its own time.
 */
import { type ChildProcess, spawn } from "node:child_process";
import {
  chownSync,
  closeSync,
  lchownSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
} from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A user (and group) to run a server as, by id. */
export interface SystemUser {
  readonly uid: number;
  readonly gid: number;
}

/** What to start a local server with. */
export interface LocalServerOptions {
  /** What the server is, for error messages and its folder's name: `prometheus`. */
  readonly name: string;
  /** The binary. */
  readonly binary: string;
  /** Port on 127.0.0.1 it listens on. */
  readonly port: number;
  /**
   * Prepares its folder before it starts, such as initializing a database there. When it fails,
   * the folder is removed and its error thrown. Default: nothing to prepare.
   */
  readonly prepare?: (folder: string) => Promise<void>;
  /** Its command-line arguments, given its folder (to write its configuration and data in). */
  readonly args: (folder: string) => readonly string[];
  /** Its URL. Default: `http://127.0.0.1:<port>`. */
  readonly url?: string;
  /**
   * Resolves once it is ready, rejects with the reason it is not (yet); tried every 200 ms.
   * Default: a 2xx answer to `GET <url>/-/ready` within a second.
   */
  readonly ready?: () => Promise<void>;
  /** The signal that stops it (then `SIGKILL` after 10 s). Default: `SIGTERM`. */
  readonly stopSignal?: NodeJS.Signals;
  /**
   * The user to run it as, in its folder, which is handed over to that user (with whatever
   * `prepare` and `args` left in it) before it starts; this process must be root to. Default:
   * this process's user.
   */
  readonly user?: SystemUser;
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
 * A TCP port on 127.0.0.1 that was free a moment ago, and none of `besides` (ports another server
 * of the caller's is about to listen on).
 */
export async function freePort(besides: readonly number[] = []): Promise<number> {
  for (;;) {
    const port = await anyFreePort();
    if (!besides.includes(port)) return port;
  }
}

function anyFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen({ host: "127.0.0.1", port: 0 }, () => {
      const address = server.address();
      server.close(() => {
        if (address !== null && typeof address === "object") resolve(address.port);
        else reject(new Error("no port was assigned"));
      });
    });
  });
}

/** Hands a folder and everything in it (links themselves, not their targets) over to a user. */
export function chownTree(folder: string, user: SystemUser): void {
  chownSync(folder, user.uid, user.gid);
  for (const entry of readdirSync(folder, { recursive: true, encoding: "utf8" })) {
    lchownSync(join(folder, entry), user.uid, user.gid);
  }
}

/**
 * Starts a server and waits until it is ready (by default, until it answers `/-/ready`).
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
  let args: readonly string[];
  try {
    await options.prepare?.(folder);
    args = options.args(folder);
    if (options.user !== undefined) chownTree(folder, options.user);
  } catch (error) {
    rmSync(folder, { recursive: true, force: true });
    throw error;
  }
  const output = openSync(logFile, "a");
  const stopSignal = options.stopSignal ?? "SIGTERM";
  const child = spawn(options.binary, [...args], {
    stdio: ["ignore", output, output],
    // Its own process group: a Ctrl-C meant for this process must not stop it under our feet.
    detached: true,
    // In its folder, since where this process is may be closed to that user.
    ...(options.user === undefined
      ? {}
      : { uid: options.user.uid, gid: options.user.gid, cwd: folder }),
  });
  // The child has its own copy of the descriptor.
  closeSync(output);
  const log = () => {
    try {
      return readFileSync(logFile, "utf8");
    } catch {
      return "";
    }
  };
  // A last resort: whatever way this process ends (but SIGKILL), the server does not outlive it.
  const killOnExit = () => {
    if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
      process.kill(child.pid, stopSignal);
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
        process.kill(child.pid, stopSignal);
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
  const url = options.url ?? `http://127.0.0.1:${options.port}`;
  const ready =
    options.ready ??
    (async () => {
      const response = await fetch(`${url}/-/ready`, { signal: AbortSignal.timeout(1_000) });
      if (!response.ok) throw new Error(`not ready: ${response.status}`);
    });
  const deadline = Date.now() + (options.readyTimeoutMs ?? 30_000);
  try {
    for (;;) {
      options.signal?.throwIfAborted();
      const failure = await Promise.race([
        spawnError,
        exitError,
        ready().then(
          () => undefined,
          (error: unknown) => error as Error,
        ),
      ]);
      if (failure === undefined) break;
      const taken = /address already in use/i.test(log()) ? options.portTaken?.(log()) : undefined;
      if (taken !== undefined) throw taken;
      if (child.exitCode !== null || child.signalCode !== null || Date.now() >= deadline) {
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
