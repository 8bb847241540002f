/**
 * Threads out of a JSON stream: a JSON array of threads, JSONL (a thread a line), or one thread
 * given as a JSON array of messages. A thread is an array of messages, or an object whose
 * `messages` is one (its `thread_id` or `id` names it in the report).
 */
import { type JsonEvent, JsonStreamError } from "./json-stream.js";

/** One thread read from the input. */
export interface InputThread {
  readonly kind: "thread";
  /** 0-based position in the input. */
  readonly index: number;
  /** The line it starts on. */
  readonly line: number;
  /** Characters of input read once it was complete. */
  readonly end: number;
  readonly id: string | undefined;
  readonly messages: readonly unknown[];
  /** The thread as it was given, for writing it back with other messages. */
  readonly container: unknown[] | Record<string, unknown>;
  /** Whether it is an element of a top-level array of threads (else a top-level value). */
  readonly inArray: boolean;
}

/** Where a top-level array of threads starts and ends, for a writer that keeps the layout. */
export type InputItem =
  | InputThread
  | { readonly kind: "array-start" }
  | { readonly kind: "array-end" };

function parse(text: string, line: number): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    // Node names the position in the value's text; the line is counted from where it starts.
    const position = /position (\d+)/.exec(message)?.[1];
    const offset =
      position === undefined ? 0 : (text.slice(0, Number(position)).match(/\n/g)?.length ?? 0);
    // The position is within the value, not the file: the line says where.
    throw new JsonStreamError(message.replace(/ at position \d+.*$/s, ""), line + offset);
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Whether a value is a thread (not a message): an array, or an object holding `messages`. */
function isThreadLike(value: unknown): boolean {
  return Array.isArray(value) || (isObject(value) && Array.isArray(value.messages));
}

function threadIdOf(value: unknown): string | undefined {
  if (!isObject(value)) return undefined;
  const id = value.thread_id ?? value.id;
  return typeof id === "string" || typeof id === "number" ? String(id) : undefined;
}

/**
 * Reads threads from JSON events.
 *
 * @throws {JsonStreamError} on bad JSON, or a value that is no thread, with its line
 */
export async function* readThreads(events: AsyncIterable<JsonEvent>): AsyncGenerator<InputItem> {
  let index = 0;
  /** Inside a top-level array: whether its elements are threads or the messages of one. */
  let array:
    | { line: number; mode: "threads" | "messages" | undefined; messages: unknown[] }
    | undefined;
  const thread = (value: unknown, line: number, end: number, inArray: boolean): InputThread => {
    if (!isThreadLike(value)) {
      throw new JsonStreamError(
        "Expected a thread: an array of messages, or an object with a `messages` array",
        line,
      );
    }
    const messages = Array.isArray(value) ? value : (value as { messages: unknown[] }).messages;
    const badMessage = messages.findIndex((message) => !isObject(message));
    if (badMessage !== -1) {
      throw new JsonStreamError(`Message ${badMessage} of the thread is not a JSON object`, line);
    }
    return {
      kind: "thread",
      index: index++,
      line,
      end,
      id: threadIdOf(value),
      messages,
      container: value as unknown[] | Record<string, unknown>,
      inArray,
    };
  };
  for await (const event of events) {
    switch (event.kind) {
      case "value":
        yield thread(parse(event.text, event.line), event.line, event.end, false);
        break;
      case "open":
        array = { line: event.line, mode: undefined, messages: [] };
        break;
      case "element": {
        if (array === undefined) break;
        const value = parse(event.text, event.line);
        if (array.mode === undefined) {
          array.mode = isThreadLike(value) ? "threads" : "messages";
          if (array.mode === "threads") yield { kind: "array-start" };
        }
        if (array.mode === "threads") yield thread(value, event.line, event.end, true);
        else if (isThreadLike(value)) {
          throw new JsonStreamError(
            "Expected a message like the ones before it, found a thread",
            event.line,
          );
        } else array.messages.push(value);
        break;
      }
      case "close":
        if (array?.mode === "threads") yield { kind: "array-end" };
        else if (array !== undefined) yield thread(array.messages, array.line, event.end, false);
        array = undefined;
        break;
    }
  }
}
