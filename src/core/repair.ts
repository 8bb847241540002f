/**
 * The repair engine: pure and synchronous. One allocation-free pass decides whether the history is
 * well formed; only when it is not does a second pass match results to calls and rebuild it. This
 * module is its entry: it picks the path. Its parts live beside it: `insert-placeholders.ts` when
 * calls without results are all that is wrong; `repair-calls.ts`, `repair-analysis.ts` and
 * `repair-rebuild.ts` for the rest; `repair-log.ts` and `placeholder-message.ts` for what every
 * path records and inserts; `repair-kinds.ts` for the kinds of repair.
 */
import { notOneOf, ToolCallResilienceOptionsError } from "./errors.js";
import { shieldHistory } from "./hostile.js";
import { insertPlaceholders } from "./insert-placeholders.js";
import { findMissingResults } from "./missing-results.js";
import {
  createRepairPolicy,
  DEFAULT_REPAIR_POLICY,
  isRepairPolicy,
  type RepairOptions,
  type RepairPolicy,
} from "./policy.js";
import { keepsUnmatchedResults } from "./repair-analysis.js";
import { type HistoryRepair, NO_REPAIRS, type RepairContext } from "./repair-log.js";
import { rebuild } from "./repair-rebuild.js";
import type { ToolMessageFactory } from "./tool-message.js";
import { firstUnsoundIndex } from "./well-formed.js";
import {
  NO_TURN_ORDER,
  REPAIR_TARGETS,
  type RepairTarget,
  type TurnOrder,
  turnOrderOf,
} from "./wire.js";

/**
 * The engine: {@link repairToolCalls} with the tool messages it writes made by `make`, for
 * histories of any message library (the native-format adapters pass plain objects).
 *
 * @param messages - the history: messages LangChain-shaped, or plain objects of the same shape
 * @param make - makes each tool message the engine writes
 * @param policy - a policy from {@link createRepairPolicy}, or options to validate on the spot
 * @param context - per-call settings, such as the locale of this request
 * @throws {ToolCallResilienceOptionsError} only when `policy` is given as invalid options, or the
 *   context names an unknown target
 *
 * @example
 * ```ts
 * repairHistory(history, plainToolMessage).messages; // placeholders as { type: "tool", ... }
 * ```
 */
export function repairHistory<T, R>(
  messages: readonly T[],
  make: ToolMessageFactory<R>,
  policy?: RepairPolicy | RepairOptions,
  context?: RepairContext,
): HistoryRepair<T | R> {
  const resolved = resolvePolicy(policy);
  const target = targetOf(resolved, context);
  try {
    // A revoked proxy throws even here.
    if (!Array.isArray(messages)) return { messages: messages as T[], repairs: NO_REPAIRS };
    return repairReadable(messages, resolved, context, target, make) as HistoryRepair<T | R>;
  } catch {
    // An entry that throws when read (a getter, a proxy): it is no message any client can send,
    // so it is repaired around as junk. Nothing in a history makes the engine throw.
    return repairAroundUnreadable(messages, resolved, context, target, make) as HistoryRepair<
      T | R
    >;
  }
}

function targetOf(policy: RepairPolicy, context: RepairContext | undefined): RepairTarget {
  const target = context?.target;
  if (target === undefined) return policy.target;
  // A list of four: cheaper to scan than a set's hash, on every model call.
  if ((REPAIR_TARGETS as readonly unknown[]).includes(target)) return target;
  throw new ToolCallResilienceOptionsError(
    [{ path: "target", message: notOneOf(REPAIR_TARGETS, target) }],
    { subject: "repair context" },
  );
}

function repairReadable<T>(
  messages: readonly T[],
  resolved: RepairPolicy,
  context: RepairContext | undefined,
  target: RepairTarget,
  make: ToolMessageFactory,
): HistoryRepair<unknown> {
  const start = windowStart(messages.length, resolved.window);
  const keepUnmatched = keepsUnmatchedResults(resolved, start);
  const turns = turnOrderFor(target, make);
  const unsound = firstUnsoundIndex(messages, start, keepUnmatched, target, turns);
  if (unsound === messages.length) return { messages: messages as unknown[], repairs: NO_REPAIRS };
  const missing = keepUnmatched ? undefined : findMissingResults(messages, unsound, target, turns);
  if (missing !== undefined) {
    return insertPlaceholders(messages, missing, resolved, context, target, turns, make);
  }
  // A result kept where it stood (a stray the clean path let pass) may be the one a later call
  // lacks: the analysis then reads the whole window.
  const from = keepUnmatched ? start : unsound;
  return rebuild(messages, start, from, resolved, context, target, turns, make);
}

/** The turns a repair for `target` writes: none when `make` cannot make them. */
function turnOrderFor(target: RepairTarget, make: ToolMessageFactory): TurnOrder {
  return make.turn === undefined ? NO_TURN_ORDER : turnOrderOf(target);
}

/**
 * The repair of a history with unreadable entries: each is read as junk and stays where it is.
 * If even that throws, the history is passed on as it is.
 */
function repairAroundUnreadable<T>(
  messages: readonly T[],
  resolved: RepairPolicy,
  context: RepairContext | undefined,
  target: RepairTarget,
  make: ToolMessageFactory,
): HistoryRepair<unknown> {
  try {
    const shielded = shieldHistory(messages);
    if (shielded === undefined) return { messages: messages as unknown[], repairs: NO_REPAIRS };
    const result = repairReadable(shielded.messages, resolved, context, target, make);
    if (result.messages === shielded.messages) {
      return { messages: messages as unknown[], repairs: NO_REPAIRS };
    }
    return { messages: shielded.restore(result.messages), repairs: result.repairs };
  } catch {
    return { messages: messages as unknown[], repairs: NO_REPAIRS };
  }
}

/**
 * The engine without its shortcuts: the careful analysis of the whole window, every time. Not part
 * of the public surface; the tests hold {@link repairHistory} to giving the same result.
 *
 * @example
 * ```ts
 * expect(repairHistory(history, make)).toEqual(repairHistoryCarefully(history, make));
 * ```
 */
export function repairHistoryCarefully<T, R>(
  messages: readonly T[],
  make: ToolMessageFactory<R>,
  policy?: RepairPolicy | RepairOptions,
  context?: RepairContext,
): HistoryRepair<T | R> {
  const resolved = resolvePolicy(policy);
  const start = windowStart(messages.length, resolved.window);
  const target = targetOf(resolved, context);
  const turns = turnOrderFor(target, make);
  return rebuild(messages, start, start, resolved, context, target, turns, make) as HistoryRepair<
    T | R
  >;
}

function resolvePolicy(policy: RepairPolicy | RepairOptions | undefined): RepairPolicy {
  if (policy === undefined) return DEFAULT_REPAIR_POLICY;
  return isRepairPolicy(policy) ? policy : createRepairPolicy(policy);
}

function windowStart(length: number, window: number | undefined): number {
  return window === undefined || window >= length ? 0 : length - window;
}
