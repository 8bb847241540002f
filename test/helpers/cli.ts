/**
 * The audit command run in-process, as the tests drive it: its arguments, standard input, and
 * whether each stream is a terminal; what it printed and its exit code come back.
 */
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { fileURLToPath } from "node:url";
import { runCli } from "../../src/cli/run.js";

/** What one run of the command printed, and its exit code. */
export interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Where a stream's output goes, and whether the command sees a terminal there. */
export interface AuditStreams {
  /** Standard input; an empty stream unless given. */
  readonly stdin?: NodeJS.ReadableStream;
  /** Whether standard error is a terminal (the progress bar draws there). */
  readonly tty?: boolean;
  /** Whether standard output is a terminal. */
  readonly stdoutTty?: boolean;
}

/** Runs `tool-call-resilience <args>` in this process, with its output captured. */
export async function audit(args: string[], streams: AuditStreams = {}): Promise<Run> {
  let stdout = "";
  let stderr = "";
  const code = await runCli(args, {
    stdin: streams.stdin ?? new PassThrough(),
    stdout: {
      write: (text: string) => {
        stdout += text;
      },
      isTTY: streams.stdoutTty ?? false,
    },
    stderr: {
      write: (text: string) => {
        stderr += text;
        return true;
      },
      isTTY: streams.tty ?? false,
    },
  });
  return { code, stdout, stderr };
}

/** The path of a stored-thread fixture of the audit tests (`test/fixtures/audit/`). */
export function auditFixture(name: string): string {
  return join(fileURLToPath(new URL("../fixtures/audit/", import.meta.url)), name);
}
