/**
 * The command line: the `--help` text, and the arguments read into the options of an audit, with
 * a usage error for anything the audit cannot run with (its message never holds a password).
 */
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { DEFAULT_LOCALE, isWellFormedLocale } from "../core/locales.js";
import { LANGCHAIN_PACKAGE, PROBLEM_DESCRIPTIONS, PROBLEMS } from "./audit-thread.js";
import { redactConnectionString } from "./connection-string.js";
import { EXIT_BAD_INPUT, EXIT_CLEAN, EXIT_PROBLEMS } from "./exit-codes.js";
import { STANDARD_INPUT } from "./input.js";
import { CHECKPOINTER_PACKAGE } from "./postgres.js";
import { terminalSafe } from "./terminal-text.js";

/** The command's name, as the usage and every error line give it. */
export const COMMAND = "tool-call-resilience";

/** The width the paragraph of problems is wrapped to, as the other paragraphs of `--help` are by hand. */
const USAGE_WIDTH = 96;

/** A paragraph of words, wrapped at {@link USAGE_WIDTH}. */
function wrap(words: string): string {
  const lines: string[] = [];
  let line = "";
  for (const word of words.split(" ")) {
    if (line !== "" && line.length + 1 + word.length > USAGE_WIDTH) {
      lines.push(line);
      line = word;
    } else line = line === "" ? word : `${line} ${word}`;
  }
  return [...lines, line].join("\n");
}

/** What `--help` says the audit reports: every problem, in the words of its description. */
const PROBLEMS_PARAGRAPH = wrap(
  `Reads stored chat threads and reports the tool-call protocol breaks in each: ${PROBLEMS.map(
    (problem) => `${PROBLEM_DESCRIPTIONS[problem]} (${problem})`,
  ).join(", ")}.`,
);

/** The full `--help` text. */
export const USAGE = `Usage: ${COMMAND} audit <file|-> [options]
       ${COMMAND} audit --checkpointer <postgres-url> [--thread <id>] [options]

${PROBLEMS_PARAGRAPH}

Input: a JSON array of threads, JSONL (one thread a line), or one thread as a JSON array of
messages; "-" reads standard input. A thread is an array of messages, or an object with a
"messages" array (its "thread_id" or "id" names it). Each thread's format is detected: LangChain
messages (toJSON(), toDict() or plain), OpenAI Chat Completions, Anthropic Messages, or the AI
SDK's ModelMessage. LangChain messages need ${LANGCHAIN_PACKAGE} (npm install ${LANGCHAIN_PACKAGE});
the other formats need nothing more.

JSONL is read a line at a time: a broken line is named on standard error with its line number
and skipped, and the threads after it are still audited. A file named .jsonl or .ndjson is
always JSONL; other input is JSONL unless its first value goes on past its first line, as in
pretty-printed JSON, which is read as one document up to its first syntax error.

--checkpointer reads a LangGraph PostgreSQL checkpointer instead (the tables PostgresSaver.setup()
of ${CHECKPOINTER_PACKAGE} makes, schema "public"; install that package and
${LANGCHAIN_PACKAGE}): the latest checkpoint of every thread of the root namespace, a page of
thread ids at a time, its "messages" channel audited as the thread (a state without one is a
thread with no messages). The sessions are read-only (default_transaction_read_only=on), and the
report names the database with its password replaced by ***.

Options:
  --checkpointer <url>
                     read this checkpointer (postgres://user:password@host:port/db) instead of a
                     file, read-only; not with a file, --fix or --out
  --thread <id>      with --checkpointer: only this thread (exit ${EXIT_BAD_INPUT} if it has no checkpoint)
  --fix              write the repaired threads (needs --out), in the input's layout and formats;
                     every byte no repair changed is copied as it was
  --out <file>       where --fix writes; never the input file; not written if the input has errors
  --format <text|json>
                     the report: lines for people (default), or one JSON document
  --locale <tag>     BCP 47 tag of the placeholders --fix writes (default: ${DEFAULT_LOCALE})
  -h, --help         this text
  -v, --version      the version

Exit codes: ${EXIT_CLEAN} no problems (with --fix: all fixed and written), ${EXIT_PROBLEMS} problems found (with --fix:
problems left after fixing), ${EXIT_BAD_INPUT} bad usage or bad input (LangChain messages without
${LANGCHAIN_PACKAGE}; with --checkpointer: a database that cannot be reached or read, is no
checkpointer, or has no thread --thread names).
`;

/** What a usage error ends with: where the full usage is. */
const USAGE_HINT = `Run '${COMMAND} audit --help' for usage.`;

/** The report's formats: lines for people (the default), or one JSON document. */
const REPORT_FORMATS = ["text", "json"] as const;
/** A format of the report: one of {@link REPORT_FORMATS}. */
type ReportFormat = (typeof REPORT_FORMATS)[number];

/** A problem with the arguments: the audit does not run. */
class UsageError extends Error {
  override readonly name = "UsageError";
}

/** What the arguments ask the audit to do. */
export interface AuditArguments {
  /** A file, or "-" for standard input; `undefined` with `checkpointer`. */
  readonly input: string | undefined;
  /** The connection string of a PostgreSQL checkpointer to read instead of a file. */
  readonly checkpointer: string | undefined;
  /** With `checkpointer`: the one thread to read. */
  readonly thread: string | undefined;
  readonly fix: boolean;
  readonly out: string | undefined;
  readonly format: ReportFormat;
  readonly locale: string | undefined;
}

/** The first sentence of `parseArgs`'s message: the rest explains `--`, beside the point here. */
function argumentProblem(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/^(Unknown option '[^']*')\..*$/s, "$1");
}

/**
 * Reads the arguments: the audit to run, or `"help"` or `"version"`.
 *
 * @throws {UsageError} for arguments the audit cannot run with
 */
export function parseAuditArguments(args: readonly string[]): AuditArguments | "help" | "version" {
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
  const format = values.format ?? REPORT_FORMATS[0];
  if (!isReportFormat(format)) {
    throw new UsageError(`--format must be ${REPORT_FORMATS.join(" or ")}, not "${format}"`);
  }
  if (values.fix && values.out === undefined) throw new UsageError("--fix needs --out <file>");
  if (!values.fix && values.out !== undefined) throw new UsageError("--out is only for --fix");
  if (values.out === STANDARD_INPUT)
    throw new UsageError("--out must be a file: the report goes to standard output");
  if (
    values.out !== undefined &&
    input !== undefined &&
    input !== STANDARD_INPUT &&
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

function isReportFormat(format: string): format is ReportFormat {
  return (REPORT_FORMATS as readonly string[]).includes(format);
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

/** A message with every PostgreSQL URL in it redacted (one given where no option takes it). */
function redactConnectionStrings(message: string): string {
  return message.replace(/postgres(?:ql)?:\/\/[^\s'"]+/gi, (url) => redactConnectionString(url));
}

/**
 * What standard error is told of arguments the audit cannot run with: the problem, with every
 * connection string in it redacted and what it echoes of the arguments escaped for a terminal,
 * and where the usage is.
 */
export function usageErrorText(error: unknown): string {
  const message = terminalSafe(redactConnectionStrings((error as Error).message));
  return `${COMMAND}: ${message}\n${USAGE_HINT}\n`;
}
