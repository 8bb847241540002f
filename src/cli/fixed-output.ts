/**
 * Where `--fix` writes: a temporary file beside `--out` that takes its place only when the whole
 * input was read without an error, so `--out` holds the old content or the whole new one.
 */
import { randomBytes } from "node:crypto";
import { unlinkSync } from "node:fs";
import { type FileHandle, open, rename, rm } from "node:fs/promises";
import { basename, dirname, join } from "node:path";

/** The temporary files of the outputs neither committed nor discarded. */
const removedOnSignal = new Set<string>();
const SIGNALS = ["SIGINT", "SIGTERM"] as const;
/** How much is gathered before it is written. */
const BUFFER_BYTES = 1 << 20;

/** Removes `temporary` if SIGINT or SIGTERM ends the process. */
function removeOnSignal(temporary: string): void {
  if (removedOnSignal.size === 0) for (const signal of SIGNALS) process.on(signal, removeAndRaise);
  removedOnSignal.add(temporary);
}

/** Leaves `temporary` alone on SIGINT and SIGTERM (it was renamed or removed). */
function keepOnSignal(temporary: string): void {
  removedOnSignal.delete(temporary);
  if (removedOnSignal.size === 0) stopListening();
}

function stopListening(): void {
  for (const signal of SIGNALS) process.removeListener(signal, removeAndRaise);
}

/**
 * Removes the temporary files, then ends the process as the signal would have without us. It must
 * be synchronous: the process may end before any promise settles.
 */
function removeAndRaise(signal: NodeJS.Signals): void {
  for (const temporary of removedOnSignal) {
    try {
      unlinkSync(temporary);
    } catch {
      // Already gone: it is what we want.
    }
  }
  removedOnSignal.clear();
  stopListening();
  process.kill(process.pid, signal);
}

/** A failure to write the repaired threads (message starts "cannot be written: "). */
export class OutputError extends Error {
  override readonly name = "OutputError";
  constructor(cause: unknown) {
    super(`cannot be written: ${cause instanceof Error ? cause.message : String(cause)}`, {
      cause,
    });
  }
}

/** `--fix`'s output: a temporary file beside `--out` that takes its place only on commit. */
export class FixedOutput {
  readonly #out: string;
  readonly #temporary: string;
  readonly #handle: FileHandle;
  #state: "open" | "committed" | "discarded" = "open";
  /** The writes so far, in order; never rejects (a failure is kept in `#failure`). */
  #writing: Promise<void> = Promise.resolve();
  #failure: OutputError | undefined;
  /** What was written and not yet handed to the file. */
  #buffered: Uint8Array[] = [];
  #bufferedBytes = 0;

  private constructor(out: string, temporary: string, handle: FileHandle) {
    this.#out = out;
    this.#temporary = temporary;
    this.#handle = handle;
  }

  /**
   * Creates the temporary file in the folder of `out`, under a name no one can guess
   * (`.<name of out>.<12 random hex digits>.tmp`), with O_CREAT|O_EXCL: it never follows a link
   * and never truncates a file already there. Until {@link commit} or {@link discard}, SIGINT and
   * SIGTERM remove the file before they end the process.
   *
   * @throws {OutputError} when the file cannot be created.
   */
  static async open(out: string): Promise<FixedOutput> {
    const name = `.${basename(out)}.${randomBytes(6).toString("hex")}.tmp`;
    const temporary = join(dirname(out), name);
    let handle: FileHandle;
    try {
      handle = await open(temporary, "wx");
    } catch (error) {
      throw new OutputError(error);
    }
    removeOnSignal(temporary);
    return new FixedOutput(out, temporary, handle);
  }

  /**
   * Appends bytes, or text as UTF-8, after what the earlier calls wrote. Small writes are
   * gathered before they go to the file, so a byte array must not change until the commit. Does
   * nothing once the output is discarded.
   *
   * @throws {OutputError} when a write to the file fails (a full disk, …); every later write and
   *   the commit then fail with it too.
   */
  write(data: string | Uint8Array): Promise<void> {
    if (this.#state === "discarded") return Promise.resolve();
    if (this.#state === "committed") {
      return Promise.reject(new Error("the output was written after it was committed"));
    }
    if (this.#failure !== undefined) return Promise.reject(this.#failure);
    const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : data;
    // Small writes (a line of JSONL, the newline after it) go out together: a system call each
    // would cost more than the audit of the line.
    this.#buffered.push(bytes);
    this.#bufferedBytes += bytes.byteLength;
    return this.#bufferedBytes >= BUFFER_BYTES ? this.#flush() : Promise.resolve();
  }

  /** Writes what is buffered, after the earlier writes. */
  #flush(): Promise<void> {
    if (this.#buffered.length === 0) return this.#writing;
    const bytes = Buffer.concat(this.#buffered);
    this.#buffered = [];
    this.#bufferedBytes = 0;
    const written = this.#writing.then(() => this.#append(bytes));
    this.#writing = written.catch(() => undefined);
    return written;
  }

  async #append(bytes: Uint8Array): Promise<void> {
    if (this.#failure !== undefined) throw this.#failure;
    try {
      for (let offset = 0; offset < bytes.byteLength; ) {
        const { bytesWritten } = await this.#handle.write(bytes, offset);
        offset += bytesWritten;
      }
    } catch (error) {
      this.#failure = new OutputError(error);
      throw this.#failure;
    }
  }

  /**
   * Puts the output in place of `out`: fsync of the file, close, fsync of the folder, rename onto
   * `out`, fsync of the folder again (so the rename survives a power cut). A folder that the
   * platform cannot fsync (Windows, some file systems) is not an error.
   *
   * @returns false when the output was already discarded.
   * @throws {OutputError} when an earlier write or a step fails; the temporary file is removed.
   */
  async commit(): Promise<boolean> {
    if (this.#state === "discarded") return false;
    if (this.#state === "committed") return true;
    this.#state = "committed";
    const folder = dirname(this.#temporary);
    try {
      await this.#flush();
      if (this.#failure !== undefined) throw this.#failure;
      await this.#handle.sync();
      await this.#handle.close();
      await syncFolder(folder);
      await rename(this.#temporary, this.#out);
      keepOnSignal(this.#temporary);
      await syncFolder(folder);
      return true;
    } catch (error) {
      this.#state = "discarded";
      await this.#remove();
      throw error instanceof OutputError ? error : new OutputError(error);
    }
  }

  /** Throws the output away: closes and removes the temporary file. Safe again, and after commit. */
  async discard(): Promise<void> {
    if (this.#state !== "open") return;
    this.#state = "discarded";
    await this.#writing;
    await this.#remove();
  }

  /** Closes and removes the temporary file, as well as it can: a discard is called on errors. */
  async #remove(): Promise<void> {
    await this.#handle.close().catch(() => undefined);
    await rm(this.#temporary, { force: true }).catch(() => undefined);
    keepOnSignal(this.#temporary);
  }
}

/** Makes the entry of a renamed file in `folder` durable, where the platform can. */
async function syncFolder(folder: string): Promise<void> {
  let handle: FileHandle | undefined;
  try {
    handle = await open(folder, "r");
    await handle.sync();
  } catch (error) {
    if (!cannotSyncFolder(error)) throw error;
  } finally {
    await handle?.close();
  }
}

/** Whether an error means "this platform or file system cannot fsync a folder". */
function cannotSyncFolder(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === "EBADF") return process.platform === "win32";
  return code === "EISDIR" || code === "EPERM" || code === "EINVAL" || code === "ENOTSUP";
}
