/**
 * The demo's command line: what each option means, its default, and the checks that turn a bad
 * value into a message naming the option instead of a confusing run.
 */
import { type ParseArgsConfig, parseArgs } from "node:util";
import { redactConnectionString } from "../src/cli/connection-string.js";

/** The demo's settings, after defaults and checks. */
export interface DemoOptions {
  /** Seconds the fleet runs; new runs start until then. */
  readonly duration: number;
  /** Conversations at once; each goes on turn after turn on its own thread. */
  readonly threads: number;
  /** Runs in flight at once. */
  readonly concurrency: number;
  /** Turns per thread (and no new threads), or `undefined` for new conversations all along. */
  readonly turns: number | undefined;
  /** Share of runs interrupted (aborted, timed out, or left at an unanswered interrupt). */
  readonly interruptRate: number;
  /** Seconds into the run at which a burst of interruptions starts, or `undefined` for none. */
  readonly spikeAt: number | undefined;
  /** Share of runs interrupted during the burst. */
  readonly spikeRate: number;
  /** Seconds the burst lasts. */
  readonly spikeLength: number;
  /** Locale of the placeholder text the models see. */
  readonly locale: string;
  /** Seed of every script: the same seed gives the same conversations. */
  readonly seed: number;
  /** Port of the Prometheus endpoint on 127.0.0.1. */
  readonly port: number;
  /** Print one line per `repair_tool_calls` span. */
  readonly traces: boolean;
  /** Base URL of an OTLP/HTTP receiver to push the metrics to as well, or `undefined`. */
  readonly otlp: string | undefined;
  /** Start the `prometheus` binary with the shipped rules, scraping the demo. */
  readonly prometheus: boolean;
  /** Port for that Prometheus server. */
  readonly prometheusPort: number;
  /** After the fleet stops, keep serving metrics until Ctrl-C. */
  readonly hold: boolean;
  /** Write the summary and the scripts' ground truth as JSON to this file. */
  readonly report: string | undefined;
  /**
   * Worker processes over one PostgreSQL checkpointer, or `undefined` for the whole fleet in this
   * process over a `MemorySaver`.
   */
  readonly workers: number | undefined;
  /** The PostgreSQL server the workers share, or `undefined` for a throwaway local cluster. */
  readonly postgres: string | undefined;
  /** The middleware's `persist` option (`--no-persist` turns it off). */
  readonly persist: boolean;
  /** Seconds into the run at which one worker is killed with SIGKILL, or `undefined` for none. */
  readonly killAt: number | undefined;
}

/** A command-line value the demo cannot use; the message names the option. */
export class DemoOptionsError extends Error {
  override readonly name = "DemoOptionsError";
}

/** What `--help` prints. */
export const HELP = `Usage: npm start -- [options]

Runs a simulated fleet of LangChain.js agents (createAgent, MemorySaver, fake tool-calling models
named like OpenAI, Anthropic and Gemini models, tools with latency), in this process, or with
--workers in worker processes over one PostgreSQL checkpointer. A share of runs is interrupted
the way production runs are: the user presses stop while tools run, a request times out, or an
approval interrupt() is left unanswered. Each thread then goes on with a new user message, so
dangling tool calls arise for real and the tool-call-resilience middleware repairs them. Metrics
are served for Prometheus while it runs; at the end a summary per model and per tool is printed
from the same counters the dashboards read.

Options:
  --duration <s>        seconds the fleet runs (default 60)
  --threads <n>         conversations at once, each on its own thread; each has 12 turns, then a
                        new one on a new thread takes its place (default 40)
  --concurrency <n>     runs in flight at once (default 8)
  --turns <n>           turns per thread, and no new threads: the fleet stops early once all are
                        done
  --interrupt-rate <r>  share of runs interrupted, 0 to 1 (default 0.04)
  --spike-at <s>        start a burst of interruptions this many seconds in (default: no burst)
  --spike-rate <r>      share of runs interrupted during the burst (default 0.6)
  --spike-length <s>    seconds the burst lasts (default 600)
  --locale <tag>        language of the placeholder text, e.g. de, fr, ja (default en)
  --seed <n>            seed of every script; the same seed gives the same conversations (default 1)
  --port <n>            port of the metrics endpoint on 127.0.0.1 (default 9464)
  --traces              print one line per repair_tool_calls span (not with --workers)
  --otlp <url>          also push the metrics over OTLP/HTTP, every second, to this base URL:
                        a Collector (http://localhost:4318) or Prometheus's OTLP receiver
                        (http://localhost:9090/api/v1/otlp)
  --prometheus          start the prometheus binary (if on the PATH) with the shipped recording and
                        alert rules and a 1 s scrape of the demo; print its URL; stop it on exit
  --prometheus-port <n> port of that Prometheus server (default 9090)
  --hold                keep serving metrics after the fleet stops, until Ctrl-C
                        (implied by --prometheus)
  --report <file>       also write the summary and the scripts' ground truth as JSON
  --workers <n>         run the agents in n worker processes over one PostgreSQL checkpointer
                        (@langchain/langgraph-checkpoint-postgres); each turn goes to the least
                        busy worker, so threads move between workers; worker k serves its metrics
                        on --port + k - 1, and --prometheus scrapes them all
  --postgres <url>      the PostgreSQL server to use (postgres://user@host:port/db, the password
                        in PGPASSWORD or ~/.pgpass rather than on the command line); its
                        checkpointer tables are created if missing. Default: a throwaway local
                        cluster (Debian's postgresql binaries), started for the run, stopped after
  --no-persist          run the middleware without persist, to measure what the fleet's counters
                        then count more than happened
  --kill-at <s>         kill one worker with SIGKILL this many seconds in, and start a new one in
                        its place; without it, 2 or more workers lose one half-way through
                        --duration
  --no-kill             kill no worker
  --help                show this text

Ctrl-C stops the fleet, prints the summary and closes every server.

Examples:
  npm start
  # an hour at 0.5 % of tool calls dangling, then half an hour at 10 %: with the shipped rules,
  # ToolCallResilienceDanglingSpike pages each model 15 to 25 minutes into it (the spike alert's
  # baseline ends an hour before it is evaluated, hence the hour first)
  npm start -- --duration 6000 --interrupt-rate 0.006 --spike-at 3600 --spike-length 1800 \\
    --spike-rate 0.15 --prometheus
  npm start -- --threads 5 --turns 3 --traces --locale de
  npm start -- --otlp http://localhost:4318
  npm start -- --workers 3
  npm start -- --workers 3 --no-persist --prometheus`;

/** Whether the burst of interruptions (`--spike-at`) is on, this many seconds into the run. */
export function inSpike(
  settings: Pick<DemoOptions, "spikeAt" | "spikeLength">,
  elapsedSeconds: number,
): boolean {
  return (
    settings.spikeAt !== undefined &&
    elapsedSeconds >= settings.spikeAt &&
    elapsedSeconds < settings.spikeAt + settings.spikeLength
  );
}

/** The share of runs interrupted this many seconds into the run: the burst's, or the usual one. */
export function interruptRateAt(
  settings: Pick<DemoOptions, "spikeAt" | "spikeLength" | "spikeRate" | "interruptRate">,
  elapsedSeconds: number,
): number {
  return inSpike(settings, elapsedSeconds) ? settings.spikeRate : settings.interruptRate;
}

const NUMBER = /^[+-]?(\d+(\.\d*)?|\.\d+)$/;

function numberOption(
  name: string,
  raw: string | undefined,
  fallback: number,
  check: { readonly integer?: boolean; readonly min: number; readonly max?: number },
): number {
  if (raw === undefined) return fallback;
  const value = NUMBER.test(raw.trim()) ? Number(raw) : Number.NaN;
  const kind = check.integer === true ? "an integer" : "a number";
  const range = check.max === undefined ? `>= ${check.min}` : `from ${check.min} to ${check.max}`;
  if (
    !Number.isFinite(value) ||
    (check.integer === true && !Number.isInteger(value)) ||
    value < check.min ||
    (check.max !== undefined && value > check.max)
  ) {
    throw new DemoOptionsError(`--${name} must be ${kind} ${range}, got "${raw}"`);
  }
  return value;
}

function postgresOption(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  if (!/^postgres(ql)?:\/\/[^/\s]/.test(raw) || !URL.canParse(raw)) {
    // The value may hold a password: the message does not repeat it.
    throw new DemoOptionsError(
      "--postgres must be a postgres:// or postgresql:// URL, such as postgres://user:password@localhost:5432/db",
    );
  }
  return raw;
}

function urlOption(name: string, raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  if (!/^https?:\/\/[^/\s]/.test(raw) || !URL.canParse(raw)) {
    throw new DemoOptionsError(`--${name} must be an http:// or https:// URL, got "${raw}"`);
  }
  return raw;
}

/**
 * Reads the demo's options from the command line.
 *
 * @returns the options, or `"help"` when `--help` was asked for
 * @throws {DemoOptionsError} for an unknown option or a value out of range
 */
export function parseDemoOptions(args: readonly string[]): DemoOptions | "help" {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(args);
  } catch (error) {
    // An argument put where no option takes it may be a connection string: never repeat its
    // password.
    const message = (error as Error).message.replace(/postgres(?:ql)?:\/\/[^\s'"]+/g, (url) =>
      redactConnectionString(url),
    );
    throw new DemoOptionsError(`${message}; see --help`);
  }
  const { values } = parsed;
  if (values.help === true) return "help";
  // The middleware checks the tag itself, when the demo builds it.
  const locale = values.locale ?? "en";
  const prometheus = values.prometheus === true;
  const duration = numberOption("duration", values.duration, 60, { min: 1, max: 2_147_483 });
  const workers =
    values.workers === undefined
      ? undefined
      : numberOption("workers", values.workers, 1, { integer: true, min: 1, max: 64 });
  const postgres = postgresOption(values.postgres);
  for (const [name, given] of [
    ["postgres", postgres !== undefined],
    ["no-persist", values["no-persist"] === true],
    ["kill-at", values["kill-at"] !== undefined],
    ["no-kill", values["no-kill"] === true],
  ] as const) {
    if (given && workers === undefined) {
      throw new DemoOptionsError(`--${name} needs --workers: it is about the fleet of workers`);
    }
  }
  if (values.traces === true && workers !== undefined) {
    throw new DemoOptionsError(
      "--traces prints the spans of the demo's own process; the workers of --workers have their own",
    );
  }
  if (values["kill-at"] !== undefined && values["no-kill"] === true) {
    throw new DemoOptionsError("--kill-at and --no-kill contradict each other; give one");
  }
  const killAt =
    workers === undefined || workers < 2 || values["no-kill"] === true
      ? undefined
      : values["kill-at"] === undefined
        ? duration / 2
        : numberOption("kill-at", values["kill-at"], 0, { min: 0, max: 2_147_483 });
  if (values["kill-at"] !== undefined && workers !== undefined && workers < 2) {
    throw new DemoOptionsError("--kill-at needs --workers 2 or more: one worker must go on");
  }
  return {
    duration,
    threads: numberOption("threads", values.threads, 40, { integer: true, min: 1, max: 100_000 }),
    concurrency: numberOption("concurrency", values.concurrency, 8, {
      integer: true,
      min: 1,
      max: 1_000,
    }),
    turns:
      values.turns === undefined
        ? undefined
        : numberOption("turns", values.turns, 0, { integer: true, min: 1 }),
    interruptRate: numberOption("interrupt-rate", values["interrupt-rate"], 0.04, {
      min: 0,
      max: 1,
    }),
    spikeAt:
      values["spike-at"] === undefined
        ? undefined
        : numberOption("spike-at", values["spike-at"], 0, { min: 0 }),
    spikeRate: numberOption("spike-rate", values["spike-rate"], 0.6, { min: 0, max: 1 }),
    spikeLength: numberOption("spike-length", values["spike-length"], 600, { min: 1 }),
    locale,
    seed: numberOption("seed", values.seed, 1, { integer: true, min: 0, max: 2 ** 32 - 1 }),
    port: numberOption("port", values.port, 9464, { integer: true, min: 1, max: 65_535 }),
    traces: values.traces === true,
    otlp: urlOption("otlp", values.otlp),
    prometheus,
    prometheusPort: numberOption("prometheus-port", values["prometheus-port"], 9090, {
      integer: true,
      min: 1,
      max: 65_535,
    }),
    hold: prometheus || values.hold === true,
    report: values.report,
    workers,
    postgres,
    persist: values["no-persist"] !== true,
    killAt,
  };
}

/**
 * Every option the parser accepts, as `parseArgs` reads them; `--help` documents each of them
 * (a test holds the two together).
 */
export const DEMO_OPTIONS = {
  duration: { type: "string" },
  threads: { type: "string" },
  concurrency: { type: "string" },
  turns: { type: "string" },
  "interrupt-rate": { type: "string" },
  "spike-at": { type: "string" },
  "spike-rate": { type: "string" },
  "spike-length": { type: "string" },
  locale: { type: "string" },
  seed: { type: "string" },
  port: { type: "string" },
  traces: { type: "boolean" },
  otlp: { type: "string" },
  prometheus: { type: "boolean" },
  "prometheus-port": { type: "string" },
  hold: { type: "boolean" },
  report: { type: "string" },
  workers: { type: "string" },
  postgres: { type: "string" },
  "no-persist": { type: "boolean" },
  "kill-at": { type: "string" },
  "no-kill": { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const satisfies NonNullable<ParseArgsConfig["options"]>;

function parse(args: readonly string[]) {
  return parseArgs({
    args: [...args],
    strict: true,
    allowPositionals: false,
    options: DEMO_OPTIONS,
  });
}
