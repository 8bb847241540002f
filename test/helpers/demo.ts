/**
 * The demo as a user runs it (`npm start`), in a child process: `node --import tsx demo/main.ts`,
 * one process whose PID is the demo's. Under the `tsx` command the demo would run in a
 * grandchild, and tsx relays a SIGINT by sending it again (and then SIGKILL, exit 130) when the
 * demo does not acknowledge it within 30 ms, which a busy fleet often does not: Ctrl-C would then
 * end the demo without its summary. {@link stopDemos} kills, by PID, what a test left running.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../..", import.meta.url));

/** A running demo. */
export interface Demo {
  readonly child: ChildProcess;
  readonly pid: number;
  stdout(): string;
  stderr(): string;
  /** Resolves once the process exited and its output is read to the end. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const running = new Set<Demo>();

/** How to start the demo besides its arguments. */
export interface DemoStart {
  /** More environment variables, such as `PGPASSWORD`. */
  readonly env?: Readonly<Record<string, string>>;
  /**
   * In a process group of its own, as a terminal runs a command: `process.kill(-demo.pid, ...)`
   * then signals the demo and every process it started in its group, as Ctrl-C does.
   */
  readonly ownGroup?: boolean;
}

/** Starts the demo with these arguments. */
export function startDemo(args: readonly string[], start: DemoStart = {}): Demo {
  const env = { ...process.env, ...start.env };
  delete env.OTEL_SDK_DISABLED;
  const child = spawn(process.execPath, ["--import", "tsx", "demo/main.ts", ...args], {
    cwd: root,
    env,
    stdio: ["ignore", "pipe", "pipe"],
    detached: start.ownGroup === true,
  });
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>(
    (resolve, reject) => {
      child.once("error", reject);
      child.once("close", (code, signal) => resolve({ code, signal }));
    },
  );
  if (child.pid === undefined) throw new Error("the demo did not start");
  const demo = { child, pid: child.pid, stdout: () => stdout, stderr: () => stderr, exited };
  running.add(demo);
  void exited.finally(() => running.delete(demo)).catch(() => undefined);
  return demo;
}

/** Runs the demo to its end. */
export async function runDemo(args: readonly string[], start: DemoStart = {}) {
  const demo = startDemo(args, start);
  const { code } = await demo.exited;
  return { code, stdout: demo.stdout(), stderr: demo.stderr() };
}

/** Waits until the demo printed `text` on stdout; fails early if it exits first. */
export async function printed(demo: Demo, text: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let done = false;
  void demo.exited.then(() => {
    done = true;
  });
  while (!demo.stdout().includes(text)) {
    if (done || Date.now() > deadline) {
      throw new Error(
        `the demo did not print ${JSON.stringify(text)}\nstdout:\n${demo.stdout()}\nstderr:\n${demo.stderr()}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * Stops, by PID, every demo a test left running: Ctrl-C first, so that it stops the servers it
 * started (a demo killed outright leaves them running), then SIGKILL after 20 s.
 */
export async function stopDemos(): Promise<void> {
  for (const demo of running) {
    if (demo.child.exitCode === null && demo.child.signalCode === null) {
      process.kill(demo.pid, "SIGINT");
      const killer = setTimeout(() => {
        if (demo.child.exitCode === null && demo.child.signalCode === null) {
          process.kill(demo.pid, "SIGKILL");
        }
      }, 20_000);
      await demo.exited.catch(() => undefined);
      clearTimeout(killer);
    }
    await demo.exited.catch(() => undefined);
  }
}
