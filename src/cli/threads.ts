/**
 * Threads out of a JSON stream: a JSON array of threads, JSONL (a thread a line), or one thread
 * given as a JSON array of messages. A thread is an array of messages, or an object whose
 * `messages` is one (its `thread_id` or `id` names it in the report). What is not a thread is
 * reported with its line, and the threads after it are still read.
 */
import type { JsonEvent } from "./json-stream.js";

/** One thread read from the input. */
export interface InputThread {
  readonly kind: "thread";
  /** 0-based position among the threads read. */
  readonly index: number;
  /** The line it starts on. */
  readonly line: number;
  readonly id: string | undefined;
  readonly messages: readonly unknown[];
  /** The thread as it was given, for writing it back with other messages. */
  readonly container: unknown[] | Record<string, unknown>;
  /** The thread's bytes as they were read. */
  readonly raw: Buffer;
}

/** Input that could not be read as a thread: bad JSON, or a value of another shape. */
interface InputError {
  readonly kind: "error";
  /** The line (1-based) it is on. */
  readonly line: number;
  readonly message: string;
}

/**
 * What the input holds, in order: threads, the input's errors, and the bytes around the threads
 * (whitespace, and the brackets and commas of an array of threads), so that the input can be
 * written back byte for byte with only its repaired threads changed.
 */
type InputItem = InputThread | InputError | { readonly kind: "bytes"; readonly raw: Buffer };

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

const NOT_A_THREAD =
  "Expected a thread: an array of messages, or an object with a `messages` array";

/** Why a value is not a thread, or `undefined` when it is one. */
function threadProblemOf(value: unknown): string | undefined {
  if (!isThreadLike(value)) return NOT_A_THREAD;
  const messages = Array.isArray(value) ? value : (value as { messages: unknown[] }).messages;
  const badMessage = messages.findIndex((message) => !isObject(message));
  return badMessage === -1 ? undefined : `Message ${badMessage} of the thread is not a JSON object`;
}

/**
 * Reads threads from JSON events. Bad JSON and values that are not threads come out as
 * {@link InputError}s, at most one a line, and reading goes on as far as the events do.
 */
export async function* readThreads(events: AsyncIterable<JsonEvent>): AsyncGenerator<InputItem> {
  let index = 0;
  /** Inside a top-level array: whether its elements are threads or the messages of one. */
  let array:
    | {
        line: number;
        mode: "threads" | "messages" | undefined;
        messages: unknown[];
        /** Until its elements are known to be threads: its bytes so far. */
        raw: Buffer[];
        /** A message of the thread was bad: the thread is reported, not read. */
        broken: boolean;
      }
    | undefined;
  let lastErrorLine: number | undefined;
  const error = (line: number, message: string): InputError[] => {
    if (line === lastErrorLine) return [];
    lastErrorLine = line;
    return [{ kind: "error", line, message }];
  };
  const thread = (value: unknown, raw: Buffer, line: number): InputThread => ({
    kind: "thread",
    index: index++,
    line,
    id: threadIdOf(value),
    messages: Array.isArray(value) ? value : (value as { messages: unknown[] }).messages,
    container: value as unknown[] | Record<string, unknown>,
    raw,
  });
  /** Bytes that are not a thread's: around the threads, or part of a thread still being read. */
  const bytes = (raw: Buffer): InputItem[] => {
    if (array === undefined || array.mode === "threads") return [{ kind: "bytes", raw }];
    array.raw.push(raw);
    return [];
  };
  for await (const event of events) {
    switch (event.kind) {
      case "gap":
        yield* bytes(event.raw);
        break;
      case "error":
        // A top-level array open on a broken line never closes: what it held is dropped.
        array = undefined;
        yield* error(event.line, event.message);
        break;
      case "value": {
        const problem = threadProblemOf(event.value);
        if (problem === undefined) yield thread(event.value, event.raw, event.line);
        else yield* error(event.line, problem);
        break;
      }
      case "open":
        array = {
          line: event.line,
          mode: undefined,
          messages: [],
          raw: [event.raw],
          broken: false,
        };
        break;
      case "element": {
        if (array === undefined || array.broken) break;
        const value = event.value;
        if (array.mode === undefined) {
          array.mode = isThreadLike(value) ? "threads" : "messages";
          if (array.mode === "threads") yield { kind: "bytes", raw: Buffer.concat(array.raw) };
        }
        if (array.mode === "threads") {
          const problem = threadProblemOf(value);
          if (problem === undefined) yield thread(value, event.raw, event.line);
          else yield* error(event.line, problem);
        } else if (isThreadLike(value)) {
          array.broken = true;
          yield* error(event.line, "Expected a message like the ones before it, found a thread");
        } else if (!isObject(value)) {
          array.broken = true;
          yield* error(
            event.line,
            `Message ${array.messages.length} of the thread is not a JSON object`,
          );
        } else {
          array.messages.push(value);
          array.raw.push(event.raw);
        }
        break;
      }
      case "close":
        if (array?.mode === "threads") yield { kind: "bytes", raw: event.raw };
        else if (array !== undefined && !array.broken) {
          array.raw.push(event.raw);
          yield thread(array.messages, Buffer.concat(array.raw), array.line);
        }
        array = undefined;
        break;
    }
  }
}
