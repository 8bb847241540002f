/**
 * What the Anthropic and the AI SDK formats share: a message's content is a list of pieces (blocks,
 * parts), several results travel in one message, and a message may hold results and other pieces
 * side by side. Such a message is read as segments (each result piece its own part, each run of
 * other pieces one part), and the repaired results are written back grouped into one message.
 */
import type {
  MessageFormat,
  MessagePart,
  PlaceholderResult,
  RepairedItem,
  WrittenMessage,
} from "./message-format.js";

/** One part of a message and the pieces of its content that make it up. */
export interface Segment {
  readonly part: MessagePart;
  readonly pieces: readonly unknown[];
}

/** How a grouped format reads and writes its pieces. */
export interface GroupedFormat {
  readonly name: string;
  readonly provider: string | undefined;
  /** The segments of a message, in order; a message without content pieces is one segment. */
  segmentsOf(message: unknown): readonly Segment[];
  /** Whether a segment that is no result goes into the message of the results before it. */
  joinsResults(message: unknown, segment: Segment): boolean;
  /** A message holding these pieces; `source` is the message the first piece came from, if any. */
  messageWith(pieces: readonly unknown[], source: unknown): unknown;
  placeholderPiece(placeholder: PlaceholderResult): unknown;
  resultPieceWithId(piece: unknown, toolCallId: string): unknown;
  /** A copy of an assistant message whose calls get these ids and names, in call order. */
  callsWithIds(message: unknown, ids: readonly string[], names: readonly string[]): unknown;
}

/** A {@link MessageFormat} from a grouped format's pieces. */
export function groupedFormat(format: GroupedFormat): MessageFormat<unknown> {
  // Frozen: the shipped formats are exported, and one changed in place would change every repair.
  return Object.freeze({
    name: format.name,
    provider: format.provider,
    partsOf: (message: unknown) => format.segmentsOf(message).map((segment) => segment.part),
    write: (items: readonly RepairedItem<unknown>[]) => writeGrouped(format, items),
  });
}

function writeGrouped(format: GroupedFormat, items: readonly RepairedItem<unknown>[]) {
  const out: WrittenMessage<unknown>[] = [];
  let pieces: unknown[] = [];
  let held: number[] = [];
  let source: unknown;
  const flush = () => {
    if (held.length === 0) return;
    out.push({ message: format.messageWith(pieces, source), items: held });
    pieces = [];
    held = [];
    source = undefined;
  };
  const join = (index: number, added: readonly unknown[], from: unknown) => {
    pieces.push(...added);
    held.push(index);
    source ??= from;
  };
  items.forEach((item, index) => {
    switch (item.kind) {
      case "placeholder":
        join(index, [format.placeholderPiece(item.placeholder)], undefined);
        return;
      case "renamed_result": {
        const segment = format.segmentsOf(item.message)[item.part];
        const piece = format.resultPieceWithId(segment?.pieces[0], item.toolCallId);
        join(index, [piece], item.message);
        return;
      }
      case "part": {
        const segment = format.segmentsOf(item.message)[item.part];
        if (segment === undefined) return;
        if (segment.part.role === "tool") {
          join(index, segment.pieces, item.message);
          return;
        }
        if (held.length > 0 && format.joinsResults(item.message, segment)) {
          join(index, segment.pieces, item.message);
          flush();
          return;
        }
        flush();
        out.push({ message: format.messageWith(segment.pieces, item.message), items: [index] });
        return;
      }
      case "renamed_calls":
        flush();
        out.push({
          message: format.callsWithIds(item.message, item.ids, item.names),
          items: [index],
        });
        return;
      case "message": {
        // A message of results next to other results goes into their message: the format
        // wants a call's results together, in the message right after it.
        const segments = format.segmentsOf(item.message);
        const next = items[index + 1];
        if (
          segments[0]?.part.role === "tool" &&
          (held.length > 0 || startsWithResult(format, next))
        ) {
          for (const segment of segments) {
            if (segment.part.role === "tool" || format.joinsResults(item.message, segment)) {
              join(index, segment.pieces, item.message);
            } else {
              flush();
              out.push({
                message: format.messageWith(segment.pieces, item.message),
                items: [index],
              });
            }
          }
          return;
        }
        flush();
        out.push({ message: item.message, items: [index] });
        return;
      }
    }
  });
  flush();
  return out;
}

/**
 * A copy of an assistant message whose call pieces (those `isCall` picks) get these ids under
 * `idKey` and these names under `nameKey`, in order; every other piece stays as it is.
 */
export function withCallIds(
  message: unknown,
  ids: readonly string[],
  names: readonly string[],
  isCall: (piece: unknown) => boolean,
  keys: { readonly id: string; readonly name: string },
): unknown {
  const fields = (message ?? {}) as Record<string, unknown>;
  const content = Array.isArray(fields.content) ? fields.content : [];
  let next = 0;
  return {
    ...fields,
    content: content.map((piece) => {
      if (!isCall(piece)) return piece;
      const position = next++;
      return { ...(piece as object), [keys.id]: ids[position], [keys.name]: names[position] };
    }),
  };
}

/** Whether an item opens with a result, and so belongs with the results right before it. */
function startsWithResult(format: GroupedFormat, item: RepairedItem<unknown> | undefined): boolean {
  switch (item?.kind) {
    case "placeholder":
    case "renamed_result":
      return true;
    case "part":
      return format.segmentsOf(item.message)[item.part]?.part.role === "tool";
    case "message":
      return format.segmentsOf(item.message)[0]?.part.role === "tool";
    default:
      return false;
  }
}

/**
 * Splits content pieces into segments: each result piece on its own, each run of other pieces as
 * one segment with the given part.
 */
export function segmentPieces(
  pieces: readonly unknown[],
  resultOf: (piece: unknown) => MessagePart | undefined,
  otherPart: MessagePart,
): Segment[] {
  const segments: Segment[] = [];
  let run: unknown[] = [];
  for (const piece of pieces) {
    const result = resultOf(piece);
    if (result === undefined) {
      run.push(piece);
      continue;
    }
    if (run.length > 0) segments.push({ part: otherPart, pieces: run });
    run = [];
    segments.push({ part: result, pieces: [piece] });
  }
  if (run.length > 0 || segments.length === 0) segments.push({ part: otherPart, pieces: run });
  return segments;
}
