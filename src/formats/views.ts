/**
 * The engine's views of a native history, and its output written back: each part of a native
 * message becomes one small plain object the engine reads like any LangChain-shaped message,
 * tagged with where it came from, so that the repaired sequence can be translated back through the
 * format, every native message whose parts all came through unchanged and in order returned as
 * the very same object.
 */
import type { PlaceholderReason } from "../core/locales.js";
import { syntheticReasonOf } from "../core/placeholder-message.js";
import type { HistoryRepair, ToolCallRepair } from "../core/repair-log.js";
import { REASON_VALUE_INTERRUPTED } from "../telemetry/semconv.js";
import type {
  FormatRepairResult,
  MessageFormat,
  MessagePart,
  RepairedItem,
} from "./message-format.js";

/** Where a view came from: its message, and its part among the message's parts. */
const ORIGIN = Symbol("tool-call-resilience.origin");

interface Origin {
  readonly index: number;
  readonly part: number;
  readonly parts: number;
}

/** One part of a native message, as the engine reads it. */
export type View = Record<string | symbol, unknown> & { [ORIGIN]: Origin };

const OTHER_PART: readonly MessagePart[] = Object.freeze([{ role: "other" }]);

/** The index of the native message a view is a part of. */
export function messageIndexOf(view: View): number {
  return view[ORIGIN].index;
}

/** The engine's views of a history: one plain object per message part. */
export function viewsOf<M>(format: MessageFormat<M>, messages: readonly M[]): View[] {
  const views: View[] = [];
  for (let index = 0; index < messages.length; index++) {
    const read = format.partsOf(messages[index] as M);
    // Every message has a place in the history, even one the format reads as nothing.
    const parts = read.length === 0 ? OTHER_PART : read;
    for (let part = 0; part < parts.length; part++) {
      views.push(viewOf(parts[part] as MessagePart, { index, part, parts: parts.length }));
    }
  }
  return views;
}

function viewOf(part: MessagePart, origin: Origin): View {
  switch (part.role) {
    case "assistant": {
      // The engine reads unparsable OpenAI-shaped arguments as invalid, with or without an id.
      const calls = part.calls.map((call) =>
        call.invalidArguments === true
          ? { id: call.id, name: call.name, args: {}, function: { arguments: "" } }
          : { id: call.id, name: call.name, args: {} },
      );
      return { type: "ai", content: "", tool_calls: calls, [ORIGIN]: origin };
    }
    case "tool":
      return { type: "tool", tool_call_id: part.toolCallId, name: part.toolName, [ORIGIN]: origin };
    case "system":
      return { type: "system", [ORIGIN]: origin };
    case "user":
      return { type: "human", [ORIGIN]: origin };
    default:
      return { type: "other", [ORIGIN]: origin };
  }
}

/** Translates the engine's output back into native messages. */
export function written<M>(
  format: MessageFormat<M>,
  messages: readonly M[],
  views: readonly View[],
  result: HistoryRepair<unknown>,
): FormatRepairResult<M> {
  const output = result.messages;
  const reasons = new Map<number, PlaceholderReason>();
  for (const repair of result.repairs) {
    if (repair.kind === "placeholder_inserted" && repair.outputIndex !== undefined) {
      reasons.set(repair.outputIndex, repair.reason ?? REASON_VALUE_INTERRUPTED);
    }
  }
  const items: RepairedItem<M>[] = [];
  /** For each output entry, the item that holds it. */
  const itemOfEntry: number[] = [];
  const unchanged = new Set<unknown>(views);
  for (let at = 0; at < output.length; at++) {
    const entry = output[at] as Partial<View>;
    const origin = entry[ORIGIN];
    if (origin === undefined) {
      itemOfEntry.push(items.length);
      items.push({ kind: "placeholder", placeholder: placeholderOf(entry, reasons.get(at)) });
      continue;
    }
    const message = messages[origin.index] as M;
    if (!unchanged.has(entry)) {
      itemOfEntry.push(items.length);
      items.push(renamed(entry, message, origin));
      continue;
    }
    if (origin.part === 0 && isWholeAt(output, at, origin, unchanged)) {
      for (let part = 0; part < origin.parts; part++) itemOfEntry.push(items.length);
      items.push({ kind: "message", message });
      at += origin.parts - 1;
      continue;
    }
    itemOfEntry.push(items.length);
    items.push({ kind: "part", message, part: origin.part });
  }
  const messagesOut: M[] = [];
  const messageOfItem: number[] = [];
  for (const { message, items: held } of format.write(items)) {
    for (const item of held) messageOfItem[item] = messagesOut.length;
    messagesOut.push(message);
  }
  const repairs = result.repairs.map((repair) =>
    nativeRepair(repair, views, (entry) => messageOfItem[itemOfEntry[entry] as number]),
  );
  return { messages: messagesOut, repairs };
}

/** Whether the output, from `at`, holds every part of one native message, unchanged and in order. */
function isWholeAt(
  output: readonly unknown[],
  at: number,
  origin: Origin,
  unchanged: ReadonlySet<unknown>,
): boolean {
  for (let part = 1; part < origin.parts; part++) {
    const entry = output[at + part] as Partial<View> | undefined;
    if (entry === undefined || !unchanged.has(entry)) return false;
    const next = entry[ORIGIN];
    if (next?.index !== origin.index || next.part !== part) return false;
  }
  return true;
}

function renamed<M>(entry: Partial<View>, message: M, origin: Origin): RepairedItem<M> {
  if (entry.type === "tool") {
    return {
      kind: "renamed_result",
      message,
      part: origin.part,
      toolCallId: String(entry.tool_call_id),
    };
  }
  const calls = Array.isArray(entry.tool_calls)
    ? (entry.tool_calls as { id?: unknown; name?: unknown }[])
    : [];
  return {
    kind: "renamed_calls",
    message,
    part: origin.part,
    ids: calls.map((call) => String(call.id)),
    names: calls.map((call) => String(call.name)),
  };
}

/** A placeholder the engine made, as the format writes it (the engine's marker read as such). */
function placeholderOf(entry: Record<string, unknown>, reason: PlaceholderReason | undefined) {
  return {
    toolCallId: String(entry.tool_call_id),
    toolName: String(entry.name),
    text: typeof entry.content === "string" ? entry.content : String(entry.content),
    reason: reason ?? REASON_VALUE_INTERRUPTED,
    synthetic: syntheticReasonOf(entry) !== undefined,
  };
}

/** A repair with its indices moved from views to native messages. */
function nativeRepair(
  repair: ToolCallRepair,
  views: readonly View[],
  outputMessageOf: (entry: number) => number | undefined,
): ToolCallRepair {
  const native: { -readonly [K in keyof ToolCallRepair]: ToolCallRepair[K] } = { ...repair };
  if (repair.callIndex !== undefined) native.callIndex = views[repair.callIndex]?.[ORIGIN].index;
  if (repair.resultIndex !== undefined) {
    native.resultIndex = views[repair.resultIndex]?.[ORIGIN].index;
  }
  if (repair.outputIndex !== undefined) native.outputIndex = outputMessageOf(repair.outputIndex);
  return native;
}
