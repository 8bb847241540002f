/**
 * The `createAgent` middleware: options → engine → telemetry → handler. It repairs the messages of
 * each model request as close to the model call as possible, reports what it did, and fails open.
 */
import { type BaseMessage, RemoveMessage } from "@langchain/core/messages";
import { REMOVE_ALL_MESSAGES } from "@langchain/langgraph";
import { createMiddleware } from "langchain";
import { z } from "zod/v4";
import { unrepairedModelOf } from "./attach/chat-model.js";
import { LANGCHAIN_MESSAGES } from "./attach/langchain.js";
import { log, logFailedOpen } from "./attach/logging.js";
import { type LocaleRequest, toolCallRepairOptionsShape } from "./attach/options.js";
import { callRepaired, repairerFrom, repairRequest, repairSilently } from "./attach/repairer.js";
import { historyPlaceOf, targetOfRequest } from "./attach/request.js";
import { optionsError } from "./core/errors.js";
import type { HistoryPlace } from "./telemetry/call-identity.js";
import { PendingInspections } from "./telemetry/pending-inspections.js";
import { OUTCOME_VALUE_CLEAN } from "./telemetry/semconv.js";

/**
 * The name the middleware registers under in `createAgent`.
 *
 * @example
 * ```ts
 * danglingToolCallMiddleware().name === MIDDLEWARE_NAME; // true
 * ```
 */
export const MIDDLEWARE_NAME = "DanglingToolCallMiddleware";

/** The option only the middleware has. */
const persistOptionShape = {
  /**
   * Also write the repaired history back to the thread's state, once, when a repair is needed, so
   * a checkpointed thread is repaired for good: before the model call, or, when the run reaches
   * the model past the `beforeModel` hooks (`humanInTheLoopMiddleware` after a rejection), right
   * after it, in the same turn. Off by default: the request is repaired and the stored history is
   * left as it was.
   * @default false
   */
  persist: z
    .boolean()
    .default(false)
    .describe(
      "Also write the repaired history to the thread's state, once (a `beforeModel` hook returning `RemoveMessage(REMOVE_ALL_MESSAGES)` and the repaired list; an `afterModel` hook when the run reached the model past the `beforeModel` hooks, as `humanInTheLoopMiddleware` does after a rejection), so a checkpointed thread is repaired for good.",
    ),
};

/** The middleware's options, field by field: the shared ones and `persist`. */
const danglingToolCallMiddlewareOptionsShape: typeof toolCallRepairOptionsShape &
  typeof persistOptionShape = { ...toolCallRepairOptionsShape, ...persistOptionShape };

/**
 * The options of {@link danglingToolCallMiddleware}, defined once: the shared options of every
 * attachment ({@link toolCallRepairOptionsShape}), plus `persist`. Each field carries its TSDoc and
 * the `describe` text the README's options table repeats.
 */
export const danglingToolCallMiddlewareOptionsSchema: z.ZodObject<
  typeof danglingToolCallMiddlewareOptionsShape,
  z.core.$strict
> = z.strictObject(danglingToolCallMiddlewareOptionsShape);

/**
 * Options of {@link danglingToolCallMiddleware}: the shared options, plus `persist`. The type is
 * what {@link danglingToolCallMiddlewareOptionsSchema} accepts; each option is documented there.
 */
export type DanglingToolCallMiddlewareOptions = z.input<
  typeof danglingToolCallMiddlewareOptionsSchema
>;

/** The wrapped models the double attachment was logged for. */
const warnedOfModel = new WeakSet<object>();

/**
 * Logged at `warn` once per wrapped model given to an agent that also has the middleware; like
 * every line of the library, the logger gets it after the `[tool-call-resilience] ` prefix.
 */
export const DOUBLE_ATTACHMENT_WARNING =
  "The agent's model is wrapped with withToolCallRepair and the agent also has danglingToolCallMiddleware: " +
  "the middleware calls the model behind the wrapper, so each request is repaired and counted once. " +
  "Drop withToolCallRepair from createAgent's model (the middleware does its job there, persist included).";

/** The context keys the `persist` hooks can read: any value, never required. */
const persistedContextSchema = z.object({ locale: z.unknown().optional() });

/**
 * The state update that replaces a thread's messages with these: LangGraph's messages reducer
 * only appends or replaces by id, so a message inserted between two others needs the whole list.
 * The messages are the state's and the `ToolMessage`s the engine made for them (LANGCHAIN_MESSAGES).
 */
function replacingMessages(repaired: readonly unknown[], after: readonly BaseMessage[] = []) {
  return {
    messages: [
      new RemoveMessage({ id: REMOVE_ALL_MESSAGES }),
      ...(repaired as readonly BaseMessage[]),
      ...after,
    ],
  };
}

/** A message's id, if it has one as a string. */
function idOf(message: unknown): string | undefined {
  const id = (message as { readonly id?: unknown } | undefined)?.id;
  return typeof id === "string" ? id : undefined;
}

/** Where the history a model node started from ends in the state: its length and last id. */
interface HistoryBefore {
  readonly length: number;
  readonly lastId: string;
}

/** Most histories whose repaired model call waits for its `afterModel` hook at once. */
const MAX_REPAIRED_MODEL_CALLS = 10_000;

/**
 * The model calls that `persist` had to repair in `wrapModelCall`, per history (thread, and the
 * run of the graph that holds it, as the `beforeModel` repairs wait for their model call), until
 * the `afterModel` hook of the same node's run takes them. A model call that fails leaves its
 * entry to the next model call of the history, which replaces or clears it; the oldest entries
 * go beyond {@link MAX_REPAIRED_MODEL_CALLS} histories.
 */
class RepairedModelCalls {
  readonly #byHistory = new Map<string, HistoryBefore>();

  /**
   * Notes whether the model call of this request went out repaired (`sent` is not the request's
   * own list); never throws, since it runs on the way to the model.
   */
  note(
    request: { readonly messages: readonly unknown[]; readonly state?: unknown } & Pick<
      LocaleRequest,
      "runtime"
    >,
    sent: readonly unknown[],
  ): void {
    try {
      const key = keyOf(historyPlaceOf(request));
      this.#byHistory.delete(key);
      if (sent === request.messages) return;
      const stored = (request.state as { readonly messages?: unknown } | undefined)?.messages;
      if (!Array.isArray(stored) || stored.length === 0) return;
      const lastId = idOf(stored.at(-1));
      if (lastId === undefined) return;
      if (this.#byHistory.size >= MAX_REPAIRED_MODEL_CALLS) {
        const oldest = this.#byHistory.keys().next();
        if (!oldest.done) this.#byHistory.delete(oldest.value);
      }
      this.#byHistory.set(key, { length: stored.length, lastId });
    } catch {
      // The stored history stays as it is; the next beforeModel hook repairs it.
    }
  }

  /** The history the history's last repaired model call started from, now no longer waiting. */
  take(place: HistoryPlace): HistoryBefore | undefined {
    const key = keyOf(place);
    const before = this.#byHistory.get(key);
    if (before !== undefined) this.#byHistory.delete(key);
    return before;
  }
}

/** A history's key: its thread and its graph's run (else namespace), as `PendingInspections` keys it. */
function keyOf(place: HistoryPlace): string {
  return `${place.threadId ?? ""}\u0000${place.run ?? place.namespace ?? ""}`;
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
 * @param options - every option is optional; each is documented on its field of
 *   {@link DanglingToolCallMiddlewareOptions} (the README's options table lists them all)
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
  const parsed = danglingToolCallMiddlewareOptionsSchema.safeParse(options);
  if (!parsed.success) throw optionsError(parsed.error, MIDDLEWARE_NAME);
  const { persist, ...shared } = parsed.data;
  const repairer = repairerFrom(shared, "Tool-call middleware", LANGCHAIN_MESSAGES);

  const repairedModelCalls = new RepairedModelCalls();
  // A repair written to the thread is recorded even when its model call never comes.
  const waitingForModelCall = new PendingInspections((place, inspections) => {
    try {
      repairer.telemetry.recordWithoutModelCall(repairer.telemetry.lookUp(), place, inspections);
    } catch {
      // The telemetry guards itself and reports its failures; nothing may escape a timer.
    }
  });

  return createMiddleware({
    name: MIDDLEWARE_NAME,
    // Hooks other than wrapModelCall see only the context keys their middleware declares; this
    // one lets a persisted placeholder follow `runtime.context.locale` like a request does.
    contextSchema: persistedContextSchema,
    // With persist, the repair is written to the state before the model node runs; the request
    // then arrives clean and wrapModelCall passes it on as it is.
    beforeModel: persist
      ? (state, runtime) => {
          const request = { messages: state.messages, state, runtime };
          // No model here: the stored history is repaired for every client (or the fixed target).
          const { result, inspection } = repairRequest(
            repairer,
            request,
            repairer.telemetry.lookUp(),
            state.messages,
            targetOfRequest(repairer.target, {}),
          );
          if (inspection.outcome === OUTCOME_VALUE_CLEAN) return undefined;
          // The model call that follows reports it, with the model and tools this hook lacks.
          waitingForModelCall.add(historyPlaceOf(request), inspection);
          if (result === undefined) return undefined;
          return replacingMessages(result.messages);
        }
      : undefined,
    // A run can reach the model past every beforeModel hook (humanInTheLoopMiddleware jumps there
    // after a rejection, leaving the calls it did not review unanswered): wrapModelCall repairs
    // that request, and this hook writes the same repair to the state once the model has answered.
    afterModel: persist
      ? (state, runtime) => {
          const request = { messages: state.messages, state, runtime };
          const before = repairedModelCalls.take(historyPlaceOf(request));
          if (before === undefined) return undefined;
          try {
            return persistAfterModelCall(state.messages, request, before);
          } catch (error) {
            // The thread keeps its break until the next beforeModel hook repairs it.
            logFailedOpen(repairer, "messages", error);
            return undefined;
          }
        }
      : undefined,
    wrapModelCall: (request, handler) =>
      callRepaired(
        repairer,
        withoutRepairingModel(request),
        persist
          ? (sent) => {
              repairedModelCalls.note(request, sent.messages);
              return handler(sent);
            }
          : handler,
        persist ? waitingForModelCall.take(historyPlaceOf(request)) : undefined,
      ),
  });

  /**
   * The state update of `afterModel` for a model call whose request was repaired: the history the
   * model node started from, repaired as `beforeModel` would have repaired it (its repairs were
   * logged and counted with the model call), then what the model node added. Nothing when that
   * history has changed since (the next `beforeModel` hook repairs it), or needs no repair for
   * every client: the request's repair was then one for its own client alone.
   */
  function persistAfterModelCall(
    messages: readonly BaseMessage[],
    request: LocaleRequest,
    before: HistoryBefore,
  ) {
    if (messages.length < before.length || idOf(messages[before.length - 1]) !== before.lastId) {
      return undefined;
    }
    const history = messages.slice(0, before.length);
    const result = repairSilently(repairer, request, history, targetOfRequest(repairer.target, {}));
    if (result.repairs.length === 0) return undefined;
    return replacingMessages(result.messages, messages.slice(before.length));
  }

  /**
   * The request to repair: a model wrapped with `withToolCallRepair` would repair and count the
   * request a second time, so the middleware calls the model behind it, and says so once.
   */
  function withoutRepairingModel<Q extends { readonly model: unknown }>(request: Q): Q {
    let unrepaired: unknown;
    try {
      unrepaired = unrepairedModelOf(request.model);
    } catch {
      return request;
    }
    if (unrepaired === undefined) return request;
    // Once per wrapped model, also for agents built per request around one model.
    if (!warnedOfModel.has(request.model as object)) {
      warnedOfModel.add(request.model as object);
      log(repairer.logger, "warn", DOUBLE_ATTACHMENT_WARNING, {});
    }
    return { ...request, model: unrepaired };
  }
}
