/**
 * Reading the input of a file audit: a file or standard input, opened with its size for the
 * progress bar, read as bytes a chunk at a time, with the layout a file's name promises.
 */
import { open, stat } from "node:fs/promises";
import type { JsonLayout } from "./json-stream.js";

/** The input name that means standard input. */
export const STANDARD_INPUT = "-";

/** The layout a file's name promises: JSONL for `.jsonl` and `.ndjson`, else told by the text. */
export function layoutOfName(input: string): JsonLayout | undefined {
  return /\.(jsonl|ndjson)$/i.test(input) ? "lines" : undefined;
}

/** A failure to read the input stream. */
class InputReadError extends Error {
  override readonly name = "InputReadError";
}

/** Reads a file or standard input as bytes, counting them for the progress bar. */
export async function* bytesOf(
  source: NodeJS.ReadableStream,
  onBytes: (bytes: number) => void,
): AsyncGenerator<Buffer> {
  let bytes = 0;
  const chunks = source[Symbol.asyncIterator]();
  try {
    for (;;) {
      let next: IteratorResult<string | Buffer>;
      try {
        next = await chunks.next();
      } catch (error) {
        throw new InputReadError(`cannot be read: ${(error as Error).message}`, { cause: error });
      }
      if (next.done === true) break;
      const chunk = next.value;
      const buffer = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
      bytes += buffer.length;
      onBytes(bytes);
      yield buffer;
    }
  } finally {
    // Reading stopped early (a broken JSON document): the file is closed now, not at exit.
    await chunks.return?.();
  }
}

/** Opens the input: standard input, or a file with its size for the progress bar. */
export async function openInput(
  input: string,
  stdin: NodeJS.ReadableStream,
): Promise<{ stream: NodeJS.ReadableStream; size: number | undefined }> {
  if (input === STANDARD_INPUT) return { stream: stdin, size: undefined };
  try {
    const stats = await stat(input);
    if (!stats.isFile()) throw new Error("not a file");
    const handle = await open(input, "r");
    return { stream: handle.createReadStream(), size: stats.size };
  } catch (error) {
    throw new InputReadError(`cannot be read: ${(error as Error).message}`, { cause: error });
  }
}
