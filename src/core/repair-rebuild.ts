/**
 * The rebuild: the history written anew from the analysis, from the first message the clean path
 * could not vouch for. Each group is written in the order of its calls, results where they exist
 * and placeholders where they do not; calls carry the ids and names they were given, results the
 * ids and kinds of output of the calls they answer; every change is recorded.
 */
import { type ExpandedHistory, expandHumanResults } from "./human-results.js";
import { answeredToolCallIdOf, copyWith, toolMessageNameOf, withAnsweredId } from "./messages.js";
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
import { type CallKind, hasInvalidArguments, type RepairTarget, withWireChanges } from "./wire.js";

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
 * the window that begins at `start`. Returns the input itself when nothing needed repair.
 */
export function rebuild<T>(
  input: readonly T[],
  start: number,
  from: number,
  policy: RepairPolicy,
  context: RepairContext | undefined,
  target: RepairTarget,
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
  if (!analysis.needsRepair && expanded === undefined) {
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
      else output.push(resultAt(index));
      continue;
    }
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
