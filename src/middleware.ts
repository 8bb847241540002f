/**
 * The `createAgent` middleware: options → engine → handler. It repairs the messages of each model
 * request as close to the model call as possible, and fails open.
 */
import { RemoveMessage } from "@langchain/core/messages";
import { REMOVE_ALL_MESSAGES } from "@langchain/langgraph";
import { createMiddleware } from "langchain";
import { z } from "zod/v4";
import {
  localeTagSchema,
  optionsError,
  policyFrom,
  type RepairOptions,
  type RepairPolicy,
  repairOptionsShape,
} from "./core/policy.js";
import { type RepairResult, repairToolCalls, type ToolCallRepair } from "./core/repair.js";
import { describeRepairs } from "./core/summary.js";

/**
 * The name the middleware registers under in `createAgent`.
 *
 * @example
 * ```ts
 * danglingToolCallMiddleware().name === MIDDLEWARE_NAME; // true
 * ```
 */
export const MIDDLEWARE_NAME = "DanglingToolCallMiddleware";

/** Where the middleware writes: a warning per repaired model call, an error when it fails open. */
export interface RepairLogger {
  warn(message: string, details?: Record<string, unknown>): void;
  error?(message: string, details?: Record<string, unknown>): void;
}

/** What a locale resolver sees: the model request (or, with `persist`, the state before it). */
export interface LocaleRequest {
  readonly messages: readonly unknown[];
  readonly state?: unknown;
  readonly runtime?: {
    readonly context?: unknown;
    readonly configurable?: { readonly thread_id?: string; readonly [key: string]: unknown };
  };
}

/** Picks the locale of one request, for example from `runtime.context.locale`. */
export type LocaleResolver = (request: LocaleRequest) => string | undefined;

/** Options of {@link danglingToolCallMiddleware}: the repair options, plus how to log and persist. */
export interface DanglingToolCallMiddlewareOptions extends Omit<RepairOptions, "locale"> {
  /**
   * A BCP 47 tag, or a function that picks one per request. A resolver that throws or returns an
   * unknown or malformed tag gives English; it never breaks the call.
   * @default "en"
   * @example
   * ```ts
   * { locale: (request) => (request.runtime?.context as { locale?: string })?.locale }
   * ```
   */
  locale?: string | LocaleResolver;
  /**
   * Where warnings go: one per repaired model call. `false` silences it.
   * @default console
   */
  logger?: RepairLogger | false;
  /**
   * Also write the repaired history back to the thread's state, once, when a repair is needed, so
   * a checkpointed thread is repaired for good. Off by default: the request is repaired and the
   * stored history is left as it was.
   * @default false
   */
  persist?: boolean;
}

const middlewareOptionsSchema = z.strictObject({
  ...repairOptionsShape,
  locale: z
    .union([localeTagSchema, z.custom<LocaleResolver>((value) => typeof value === "function")], {
      error: 'expected a BCP 47 language tag such as "en" or "zh-TW", or a resolver function',
    })
    .optional(),
  logger: z
    .union(
      [
        z.literal(false),
        z.custom<RepairLogger>(
          (value) =>
            typeof value === "object" &&
            value !== null &&
            typeof (value as RepairLogger).warn === "function" &&
            ["function", "undefined"].includes(typeof (value as RepairLogger).error),
        ),
      ],
      {
        error:
          "expected false or an object with a warn(message, details) method and, optionally, an error(message, details) method",
      },
    )
    .optional(),
  persist: z.boolean().default(false),
});

const SILENT: RepairLogger = { warn() {} };

/** The context keys the `persist` hook can read: any value, never required. */
const persistedContextSchema = z.object({ locale: z.unknown().optional() });

/** What the middleware needs at call time, built once from validated options. */
interface Repairer {
  readonly policy: RepairPolicy;
  readonly logger: RepairLogger;
  readonly locale: string | LocaleResolver | undefined;
}

/**
 * Writes to the logger, and never lets the logger break the call: a logger that throws is a
 * telemetry failure, and telemetry failures never block the model call.
 */
function log(
  logger: RepairLogger,
  level: "warn" | "error",
  message: string,
  details: Record<string, unknown>,
): void {
  try {
    if (level === "error" && logger.error !== undefined) {
      logger.error(message, details);
      return;
    }
  } catch {
    // Try warn instead.
  }
  try {
    logger.warn(message, details);
  } catch {
    // Nowhere left to report to.
  }
}

function localeOf(repairer: Repairer, request: LocaleRequest): string | undefined {
  const { locale } = repairer;
  if (typeof locale !== "function") return undefined;
  try {
    const tag = locale(request);
    return typeof tag === "string" ? tag : undefined;
  } catch (error) {
    log(repairer.logger, "warn", "Locale resolver failed; using English placeholder text", {
      error,
    });
    return undefined;
  }
}

function threadIdOf(request: LocaleRequest): string | undefined {
  const threadId = request.runtime?.configurable?.thread_id;
  return typeof threadId === "string" ? threadId : undefined;
}

function reportRepairs(
  repairer: Repairer,
  request: LocaleRequest,
  repairs: readonly ToolCallRepair[],
) {
  const threadId = threadIdOf(request);
  const thread = threadId === undefined ? {} : { threadId };
  log(repairer.logger, "warn", describeRepairs(repairs), { ...thread, repairs });
  for (const repair of repairs) {
    if (repair.placeholderError === undefined) continue;
    log(repairer.logger, "warn", "Placeholder function failed; using the catalog text", {
      ...thread,
      toolCallId: repair.toolCallId,
      error: repair.placeholderError,
    });
  }
}

/**
 * Repairs one request's messages and logs what it did. Returns `undefined` when the engine failed:
 * the caller then goes on with the original messages (fail-open).
 */
function repairRequest<T>(
  repairer: Repairer,
  request: LocaleRequest & { readonly messages: readonly T[] },
): RepairResult<T> | undefined {
  let result: RepairResult<T>;
  try {
    // A resolver runs only when a placeholder needs its text, never on a clean request.
    const locale =
      typeof repairer.locale === "function" ? () => localeOf(repairer, request) : undefined;
    result = repairToolCalls(request.messages, repairer.policy, { locale });
  } catch (error) {
    log(repairer.logger, "error", "Tool-call repair failed; passing the request on unchanged", {
      error,
    });
    return undefined;
  }
  if (result.repairs.length > 0) reportRepairs(repairer, request, result.repairs);
  return result;
}

/**
 * A `createAgent` middleware that keeps an agent talking after its tool-call protocol breaks.
 *
 * Before each model call it repairs the request's messages with {@link repairToolCalls}: each tool
 * call left without a result (a stop, a cancelled or timed-out run, a crashed tool, a restart) gets
 * a placeholder `ToolMessage` with `status: "error"` right after the AI message that made it, so
 * the provider accepts the request and the model sees an honest error. Misplaced results are
 * moved back, orphan results dropped, and missing call ids assigned, as the options say. A clean
 * history goes to the handler untouched. It never runs tools, retries, or invents results.
 *
 * Fail-open: if the repair itself fails, it logs and calls the handler with the original request.
 * Errors from the handler propagate unchanged.
 *
 * @param options.placeholder - template, reason map, or function for the placeholder text
 * @param options.locale - BCP 47 tag or per-request resolver for the built-in texts
 * @param options.window - repair only the last N messages
 * @param options.markSynthetic - mark inserted messages (default `true`)
 * @param options.orphans - `"drop"` (default) or `"keep"`
 * @param options.misplaced - `"regroup"` (default) or `"keep"`
 * @param options.logger - where warnings go (default `console`); `false` silences them
 * @param options.persist - also write the repair to the thread's state (default `false`)
 * @throws {ToolCallResilienceOptionsError} when an option is invalid; the message names it.
 *
 * @example Basic
 * ```ts
 * import { createAgent } from "langchain";
 * import { danglingToolCallMiddleware } from "tool-call-resilience";
 *
 * const agent = createAgent({
 *   model: "openai:gpt-4.1",
 *   tools: [search],
 *   middleware: [danglingToolCallMiddleware()],
 * });
 * ```
 *
 * @example Localized text, chosen per request
 * ```ts
 * const agent = createAgent({
 *   model: "anthropic:claude-sonnet-4-5",
 *   tools: [search],
 *   middleware: [
 *     danglingToolCallMiddleware({
 *       locale: (request) => (request.runtime?.context as { locale?: string })?.locale,
 *     }),
 *   ],
 * });
 * ```
 *
 * @example Repair checkpointed threads for good
 * ```ts
 * const agent = createAgent({
 *   model: "openai:gpt-4.1",
 *   tools: [search],
 *   checkpointer: new MemorySaver(),
 *   middleware: [danglingToolCallMiddleware({ persist: true, window: 200, logger: false })],
 * });
 * ```
 */
export function danglingToolCallMiddleware(options: DanglingToolCallMiddlewareOptions = {}) {
  const parsed = middlewareOptionsSchema.safeParse(options);
  if (!parsed.success) throw optionsError(parsed.error, MIDDLEWARE_NAME);
  const { logger, persist, locale, ...policyOptions } = parsed.data;
  const repairer: Repairer = {
    policy: policyFrom({
      ...policyOptions,
      locale: typeof locale === "string" ? locale : undefined,
    }),
    logger: logger === false ? SILENT : (logger ?? console),
    locale,
  };

  return createMiddleware({
    name: MIDDLEWARE_NAME,
    // Hooks other than wrapModelCall see only the context keys their middleware declares; this
    // one lets a persisted placeholder follow `runtime.context.locale` like a request does.
    contextSchema: persistedContextSchema,
    // With persist, the repair is written to the state before the model node runs; the request
    // then arrives clean and wrapModelCall passes it on as it is.
    beforeModel: persist
      ? (state, runtime) => {
          const result = repairRequest(repairer, { messages: state.messages, state, runtime });
          if (result === undefined || result.repairs.length === 0) return undefined;
          return {
            messages: [new RemoveMessage({ id: REMOVE_ALL_MESSAGES }), ...result.messages],
          };
        }
      : undefined,
    wrapModelCall: (request, handler) => {
      const result = repairRequest(repairer, request);
      if (result === undefined || result.messages === request.messages) return handler(request);
      return handler({ ...request, messages: result.messages });
    },
  });
}
