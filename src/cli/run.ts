/**
 * `tool-call-resilience audit`: reads stored threads (from a file, standard input, or a LangGraph
 * PostgreSQL checkpointer), reports what is broken in each, and with `--fix` writes them repaired
 * (files only). This module runs it: the arguments decide which audit, and each thread read goes
 * through the same audit and report. The exit codes are in `exit-codes.ts`.
 */
import type { RepairOptions } from "../core/policy.js";
import { PACKAGE_VERSION } from "../version.js";
import { type AuditArguments, parseAuditArguments, USAGE, usageErrorText } from "./arguments.js";
import {
  auditThread,
  LangChainUnavailableError,
  PROBLEMS,
  type ProblemCounts,
  type ThreadAudit,
  type ThreadFormat,
} from "./audit-thread.js";
import { redactConnectionString, redactMessage } from "./connection-string.js";
import { EXIT_BAD_INPUT, EXIT_CLEAN } from "./exit-codes.js";
import { FixedOutput } from "./fixed-output.js";
import { bytesOf, layoutOfName, openInput, STANDARD_INPUT } from "./input.js";
import { jsonEvents } from "./json-stream.js";
import { type Checkpointer, CheckpointerError, openCheckpointer } from "./postgres.js";
import { createProgress } from "./progress.js";
import { type AuditError, nonZero, Report, type ReportStreams } from "./report.js";
import { type FixedThread, fixThread } from "./rewrite.js";
import { type InputThread, readThreads } from "./threads.js";

/** Where the command reads and writes; the process's own streams by default. */
export interface CliIo extends ReportStreams {
  readonly stdin: NodeJS.ReadableStream;
}

/**
 * Runs the command line and returns the exit code. Output goes to `io`, so it can be run and
 * tested in one process.
 *
 * @example
 * ```ts
 * process.exitCode = await runCli(process.argv.slice(2));
 * ```
 */
export async function runCli(
  args: readonly string[],
  io: CliIo = { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr },
): Promise<number> {
  let parsed: ReturnType<typeof parseAuditArguments>;
  try {
    parsed = parseAuditArguments(args);
  } catch (error) {
    io.stderr.write(usageErrorText(error));
    return EXIT_BAD_INPUT;
  }
  if (parsed === "help") {
    io.stdout.write(USAGE);
    return EXIT_CLEAN;
  }
  if (parsed === "version") {
    io.stdout.write(`${PACKAGE_VERSION}\n`);
    return EXIT_CLEAN;
  }
  return parsed.checkpointer === undefined
    ? audit(parsed, io)
    : auditCheckpointer(parsed, parsed.checkpointer, io);
}

/** A thread to audit, from a file or a checkpointer. */
interface ThreadToAudit {
  readonly index: number;
  readonly id: string | undefined;
  /** The line it starts on; `null` for a thread of a checkpointer. */
  readonly line: number | null;
  readonly messages: readonly unknown[];
}

/**
 * Thrown by the audit of a thread that ends the audit of them all, once `fail` was told why: what
 * it needs (`@langchain/core`) cannot be loaded, and no thread after it would fare better.
 */
class AuditEnded extends Error {
  override readonly name = "AuditEnded";
}

/**
 * The audit of one thread after another: each is audited (and with `--fix`, `fix` tells what is
 * written in its place), counted in the summary, and reported when it has problems. What it
 * returns is what `fix` made, or `undefined` when the thread could not be audited (`fail` was
 * told why) or nothing is written. A LangChain thread without `@langchain/core` installed throws
 * {@link AuditEnded}.
 */
function threadAuditor<Thread extends ThreadToAudit>(
  report: Report,
  options: AuditArguments,
  fail: (error: AuditError) => Promise<void>,
  /** The error message of a thread: its name, then `problem` (`cannot be audited: …`, say). */
  threadError: (thread: Thread, problem: string) => string,
  /** With `--fix`: what is written for a thread, from what its audit found. */
  fix?: (thread: Thread, found: ThreadAudit, options: RepairOptions) => Promise<FixedThread>,
  /** The format of the first thread that does not tell its own. */
  firstFallback?: ThreadFormat,
): (thread: Thread) => Promise<FixedThread | undefined> {
  const summary = report.summary;
  let lastFormat = firstFallback;
  const repairOptions: RepairOptions =
    options.locale === undefined ? {} : { locale: options.locale };
  return async (thread) => {
    let found: ThreadAudit;
    let fixed: FixedThread | undefined;
    try {
      found = await auditThread(thread.messages, repairOptions, lastFormat);
      if (options.fix) fixed = await fix?.(thread, found, repairOptions);
    } catch (error) {
      if (error instanceof LangChainUnavailableError) {
        await fail({
          file: report.source,
          line: thread.line,
          message: threadError(thread, error.message),
        });
        throw new AuditEnded(error.message, { cause: error });
      }
      // A message no reader takes (an unknown LangChain class, say): this thread only.
      await fail({
        file: report.source,
        line: thread.line,
        message: threadError(thread, `cannot be audited: ${(error as Error).message}`),
      });
      return undefined;
    }
    lastFormat = found.format;
    summary.threads++;
    summary.messages += thread.messages.length;
    summary.formats[found.format]++;
    if (found.repairs.length > 0) {
      const left: ProblemCounts | undefined = fixed?.left;
      summary.threadsWithProblems++;
      for (const problem of PROBLEMS) {
        summary.problems[problem] += found.problems[problem];
        if (left !== undefined && summary.remaining !== undefined) {
          summary.remaining[problem] += left[problem];
        }
      }
      report.thread({
        index: thread.index,
        id: thread.id,
        line: thread.line,
        format: found.format,
        problems: nonZero(found.problems),
        ...(left === undefined ? {} : { remaining: nonZero(left) }),
        ...(fixed?.unrepaired === undefined ? {} : { unrepaired: fixed.unrepaired }),
        repairs: found.repairs,
      });
    }
    return fixed;
  };
}

async function audit(options: AuditArguments, io: CliIo): Promise<number> {
  const inputName = options.input ?? STANDARD_INPUT;
  const source = inputName === STANDARD_INPUT ? "<stdin>" : inputName;
  let input: Awaited<ReturnType<typeof openInput>>;
  try {
    input = await openInput(inputName, io.stdin);
  } catch (error) {
    const report = new Report(source, options, io, createProgress(io.stderr, undefined));
    report.error({ file: source, line: null, message: (error as Error).message });
    report.finish();
    return report.exitCode();
  }
  const progress = createProgress(io.stderr, input.size);
  const report = new Report(source, options, io, progress);
  const summary = report.summary;
  let output: FixedOutput | undefined;
  const fail = async (error: AuditError) => {
    report.error(error);
    // Written whole or not at all: an error anywhere throws the output away.
    const discarded = output;
    output = undefined;
    await discarded?.discard();
  };
  const outputFailed = (error: unknown) =>
    fail({ file: options.out ?? source, line: null, message: (error as Error).message });
  /** Writes the next bytes of the output; a failure to write is reported, and ends the output. */
  const write = async (bytes: Buffer) => {
    try {
      await output?.write(bytes);
    } catch (error) {
      await outputFailed(error);
    }
  };
  const auditNext = threadAuditor<InputThread>(
    report,
    options,
    fail,
    (thread, problem) => `Thread ${thread.index} ${problem}`,
    fixThread,
  );
  report.start();
  if (options.out !== undefined) {
    try {
      output = await FixedOutput.open(options.out);
    } catch (error) {
      await outputFailed(error);
    }
  }
  try {
    const bytes = bytesOf(input.stream, (count) => progress.read(count));
    const layout = layoutOfName(inputName);
    for await (const item of readThreads(jsonEvents(bytes, layout ? { layout } : {}))) {
      if (item.kind === "bytes") await write(item.raw);
      else if (item.kind === "error") {
        await fail({ file: source, line: item.line, message: item.message });
      } else {
        const fixed = await auditNext(item);
        if (fixed !== undefined) await write(fixed.raw);
        progress.thread(summary.threads);
      }
    }
  } catch (error) {
    if (!(error instanceof AuditEnded)) {
      await fail({ file: source, line: null, message: (error as Error).message });
    }
  }
  if (output !== undefined) {
    try {
      summary.written = await output.commit();
    } catch (error) {
      await outputFailed(error);
    }
  }
  report.finish();
  return report.exitCode();
}

/**
 * How an error names a thread of a checkpointer: by its `thread_id`, what the user knows it by
 * (its position among the threads read means nothing to them).
 */
function checkpointerThreadName(id: string): string {
  return `Thread ${JSON.stringify(id)}`;
}

/**
 * `--checkpointer`: the latest checkpoint of each thread of a PostgreSQL checkpointer, read-only,
 * through the same audit and report as a file's threads. The report names the database by its
 * connection string with the password redacted, each thread by its `thread_id`, with no line.
 */
async function auditCheckpointer(options: AuditArguments, url: string, io: CliIo): Promise<number> {
  const source = redactConnectionString(url);
  const failed = (error: unknown) => ({
    file: source,
    line: null,
    // A CheckpointerError is redacted already; anything else is redacted here.
    message: redactMessage(error instanceof Error ? error.message : String(error), url),
  });
  let checkpointer: Checkpointer;
  try {
    checkpointer = await openCheckpointer(url);
  } catch (error) {
    const report = new Report(source, options, io, createProgress(io.stderr, undefined));
    report.error(failed(error));
    report.finish();
    return report.exitCode();
  }
  // A bar needs the number of threads, a query of its own: only for a terminal.
  let total: number | undefined;
  let countFailure: unknown;
  if (io.stderr.isTTY === true) {
    try {
      total = await checkpointer.count(options.thread);
    } catch (error) {
      countFailure = error;
    }
  }
  const progress = createProgress(io.stderr, total);
  const report = new Report(source, options, io, progress);
  try {
    if (countFailure !== undefined) throw countFailure;
    const fail = async (error: AuditError) => report.error(error);
    const auditNext = threadAuditor<ThreadToAudit & { readonly id: string }>(
      report,
      options,
      fail,
      (thread, problem) => redactMessage(`${checkpointerThreadName(thread.id)} ${problem}`, url),
      undefined,
      // Threads of a checkpointer are LangChain messages, even one of text alone.
      "langchain",
    );
    report.start();
    let read = 0;
    for await (const item of checkpointer.threads(options.thread)) {
      if (item.kind === "error") {
        await fail({
          file: source,
          line: null,
          message: `${checkpointerThreadName(item.id)} ${item.message}`,
        });
      } else await auditNext({ ...item, line: null });
      read++;
      progress.read(read);
      progress.thread(report.summary.threads);
    }
  } catch (error) {
    if (!(error instanceof AuditEnded)) {
      report.error(
        failed(error instanceof CheckpointerError ? error : `cannot be read: ${String(error)}`),
      );
    }
  } finally {
    await checkpointer.close();
  }
  report.finish();
  return report.exitCode();
}
