/**
 * `tool-call-resilience audit`: reads stored threads, reports what is broken in each, and with
 * `--fix` writes them repaired. Exit code 0 when every thread is clean (with `--fix`: when
 * everything found was fixed and written), 1 when problems were found (with `--fix`: when some are
 * left after fixing), 2 on bad usage or bad input (named with the file and line).
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
  type ThreadFormat,
} from "./audit-thread.js";
import { type JsonLayout, jsonEvents } from "./json-stream.js";
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

Options:
  --fix              write the repaired threads (needs --out), in the input's layout and formats
  --out <file>       where --fix writes; never the input file; not written if the input has errors
  --format <text|json>
                     the report: lines for people (default), or one JSON document
  --locale <tag>     BCP 47 tag of the placeholders --fix writes (default: en)
  -h, --help         this text
  -v, --version      the version

Exit codes: 0 no problems (with --fix: all fixed and written), 1 problems found (with --fix:
problems left after fixing), 2 bad usage or bad input.
`;

/** What a usage error ends with: where the full usage is. */
export const USAGE_HINT = "Run 'tool-call-resilience audit --help' for usage.";

class UsageError extends Error {
  override readonly name = "UsageError";
}

interface AuditArguments {
  readonly input: string;
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
  if (input === undefined)
    throw new UsageError('Missing the input: a file, or "-" for standard input');
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
  if (values.out !== undefined && input !== "-" && resolve(values.out) === resolve(input)) {
    throw new UsageError("--out must not be the input file: it is read as a stream");
  }
  if (values.locale !== undefined && !isWellFormedLocale(values.locale)) {
    throw new UsageError(
      `--locale must be a BCP 47 tag such as "de" or "pt-BR", not "${values.locale}"`,
    );
  }
  return { input, fix: values.fix ?? false, out: values.out, format, locale: values.locale };
}

const OPTIONS = {
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
  readonly line: number;
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
  return `${source}:${entry.line}: thread ${entry.index}${id} (${entry.format})`;
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
    io.stderr.write(`tool-call-resilience: ${(error as Error).message}\n${USAGE_HINT}\n`);
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
  return audit(parsed, io);
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

async function audit(options: AuditArguments, io: CliIo): Promise<number> {
  const source = options.input === "-" ? "<stdin>" : options.input;
  let input: Awaited<ReturnType<typeof openInput>>;
  try {
    input = await openInput(options.input, io);
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
  report.start();
  let lastFormat: ThreadFormat | undefined;
  const repairOptions = options.locale === undefined ? {} : { locale: options.locale };
  try {
    const text = decoded(input.stream, (bytes) => progress.read(bytes));
    const layout = layoutOfName(options.input);
    for await (const item of readThreads(jsonEvents(text, layout ? { layout } : {}))) {
      if (item.kind === "array-start") await write((writer) => writer.arrayStart());
      else if (item.kind === "array-end") await write((writer) => writer.arrayEnd());
      else if (item.kind === "error") {
        await fail({ file: source, line: item.line, message: item.message });
      } else {
        let found: Awaited<ReturnType<typeof auditThread>>;
        let left: ProblemCounts | undefined;
        try {
          found = await auditThread(item.messages, repairOptions, lastFormat);
          if (options.fix) left = await problemsLeft(found, repairOptions);
        } catch (error) {
          // A message no reader takes (an unknown LangChain class, say): this thread only.
          await fail({
            file: source,
            line: item.line,
            message: `Thread ${item.index} cannot be audited: ${(error as Error).message}`,
          });
          continue;
        }
        lastFormat = found.format;
        summary.threads++;
        summary.messages += item.messages.length;
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
            index: item.index,
            id: item.id,
            line: item.line,
            format: found.format,
            problems: nonZero(found.problems),
            ...(left === undefined ? {} : { remaining: nonZero(left) }),
            repairs: found.repairs,
          });
        }
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
