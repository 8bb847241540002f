/**
 * The audit's progress bar: drawn by `cli-progress` on standard error when it is a terminal and
 * the input's size is known (a file); nothing otherwise, so pipes and logs get only the report.
 */
import cliProgress from "cli-progress";

/** What the audit tells the progress bar. */
export interface Progress {
  /** Bytes of input read so far. */
  read(bytes: number): void;
  /** Threads audited so far: the moment to redraw. */
  thread(threads: number): void;
  /** Writes a report line without tearing the bar. */
  log(text: string, out: { write(text: string): unknown; readonly isTTY?: boolean }): void;
  stop(): void;
}

/** A progress bar on `stream` for an input of `size` bytes, or one that draws nothing. */
export function createProgress(
  stream: { write(text: string): unknown; readonly isTTY?: boolean },
  size: number | undefined,
): Progress {
  if (stream.isTTY !== true || size === undefined || size === 0) {
    return {
      read() {},
      thread() {},
      log(text, out) {
        out.write(text);
      },
      stop() {},
    };
  }
  const bars = new cliProgress.MultiBar(
    {
      stream: stream as NodeJS.WritableStream,
      format: " {bar} {percentage}% | {threads} thread(s)",
      hideCursor: true,
      clearOnComplete: false,
    },
    cliProgress.Presets.shades_classic,
  );
  const bar = bars.create(size, 0, { threads: 0 });
  let bytes = 0;
  let threads = 0;
  let stopped = false;
  return {
    read(read) {
      bytes = read;
    },
    thread(count) {
      threads = count;
      bar.update(Math.min(bytes, size), { threads });
    },
    log(text, out) {
      // On one terminal, the bar's own log keeps the lines above it; elsewhere, straight out.
      if (out.isTTY === true) bars.log(text);
      else out.write(text);
    },
    stop() {
      if (stopped) return;
      stopped = true;
      // The last frame stays: how far it got, and how many threads.
      bar.update(Math.min(bytes, size), { threads });
      // A redraw writes out the lines logged since the last one, which stopping alone would drop.
      bars.update();
      bars.stop();
    },
  };
}
