/**
 * Reads a stream of JSON bytes as a sequence of parsed values without holding more than one of
 * them at a time: each top-level value, or, for a top-level array, its opening, each element and
 * its close. Every event carries the line it starts on, so bad JSON is named by its line, and its
 * bytes, so what needs no change is written back as it was read.
 *
 * The text is read in one of two layouts. JSONL holds one value a line: each line is read on its
 * own, and a broken line is reported and skipped, so the lines after it are still read. A JSON
 * document spans lines (a pretty-printed array or object, or such values one after another): it
 * is read to its first syntax error, past which nothing can be trusted. Which layout the text is
 * in is told by its first line (see {@link jsonEvents}), unless the caller knows it.
 *
 * The scanner only finds where each value starts and ends, on the bytes as they arrive (a string
 * is crossed with `indexOf`, not a character at a time), and `JSON.parse` reads each value. No
 * streaming JSON library in the stack gives line numbers and bytes.
 */
import { constants } from "node:buffer";

/** How the text is laid out: a value a line, or one JSON document over many lines. */
export type JsonLayout = "lines" | "document";

/** What the stream held next. */
export type JsonEvent =
  /** A complete top-level value other than an array. */
  | { readonly kind: "value"; readonly value: unknown; readonly raw: Buffer; readonly line: number }
  /** A top-level array begins; `raw` is its `[`. */
  | { readonly kind: "open"; readonly raw: Buffer; readonly line: number }
  /** A complete element of a top-level array. */
  | {
      readonly kind: "element";
      readonly value: unknown;
      readonly raw: Buffer;
      readonly line: number;
    }
  /** A top-level array ends; `raw` is its `]`. */
  | { readonly kind: "close"; readonly raw: Buffer; readonly line: number }
  /** The bytes between values: whitespace, and the commas of a top-level array. */
  | { readonly kind: "gap"; readonly raw: Buffer }
  /**
   * Bad JSON on `line`. In JSONL, the rest of that line is skipped (a top-level array opened on
   * it never closes) and reading goes on with the next line; in a JSON document, it is the last
   * event.
   */
  | { readonly kind: "error"; readonly message: string; readonly line: number };

/** What is known of the text before it is read. */
interface JsonEventsOptions {
  /** The layout when the caller knows it (a file named `.jsonl`, say); told from the text if not. */
  readonly layout?: JsonLayout;
  /** The longest value read, in bytes; the longest string JavaScript can hold by default. */
  readonly maxValueBytes?: number;
}

/** The bytes of JSON's syntax, which UTF-8 never uses inside a character of more than one. */
export const QUOTE = 0x22;
export const BACKSLASH = 0x5c;
const NEWLINE = 0x0a;
export const COMMA = 0x2c;
const COLON = 0x3a;
export const OPEN_BRACE = 0x7b;
export const CLOSE_BRACE = 0x7d;
export const OPEN_BRACKET = 0x5b;
export const CLOSE_BRACKET = 0x5d;
const BYTE_ORDER_MARK = Buffer.from([0xef, 0xbb, 0xbf]);

/** Whether a byte is JSON whitespace. */
export function isWhitespace(byte: number | undefined): boolean {
  return byte === 0x20 || byte === NEWLINE || byte === 0x0d || byte === 0x09;
}

function countNewlines(bytes: Buffer): number {
  let count = 0;
  for (let at = bytes.indexOf(NEWLINE); at !== -1; at = bytes.indexOf(NEWLINE, at + 1)) count++;
  return count;
}

/** `JSON.parse`, with an error's position turned into a line of the input. */
function parseValue(text: string, line: number): { value: unknown } | { error: JsonEventError } {
  try {
    return { value: JSON.parse(text) };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    // Node names the position in the value's text; the line is counted from where it starts.
    const position = /position (\d+)/.exec(message)?.[1];
    const offset =
      position === undefined ? 0 : (text.slice(0, Number(position)).match(/\n/g)?.length ?? 0);
    return {
      error: {
        kind: "error",
        message: message.replace(/ at position \d+.*$/s, ""),
        line: line + offset,
      },
    };
  }
}

type JsonEventError = Extract<JsonEvent, { kind: "error" }>;

/** Which value is being read: a string, an object or array, or a number or literal. */
type ValueKind = "string" | "container" | "bare";

/**
 * The splitter itself: fed the input a chunk at a time, it queues the events it finds. Newlines
 * end values in JSONL; in a JSON document they are whitespace.
 */
class JsonSplitter {
  /** The events found and not yet taken. */
  readonly events: JsonEvent[] = [];
  readonly #maxValueBytes: number;
  #layout: JsonLayout | undefined;
  #line = 1;
  /** The value being read, if any: its kind, its bytes so far, and the line it starts on. */
  #value: ValueKind | undefined;
  #parts: Buffer[] = [];
  #bytes = 0;
  #startLine = 0;
  /** Nesting inside the value being read, and where in a string it is. */
  #depth = 0;
  #inString = false;
  #escaped = false;
  /** The bytes between values since the last event. */
  #gap: Buffer[] = [];
  /** Where, in the chunk being read, the value being read or the gap began. */
  #valueFrom = 0;
  #gapFrom = 0;
  /** The next backslash, quote and newline at or after a position of the chunk (-1: none). */
  #next = { [BACKSLASH]: -2, [QUOTE]: -2, [NEWLINE]: -2 } as Record<number, number>;
  /** Whether the top-level value is an array whose elements are being split out. */
  #inTopArray = false;
  /** In a top-level array: whether an element may come next (after `[` or `,`). */
  #expectElement = false;
  /** How many elements the top-level array has had so far. */
  #elements = 0;
  /** JSONL: the events of this line that wait for its end, since what follows may break it. */
  #held: JsonEvent[] = [];
  /** JSONL: whether this line has had a complete top-level value (so only whitespace may follow). */
  #lineDone = false;
  /** JSONL: whether this line is broken and is skipped to its end. */
  #lineBroken = false;
  /** Whether anything but whitespace has been read (the layout is told by the first such line). */
  #seenValue = false;
  /** Whether a byte has been read (a byte order mark is only skipped at the very start). */
  #started = false;
  /** A JSON document broke: nothing more is read. */
  #stopped = false;
  /** The first line went on past its end: what followed, held until it tells the layout. */
  #pending: Buffer[] | undefined;

  constructor(layout: JsonLayout | undefined, maxValueBytes: number) {
    this.#layout = layout;
    this.#maxValueBytes = maxValueBytes;
  }

  /** Whether nothing more will be read: a JSON document broke. */
  get stopped(): boolean {
    return this.#stopped;
  }

  /** Reads the next chunk of the input. */
  feed(chunk: Buffer): void {
    let replay: Buffer | undefined = chunk;
    while (replay !== undefined && !this.#stopped) replay = this.#read(replay);
  }

  /** The input has ended. */
  finish(): void {
    if (this.#stopped) return;
    if (this.#pending !== undefined) {
      // Nothing followed the first line: it was one line, cut off.
      this.#layout = "lines";
      const replay = Buffer.concat(this.#pending);
      this.#pending = undefined;
      this.feed(replay);
      if (this.#stopped) return;
    }
    if (this.#layout !== "document") {
      this.#endLine(-1);
      return;
    }
    if (this.#value === "bare") this.#complete();
    if (this.#value !== undefined || this.#inTopArray) {
      // The lines of a value are counted when it is whole: this one never was.
      const within = this.#parts.reduce((count, part) => count + countNewlines(part), 0);
      this.#error("Unexpected end of JSON input", this.#line + within);
      return;
    }
    this.#flushGap();
  }

  /** Reads a chunk; returns what is to be read again once the first line told the layout. */
  #read(chunk: Buffer): Buffer | undefined {
    const end = chunk.length;
    let at = 0;
    if (!this.#started && end > 0) {
      this.#started = true;
      if (chunk.subarray(0, 3).equals(BYTE_ORDER_MARK)) at = 3;
    }
    this.#valueFrom = 0;
    this.#gapFrom = 0;
    this.#next[BACKSLASH] = this.#next[QUOTE] = this.#next[NEWLINE] = -2;
    while (at < end) {
      if (this.#stopped) return undefined;
      if (this.#pending !== undefined) return this.#awaitLayout(chunk, at);
      if (this.#lineBroken) {
        const newline = this.#nextOf(chunk, NEWLINE, at);
        if (newline === -1) return undefined;
        at = newline;
      }
      at = this.#value === undefined ? this.#between(chunk, at) : this.#inValue(chunk, at);
    }
    if (this.#stopped || this.#lineBroken || this.#pending !== undefined) return undefined;
    if (this.#value === undefined) {
      if (end > this.#gapFrom) this.#gap.push(chunk.subarray(this.#gapFrom, end));
      return undefined;
    }
    if (end > this.#valueFrom) {
      this.#parts.push(chunk.subarray(this.#valueFrom, end));
      this.#bytes += end - this.#valueFrom;
    }
    if (this.#bytes > this.#maxValueBytes) this.#tooLong();
    return undefined;
  }

  /** The position of the next `byte` at or after `from`, or -1: each looked for once a stretch. */
  #nextOf(chunk: Buffer, byte: number, from: number): number {
    const known = this.#next[byte] ?? -2;
    if (known === -1 || known >= from) return known;
    const found = chunk.indexOf(byte, from);
    this.#next[byte] = found;
    return found;
  }

  /** Reads on in the value being read; returns where reading stopped. */
  #inValue(chunk: Buffer, from: number): number {
    const end = chunk.length;
    const lines = this.#layout !== "document";
    let at = from;
    if (this.#value === "bare") {
      for (; at < end; at++) {
        const byte = chunk[at];
        if (
          isWhitespace(byte) ||
          byte === COMMA ||
          byte === CLOSE_BRACKET ||
          (byte === CLOSE_BRACE && !this.#inTopArray)
        ) {
          // The delimiter is read again, between values.
          this.#completeAt(chunk, at);
          return at;
        }
      }
      return end;
    }
    for (;;) {
      if (this.#inString) {
        if (this.#escaped) {
          if (lines && chunk[at] === NEWLINE) return this.#valueCutAt(chunk, at);
          this.#escaped = false;
          at++;
          if (at >= end) return end;
        }
        const quote = this.#nextOf(chunk, QUOTE, at);
        const backslash = this.#nextOf(chunk, BACKSLASH, at);
        const stop = quote === -1 ? end : quote;
        if (lines) {
          const newline = this.#nextOf(chunk, NEWLINE, at);
          if (newline !== -1 && newline < stop && (backslash === -1 || newline < backslash)) {
            return this.#valueCutAt(chunk, newline);
          }
        }
        if (backslash !== -1 && backslash < stop) {
          this.#escaped = true;
          at = backslash + 1;
          if (at >= end) return end;
          continue;
        }
        if (quote === -1) return end;
        this.#inString = false;
        at = quote + 1;
        if (this.#value === "string") {
          this.#completeAt(chunk, at);
          return at;
        }
      }
      for (; at < end; at++) {
        const byte = chunk[at];
        if (byte === QUOTE) break;
        if (byte === OPEN_BRACE || byte === OPEN_BRACKET) this.#depth++;
        else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) {
          if (--this.#depth === 0) {
            this.#completeAt(chunk, at + 1);
            return at + 1;
          }
        } else if (byte === NEWLINE && lines) return this.#valueCutAt(chunk, at);
      }
      if (at >= end) return end;
      this.#inString = true;
      at++;
      if (at >= end) return end;
    }
  }

  /** Reads one byte between values; returns the position after it. */
  #between(chunk: Buffer, at: number): number {
    const byte = chunk[at] as number;
    if (byte === NEWLINE) {
      if (this.#layout !== "document") return this.#endLine(at, chunk);
      this.#line++;
      return at + 1;
    }
    if (isWhitespace(byte)) return at + 1;
    this.#seenValue = true;
    if (this.#lineDone) {
      this.#error("Unexpected non-whitespace character after JSON", this.#line);
      return at + 1;
    }
    if (byte === OPEN_BRACE && this.#layout !== "document" && !this.#inTopArray) {
      const end = this.#wholeLine(chunk, at);
      if (end !== -1) return end;
    }
    const char = String.fromCharCode(byte);
    if (this.#inTopArray) {
      if (byte === CLOSE_BRACKET) {
        if (this.#expectElement && this.#elements > 0) {
          this.#error(`Unexpected ${JSON.stringify(char)} in JSON`, this.#line);
          return at + 1;
        }
        this.#inTopArray = false;
        this.#flushGap(chunk, at);
        this.#gapFrom = at + 1;
        this.#emitTopLevel({ kind: "close", raw: chunk.subarray(at, at + 1), line: this.#line });
        return at + 1;
      }
      if (byte === COMMA) {
        if (this.#expectElement) this.#error(`Unexpected "," in JSON`, this.#line);
        else this.#expectElement = true;
        return at + 1;
      }
      if (!this.#expectElement) {
        this.#error(`Expected ',' or ']' after array element in JSON`, this.#line);
        return at + 1;
      }
      this.#expectElement = false;
      this.#elements++;
    } else if (byte === OPEN_BRACKET) {
      this.#inTopArray = true;
      this.#expectElement = true;
      this.#elements = 0;
      this.#flushGap(chunk, at);
      this.#gapFrom = at + 1;
      this.events.push({ kind: "open", raw: chunk.subarray(at, at + 1), line: this.#line });
      return at + 1;
    } else if (byte === CLOSE_BRACKET || byte === COMMA || byte === CLOSE_BRACE || byte === COLON) {
      this.#error(`Unexpected ${JSON.stringify(char)} in JSON`, this.#line);
      return at + 1;
    }
    if (at > this.#gapFrom) this.#gap.push(chunk.subarray(this.#gapFrom, at));
    this.#valueFrom = at;
    this.#startLine = this.#line;
    this.#parts = [];
    this.#bytes = 0;
    if (byte === QUOTE) {
      this.#value = "string";
      this.#inString = true;
      return at + 1;
    }
    if (byte === OPEN_BRACE || byte === OPEN_BRACKET) {
      this.#value = "container";
      this.#depth = 1;
      return at + 1;
    }
    this.#value = "bare";
    return at;
  }

  /**
   * JSONL's common case, read at `JSON.parse`'s own speed: an object that is the rest of its line,
   * found whole in this chunk. Returns where it ends, or -1 when the line is not that (it is then
   * read byte by byte, which names what is wrong with it).
   */
  #wholeLine(chunk: Buffer, at: number): number {
    const newline = this.#nextOf(chunk, NEWLINE, at);
    if (newline === -1) return -1;
    let end = newline;
    while (isWhitespace(chunk[end - 1])) end--;
    if (end - at > this.#maxValueBytes) return -1;
    let value: unknown;
    try {
      value = JSON.parse(chunk.toString("utf8", at, end));
    } catch {
      return -1;
    }
    if (at > this.#gapFrom) this.#gap.push(chunk.subarray(this.#gapFrom, at));
    this.#flushGap();
    this.#emitTopLevel({ kind: "value", value, raw: chunk.subarray(at, end), line: this.#line });
    this.#gapFrom = end;
    return end;
  }

  /** A line ends inside a value (JSONL): its bytes so far are kept, and the line ends there. */
  #valueCutAt(chunk: Buffer, newline: number): number {
    if (newline > this.#valueFrom) {
      this.#parts.push(chunk.subarray(this.#valueFrom, newline));
      this.#bytes += newline - this.#valueFrom;
    }
    this.#valueFrom = newline;
    return this.#endLine(newline, chunk);
  }

  /** The value being read ends before `end` in `chunk`. */
  #completeAt(chunk: Buffer, end: number): void {
    this.#parts.push(chunk.subarray(this.#valueFrom, end));
    this.#bytes += end - this.#valueFrom;
    this.#gapFrom = end;
    this.#complete();
  }

  /** A value has been read whole: parses it and reports it. */
  #complete(): void {
    const raw = this.#parts.length === 1 ? (this.#parts[0] as Buffer) : Buffer.concat(this.#parts);
    this.#parts = [];
    this.#value = undefined;
    if (raw.length > this.#maxValueBytes) {
      this.#tooLong();
      return;
    }
    const parsed = parseValue(raw.toString("utf8"), this.#startLine);
    if (this.#layout === "document") this.#line += countNewlines(raw);
    if ("error" in parsed) {
      this.#error(parsed.error.message, parsed.error.line);
      return;
    }
    this.#flushGap();
    if (this.#inTopArray) {
      // Elements go out at once: a whole array on one line is still read an element at a time.
      this.events.push({ kind: "element", value: parsed.value, raw, line: this.#startLine });
    } else this.#emitTopLevel({ kind: "value", value: parsed.value, raw, line: this.#startLine });
  }

  #tooLong(): void {
    this.#error(
      `A value of more than ${this.#maxValueBytes.toLocaleString("en-US")} bytes: longer than the longest string JavaScript can hold`,
      this.#startLine,
    );
  }

  /** The gap read so far (up to `until` in `chunk`) goes out as one event. */
  #flushGap(chunk?: Buffer, until = 0): void {
    if (chunk !== undefined && until > this.#gapFrom) {
      this.#gap.push(chunk.subarray(this.#gapFrom, until));
    }
    if (this.#gap.length === 0) return;
    const raw = this.#gap.length === 1 ? (this.#gap[0] as Buffer) : Buffer.concat(this.#gap);
    this.#gap = [];
    this.events.push({ kind: "gap", raw });
  }

  /** In JSONL, a top-level value (or an array's close) waits for the end of its line. */
  #emitTopLevel(event: JsonEvent): void {
    if (this.#layout === "document") {
      this.events.push(event);
      return;
    }
    this.#held.push(event);
    this.#lineDone = true;
  }

  #error(message: string, line: number): void {
    this.events.push({ kind: "error", message, line });
    this.#value = undefined;
    this.#parts = [];
    this.#gap = [];
    this.#depth = 0;
    this.#inString = false;
    this.#escaped = false;
    this.#inTopArray = false;
    this.#expectElement = false;
    this.#held = [];
    if (this.#layout === "document") this.#stopped = true;
    else this.#lineBroken = true;
  }

  /**
   * A line ends outside a JSON document, at `newline` in `chunk` (-1: the input ends). Returns
   * where reading goes on.
   */
  #endLine(newline: number, chunk?: Buffer): number {
    const last = newline === -1;
    if (this.#value === "bare" && !this.#lineBroken) this.#complete();
    const open = this.#value !== undefined || this.#inTopArray;
    if (this.#layout === undefined && !last && this.#seenValue) {
      if (open && this.#value === undefined && this.#expectElement) {
        // `[` or `[...,` ending the first line: an array laid out over lines.
        this.#layout = "document";
        this.#line++;
        return newline + 1;
      }
      if (open || this.#lineBroken) {
        // What comes next tells: a line starting a value of its own, or the rest of this one.
        this.#pending = [];
        return newline;
      }
      this.#layout = "lines";
    }
    if (open && !this.#lineBroken) this.#error("Unexpected end of JSON input", this.#line);
    this.events.push(...this.#held);
    this.#held = [];
    this.#value = undefined;
    this.#inTopArray = false;
    this.#lineDone = false;
    this.#lineBroken = false;
    if (last || chunk === undefined) {
      this.#flushGap();
      return newline;
    }
    // A broken line's bytes may go into the gap: an input with an error is never written back.
    if (newline > this.#gapFrom) this.#gap.push(chunk.subarray(this.#gapFrom, newline));
    this.#line++;
    this.#gapFrom = newline;
    return newline + 1;
  }

  /**
   * The first line went on past its end. When the next non-blank line starts, in its first
   * column, a value of its own (`{` or `[`), the input is JSONL whose first line is broken; else
   * the first line's value goes on over the next ones, as in a pretty-printed document. What was
   * held is then read again in the layout told.
   */
  #awaitLayout(chunk: Buffer, from: number): Buffer | undefined {
    const pending = this.#pending ?? [];
    let at = from;
    while (at < chunk.length && isWhitespace(chunk[at])) at++;
    pending.push(chunk.subarray(from));
    if (at === chunk.length) return undefined;
    const first = chunk[at];
    const before = at > from ? chunk[at - 1] : pending.at(-2)?.at(-1);
    const startsLine = before === NEWLINE;
    this.#pending = undefined;
    this.#layout =
      startsLine && (first === OPEN_BRACE || first === OPEN_BRACKET) ? "lines" : "document";
    if (this.#layout === "document" && this.#lineBroken) {
      // The first line's error ends a document.
      this.#stopped = true;
      return undefined;
    }
    return Buffer.concat(pending);
  }
}

/**
 * Splits JSON bytes into {@link JsonEvent}s as they arrive.
 *
 * Unless `options.layout` says, the layout is told by the first non-blank line: when it holds
 * whole values, the text is JSONL. When its value goes on past the line, the text is one JSON
 * document if that line is `[`, or ends in an array's `,`, or the next non-blank line does not
 * start with `{` or `[` in its first column; otherwise it is JSONL whose first line is broken.
 *
 * A value longer than `options.maxValueBytes` (by default, the longest string JavaScript can
 * hold, which `JSON.parse` needs) is an error of its own, and is not held while it is skipped.
 *
 * @example
 * ```ts
 * for await (const event of jsonEvents(createReadStream("threads.jsonl"))) { ... }
 * ```
 */
export async function* jsonEvents(
  chunks: AsyncIterable<Buffer | string>,
  options: JsonEventsOptions = {},
): AsyncGenerator<JsonEvent> {
  const splitter = new JsonSplitter(
    options.layout,
    options.maxValueBytes ?? constants.MAX_STRING_LENGTH,
  );
  /** The input's first bytes, held until they tell whether it starts with a byte order mark. */
  let head: Buffer | undefined = Buffer.alloc(0);
  for await (const chunk of chunks) {
    let bytes = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
    if (head !== undefined) {
      bytes = Buffer.concat([head, bytes]);
      head = bytes.length < BYTE_ORDER_MARK.length ? bytes : undefined;
      if (head !== undefined) continue;
    }
    splitter.feed(bytes);
    if (splitter.events.length > 0) yield* splitter.events.splice(0);
    // Past a JSON document's syntax error nothing can be trusted: the rest is not read.
    if (splitter.stopped) return;
  }
  if (head !== undefined && head.length > 0) splitter.feed(head);
  splitter.finish();
  yield* splitter.events.splice(0);
}
