/**
 * Reads a stream of JSON text as a sequence of events without holding more than one value at a
 * time: each top-level value, or, for a top-level array, its opening, each element and its close.
 * A JSON array of threads and JSONL (one value a line, or values one after another) are both such
 * streams. Every event carries the line it starts on, so a parse error names the line it is on.
 * No streaming JSON library in the stack gives line numbers; this one only finds where values
 * start and end, and `JSON.parse` reads each of them.
 */

/** What the stream held next. */
export type JsonEvent =
  /** A complete top-level value other than an array, as text. */
  | { readonly kind: "value"; readonly text: string; readonly line: number; readonly end: number }
  /** A top-level array begins. */
  | { readonly kind: "open"; readonly line: number; readonly end: number }
  /** A complete element of a top-level array, as text. */
  | { readonly kind: "element"; readonly text: string; readonly line: number; readonly end: number }
  /** A top-level array ends. */
  | { readonly kind: "close"; readonly line: number; readonly end: number };

/** Bad JSON, with the line (1-based) it was found on. */
export class JsonStreamError extends Error {
  override readonly name = "JsonStreamError";
  constructor(
    message: string,
    readonly line: number,
  ) {
    super(message);
  }
}

const OPENERS = new Set(["{", "["]);
const CLOSERS = new Set(["}", "]"]);

/**
 * Splits JSON text into {@link JsonEvent}s as it arrives. `end` is the count of characters read
 * when the event was complete, for a progress bar.
 *
 * @example
 * ```ts
 * for await (const event of jsonEvents(createReadStream("threads.jsonl", "utf8"))) { ... }
 * ```
 */
export async function* jsonEvents(
  chunks: AsyncIterable<string | Buffer>,
): AsyncGenerator<JsonEvent> {
  let line = 1;
  let read = 0;
  /** Nesting inside the value being collected (0: between values). */
  let depth = 0;
  /** Whether the top-level value is an array whose elements are being split out. */
  let inTopArray = false;
  let inString = false;
  let escaped = false;
  /** The text of the value being collected, and the line it started on. */
  let text = "";
  let startLine = 0;
  /** A bare value (number, literal) being collected: it ends at whitespace or a delimiter. */
  let bare = false;
  /** In a top-level array: whether an element may come next (after `[` or `,`). */
  let expectElement = false;
  /** Whether the value being collected is a string, which ends at its closing quote. */
  let stringValue = false;
  /** How many elements the top-level array has had so far. */
  let elements = 0;

  const unexpected = (char: string) =>
    new JsonStreamError(`Unexpected ${JSON.stringify(char)} in JSON`, line);

  for await (const chunk of chunks) {
    const part = typeof chunk === "string" ? chunk : chunk.toString("utf8");
    for (let index = 0; index < part.length; index++) {
      const char = part[index] as string;
      read++;
      const collecting = depth > 0 || bare;
      if (collecting) {
        if (inString) {
          text += char;
          if (escaped) escaped = false;
          else if (char === "\\") escaped = true;
          else if (char === '"') {
            inString = false;
            if (stringValue) {
              stringValue = false;
              depth = 0;
              yield inTopArray
                ? { kind: "element", text, line: startLine, end: read }
                : { kind: "value", text, line: startLine, end: read };
              text = "";
            }
          }
          if (char === "\n") line++;
          continue;
        }
        if (bare && depth === 0) {
          if (/\s/.test(char) || char === "," || char === "]" || (char === "}" && !inTopArray)) {
            bare = false;
            yield inTopArray
              ? { kind: "element", text, line: startLine, end: read - 1 }
              : { kind: "value", text, line: startLine, end: read - 1 };
            text = "";
            // The delimiter is read again below, between values.
          } else {
            text += char;
            continue;
          }
        } else {
          text += char;
          if (char === '"') inString = true;
          else if (OPENERS.has(char)) depth++;
          else if (CLOSERS.has(char)) {
            depth--;
            if (depth === 0) {
              yield inTopArray
                ? { kind: "element", text, line: startLine, end: read }
                : { kind: "value", text, line: startLine, end: read };
              text = "";
            }
          } else if (char === "\n") line++;
          continue;
        }
      }
      // Between values.
      if (char === "\n") {
        line++;
        continue;
      }
      if (/\s/.test(char)) continue;
      if (inTopArray) {
        if (char === "]") {
          if (expectElement && elements > 0) throw unexpected(char);
          inTopArray = false;
          yield { kind: "close", line, end: read };
          continue;
        }
        if (char === ",") {
          if (expectElement) throw unexpected(char);
          expectElement = true;
          continue;
        }
        if (!expectElement) throw unexpected(char);
        expectElement = false;
        elements++;
      } else if (char === "[") {
        inTopArray = true;
        expectElement = true;
        elements = 0;
        yield { kind: "open", line, end: read };
        continue;
      } else if (char === "]" || char === "," || char === "}" || char === ":") {
        throw unexpected(char);
      }
      startLine = line;
      text = char;
      if (char === '"') {
        inString = true;
        stringValue = true;
        depth = 1;
      } else if (OPENERS.has(char)) depth = 1;
      else bare = true;
    }
  }
  if (bare) {
    yield inTopArray
      ? { kind: "element", text, line: startLine, end: read }
      : { kind: "value", text, line: startLine, end: read };
    bare = false;
  }
  if (depth > 0 || inString || inTopArray) {
    throw new JsonStreamError("Unexpected end of JSON input", line);
  }
}
