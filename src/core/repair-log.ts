/**
 * What a repair reports, and the log that writes it: the list of changes made to a history, one
 * {@link ToolCallRepair} each, with the placeholder that each dangling call is given. The paths of
 * the engine (the placeholder-only one and the rebuild) share it, so a repair is recorded one way.
 */
import { type PlaceholderReason, type SyntheticTurn, turnText } from "./locales.js";
import { answeredToolCallIdOf, toolMessageNameOf } from "./messages.js";
import { placeholderText } from "./placeholder.js";
import { createPlaceholder, syntheticTurnMetadata } from "./placeholder-message.js";
import type { RepairPolicy } from "./policy.js";
import type { RepairKind } from "./repair-kinds.js";
import type { ToolMessageFactory } from "./tool-message.js";
import { answerKindOf, type CallKind, type RepairTarget } from "./wire.js";

/** One change the engine made to the history. */
export interface ToolCallRepair {
  readonly kind: RepairKind;
  /** The id of the call concerned (for `id_assigned`, the id it was given). */
  readonly toolCallId: string;
  /** The tool's name (for `name_assigned`, the name it was given), or `"unknown"`. */
  readonly toolName: string;
  /** Why a placeholder was needed; only on `placeholder_inserted`. */
  readonly reason?: PlaceholderReason;
  /**
   * Index, in the input, of the AI message that made the call (absent for orphans); for a
   * synthetic reply, of the AI message whose results it follows.
   */
  readonly callIndex?: number;
  /**
   * Index, in the input, of the tool message moved or dropped (for a result that stood as a
   * `tool_result` block, of the human message that held it); for a synthetic gap, of the message
   * whose taking away left it needed.
   */
  readonly resultIndex?: number;
  /** Index, in the returned messages, of the inserted, moved or copied message (absent for drops). */
  readonly outputIndex?: number;
  /** Set when a placeholder function failed and the catalog text was used instead. */
  readonly placeholderError?: unknown;
}

/**
 * What the engine returns, for a history of `M`: the messages given, copies of them, and the tool
 * messages it made. {@link RepairResult} is this for LangChain messages.
 */
export interface HistoryRepair<M> {
  /**
   * The input array itself when nothing needed repair, otherwise a new array: the input's
   * messages, copies of AI messages given ids, and placeholder tool messages.
   */
  readonly messages: M[];
  /** Every change made, in the order of the returned messages; empty when nothing changed. */
  readonly repairs: readonly ToolCallRepair[];
}

/** Per-call settings that are not part of the policy. */
export interface RepairContext {
  /**
   * BCP 47 tag for this call's placeholder texts, overriding the policy's `locale`; or a function
   * that returns it, called only when a placeholder is inserted, and at most once per call.
   */
  readonly locale?: string | (() => string | undefined);
  /**
   * The client this call's history is repaired for, overriding the policy's `target`: what the
   * attachments read from the request's model.
   */
  readonly target?: RepairTarget;
}

/**
 * The name a placeholder carries when its call has none, and the name a call without one is given
 * on the copy that is sent.
 *
 * @example
 * ```ts
 * repairToolCalls([{ type: "ai", tool_calls: [{ id: "call_1" }] }]).messages[1]; // name: UNKNOWN_TOOL_NAME
 * ```
 */
export const UNKNOWN_TOOL_NAME = "unknown";

/** The repairs of a history that needed none: one frozen list for every such call. */
export const NO_REPAIRS: readonly ToolCallRepair[] = Object.freeze([]);

/** A type with its fields writable: for an object built field by field before it is handed out. */
export type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/**
 * The locale of this call: the context's (a resolver runs here, once; if it throws, the policy's
 * stands in), else the policy's.
 */
function localeOf(context: RepairContext | undefined, policy: RepairPolicy): string | undefined {
  const locale = context?.locale;
  if (typeof locale !== "function") return locale ?? policy.locale;
  try {
    return locale() ?? policy.locale;
  } catch {
    return policy.locale;
  }
}

/** Makes placeholders, and keeps the list of repairs: one for each placeholder, and the others. */
export class RepairLog {
  readonly #policy: RepairPolicy;
  readonly #context: RepairContext | undefined;
  readonly #target: RepairTarget;
  readonly #make: ToolMessageFactory;
  readonly #repairs: ToolCallRepair[];
  #written = 0;
  /** The locale of this call, resolved at the first placeholder. */
  #locale: string | undefined;
  #localeResolved = false;

  /**
   * Writes to `repairs` from its start: an empty list, or one made to the length it will reach
   * (an empty list that is pushed to reserves room for 17 at once).
   */
  constructor(
    policy: RepairPolicy,
    context: RepairContext | undefined,
    target: RepairTarget,
    make: ToolMessageFactory,
    repairs: ToolCallRepair[],
  ) {
    this.#policy = policy;
    this.#context = context;
    this.#target = target;
    this.#make = make;
    this.#repairs = repairs;
  }

  record(repair: ToolCallRepair): void {
    this.#repairs[this.#written++] = repair;
  }

  /**
   * The synthetic reply (an AI message) the caller writes at `outputIndex`, after `result`, the
   * tool message before a user message: recorded under the call that result answers, made by the
   * AI message at `aiIndex` in the input.
   */
  reply(result: unknown, aiIndex: number | undefined, outputIndex: number): unknown {
    const repair: Mutable<ToolCallRepair> = {
      kind: "turn_inserted",
      toolCallId: answeredToolCallIdOf(result) ?? "",
      toolName: toolMessageNameOf(result) ?? UNKNOWN_TOOL_NAME,
      outputIndex,
    };
    if (aiIndex !== undefined) repair.callIndex = aiIndex;
    return this.#turn("reply", repair);
  }

  /**
   * The synthetic gap (a human message) the caller writes at `outputIndex`, before an AI message
   * that the repair left first or right after another AI message by taking `removed` (at
   * `removedIndex` in the input) away, an orphan dropped or a result moved: recorded under the
   * call id and name `removed` carries.
   */
  gap(removed: unknown, removedIndex: number, outputIndex: number): unknown {
    return this.#turn("gap", {
      kind: "turn_inserted",
      toolCallId: answeredToolCallIdOf(removed) ?? "",
      toolName: toolMessageNameOf(removed) ?? UNKNOWN_TOOL_NAME,
      resultIndex: removedIndex,
      outputIndex,
    });
  }

  /** A synthetic turn the order of turns needs; only called when `make` has a `turn`. */
  #turn(turn: SyntheticTurn, repair: ToolCallRepair): unknown {
    this.record(repair);
    const make = this.#make.turn as NonNullable<ToolMessageFactory["turn"]>;
    return make(turn === "reply" ? "ai" : "human", {
      content: turnText(turn, this.#resolvedLocale()),
      response_metadata: this.#policy.markSynthetic ? syntheticTurnMetadata() : {},
    });
  }

  #resolvedLocale(): string | undefined {
    if (!this.#localeResolved) {
      this.#locale = localeOf(this.#context, this.#policy);
      this.#localeResolved = true;
    }
    return this.#locale;
  }

  /**
   * The placeholder for the call `id` (tool `name`, of `kind`) of the AI message at `aiIndex` in
   * the input, which the caller writes at `outputIndex`. Given field by field: this runs for every
   * dangling call, where an object per call showed.
   */
  placeholder(
    aiIndex: number,
    id: string,
    name: string,
    reason: PlaceholderReason,
    kind: CallKind,
    outputIndex: number,
  ): unknown {
    const { text, error } = placeholderText(
      this.#policy.placeholder,
      { toolName: name, toolCallId: id, reason },
      this.#resolvedLocale(),
    );
    const repair: Mutable<ToolCallRepair> = {
      kind: "placeholder_inserted",
      toolCallId: id,
      toolName: name,
      reason,
      callIndex: aiIndex,
      outputIndex,
    };
    if (error !== undefined) repair.placeholderError = error;
    this.record(repair);
    const answer = answerKindOf(kind, this.#target) ?? "function";
    return createPlaceholder(id, name, reason, text, answer, this.#policy, this.#make);
  }
}
