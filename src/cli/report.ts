/**
 * The report of an audit, in text or JSON, written as the threads are read: each thread with
 * problems, the errors (on standard error as they come; in the JSON document at its end), and
 * the summary with the exit code it leads to. What it quotes of the input, a checkpointer or the
 * command line (names, thread ids, error messages) is escaped for a terminal, in JSON as well.
 */
import { type AuditArguments, COMMAND } from "./arguments.js";
import {
  PROBLEMS,
  type Problem,
  type ProblemCounts,
  problemsOf,
  THREAD_FORMATS,
  type ThreadFormat,
} from "./audit-thread.js";
import { exitCodeOf } from "./exit-codes.js";
import type { Progress } from "./progress.js";
import { terminalSafe, terminalSafeJson } from "./terminal-text.js";

/** A stream the report writes to: standard output or standard error, or a stand-in for tests. */
interface OutputStream {
  write(text: string): unknown;
  readonly isTTY?: boolean;
}

/** Where the report goes: threads and the summary to `stdout`, errors to `stderr`. */
export interface ReportStreams {
  readonly stdout: OutputStream;
  readonly stderr: OutputStream;
}

/** What the report says of one thread with problems. */
interface ThreadEntry {
  readonly index: number;
  readonly id: string | undefined;
  /** The line it starts on; `null` for a thread of a checkpointer. */
  readonly line: number | null;
  readonly format: ThreadFormat;
  readonly problems: Partial<ProblemCounts>;
  /** With `--fix`: the problems the repaired thread still has. */
  readonly remaining?: Partial<ProblemCounts>;
  /**
   * With `--fix`: why the thread was written as it was, though it needed a repair (a message the
   * repair would rewrite holds a value JSON cannot carry exactly, say).
   */
  readonly unrepaired?: string;
  readonly repairs: readonly unknown[];
}

/** Something the audit could not read (or write): the file, the line when there is one. */
export interface AuditError {
  readonly file: string;
  readonly line: number | null;
  readonly message: string;
}

/** The JSON report keeps this many errors; the summary counts them all. */
const MAX_LISTED_ERRORS = 1_000;

/** What the audit counted: the summary of the report. */
interface Summary {
  threads: number;
  threadsWithProblems: number;
  messages: number;
  formats: Record<ThreadFormat, number>;
  problems: ProblemCounts;
  /** With `--fix`: the problems left in the repaired threads. */
  remaining?: ProblemCounts;
  errors: number;
  /** With `--fix`: where the repaired threads go, and whether they went there. */
  out?: string;
  written?: boolean;
}

/** The counts that are not zero: what the report lists of a thread. */
export function nonZero(counts: ProblemCounts): Partial<ProblemCounts> {
  return Object.fromEntries(Object.entries(counts).filter(([, count]) => count > 0));
}

function total(counts: Partial<ProblemCounts>): number {
  return PROBLEMS.reduce((sum, problem) => sum + (counts[problem] ?? 0), 0);
}

function describeProblems(counts: Partial<ProblemCounts>): string {
  return PROBLEMS.filter((problem) => (counts[problem] ?? 0) > 0)
    .map((problem: Problem) => `${counts[problem]} ${problem}`)
    .join(", ");
}

function threadLabel(source: string, entry: ThreadEntry): string {
  const id = entry.id === undefined ? "" : ` "${terminalSafe(entry.id)}"`;
  const name = terminalSafe(source);
  const where = entry.line === null ? name : `${name}:${entry.line}`;
  return `${where}: thread ${entry.index}${id} (${entry.format})`;
}

function zeroProblems(): ProblemCounts {
  return problemsOf([]);
}

/**
 * The report, text or JSON, written as the threads are read: the threads with problems, the
 * errors (on standard error as they come; in the JSON document at its end), and the summary.
 */
export class Report {
  readonly summary: Summary;
  readonly #errors: AuditError[] = [];
  #threadsListed = 0;
  #started = false;
  constructor(
    readonly source: string,
    readonly options: AuditArguments,
    readonly io: ReportStreams,
    readonly progress: Progress,
  ) {
    this.summary = {
      threads: 0,
      threadsWithProblems: 0,
      messages: 0,
      formats: Object.fromEntries(THREAD_FORMATS.map((format) => [format, 0])) as Record<
        ThreadFormat,
        number
      >,
      problems: zeroProblems(),
      ...(options.fix ? { remaining: zeroProblems() } : {}),
      errors: 0,
      ...(options.out === undefined ? {} : { out: options.out, written: false }),
    };
  }

  /** Opens the JSON document: it is written as the threads are read, so nothing piles up. */
  start(): void {
    this.#started = true;
    if (this.options.format === "json")
      this.io.stdout.write(`{\n  "source": ${terminalSafeJson(this.source)},\n  "threads": [`);
  }

  /** Reports a thread with problems. */
  thread(entry: ThreadEntry): void {
    if (this.options.format === "json") {
      this.io.stdout.write(
        `${this.#threadsListed++ === 0 ? "\n" : ",\n"}    ${terminalSafeJson(entry)}`,
      );
      return;
    }
    const left =
      entry.remaining === undefined || total(entry.remaining) === 0
        ? ""
        : `; left after fixing: ${describeProblems(entry.remaining)}`;
    const unrepaired =
      entry.unrepaired === undefined ? "" : ` (written as it was: ${entry.unrepaired})`;
    this.progress.log(
      `${threadLabel(this.source, entry)}: ${describeProblems(entry.problems)}${left}${terminalSafe(unrepaired)}\n`,
      this.io.stdout,
    );
  }

  /** Reports something the audit could not read (or write), and counts it. */
  error(error: AuditError): void {
    this.summary.errors++;
    if (this.#errors.length < MAX_LISTED_ERRORS) this.#errors.push(error);
    const file = terminalSafe(error.file);
    const where = error.line === null ? `${file}: ` : `${file}:${error.line}: `;
    this.progress.log(`${COMMAND}: ${where}${terminalSafe(error.message)}\n`, this.io.stderr);
  }

  /** Closes the report. In text, a summary line, unless nothing could be read at all. */
  finish(): void {
    this.progress.stop();
    if (this.options.format === "json") {
      if (!this.#started) this.start();
      const errors = this.#errors.map((error) => `\n    ${terminalSafeJson(error)}`).join(",");
      this.io.stdout.write(
        `${this.#threadsListed === 0 ? "" : "\n  "}],\n  "errors": [${errors}${errors === "" ? "" : "\n  "}],\n  "summary": ${terminalSafeJson(this.summary)}\n}\n`,
      );
    } else if (this.#started) this.io.stdout.write(`${summaryLine(this.summary)}\n`);
  }

  /** The exit code of the audit reported. */
  exitCode(): number {
    const { errors, remaining, threadsWithProblems } = this.summary;
    return exitCodeOf({
      errors,
      problemsFound: threadsWithProblems > 0,
      problemsLeft: remaining === undefined ? undefined : total(remaining) > 0,
    });
  }
}

/**
 * The summary line. "no problems found" only when nothing went wrong: with errors, it says of
 * the threads audited that none had problems, and when none was audited, only that and the
 * errors.
 */
function summaryLine(summary: Summary): string {
  const formats = THREAD_FORMATS.filter((format) => summary.formats[format] > 0)
    .map((format) => `${summary.formats[format]} ${format}`)
    .join(", ");
  const errors = summary.errors === 0 ? "" : `${summary.errors} error(s), on standard error.`;
  const out =
    summary.out === undefined
      ? ""
      : ` Threads ${summary.written === true ? "written" : "not written"} to ${terminalSafe(summary.out)}.`;
  if (summary.threads === 0 && summary.errors > 0) return `No thread audited: ${errors}${out}`;
  const read = `Audited ${summary.threads} thread(s), ${summary.messages} message(s)${formats === "" ? "" : ` (${formats})`}`;
  const found =
    summary.threadsWithProblems > 0
      ? `${summary.threadsWithProblems} with problems: ${describeProblems(summary.problems)}${fixedPart(summary)}.`
      : summary.errors === 0
        ? "no problems found."
        : "none with problems.";
  return `${read}: ${found}${errors === "" ? "" : ` ${errors}`}${out}`;
}

/** What `--fix` did to the problems found: "all fixed" only once the output is written. */
function fixedPart(summary: Summary): string {
  if (summary.remaining === undefined || summary.threadsWithProblems === 0) return "";
  if (total(summary.remaining) > 0) {
    return `; left after fixing: ${describeProblems(summary.remaining)}`;
  }
  return summary.written === true ? "; all fixed" : "";
}
