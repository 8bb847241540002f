/**
 * Reads a stream of JSON text as a sequence of parsed values without holding more than one of
 * them at a time: each top-level value, or, for a top-level array, its opening, each element and
 * its close. Every event carries the line it starts on, so bad JSON is named by its line.
 *
 * The text is read in one of two layouts. JSONL holds one value a line: each line is read on its
 * own, and a broken line is reported and skipped, so the lines after it are still read. A JSON
 * document spans lines (a pretty-printed array or object, or such values one after another): it
 * is read to its first syntax error, past which nothing can be trusted. Which layout the text is
 * in is told by its first line (see {@link jsonEvents}), unless the caller knows it.
 *
 * No streaming JSON library in the stack gives line numbers; this one only finds where values
 * start and end, and `JSON.parse` reads each of them.
 */

/** How the text is laid out: a value a line, or one JSON document over many lines. */
export type JsonLayout = "lines" | "document";

/** What the stream held next. */
export type JsonEvent =
  /** A complete top-level value other than an array. */
  | { readonly kind: "value"; readonly value: unknown; readonly line: number }
  /** A top-level array begins. */
  | { readonly kind: "open"; readonly line: number }
  /** A complete element of a top-level array. */
  | { readonly kind: "element"; readonly value: unknown; readonly line: number }
  /** A top-level array ends. */
  | { readonly kind: "close"; readonly line: number }
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
}

const OPENERS = new Set(["{", "["]);
const CLOSERS = new Set(["}", "]"]);
const WHITESPACE = /\s/;

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

/**
 * The splitter itself: fed one character at a time, it queues the events it finds. Newlines end
 * values in JSONL; in a JSON document they are whitespace.
 */
class JsonSplitter {
  /** The events found and not yet taken. */
  readonly events: JsonEvent[] = [];
  #layout: JsonLayout | undefined;
  #line = 1;
  /** Nesting inside the value being collected (0: between values). */
  #depth = 0;
  #inString = false;
  #escaped = false;
  /** The text of the value being collected, and the line it started on. */
  #text = "";
  #startLine = 0;
  /** A bare value (number, literal) being collected: it ends at whitespace or a delimiter. */
  #bare = false;
  /** Whether the value being collected is a string, which ends at its closing quote. */
  #stringValue = false;
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
  /** A JSON document broke: nothing more is read. */
  #stopped = false;
  /** The first line went on past its end: what followed, held until it tells the layout. */
  #pending: string | undefined;

  constructor(layout: JsonLayout | undefined) {
    this.#layout = layout;
  }

  /** Whether nothing more will be read: a JSON document broke. */
  get stopped(): boolean {
    return this.#stopped;
  }

  /** Reads one character. */
  feed(char: string): void {
    if (this.#stopped) return;
    if (this.#pending !== undefined) {
      this.#pending += char;
      if (!WHITESPACE.test(char)) this.#decide();
      return;
    }
    if (char === "\n" && this.#layout !== "document") {
      this.#endLine(false);
      return;
    }
    if (this.#lineBroken) return;
    if (this.#depth > 0 || this.#bare) {
      if (this.#collect(char)) return;
    }
    this.#between(char);
  }

  /** The input has ended. */
  finish(): void {
    if (this.#stopped) return;
    if (this.#pending !== undefined) {
      // Nothing followed the first line: it was one line, cut off.
      this.#layout = "lines";
      const replay = this.#pending;
      this.#pending = undefined;
      for (const char of replay) this.feed(char);
    }
    if (this.#layout !== "document") {
      this.#endLine(true);
      return;
    }
    if (this.#bare) this.#completeBare();
    if (this.#depth > 0 || this.#inString || this.#inTopArray) {
      this.#error("Unexpected end of JSON input", this.#line);
    }
  }

  /** Adds a character to the value being collected; false when it ends a bare value. */
  #collect(char: string): boolean {
    if (this.#inString) {
      this.#text += char;
      if (this.#escaped) this.#escaped = false;
      else if (char === "\\") this.#escaped = true;
      else if (char === '"') {
        this.#inString = false;
        if (this.#stringValue) {
          this.#stringValue = false;
          this.#depth = 0;
          this.#complete();
        }
      }
      if (char === "\n") this.#line++;
      return true;
    }
    if (this.#bare && this.#depth === 0) {
      const ends =
        WHITESPACE.test(char) ||
        char === "," ||
        char === "]" ||
        (char === "}" && !this.#inTopArray);
      if (!ends) {
        this.#text += char;
        return true;
      }
      this.#completeBare();
      // The delimiter is read again, between values.
      return false;
    }
    this.#text += char;
    if (char === '"') this.#inString = true;
    else if (OPENERS.has(char)) this.#depth++;
    else if (CLOSERS.has(char)) {
      this.#depth--;
      if (this.#depth === 0) this.#complete();
    } else if (char === "\n") this.#line++;
    return true;
  }

  /** Reads a character between values. */
  #between(char: string): void {
    if (char === "\n") {
      this.#line++;
      return;
    }
    if (WHITESPACE.test(char)) return;
    this.#seenValue = true;
    if (this.#lineDone) {
      this.#error("Unexpected non-whitespace character after JSON", this.#line);
      return;
    }
    if (this.#inTopArray) {
      if (char === "]") {
        if (this.#expectElement && this.#elements > 0) {
          this.#error(`Unexpected ${JSON.stringify(char)} in JSON`, this.#line);
          return;
        }
        this.#inTopArray = false;
        this.#emitTopLevel({ kind: "close", line: this.#line });
        return;
      }
      if (char === ",") {
        if (this.#expectElement)
          this.#error(`Unexpected ${JSON.stringify(char)} in JSON`, this.#line);
        else this.#expectElement = true;
        return;
      }
      if (!this.#expectElement) {
        this.#error(`Expected ',' or ']' after array element in JSON`, this.#line);
        return;
      }
      this.#expectElement = false;
      this.#elements++;
    } else if (char === "[") {
      this.#inTopArray = true;
      this.#expectElement = true;
      this.#elements = 0;
      this.events.push({ kind: "open", line: this.#line });
      return;
    } else if (char === "]" || char === "," || char === "}" || char === ":") {
      this.#error(`Unexpected ${JSON.stringify(char)} in JSON`, this.#line);
      return;
    }
    this.#startLine = this.#line;
    this.#text = char;
    if (char === '"') {
      this.#inString = true;
      this.#stringValue = true;
      this.#depth = 1;
    } else if (OPENERS.has(char)) this.#depth = 1;
    else this.#bare = true;
  }

  #completeBare(): void {
    this.#bare = false;
    this.#complete();
  }

  /** A value has been collected: parses it and reports it. */
  #complete(): void {
    const text = this.#text;
    this.#text = "";
    const parsed = parseValue(text, this.#startLine);
    if ("error" in parsed) {
      this.#error(parsed.error.message, parsed.error.line);
      return;
    }
    if (this.#inTopArray) {
      // Elements go out at once: a whole array on one line is still read an element at a time.
      this.events.push({ kind: "element", value: parsed.value, line: this.#startLine });
    } else this.#emitTopLevel({ kind: "value", value: parsed.value, line: this.#startLine });
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
    this.#resetValue();
    if (this.#layout === "document") this.#stopped = true;
    else this.#lineBroken = true;
  }

  #resetValue(): void {
    this.#depth = 0;
    this.#inString = false;
    this.#escaped = false;
    this.#text = "";
    this.#bare = false;
    this.#stringValue = false;
    this.#inTopArray = false;
    this.#expectElement = false;
    this.#held = [];
  }

  /** A line ends (or, with `last`, the input) outside a JSON document. */
  #endLine(last: boolean): void {
    if (this.#bare && !this.#lineBroken) this.#completeBare();
    const open = this.#depth > 0 || this.#inString || this.#inTopArray;
    if (this.#layout === undefined && !last && this.#seenValue) {
      if (open && this.#inTopArray && this.#depth === 0 && this.#expectElement) {
        // `[` or `[...,` ending the first line: an array laid out over lines.
        this.#layout = "document";
        this.#line++;
        return;
      }
      if (open || this.#lineBroken) {
        // What comes next tells: a line starting a value of its own, or the rest of this one.
        this.#pending = "\n";
        return;
      }
      this.#layout = "lines";
    }
    if (open && !this.#lineBroken) this.#error("Unexpected end of JSON input", this.#line);
    this.events.push(...this.#held);
    this.#resetValue();
    this.#lineDone = false;
    this.#lineBroken = false;
    if (!last) this.#line++;
  }

  /**
   * The first line went on past its end. When the next non-blank line starts, in its first
   * column, a value of its own (`{` or `[`), the input is JSONL whose first line is broken; else
   * the first line's value goes on over the next ones, as in a pretty-printed document.
   */
  #decide(): void {
    const replay = this.#pending ?? "";
    this.#pending = undefined;
    const first = replay[replay.length - 1];
    const startsLine = replay[replay.length - 2] === "\n";
    this.#layout = startsLine && (first === "{" || first === "[") ? "lines" : "document";
    if (this.#layout === "document" && this.#lineBroken) {
      // The first line's error ends a document.
      this.#stopped = true;
      return;
    }
    for (const char of replay) this.feed(char);
  }
}

/**
 * Splits JSON text into {@link JsonEvent}s as it arrives.
 *
 * Unless `options.layout` says, the layout is told by the first non-blank line: when it holds
 * whole values, the text is JSONL. When its value goes on past the line, the text is one JSON
 * document if that line is `[`, or ends in an array's `,`, or the next non-blank line does not
 * start with `{` or `[` in its first column; otherwise it is JSONL whose first line is broken.
 *
 * @example
 * ```ts
 * for await (const event of jsonEvents(createReadStream("threads.jsonl", "utf8"))) { ... }
 * ```
 */
export async function* jsonEvents(
  chunks: AsyncIterable<string | Buffer>,
  options: JsonEventsOptions = {},
): AsyncGenerator<JsonEvent> {
  const splitter = new JsonSplitter(options.layout);
  for await (const chunk of chunks) {
    const part = typeof chunk === "string" ? chunk : chunk.toString("utf8");
    for (const char of part) {
      splitter.feed(char);
      if (splitter.events.length > 0) yield* splitter.events.splice(0);
    }
    // Past a JSON document's syntax error nothing can be trusted: the rest is not read.
    if (splitter.stopped) return;
  }
  splitter.finish();
  yield* splitter.events.splice(0);
}
