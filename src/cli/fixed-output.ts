/**
 * What `--fix` writes: the repaired threads in the layout they were read in, to a temporary file
 * beside `--out` that takes its place only when the whole input was read without an error.
 */
import { once } from "node:events";
import { createWriteStream, type WriteStream } from "node:fs";
import { rename, rm } from "node:fs/promises";
import type { InputThread } from "./threads.js";

/** A failure to write the repaired threads. */
class OutputError extends Error {
  override readonly name = "OutputError";
  constructor(cause: Error) {
    super(`cannot be written: ${cause.message}`, { cause });
  }
}

/** Writes repaired threads in the layout they were read in. */
class FixedWriter {
  readonly #stream: WriteStream;
  #inArray = false;
  #first = true;
  #failure: Error | undefined;
  #destroyed = false;
  constructor(path: string) {
    this.#stream = createWriteStream(path, { encoding: "utf8" });
    // A write that fails (a full disk, a folder that is not there) is reported, and ends the fix.
    this.#stream.on("error", (error) => {
      if (!this.#destroyed) this.#failure ??= new OutputError(error);
    });
  }
  async #write(text: string) {
    if (this.#failure !== undefined) throw this.#failure;
    if (!this.#stream.write(text)) await once(this.#stream, "drain");
  }
  async arrayStart() {
    this.#inArray = true;
    this.#first = true;
    await this.#write("[\n");
  }
  async arrayEnd() {
    this.#inArray = false;
    await this.#write("\n]\n");
  }
  async thread(thread: InputThread, messages: readonly unknown[]) {
    const written = Array.isArray(thread.container) ? messages : { ...thread.container, messages };
    const text = JSON.stringify(written);
    if (this.#inArray) {
      await this.#write(this.#first ? `  ${text}` : `,\n  ${text}`);
      this.#first = false;
    } else await this.#write(`${text}\n`);
  }
  async close() {
    if (this.#failure !== undefined) throw this.#failure;
    this.#stream.end();
    await once(this.#stream, "finish");
    if (this.#failure !== undefined) throw this.#failure;
  }
  async destroy() {
    this.#destroyed = true;
    if (this.#stream.closed) return;
    const closed = once(this.#stream, "close").catch(() => undefined);
    this.#stream.destroy();
    await closed;
  }
}

/**
 * `--fix`'s output: written to a temporary file beside `--out`, renamed onto it only when the
 * whole input was read without an error, and thrown away at the first error.
 */
export class FixedOutput {
  readonly #out: string;
  readonly #temporary: string;
  #writer: FixedWriter | undefined;
  constructor(out: string) {
    this.#out = out;
    this.#temporary = `${out}.${process.pid}.tmp`;
    this.#writer = new FixedWriter(this.#temporary);
  }
  async write(step: (writer: FixedWriter) => Promise<void>): Promise<void> {
    if (this.#writer !== undefined) await step(this.#writer);
  }
  /** Puts the output in place; false when it was thrown away. */
  async commit(): Promise<boolean> {
    if (this.#writer === undefined) return false;
    await this.#writer.close();
    await rename(this.#temporary, this.#out);
    this.#writer = undefined;
    return true;
  }
  async discard(): Promise<void> {
    const writer = this.#writer;
    this.#writer = undefined;
    await writer?.destroy();
    await rm(this.#temporary, { force: true });
  }
}
