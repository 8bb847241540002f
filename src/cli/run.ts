/**
 * `tool-call-resilience audit`: reads stored threads (from a file, standard input, or a LangGraph
 * PostgreSQL checkpointer), reports what is broken in each, and with `--fix` writes them repaired
 * (files only). Exit code 0 when every thread is clean (with `--fix`: when everything found was
 * fixed and written), 1 when problems were found (with `--fix`: when some are left after fixing),
 * 2 on bad usage or bad input (named with the file and line, or the redacted connection string).
 */
import { once } from "node:events";
import { createWriteStream, type WriteStream } from "node:fs";
import { open, rename, rm, stat } from "node:fs/promises";
import { resolve } from "node:path";
import { StringDecoder } from "node:string_decoder";
import { parseArgs } from "node:util";
import { isWellFormedLocale } from "../core/locales.js";
import { PACKAGE_VERSION } from "../version.js";
import {
  auditThread,
  PROBLEMS,
  type Problem,
  type ProblemCounts,
  problemsLeft,
  problemsOf,
  THREAD_FORMATS,
  type ThreadAudit,
  type ThreadFormat,
} from "./audit-thread.js";
import { redactConnectionString, redactMessage } from "./connection-string.js";
import { type JsonLayout, jsonEvents } from "./json-stream.js";
import { type Checkpointer, CheckpointerError, openCheckpointer } from "./postgres.js";
import { createProgress, type Progress } from "./progress.js";
import { type InputThread, readThreads } from "./threads.js";

/** Where the command reads and writes; the process's own streams by default. */
export interface CliIo {
  readonly stdin: NodeJS.ReadableStream;
  readonly stdout: { write(text: string): unknown; readonly isTTY?: boolean };
  readonly stderr: { write(text: string): unknown; readonly isTTY?: boolean };
}

/** Exit code: no problems; with `--fix`, everything found was fixed and written. */
export const EXIT_CLEAN = 0;
/** Exit code: problems found; with `--fix`, problems left after fixing. */
export const EXIT_PROBLEMS = 1;
/** Exit code: bad usage, or input (or output) the audit could not read (or write) whole. */
export const EXIT_BAD_INPUT = 2;

/** The full `--help` text. */
export const USAGE = `Usage: tool-call-resilience audit <file|-> [options]
       tool-call-resilience audit --checkpointer <postgres-url> [--thread <id>] [options]

Reads stored chat threads and reports the tool-call protocol breaks in each: calls without a
result (dangling), calls whose arguments were cut off (invalid), results without a call
(orphan), results separated from their call (misplaced), calls without an id or with one made
twice (missing_id), calls without a name (missing_name), calls not every client sends
(unlisted).

Input: a JSON array of threads, JSONL (one thread a line), or one thread as a JSON array of
messages; "-" reads standard input. A thread is an array of messages, or an object with a
"messages" array (its "thread_id" or "id" names it). Each thread's format is detected: LangChain
messages (toJSON(), toDict() or plain), OpenAI Chat Completions, Anthropic Messages, or the AI
SDK's ModelMessage.

JSONL is read a line at a time: a broken line is named on standard error with its line number
and skipped, and the threads after it are still audited. A file named .jsonl or .ndjson is
always JSONL; other input is JSONL unless its first value goes on past its first line, as in
pretty-printed JSON, which is read as one document up to its first syntax error.

--checkpointer reads a LangGraph PostgreSQL checkpointer instead (the tables PostgresSaver.setup()
of @langchain/langgraph-checkpoint-postgres makes, schema "public"; install that package): the
latest checkpoint of every thread of the root namespace, a page of thread ids at a time, its
"messages" channel audited as the thread (a state without one is a thread with no messages). The
sessions are read-only (default_transaction_read_only=on), and the report names the database
with its password replaced by ***.

Options:
  --checkpointer <url>
                     read this checkpointer (postgres://user:password@host:port/db) instead of a
                     file, read-only; not with a file, --fix or --out
  --thread <id>      with --checkpointer: only this thread (exit 2 if it has no checkpoint)
  --fix              write the repaired threads (needs --out), in the input's layout and formats
  --out <file>       where --fix writes; never the input file; not written if the input has errors
  --format <text|json>
                     the report: lines for people (default), or one JSON document
  --locale <tag>     BCP 47 tag of the placeholders --fix writes (default: en)
  -h, --help         this text
  -v, --version      the version

Exit codes: 0 no problems (with --fix: all fixed and written), 1 problems found (with --fix:
problems left after fixing), 2 bad usage or bad input (with --checkpointer: a database that
cannot be reached or read, is no checkpointer, or has no thread --thread names).
`;

/** What a usage error ends with: where the full usage is. */
export const USAGE_HINT = "Run 'tool-call-resilience audit --help' for usage.";

class UsageError extends Error {
  override readonly name = "UsageError";
}

interface AuditArguments {
  /** A file, or "-" for standard input; `undefined` with `checkpointer`. */
  readonly input: string | undefined;
  /** The connection string of a PostgreSQL checkpointer to read instead of a file. */
  readonly checkpointer: string | undefined;
  /** With `checkpointer`: the one thread to read. */
  readonly thread: string | undefined;
  readonly fix: boolean;
  readonly out: string | undefined;
  readonly format: "text" | "json";
  readonly locale: string | undefined;
}

/** The first sentence of `parseArgs`'s message: the rest explains `--`, beside the point here. */
function argumentProblem(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/^(Unknown option '[^']*')\..*$/s, "$1");
}

function parseAuditArguments(args: readonly string[]): AuditArguments | "help" | "version" {
  let parsed: ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>;
  try {
    parsed = parseArgs({ args: [...args], options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(argumentProblem(error));
  }
  const { values, positionals } = parsed;
  if (values.help) return "help";
  if (values.version) return "version";
  const [command, input, ...extra] = positionals;
  if (command === undefined) throw new UsageError("Missing the command: audit");
  if (command !== "audit")
    throw new UsageError(`Unknown command "${command}"; the command is audit`);
  const checkpointer = values.checkpointer;
  // A connection string is never echoed as given: it may hold a password.
  if (input !== undefined && isConnectionString(input)) {
    throw new UsageError(
      checkpointer === undefined
        ? "A connection string is read with --checkpointer <url>, not as a file"
        : "--checkpointer reads the threads: give no file as well",
    );
  }
  if (checkpointer !== undefined) {
    if (!isConnectionString(checkpointer)) {
      throw new UsageError(
        "--checkpointer must be a PostgreSQL URL: postgres://user:password@host:port/db",
      );
    }
    if (input !== undefined) {
      throw new UsageError(
        `--checkpointer reads the threads: give no file as well (found "${input}")`,
      );
    }
    if (values.fix || values.out !== undefined) {
      throw new UsageError(
        "--fix and --out are not for --checkpointer: the audit reads a checkpointer, and never writes to it",
      );
    }
  } else if (values.thread !== undefined) {
    throw new UsageError("--thread is only for --checkpointer");
  }
  if (values.thread === "") throw new UsageError("--thread needs a thread id");
  if (input === undefined && checkpointer === undefined)
    throw new UsageError(
      'Missing the input: a file, "-" for standard input, or --checkpointer <url>',
    );
  if (extra.length > 0)
    throw new UsageError(`Unexpected argument "${extra[0]}": audit reads one input`);
  const format = values.format ?? "text";
  if (format !== "text" && format !== "json") {
    throw new UsageError(`--format must be text or json, not "${format}"`);
  }
  if (values.fix && values.out === undefined) throw new UsageError("--fix needs --out <file>");
  if (!values.fix && values.out !== undefined) throw new UsageError("--out is only for --fix");
  if (values.out === "-")
    throw new UsageError("--out must be a file: the report goes to standard output");
  if (
    values.out !== undefined &&
    input !== undefined &&
    input !== "-" &&
    resolve(values.out) === resolve(input)
  ) {
    throw new UsageError("--out must not be the input file: it is read as a stream");
  }
  if (values.locale !== undefined && !isWellFormedLocale(values.locale)) {
    throw new UsageError(
      `--locale must be a BCP 47 tag such as "de" or "pt-BR", not "${values.locale}"`,
    );
  }
  return {
    input,
    checkpointer,
    thread: values.thread,
    fix: values.fix ?? false,
    out: values.out,
    format,
    locale: values.locale,
  };
}

/** Whether an argument is a PostgreSQL connection string. */
function isConnectionString(argument: string): boolean {
  return /^postgres(?:ql)?:\/\//i.test(argument);
}

const OPTIONS = {
  checkpointer: { type: "string" },
  thread: { type: "string" },
  fix: { type: "boolean" },
  out: { type: "string" },
  format: { type: "string" },
  locale: { type: "string" },
  help: { type: "boolean", short: "h" },
  version: { type: "boolean", short: "v" },
} as const;

/** The layout a file's name promises: JSONL for `.jsonl` and `.ndjson`, else told by the text. */
function layoutOfName(input: string): JsonLayout | undefined {
  return /\.(jsonl|ndjson)$/i.test(input) ? "lines" : undefined;
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
  readonly repairs: readonly unknown[];
}

/** Something the audit could not read (or write): the file, the line when there is one. */
interface AuditError {
  readonly file: string;
  readonly line: number | null;
  readonly message: string;
}

/** The JSON report keeps this many errors; the summary counts them all. */
const MAX_LISTED_ERRORS = 1_000;

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

/** A failure to read the input stream. */
class InputReadError extends Error {
  override readonly name = "InputReadError";
}

/** Reads a file or standard input as text, counting bytes for the progress bar. */
async function* decoded(
  source: NodeJS.ReadableStream,
  onBytes: (bytes: number) => void,
): AsyncGenerator<string> {
  const decoder = new StringDecoder("utf8");
  let bytes = 0;
  const chunks = source[Symbol.asyncIterator]();
  try {
    for (;;) {
      let next: IteratorResult<string | Buffer>;
      try {
        next = await chunks.next();
      } catch (error) {
        throw new InputReadError(`cannot be read: ${(error as Error).message}`, { cause: error });
      }
      if (next.done === true) break;
      const chunk = next.value;
      const buffer = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
      bytes += buffer.length;
      onBytes(bytes);
      yield decoder.write(buffer);
    }
    yield decoder.end();
  } finally {
    // Reading stopped early (a broken JSON document): the file is closed now, not at exit.
    await chunks.return?.();
  }
}

/** A failure to write the repaired threads. */
class OutputError extends Error {
  override readonly name = "OutputError";
  constructor(cause: Error) {
    super(`cannot be written: ${cause.message}`, { cause });
  }
}

/** Writes repaired threads in the layout they were read in. */
class FixedWriter {
  readonly #stream: WriteStream;
  #inArray = false;
  #first = true;
  #failure: Error | undefined;
  #destroyed = false;
  constructor(path: string) {
    this.#stream = createWriteStream(path, { encoding: "utf8" });
    // A write that fails (a full disk, a folder that is not there) is reported, and ends the fix.
    this.#stream.on("error", (error) => {
      if (!this.#destroyed) this.#failure ??= new OutputError(error);
    });
  }
  async #write(text: string) {
    if (this.#failure !== undefined) throw this.#failure;
    if (!this.#stream.write(text)) await once(this.#stream, "drain");
  }
  async arrayStart() {
    this.#inArray = true;
    this.#first = true;
    await this.#write("[\n");
  }
  async arrayEnd() {
    this.#inArray = false;
    await this.#write("\n]\n");
  }
  async thread(thread: InputThread, messages: readonly unknown[]) {
    const written = Array.isArray(thread.container) ? messages : { ...thread.container, messages };
    const text = JSON.stringify(written);
    if (this.#inArray) {
      await this.#write(this.#first ? `  ${text}` : `,\n  ${text}`);
      this.#first = false;
    } else await this.#write(`${text}\n`);
  }
  async close() {
    if (this.#failure !== undefined) throw this.#failure;
    this.#stream.end();
    await once(this.#stream, "finish");
    if (this.#failure !== undefined) throw this.#failure;
  }
  async destroy() {
    this.#destroyed = true;
    if (this.#stream.closed) return;
    const closed = once(this.#stream, "close").catch(() => undefined);
    this.#stream.destroy();
    await closed;
  }
}

/**
 * `--fix`'s output: written to a temporary file beside `--out`, renamed onto it only when the
 * whole input was read without an error, and thrown away at the first error.
 */
class FixedOutput {
  readonly #out: string;
  readonly #temporary: string;
  #writer: FixedWriter | undefined;
  constructor(out: string) {
    this.#out = out;
    this.#temporary = `${out}.${process.pid}.tmp`;
    this.#writer = new FixedWriter(this.#temporary);
  }
  async write(step: (writer: FixedWriter) => Promise<void>): Promise<void> {
    if (this.#writer !== undefined) await step(this.#writer);
  }
  /** Puts the output in place; false when it was thrown away. */
  async commit(): Promise<boolean> {
    if (this.#writer === undefined) return false;
    await this.#writer.close();
    await rename(this.#temporary, this.#out);
    this.#writer = undefined;
    return true;
  }
  async discard(): Promise<void> {
    const writer = this.#writer;
    this.#writer = undefined;
    await writer?.destroy();
    await rm(this.#temporary, { force: true });
  }
}

function nonZero(counts: ProblemCounts): Partial<ProblemCounts> {
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
  const id = entry.id === undefined ? "" : ` "${entry.id}"`;
  const where = entry.line === null ? source : `${source}:${entry.line}`;
  return `${where}: thread ${entry.index}${id} (${entry.format})`;
}

function zeroProblems(): ProblemCounts {
  return problemsOf([]);
}

/**
 * The report, text or JSON, written as the threads are read: the threads with problems, the
 * errors (on standard error as they come; in the JSON document at its end), and the summary.
 */
class Report {
  readonly summary: Summary;
  readonly #errors: AuditError[] = [];
  #threadsListed = 0;
  #started = false;
  constructor(
    readonly source: string,
    readonly options: AuditArguments,
    readonly io: CliIo,
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
      this.io.stdout.write(`{\n  "source": ${JSON.stringify(this.source)},\n  "threads": [`);
  }

  thread(entry: ThreadEntry): void {
    if (this.options.format === "json") {
      this.io.stdout.write(
        `${this.#threadsListed++ === 0 ? "\n" : ",\n"}    ${JSON.stringify(entry)}`,
      );
      return;
    }
    const left =
      entry.remaining === undefined || total(entry.remaining) === 0
        ? ""
        : `; left after fixing: ${describeProblems(entry.remaining)}`;
    this.progress.log(
      `${threadLabel(this.source, entry)}: ${describeProblems(entry.problems)}${left}\n`,
      this.io.stdout,
    );
  }

  error(error: AuditError): void {
    this.summary.errors++;
    if (this.#errors.length < MAX_LISTED_ERRORS) this.#errors.push(error);
    const where = error.line === null ? `${error.file}: ` : `${error.file}:${error.line}: `;
    this.progress.log(`tool-call-resilience: ${where}${error.message}\n`, this.io.stderr);
  }

  /** Closes the report. In text, a summary line, unless nothing could be read at all. */
  finish(): void {
    this.progress.stop();
    if (this.options.format === "json") {
      if (!this.#started) this.start();
      const errors = this.#errors.map((error) => `\n    ${JSON.stringify(error)}`).join(",");
      this.io.stdout.write(
        `${this.#threadsListed === 0 ? "" : "\n  "}],\n  "errors": [${errors}${errors === "" ? "" : "\n  "}],\n  "summary": ${JSON.stringify(this.summary)}\n}\n`,
      );
    } else if (this.#started) this.io.stdout.write(`${summaryLine(this.summary)}\n`);
  }

  exitCode(): number {
    if (this.summary.errors > 0) return EXIT_BAD_INPUT;
    if (this.summary.remaining !== undefined) {
      return total(this.summary.remaining) > 0 ? EXIT_PROBLEMS : EXIT_CLEAN;
    }
    return this.summary.threadsWithProblems > 0 ? EXIT_PROBLEMS : EXIT_CLEAN;
  }
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
    const message = redactConnectionStrings((error as Error).message);
    io.stderr.write(`tool-call-resilience: ${message}\n${USAGE_HINT}\n`);
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

/** A message with every PostgreSQL URL in it redacted (one given where no option takes it). */
function redactConnectionStrings(message: string): string {
  return message.replace(/postgres(?:ql)?:\/\/[^\s'"]+/gi, (url) => redactConnectionString(url));
}

/** Opens the input: standard input, or a file with its size for the progress bar. */
async function openInput(
  input: string,
  io: CliIo,
): Promise<{ stream: NodeJS.ReadableStream; size: number | undefined }> {
  if (input === "-") return { stream: io.stdin, size: undefined };
  try {
    const stats = await stat(input);
    if (!stats.isFile()) throw new Error("not a file");
    const handle = await open(input, "r");
    return { stream: handle.createReadStream(), size: stats.size };
  } catch (error) {
    throw new InputReadError(`cannot be read: ${(error as Error).message}`, { cause: error });
  }
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
 * The audit of one thread after another: each is audited (and with `--fix` audited again as it
 * will be written), counted in the summary, and reported when it has problems. What it returns
 * is the audit, or `undefined` when the thread could not be audited (`fail` was told why).
 */
function threadAuditor(
  report: Report,
  options: AuditArguments,
  fail: (error: AuditError) => Promise<void>,
  /** The error message of a thread no reader takes. */
  cannotAudit: (thread: ThreadToAudit, error: Error) => string,
  /** The format of the first thread that does not tell its own. */
  firstFallback?: ThreadFormat,
): (thread: ThreadToAudit) => Promise<ThreadAudit | undefined> {
  const summary = report.summary;
  let lastFormat = firstFallback;
  const repairOptions = options.locale === undefined ? {} : { locale: options.locale };
  return async (thread) => {
    let found: ThreadAudit;
    let left: ProblemCounts | undefined;
    try {
      found = await auditThread(thread.messages, repairOptions, lastFormat);
      if (options.fix) left = await problemsLeft(found, repairOptions);
    } catch (error) {
      // A message no reader takes (an unknown LangChain class, say): this thread only.
      await fail({
        file: report.source,
        line: thread.line,
        message: cannotAudit(thread, error as Error),
      });
      return undefined;
    }
    lastFormat = found.format;
    summary.threads++;
    summary.messages += thread.messages.length;
    summary.formats[found.format]++;
    if (found.repairs.length > 0) {
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
        repairs: found.repairs,
      });
    }
    return found;
  };
}

async function audit(options: AuditArguments, io: CliIo): Promise<number> {
  const inputName = options.input ?? "-";
  const source = inputName === "-" ? "<stdin>" : inputName;
  let input: Awaited<ReturnType<typeof openInput>>;
  try {
    input = await openInput(inputName, io);
  } catch (error) {
    const report = new Report(source, options, io, createProgress(io.stderr, undefined));
    report.error({ file: source, line: null, message: (error as Error).message });
    report.finish();
    return report.exitCode();
  }
  const progress = createProgress(io.stderr, input.size);
  const report = new Report(source, options, io, progress);
  const summary = report.summary;
  const output = options.out === undefined ? undefined : new FixedOutput(options.out);
  const fail = async (error: AuditError) => {
    report.error(error);
    // Written whole or not at all: an error anywhere throws the output away.
    await output?.discard();
  };
  /** Runs a step of the output; a failure to write is reported, and ends the output. */
  const write = async (step: Parameters<FixedOutput["write"]>[0]) => {
    try {
      await output?.write(step);
    } catch (error) {
      await fail({ file: options.out ?? source, line: null, message: (error as Error).message });
    }
  };
  const auditNext = threadAuditor(
    report,
    options,
    fail,
    (thread, error) => `Thread ${thread.index} cannot be audited: ${error.message}`,
  );
  report.start();
  try {
    const text = decoded(input.stream, (bytes) => progress.read(bytes));
    const layout = layoutOfName(inputName);
    for await (const item of readThreads(jsonEvents(text, layout ? { layout } : {}))) {
      if (item.kind === "array-start") await write((writer) => writer.arrayStart());
      else if (item.kind === "array-end") await write((writer) => writer.arrayEnd());
      else if (item.kind === "error") {
        await fail({ file: source, line: item.line, message: item.message });
      } else {
        const found = await auditNext(item);
        if (found === undefined) continue;
        await write((writer) => writer.thread(item, found.messages));
        progress.thread(summary.threads);
      }
    }
  } catch (error) {
    await fail({ file: source, line: null, message: (error as Error).message });
  }
  if (output !== undefined) {
    try {
      summary.written = await output.commit();
    } catch (error) {
      await fail({ file: options.out ?? source, line: null, message: (error as Error).message });
    }
  }
  report.finish();
  return report.exitCode();
}

/** How the report names a thread of a checkpointer in an error: its position and its id. */
function checkpointerThreadName(index: number, id: string | undefined): string {
  return id === undefined ? `Thread ${index}` : `Thread ${index} ${JSON.stringify(id)}`;
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
    const auditNext = threadAuditor(
      report,
      options,
      fail,
      (thread, error) =>
        `${checkpointerThreadName(thread.index, thread.id)} cannot be audited: ${redactMessage(error.message, url)}`,
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
          message: `${checkpointerThreadName(item.index, item.id)} ${item.message}`,
        });
      } else await auditNext({ ...item, line: null });
      read++;
      progress.read(read);
      progress.thread(report.summary.threads);
    }
  } catch (error) {
    report.error(
      failed(error instanceof CheckpointerError ? error : `cannot be read: ${String(error)}`),
    );
  } finally {
    await checkpointer.close();
  }
  report.finish();
  return report.exitCode();
}

function summaryLine(summary: Summary): string {
  const formats = THREAD_FORMATS.filter((format) => summary.formats[format] > 0)
    .map((format) => `${summary.formats[format]} ${format}`)
    .join(", ");
  const read = `Audited ${summary.threads} thread(s), ${summary.messages} message(s)${formats === "" ? "" : ` (${formats})`}`;
  const fixed = fixedPart(summary);
  const found =
    summary.threadsWithProblems === 0
      ? "no problems found."
      : `${summary.threadsWithProblems} with problems: ${describeProblems(summary.problems)}${fixed}.`;
  const errors = summary.errors === 0 ? "" : ` ${summary.errors} error(s), on standard error.`;
  const out =
    summary.out === undefined
      ? ""
      : summary.written === true
        ? ` Threads written to ${summary.out}.`
        : ` Threads not written to ${summary.out}.`;
  return `${read}: ${found}${errors}${out}`;
}

/** What `--fix` did to the problems found: "all fixed" only once the output is written. */
function fixedPart(summary: Summary): string {
  if (summary.remaining === undefined || summary.threadsWithProblems === 0) return "";
  if (total(summary.remaining) > 0) {
    return `; left after fixing: ${describeProblems(summary.remaining)}`;
  }
  return summary.written === true ? "; all fixed" : "";
}
