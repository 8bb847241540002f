/**
 * What the demo shows while it runs: a progress bar with a live status line on a terminal (the
 * `cli-progress` library draws it), or a plain status line every few seconds when the output is a
 * file or a pipe. Other lines (spans, messages) go through {@link StatusDisplay.log}, so they never
 * tear the bar.
 */
import cliProgress from "cli-progress";
import { type DemoOptions, inSpike } from "./options.js";

/** The figures of the status line. */
export interface StatusFigures {
  readonly threads: number;
  readonly modelCalls: number;
  readonly dangling: number;
  readonly repairs: number;
}

/** The live display. */
export interface StatusDisplay {
  /** Moves the bar to `done` (0 to 1) and shows these figures. */
  update(done: number, figures: StatusFigures): void;
  /** Prints a line above the bar. */
  log(line: string): void;
  /** Draws the last state and releases the terminal. */
  stop(): void;
}

const PLAIN_EVERY_MS = 5_000;

function statusLine(figures: StatusFigures): string {
  return `${figures.threads} threads, ${figures.modelCalls} model calls, ${figures.dangling} dangling, ${figures.repairs} repairs`;
}

/**
 * A progress bar on a terminal, plain status lines elsewhere.
 *
 * @example
 * const display = startStatusDisplay(process.stderr);
 * display.update(0.5, { threads: 10, modelCalls: 120, dangling: 7, repairs: 7 });
 * display.stop();
 */
export function startStatusDisplay(stream: NodeJS.WriteStream): StatusDisplay {
  if (stream.isTTY !== true) {
    let lastAt = 0;
    let last = "";
    let written = "";
    const write = () => {
      if (last === written) return;
      written = last;
      stream.write(`${last}\n`);
    };
    return {
      update(done, figures) {
        last = `[${Math.round(Math.min(1, done) * 100)}%] ${statusLine(figures)}`;
        if (Date.now() - lastAt < PLAIN_EVERY_MS) return;
        lastAt = Date.now();
        write();
      },
      log(line) {
        stream.write(`${line}\n`);
      },
      stop: write,
    };
  }
  const bars = new cliProgress.MultiBar(
    {
      stream,
      format: " {bar} {percentage}% | {status}",
      hideCursor: true,
      clearOnComplete: false,
      // The status line must fit beside the bar, or the terminal cuts the figures off.
      barsize: Math.max(10, Math.min(30, (stream.columns ?? 80) - 75)),
    },
    cliProgress.Presets.shades_classic,
  );
  const bar = bars.create(1000, 0, { status: "starting" });
  return {
    update(done, figures) {
      bar.update(Math.round(Math.min(1, done) * 1000), { status: statusLine(figures) });
    },
    log(line) {
      bars.log(`${line}\n`);
    },
    stop() {
      bars.stop();
    },
  };
}

/**
 * A function to call on each refresh of the status: the first time it finds the burst of
 * interruptions (`--spike-at`) on, it says so on the display.
 */
export function burstNotice(
  settings: Pick<DemoOptions, "spikeAt" | "spikeLength" | "spikeRate">,
  display: Pick<StatusDisplay, "log">,
): (elapsedSeconds: number) => void {
  let shown = false;
  return (elapsedSeconds) => {
    if (shown || !inSpike(settings, elapsedSeconds)) return;
    shown = true;
    display.log(
      `Burst of interruptions: ${Math.round(settings.spikeRate * 100)}% of runs for ${settings.spikeLength} s`,
    );
  };
}
