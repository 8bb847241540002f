/**
 * The rebuild: the history written anew from the analysis, from the first message the clean path
 * could not vouch for. Each group is written in the order of its calls, results where they exist
 * and placeholders where they do not; calls carry the ids and names they were given, results the
 * ids and kinds of output of the calls they answer; every change is recorded.
 */
import { type ExpandedHistory, expandHumanResults } from "./human-results.js";
import {
  answeredToolCallIdOf,
  copyWith,
  MessageKind,
  messageKindOf,
  toolMessageNameOf,
  withAnsweredId,
} from "./messages.js";
import type { RepairPolicy } from "./policy.js";
import { analyze, Fate } from "./repair-analysis.js";
import type { AiEntry, CallSlot } from "./repair-calls.js";
import {
  type HistoryRepair,
  NO_REPAIRS,
  type RepairContext,
  RepairLog,
  type ToolCallRepair,
  UNKNOWN_TOOL_NAME,
} from "./repair-log.js";
import type { ToolMessageFactory } from "./tool-message.js";
import {
  type CallKind,
  hasInvalidArguments,
  isSystemTurn,
  isUserTurn,
  type RepairTarget,
  type TurnOrder,
  withWireChanges,
} from "./wire.js";

/** A copy of a result carrying the markers of this kind of output, and no others. */
function withResultKind(message: unknown, kind: CallKind): unknown {
  const fields = message as Record<string, unknown>;
  const {
    customTool: _custom,
    type: _type,
    ...kwargs
  } = (fields.additional_kwargs ?? {}) as Record<string, unknown>;
  if (kind === "custom") kwargs.customTool = true;
  if (kind === "computer") kwargs.type = "computer_call_output";
  return copyWith(fields, { additional_kwargs: kwargs });
}

/**
 * The repair of a history by the analysis: from `from` on, every message is written again as the
 * analysis decided, and what stands before it is kept as it is; ids are assigned unique across
 * the window that begins at `start`. Where the wire wants them (`turns`), a synthetic reply goes
 * between a tool message and a user message after it, and a synthetic gap (a user turn) before an
 * AI message that the repair left first, or right after another AI message, by taking away what
 * stood before it (an orphan dropped, a result moved to its call). Returns the input itself when
 * nothing needed repair.
 */
export function rebuild<T>(
  input: readonly T[],
  start: number,
  from: number,
  policy: RepairPolicy,
  context: RepairContext | undefined,
  target: RepairTarget,
  turns: TurnOrder,
  make: ToolMessageFactory,
): HistoryRepair<unknown> {
  // Anthropic results in human messages are read, and written, as tool messages.
  const expanded: ExpandedHistory | undefined = expandHumanResults(input, from, make);
  const messages: readonly unknown[] = expanded?.messages ?? input;
  const inputIndexOf = (index: number) => expanded?.origin[index] ?? index;
  const isExtracted = (message: unknown) => expanded?.extracted.has(message) === true;
  const analysis = analyze(messages, start, from, policy, target);
  const { entries, fates, renamed, retyped } = analysis;
  const resultAt = (index: number) => {
    const id = renamed.get(index);
    const kind = retyped.get(index);
    const result = id === undefined ? messages[index] : withAnsweredId(messages[index], id);
    return kind === undefined ? result : withResultKind(result, kind);
  };
  if (
    !analysis.needsRepair &&
    expanded === undefined &&
    !(turns.replyAfterResults && hasUserAfterResult(messages, start, from))
  ) {
    return { messages: input as T[], repairs: NO_REPAIRS };
  }

  const output: unknown[] = messages.slice(0, from);
  const repairs: ToolCallRepair[] = [];
  const log = new RepairLog(policy, context, target, make, repairs);
  const emitPlaceholder = (slot: CallSlot) =>
    output.push(
      log.placeholder(
        inputIndexOf(slot.owner.index),
        slot.id,
        slot.name,
        hasInvalidArguments(slot.owner.message, slot.wire) ? "invalid_arguments" : "interrupted",
        slot.wire.kind,
        output.length,
      ),
    );
  /** Emits a result; one that stood as a block in a human message is recorded as moved. */
  const emitResult = (index: number, slot: CallSlot | undefined) => {
    const message = messages[index];
    if ((slot?.misplaced === true && policy.misplaced === "regroup") || isExtracted(message)) {
      log.record({
        kind: "result_moved",
        toolCallId: slot?.id ?? answeredToolCallIdOf(message) ?? "",
        toolName: slot?.name ?? toolMessageNameOf(message) ?? UNKNOWN_TOOL_NAME,
        ...(slot === undefined ? {} : { callIndex: inputIndexOf(slot.owner.index) }),
        resultIndex: inputIndexOf(index),
        outputIndex: output.length,
      });
    }
    output.push(resultAt(index));
  };

  /** Writes the synthetic turn the wire wants before the message at `index`, if any. */
  const turnBefore = (index: number) => {
    const message = messages[index];
    // Before `from`, the output's indexes are the input's: a result before the window is not read.
    if (turns.replyAfterResults && isUserTurn(message) && endsWithResult(output, start)) {
      const ai = previousAiMessage(messages, start, index);
      const aiIndex = ai < 0 ? undefined : inputIndexOf(ai);
      output.push(log.reply(output[output.length - 1], aiIndex, output.length));
      return;
    }
    if (!turns.userBeforeAssistant || messageKindOf(message) !== MessageKind.Ai) return;
    // The repair took away what stood between this AI message and the turn before it.
    const before = previousTurn(messages, start, index);
    if (before < 0 || messageKindOf(messages[before]) === MessageKind.Ai) return;
    if (lastTurnIsAssistant(output)) {
      output.push(log.gap(messages[before], inputIndexOf(before), output.length));
    }
  };

  for (let index = from; index < messages.length; index++) {
    const fate = fates.get(index);
    const message = messages[index];
    if (fate === Fate.Dropped) {
      log.record({
        kind: "orphan_dropped",
        toolCallId: answeredToolCallIdOf(message) ?? "",
        toolName: toolMessageNameOf(message) ?? UNKNOWN_TOOL_NAME,
        resultIndex: inputIndexOf(index),
      });
      continue;
    }
    if (fate === Fate.Consumed) continue;
    const entry = entries.get(index);
    if (entry === undefined) {
      if (isExtracted(message)) emitResult(index, undefined);
      else {
        if (messageKindOf(message) !== MessageKind.Tool) turnBefore(index);
        output.push(resultAt(index));
      }
      continue;
    }
    turnBefore(index);
    const written = writeCalls(entry, log, inputIndexOf(index), output.length);
    output.push(written);

    if (policy.misplaced === "keep") {
      // As the original design: placeholders directly after the AI message, nothing else moves.
      for (const slot of entry.slots) if (slot.answeredBy < 0) emitPlaceholder(slot);
      continue;
    }
    const touched = entry.slots.some((slot) => slot.answeredBy < 0 || slot.misplaced);
    if (!touched) continue;
    // Rebuild the group in the order of the calls; its results are taken out of their old places.
    for (const slot of entry.slots) {
      if (slot.answeredBy < 0) {
        emitPlaceholder(slot);
        continue;
      }
      fates.set(slot.answeredBy, Fate.Consumed);
      emitResult(slot.answeredBy, slot);
    }
  }
  return { messages: output, repairs };
}

/** Whether a user message stands right after a tool message of the window, from `from` on. */
function hasUserAfterResult(messages: readonly unknown[], start: number, from: number): boolean {
  for (let index = Math.max(from, start + 1); index < messages.length; index++) {
    if (isUserTurn(messages[index]) && messageKindOf(messages[index - 1]) === MessageKind.Tool) {
      return true;
    }
  }
  return false;
}

/**
 * The index of the last AI message before `index` and at `start` or after (whose results a reply
 * follows), or -1.
 */
function previousAiMessage(messages: readonly unknown[], start: number, index: number): number {
  let before = index - 1;
  while (before >= start && messageKindOf(messages[before]) !== MessageKind.Ai) before--;
  return before < start ? -1 : before;
}

/**
 * The index of the last turn before `index` and at `start` or after (system messages are no
 * turns), or -1.
 */
function previousTurn(messages: readonly unknown[], start: number, index: number): number {
  for (let before = index - 1; before >= start; before--) {
    if (!isSystemTurn(messages[before])) return before;
  }
  return -1;
}

/**
 * Whether the last turn written is an AI message, or there is none. Only asked when the repair
 * took something away, which it does only with a window that starts at the first message.
 */
function lastTurnIsAssistant(output: readonly unknown[]): boolean {
  const last = previousTurn(output, 0, output.length);
  return last < 0 || messageKindOf(output[last]) === MessageKind.Ai;
}

/** Whether the last message written is a tool message, at `start` or after. */
function endsWithResult(output: readonly unknown[], start: number): boolean {
  const last = output.length - 1;
  return last >= start && messageKindOf(output[last]) === MessageKind.Tool;
}

/**
 * The AI message as it is sent: with new ids and names written to every channel of each call,
 * and (for `"any"`) every call written where a client lacked it. Records those repairs.
 */
function writeCalls(
  entry: AiEntry,
  log: RepairLog,
  callIndex: number,
  outputIndex: number,
): unknown {
  const { view } = entry;
  for (const slot of entry.slots) {
    const change = entry.changes.get(slot.wireIndex);
    if (change?.id !== undefined) {
      log.record({
        kind: "id_assigned",
        toolCallId: change.id,
        toolName: slot.name,
        callIndex,
        outputIndex,
      });
    }
    if (change?.name !== undefined) {
      log.record({
        kind: "name_assigned",
        toolCallId: slot.id,
        toolName: change.name,
        callIndex,
        outputIndex,
      });
    }
  }
  const written = withWireChanges(entry.message, view, entry.changes, entry.sync, copyWith);
  for (const wireIndex of written.listed) {
    const slot = entry.slots.find((candidate) => candidate.wireIndex === wireIndex);
    log.record({
      kind: "call_listed",
      toolCallId: slot?.id ?? "",
      toolName: slot?.name ?? UNKNOWN_TOOL_NAME,
      callIndex,
      outputIndex,
    });
  }
  return written.message;
}
