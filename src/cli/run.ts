/**
 * `tool-call-resilience audit`: reads stored threads, reports what is broken in each, and with
 * `--fix` writes them repaired. Exit code 0 when every thread is clean, 1 when problems were
 * found, 2 on bad usage or bad input (with the file and line).
 */
import { once } from "node:events";
import { createReadStream, createWriteStream, type WriteStream } from "node:fs";
import { rename, rm, stat } from "node:fs/promises";
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
  THREAD_FORMATS,
  type ThreadFormat,
} from "./audit-thread.js";
import { JsonStreamError, jsonEvents } from "./json-stream.js";
import { createProgress } from "./progress.js";
import { type InputThread, readThreads } from "./threads.js";

/** Where the command reads and writes; the process's own streams by default. */
export interface CliIo {
  readonly stdin: NodeJS.ReadableStream;
  readonly stdout: { write(text: string): unknown };
  readonly stderr: { write(text: string): unknown; readonly isTTY?: boolean };
}

/** The exit codes. */
export const EXIT_CLEAN = 0;
export const EXIT_PROBLEMS = 1;
export const EXIT_BAD_INPUT = 2;

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

Options:
  --fix              write the repaired threads (needs --out), in the input's layout and formats
  --out <file>       where --fix writes; never the input file
  --format <text|json>
                     the report: lines for people (default), or one JSON document
  --locale <tag>     BCP 47 tag of the placeholders --fix writes (default: en)
  -h, --help         this text
  -v, --version      the version

Exit codes: 0 no problems, 1 problems found, 2 bad usage or bad input.
`;

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

function parseAuditArguments(args: readonly string[]): AuditArguments | "help" | "version" {
  let parsed: ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>;
  try {
    parsed = parseArgs({ args: [...args], options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
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

/** What the report says of one thread with problems. */
interface ThreadEntry {
  readonly index: number;
  readonly id: string | undefined;
  readonly line: number;
  readonly format: ThreadFormat;
  readonly problems: Partial<ProblemCounts>;
  readonly repairs: readonly unknown[];
}

interface Summary {
  threads: number;
  threadsWithProblems: number;
  messages: number;
  formats: Record<ThreadFormat, number>;
  problems: ProblemCounts;
}

/** Reads a file or standard input as text, counting bytes for the progress bar. */
async function* decoded(
  source: NodeJS.ReadableStream,
  onBytes: (bytes: number) => void,
): AsyncGenerator<string> {
  const decoder = new StringDecoder("utf8");
  let bytes = 0;
  for await (const chunk of source) {
    const buffer = typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer);
    bytes += buffer.length;
    onBytes(bytes);
    yield decoder.write(buffer);
  }
  yield decoder.end();
}

/** A failure to write the repaired threads. */
class OutputError extends Error {
  override readonly name = "OutputError";
  constructor(path: string, cause: Error) {
    super(`cannot write ${path}: ${cause.message}`, { cause });
  }
}

/** Writes repaired threads in the layout they were read in. */
class FixedWriter {
  readonly #stream: WriteStream;
  #inArray = false;
  #first = true;
  #failure: Error | undefined;
  #destroyed = false;
  constructor(path: string, shownAs: string) {
    this.#stream = createWriteStream(path, { encoding: "utf8" });
    // A write that fails (a full disk, a folder that is not there) ends the audit with its error.
    this.#stream.on("error", (error) => {
      if (!this.#destroyed) this.#failure ??= new OutputError(shownAs, error);
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
  }
  async destroy() {
    this.#destroyed = true;
    if (this.#stream.closed) return;
    const closed = once(this.#stream, "close").catch(() => undefined);
    this.#stream.destroy();
    await closed;
  }
}

function nonZero(counts: ProblemCounts): Partial<ProblemCounts> {
  return Object.fromEntries(Object.entries(counts).filter(([, count]) => count > 0));
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
    io.stderr.write(`tool-call-resilience: ${(error as Error).message}\n\n${USAGE}`);
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

async function audit(options: AuditArguments, io: CliIo): Promise<number> {
  const source = options.input === "-" ? "<stdin>" : options.input;
  let size: number | undefined;
  let input: NodeJS.ReadableStream;
  if (options.input === "-") input = io.stdin;
  else {
    try {
      const stats = await stat(options.input);
      if (!stats.isFile()) throw new Error("not a file");
      size = stats.size;
    } catch (error) {
      io.stderr.write(`tool-call-resilience: cannot read ${source}: ${(error as Error).message}\n`);
      return EXIT_BAD_INPUT;
    }
    input = createReadStream(options.input);
  }
  const progress = createProgress(io.stderr, size);
  const temporary = options.out === undefined ? undefined : `${options.out}.${process.pid}.tmp`;
  const writer =
    temporary === undefined || options.out === undefined
      ? undefined
      : new FixedWriter(temporary, options.out);
  const summary: Summary = {
    threads: 0,
    threadsWithProblems: 0,
    messages: 0,
    formats: Object.fromEntries(THREAD_FORMATS.map((format) => [format, 0])) as Record<
      ThreadFormat,
      number
    >,
    problems: Object.fromEntries(PROBLEMS.map((problem) => [problem, 0])) as ProblemCounts,
  };
  // The JSON report is written as the threads are read, like the text one: nothing piles up.
  let reported = 0;
  if (options.format === "json")
    io.stdout.write(`{\n  "source": ${JSON.stringify(source)},\n  "threads": [`);
  let lastFormat: ThreadFormat | undefined;
  const repairOptions = options.locale === undefined ? {} : { locale: options.locale };
  try {
    const text = decoded(input, (bytes) => progress.read(bytes));
    for await (const item of readThreads(jsonEvents(text))) {
      if (item.kind === "array-start") await writer?.arrayStart();
      else if (item.kind === "array-end") await writer?.arrayEnd();
      else {
        const found = await auditThread(item.messages, repairOptions, lastFormat);
        lastFormat = found.format;
        summary.threads++;
        summary.messages += item.messages.length;
        summary.formats[found.format]++;
        if (found.repairs.length > 0) {
          summary.threadsWithProblems++;
          for (const problem of PROBLEMS) summary.problems[problem] += found.problems[problem];
          const entry: ThreadEntry = {
            index: item.index,
            id: item.id,
            line: item.line,
            format: found.format,
            problems: nonZero(found.problems),
            repairs: found.repairs,
          };
          if (options.format === "json") {
            io.stdout.write(`${reported++ === 0 ? "\n" : ",\n"}    ${JSON.stringify(entry)}`);
          } else
            progress.log(
              `${threadLabel(source, entry)}: ${describeProblems(entry.problems)}\n`,
              io.stdout,
            );
        }
        await writer?.thread(item, found.messages);
        progress.thread(summary.threads);
      }
    }
    if (writer !== undefined && temporary !== undefined && options.out !== undefined) {
      await writer.close();
      await rename(temporary, options.out);
    }
  } catch (error) {
    progress.stop();
    await writer?.destroy();
    if (temporary !== undefined) await rm(temporary, { force: true });
    const where =
      error instanceof JsonStreamError
        ? `${source}:${error.line}: `
        : error instanceof OutputError
          ? ""
          : `${source}: `;
    io.stderr.write(`tool-call-resilience: ${where}${(error as Error).message}\n`);
    return EXIT_BAD_INPUT;
  }
  progress.stop();
  if (options.format === "json") {
    io.stdout.write(
      `${reported === 0 ? "" : "\n  "}],\n  "summary": ${JSON.stringify(summary)}\n}\n`,
    );
  } else io.stdout.write(`${summaryLine(summary, options.out)}\n`);
  return summary.threadsWithProblems > 0 ? EXIT_PROBLEMS : EXIT_CLEAN;
}

function summaryLine(summary: Summary, out: string | undefined): string {
  const formats = THREAD_FORMATS.filter((format) => summary.formats[format] > 0)
    .map((format) => `${summary.formats[format]} ${format}`)
    .join(", ");
  const read = `Audited ${summary.threads} thread(s), ${summary.messages} message(s)${formats === "" ? "" : ` (${formats})`}`;
  const fixed = out === undefined ? "" : ` Threads written to ${out}.`;
  if (summary.threadsWithProblems === 0) return `${read}: no problems found.${fixed}`;
  return `${read}: ${summary.threadsWithProblems} with problems: ${describeProblems(summary.problems)}.${fixed}`;
}
