/**
 * What `--fix` writes for a thread: the bytes it was read from when it needed nothing, else the
 * same bytes with its messages array written anew, in which each message the repair left alone
 * keeps its own bytes. A message the repair rewrote or dropped is checked first: when it holds a
 * value `JSON.parse` cannot carry exactly (bytes that are not UTF-8, a number JavaScript rounds or
 * writes otherwise, a key given twice), the thread is not repaired but written as it was, and the
 * report says why. Nothing is changed that was not asked to change.
 */
import { isUtf8 } from "node:buffer";
import type { RepairOptions } from "../core/policy.js";
import { type ProblemCounts, problemsLeft, problemsOf, type ThreadAudit } from "./audit-thread.js";
import {
  BACKSLASH,
  CLOSE_BRACE,
  CLOSE_BRACKET,
  COMMA,
  isWhitespace,
  OPEN_BRACE,
  OPEN_BRACKET,
  QUOTE,
} from "./json-stream.js";
import type { InputThread } from "./threads.js";

/** What `--fix` writes for one thread, and what it leaves to be fixed. */
export interface FixedThread {
  /** The bytes written in the thread's place. */
  readonly raw: Buffer;
  /** The problems the written thread still has. */
  readonly left: ProblemCounts;
  /** Why the thread was written as it was, though it needed a repair. */
  readonly unrepaired?: string;
}

const MINUS = 0x2d;

function isDigit(byte: number | undefined): boolean {
  return byte !== undefined && byte >= 0x30 && byte <= 0x39;
}

function skipWhitespace(bytes: Buffer, at: number): number {
  let next = at;
  while (isWhitespace(bytes[next])) next++;
  return next;
}

/** Where the string opening at `at` ends (after its closing quote). The bytes are valid JSON. */
function stringEnd(bytes: Buffer, at: number): number {
  for (let from = at + 1; ; ) {
    const quote = bytes.indexOf(QUOTE, from);
    let backslashes = 0;
    while (bytes[quote - 1 - backslashes] === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return quote + 1;
    from = quote + 1;
  }
}

/** Where the value starting at `at` ends, however deep it nests. The bytes are valid JSON. */
function valueEnd(bytes: Buffer, at: number): number {
  const first = bytes[at];
  if (first === QUOTE) return stringEnd(bytes, at);
  let next = at;
  if (first === OPEN_BRACE || first === OPEN_BRACKET) {
    let depth = 0;
    for (;;) {
      const byte = bytes[next];
      if (byte === QUOTE) {
        next = stringEnd(bytes, next);
        continue;
      }
      if (byte === OPEN_BRACE || byte === OPEN_BRACKET) depth++;
      else if ((byte === CLOSE_BRACE || byte === CLOSE_BRACKET) && --depth === 0) return next + 1;
      next++;
    }
  }
  while (next < bytes.length) {
    const byte = bytes[next];
    if (isWhitespace(byte) || byte === COMMA || byte === CLOSE_BRACE || byte === CLOSE_BRACKET) {
      break;
    }
    next++;
  }
  return next;
}

/** Where a messages array lies in a thread's bytes: its brackets, and each element. */
interface MessagesLayout {
  readonly open: number;
  readonly close: number;
  readonly elements: readonly (readonly [number, number])[];
}

function arrayLayout(bytes: Buffer, open: number): MessagesLayout {
  const elements: [number, number][] = [];
  let at = skipWhitespace(bytes, open + 1);
  while (bytes[at] !== CLOSE_BRACKET) {
    const end = valueEnd(bytes, at);
    elements.push([at, end]);
    at = skipWhitespace(bytes, end);
    if (bytes[at] === COMMA) at = skipWhitespace(bytes, at + 1);
  }
  return { open, close: at, elements };
}

/**
 * The messages array of a thread: the thread itself, or the value of the object's last
 * `messages` key (the one `JSON.parse` keeps).
 */
function messagesLayout(bytes: Buffer, isArray: boolean): MessagesLayout {
  const start = skipWhitespace(bytes, 0);
  if (isArray) return arrayLayout(bytes, start);
  let messages = -1;
  let at = skipWhitespace(bytes, start + 1);
  while (bytes[at] === QUOTE) {
    const keyEnd = stringEnd(bytes, at);
    const key: unknown = JSON.parse(bytes.toString("utf8", at, keyEnd));
    const valueStart = skipWhitespace(bytes, skipWhitespace(bytes, keyEnd) + 1);
    if (key === "messages") messages = valueStart;
    at = skipWhitespace(bytes, valueEnd(bytes, valueStart));
    if (bytes[at] === COMMA) at = skipWhitespace(bytes, at + 1);
  }
  return arrayLayout(bytes, messages);
}

/**
 * Why the bytes of a JSON value would not come back the same from `JSON.parse` and
 * `JSON.stringify`, or `undefined` when they would (up to whitespace and string escapes).
 */
export function inexactness(bytes: Buffer): string | undefined {
  if (!isUtf8(bytes)) return "holds bytes that are not UTF-8";
  /** For each object or array the position is in: the keys of an object so far, or `null`. */
  const open: (Set<string> | null)[] = [];
  let expectKey = false;
  for (let at = 0; at < bytes.length; ) {
    const byte = bytes[at];
    if (byte === QUOTE) {
      const end = stringEnd(bytes, at);
      const keys = open.at(-1);
      if (expectKey && keys) {
        const key = JSON.parse(bytes.toString("utf8", at, end)) as string;
        if (keys.has(key)) return `holds the key ${JSON.stringify(key)} twice in one object`;
        keys.add(key);
        expectKey = false;
      }
      at = end;
    } else if (byte === MINUS || isDigit(byte)) {
      const end = valueEnd(bytes, at);
      const text = bytes.toString("latin1", at, end);
      if (JSON.stringify(Number(text)) !== text) {
        return `holds the number ${text}, which JavaScript would write as ${JSON.stringify(Number(text))}`;
      }
      at = end;
    } else {
      if (byte === OPEN_BRACE) open.push(new Set());
      else if (byte === OPEN_BRACKET) open.push(null);
      else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) open.pop();
      if (byte === OPEN_BRACE || byte === COMMA) expectKey = open.at(-1) instanceof Set;
      at++;
    }
  }
  return undefined;
}

/**
 * The thread's bytes with its messages array written as `repaired`: a message of the input
 * keeps its bytes, and the array keeps its spacing. A reason instead when the thread cannot be
 * written so without changing what the repair did not ask to change.
 */
function rewriteThread(
  thread: InputThread,
  repaired: readonly unknown[],
): { raw: Buffer; written: unknown[] } | { refused: string } {
  const raw = thread.raw;
  const layout = messagesLayout(raw, Array.isArray(thread.container));
  const positions = new Map(thread.messages.map((message, index) => [message, index]));
  const kept = new Set<number>();
  const pieces: Buffer[] = [];
  /** The messages as `JSON.parse` reads them back from the bytes written. */
  const written: unknown[] = [];
  for (const [index, message] of repaired.entries()) {
    const position = positions.get(message);
    const span = position === undefined ? undefined : layout.elements[position];
    if (position !== undefined && span !== undefined) {
      kept.add(position);
      pieces.push(raw.subarray(span[0], span[1]));
      written.push(message);
      continue;
    }
    let text: string;
    try {
      text = JSON.stringify(message);
    } catch (error) {
      if (!(error instanceof RangeError)) throw error;
      return { refused: `message ${index} of the repaired thread nests too deep to be written` };
    }
    pieces.push(Buffer.from(text));
    written.push(JSON.parse(text));
  }
  for (const [position, span] of layout.elements.entries()) {
    if (kept.has(position)) continue;
    const why = inexactness(raw.subarray(span[0], span[1]));
    if (why !== undefined) return { refused: `message ${position} ${why}` };
  }
  const [first, second] = layout.elements;
  const last = layout.elements.at(-1);
  const separator = second && first ? raw.subarray(first[1], second[0]) : Buffer.from(",");
  const joined: Buffer[] = [raw.subarray(0, layout.open + 1)];
  if (first !== undefined) joined.push(raw.subarray(layout.open + 1, first[0]));
  for (const [index, piece] of pieces.entries()) {
    if (index > 0) joined.push(separator);
    joined.push(piece);
  }
  if (last !== undefined) joined.push(raw.subarray(last[1], layout.close));
  joined.push(raw.subarray(layout.close));
  return { raw: Buffer.concat(joined), written };
}

/**
 * What `--fix` writes for a thread the audit found `found` in: the thread's own bytes when it
 * needed nothing (or cannot be repaired exactly), else the repaired thread, audited again as it
 * is written: its new messages read back from their JSON, the others as they were read.
 */
export async function fixThread(
  thread: InputThread,
  found: ThreadAudit,
  options: RepairOptions,
): Promise<FixedThread> {
  if (found.repairs.length === 0) return { raw: thread.raw, left: problemsOf([]) };
  const rewritten = rewriteThread(thread, found.messages);
  if ("refused" in rewritten) {
    return { raw: thread.raw, left: found.problems, unrepaired: rewritten.refused };
  }
  return { raw: rewritten.raw, left: await problemsLeft(found, rewritten.written, options) };
}
