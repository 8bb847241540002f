/**
 * What the library writes to a logger, and how writing never breaks a model call: the default
 * console logger, the line prefix, the one fail-open write every attachment goes through, and the
 * once-per-history warnings about repairs.
 */

import type { ToolCallRepair } from "../core/repair-log.js";
import { describeRepairs } from "../core/summary.js";
import type { ToolMessageFactory } from "../core/tool-message.js";
import {
  answeredByLaterModelCall,
  danglingCallKey,
  type HistoryPlace,
} from "../telemetry/call-identity.js";
import type { CountOnceMemory } from "../telemetry/count-once.js";
import type { TelemetryPart } from "../telemetry/settings.js";
import type { RepairLogger } from "./options.js";
import { isPromiseLike } from "./responses.js";

/** The logger of `logger: false`: it takes every line and writes none. */
export const SILENT_LOGGER: RepairLogger = Object.freeze({ warn() {} });

/** The section name `NODE_DEBUG` must list for the default logger to print repeated repairs. */
const DEBUG_SECTION = "tool-call-resilience";

/** The last `NODE_DEBUG` read, and whether it names {@link DEBUG_SECTION}: parsed once per value. */
let debugSetting: { readonly value: string | undefined; readonly enabled: boolean } = {
  value: undefined,
  enabled: false,
};

/**
 * Whether `NODE_DEBUG` names the library, read as Node's `util.debuglog` reads it (a comma-separated
 * list of sections, `*` a wildcard, case ignored). Read at each call rather than once, so that a
 * process (or a test) may turn it on after the module loaded; `process` may be absent, or guarded,
 * where the formats entry runs outside Node.
 */
function debugEnabled(): boolean {
  let value: unknown;
  try {
    value = globalThis.process?.env?.NODE_DEBUG;
  } catch {
    return false;
  }
  if (typeof value !== "string") return false;
  if (value !== debugSetting.value) {
    const enabled = value.split(",").some((section) => {
      const pattern = section
        .trim()
        .replace(/[|\\{}()[\]^$+?.]/g, "\\$&")
        .replace(/\*/g, ".*");
      return pattern !== "" && new RegExp(`^${pattern}$`, "i").test(DEBUG_SECTION);
    });
    debugSetting = { value, enabled };
  }
  return debugSetting.enabled;
}

/**
 * The logger when the `logger` option is not set: warnings and errors to the console, and repeated
 * repairs to `console.debug` only when `NODE_DEBUG` names `tool-call-resilience`, since a thread
 * that is not persisted repeats them on every model call. `console` is read at each call, so a
 * console replaced after the attachment was built is the one written to.
 *
 * @example
 * ```ts
 * // NODE_DEBUG=tool-call-resilience node app.js  → the repeats are printed too
 * ```
 */
const CONSOLE_LOGGER: RepairLogger = Object.freeze({
  warn(message: string, details?: Record<string, unknown>) {
    console.warn(message, details);
  },
  error(message: string, details?: Record<string, unknown>) {
    console.error(message, details);
  },
  debug(message: string, details?: Record<string, unknown>) {
    if (debugEnabled()) console.debug(message, details);
  },
});

/**
 * The logger an attachment writes to, from its validated `logger` option: the console when unset,
 * {@link SILENT_LOGGER} for `false`.
 *
 * @example
 * ```ts
 * loggerFrom(false) === SILENT_LOGGER; // true
 * ```
 */
export function loggerFrom(option: RepairLogger | false | undefined): RepairLogger {
  return option === false ? SILENT_LOGGER : (option ?? CONSOLE_LOGGER);
}

/**
 * What every message the library logs starts with, so its lines can be told apart (and grepped
 * for) in an application's log.
 */
const LOG_PREFIX = "[tool-call-resilience] ";

/** What a repeated repair's line adds to the summary, at `debug`. */
const REPEAT_NOTE = " (again; warned on an earlier model call)";

/**
 * Writes to the logger, with {@link LOG_PREFIX} before the message (here alone, so that no line of
 * any attachment goes without it), and never lets the logger break the call: a logger that throws,
 * or an async one that rejects, is a telemetry failure, and telemetry failures never block the
 * model call (an unhandled rejection would end a Node process). `error` falls back to `warn`;
 * `debug` goes nowhere when the logger has no `debug`, since it only repeats what was warned.
 *
 * @example
 * ```ts
 * log(logger, "warn", "Locale resolver failed; using English placeholder text", { error });
 * ```
 */
export function log(
  logger: RepairLogger,
  level: "warn" | "error" | "debug",
  message: string,
  details: Record<string, unknown>,
): void {
  const line = LOG_PREFIX + message;
  if (level === "debug") {
    try {
      if (typeof logger.debug === "function") ignoreRejection(logger.debug(line, details));
    } catch {
      // A repeat that cannot be written is lost, and nothing else.
    }
    return;
  }
  try {
    if (level === "error" && logger.error !== undefined) {
      ignoreRejection(logger.error(line, details));
      return;
    }
  } catch {
    // Try warn instead.
  }
  try {
    ignoreRejection(logger.warn(line, details));
  } catch {
    // Nowhere left to report to.
  }
}

/** What {@link logFailedOpen} needs of an attachment: where to log and how to name it. */
export interface LoggingAttachment {
  /** How the attachment's own failures are named in the log, e.g. "Tool-call middleware". */
  readonly attachment: string;
  readonly logger: RepairLogger;
}

/**
 * Logs, at `error`, a failure of an attachment's own steps that it got past by passing its input
 * on unchanged: the one line every attachment writes when it fails open around the engine.
 *
 * @param passedOn - what went on unchanged: the request, the model's response, or the messages
 * @example
 * ```ts
 * logFailedOpen(repairer, "request", error);
 * // [tool-call-resilience] Tool-call middleware failed; passing the request on unchanged
 * ```
 */
export function logFailedOpen(
  attachment: LoggingAttachment,
  passedOn: "request" | "response" | "messages",
  error: unknown,
): void {
  log(
    attachment.logger,
    "error",
    `${attachment.attachment} failed; passing the ${passedOn} on unchanged`,
    { error },
  );
}

function ignoreRejection(result: unknown): void {
  if (isPromiseLike(result)) result.then(undefined, () => {});
}

/**
 * Logs the first failure of each part of the telemetry; the model call never waits on it.
 *
 * @example
 * ```ts
 * new RepairTelemetry({ ...settings, onFailure: telemetryFailureLogger(logger) });
 * ```
 */
export function telemetryFailureLogger(
  logger: RepairLogger,
): (error: unknown, part: TelemetryPart) => void {
  const reported = new Set<TelemetryPart>();
  return (error, part) => {
    if (reported.has(part)) return;
    reported.add(part);
    log(
      logger,
      "error",
      `OpenTelemetry ${part} failed; the model call goes on. Later ${part} failures are not logged`,
      { error },
    );
  };
}

/** Where an attachment's repair warnings go, and the repairs they were written for already. */
export interface RepairWarnings {
  readonly logger: RepairLogger;
  /** The repairs the logger was warned about, so that a repeat goes to `debug` instead. */
  readonly warned: CountOnceMemory;
  /**
   * What the repairs write, so that the warning names it: `ToolMessage`s on the LangChain paths,
   * tool results of their own format on the others.
   */
  readonly library: { readonly makeToolMessage: ToolMessageFactory };
}

/**
 * Logs a model call's repairs once per history, as the counters count a dangling call: a request
 * of a thread that is not persisted carries the same dangling call on every later model call, and
 * a warning each time would bury the first. Each repair is remembered by its kind and
 * {@link danglingCallKey} (its history, the AI message that made the call, or for a dropped orphan
 * the tool message, and its call id). The warning describes the repairs not seen before, so the
 * placeholders the warnings announce add up to the dangling calls counted; the repairs seen before
 * are described at `debug`, and so is a placeholder (or the synthetic reply after it) for a call
 * that a later model call of the history was already made over ({@link answeredByLaterModelCall}),
 * which that call warned about.
 * A repair with no key (no thread and no message id) warns at every sighting that counts it. A
 * placeholder function's failure goes where its repair goes, and a locale resolver's to `warn`
 * when any placeholder of the call is warned about, else to `debug`.
 *
 * @param place - the history the repairs were made in
 * @param resolverError - what the locale resolver threw for this call, if it threw
 * @example
 * ```ts
 * reportRepairs(repairer, historyPlaceOf(request), messages, result.repairs, undefined);
 * ```
 */
export function reportRepairs(
  warnings: RepairWarnings,
  place: HistoryPlace,
  history: readonly unknown[],
  repairs: readonly ToolCallRepair[],
  resolverError: unknown,
): void {
  const { logger } = warnings;
  const written = warnings.library.makeToolMessage.className;
  const thread = place.threadId === undefined ? {} : { threadId: place.threadId };
  const fresh: ToolCallRepair[] = [];
  const repeated: ToolCallRepair[] = [];
  /** The placeholder functions that failed, each logged where its repair is. */
  const failures: { readonly repair: ToolCallRepair; readonly level: "warn" | "debug" }[] = [];
  for (const repair of repairs) {
    const key = warningKeyOf(place, history, repair);
    const seen = key !== undefined && !warnings.warned.firstSighting(key);
    // A call a model call was already made over was warned about there, as it was counted there.
    const first =
      !seen &&
      !(
        (repair.kind === "placeholder_inserted" || repair.kind === "turn_inserted") &&
        answeredByLaterModelCall(history, repair.callIndex)
      );
    (first ? fresh : repeated).push(repair);
    if (repair.placeholderError !== undefined) {
      failures.push({ repair, level: first ? "warn" : "debug" });
    }
  }
  if (resolverError !== undefined) {
    // News when a placeholder it was asked text for is: a repeat of the same call is not.
    const news = fresh.some((repair) => repair.kind === "placeholder_inserted");
    log(logger, news ? "warn" : "debug", "Locale resolver failed; using English placeholder text", {
      ...thread,
      error: resolverError,
    });
  }
  if (fresh.length > 0) {
    log(logger, "warn", describeRepairs(fresh, written), {
      ...thread,
      repairs: repeated.length === 0 ? repairs : fresh,
    });
  }
  if (repeated.length > 0) {
    log(logger, "debug", describeRepairs(repeated, written) + REPEAT_NOTE, {
      ...thread,
      repairs: repeated,
    });
  }
  for (const { repair, level } of failures) {
    log(logger, level, "Placeholder function failed; using the catalog text", {
      ...thread,
      toolCallId: repair.toolCallId,
      error: repair.placeholderError,
    });
  }
}

/**
 * What a repair is remembered by in the logger's memory: its kind, and the count-once key of its
 * call (for an orphan, which no AI message made, of the tool message dropped). `undefined` when it
 * cannot be told apart from a repair of another conversation, or the history cannot be read.
 */
function warningKeyOf(
  place: HistoryPlace,
  history: readonly unknown[],
  repair: ToolCallRepair,
): string | undefined {
  try {
    const index = repair.callIndex ?? repair.resultIndex;
    const message = index === undefined ? undefined : history[index];
    const key = danglingCallKey(place, message, index, repair.toolCallId);
    return key === undefined ? undefined : `${repair.kind}\u0000${key}`;
  } catch {
    return undefined;
  }
}
