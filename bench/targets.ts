/**
 * The performance targets, as checks over the measured ratios: each gives PASS or FAIL with the
 * ratio it read. Pure, so that the verdicts can be tested without timing anything.
 */
import type { Shape } from "./histories.js";

/** One comparison of the run: `ratio` is the subject's median time over the baseline's. */
export interface Comparison {
  readonly subject: string;
  readonly baseline: string;
  readonly subjectNs: number;
  readonly baselineNs: number;
  /** The median of the rounds' ratios: what the verdict reads. */
  readonly ratio: number;
  /**
   * The middle half of the rounds' ratios, where there were rounds; or, with `processes`, the
   * lowest and highest of the processes' ratios.
   */
  readonly spread?: readonly [low: number, high: number];
  /** How many processes measured it, when several did (the ratio is their median). */
  readonly processes?: number;
}

/** Everything the targets read. */
export interface Measurements {
  /** The engine against the floor loop, per workload. */
  readonly engineVsFloor: readonly WorkloadComparison[];
  /** Our middleware's hook against the peer's, per workload. */
  readonly middlewareVsPeer: readonly WorkloadComparison[];
  /** Window 50 on 100,000 clean messages against window 50 on 100. */
  readonly window: Comparison;
  /** The `createAgent` step (with a checkpointer) with our middleware and telemetry on, against the step without it. */
  readonly agentStep: Comparison;
  /** Bytes allocated per clean call, by history size, for each contender measured. */
  readonly bytesPerCall: readonly {
    readonly contender: string;
    readonly bySize: ReadonlyMap<number, number>;
  }[];
}

export interface WorkloadComparison extends Comparison {
  readonly shape: Shape;
  readonly size: number;
}

/** A target's verdict. */
export interface Verdict {
  readonly target: string;
  readonly pass: boolean;
  /** What was measured, for example `1.62x the floor (clean, 1,000 messages)`. */
  readonly measured: string;
}

/** The bounds the targets hold the measurements to. */
const LIMITS = {
  cleanOverFloor: 2,
  cleanFromSize: 1_000,
  peerSpeedup: 20,
  peerSpeedupSize: 10_000,
  windowGrowth: 3,
  agentStepOverhead: 1.05,
  /** Bytes per call that the largest history may allocate beyond the smallest: noise, not growth. */
  allocationSlackBytes: 1_024,
} as const;

const CLEAN_SHAPES: readonly Shape[] = ["clean", "parallel"];

/** Checks every target; a target with nothing measured fails. */
export function evaluateTargets(measured: Measurements): Verdict[] {
  return [
    cleanTarget(measured),
    peerSpeedupTarget(measured),
    neverSlowerTarget(measured),
    windowTarget(measured),
    agentStepTarget(measured),
    ...allocationTargets(measured),
  ];
}

function worst<T extends Comparison>(comparisons: readonly T[]): T | undefined {
  let found: T | undefined;
  for (const comparison of comparisons) {
    if (found === undefined || comparison.ratio > found.ratio) found = comparison;
  }
  return found;
}

function missing(target: string): Verdict {
  return { target, pass: false, measured: "not measured" };
}

/** `1,000` */
export function count(value: number): string {
  return value.toLocaleString("en-US");
}

function where(comparison: WorkloadComparison): string {
  return `${comparison.shape}, ${count(comparison.size)} messages${spreadOf(comparison)}`;
}

/**
 * `; middle half of rounds 1.62x-1.75x`, or `; 5 processes 1.58x-1.81x`: how far the ratio read
 * moved, when it was read more than once.
 */
function spreadOf(comparison: Comparison, invert = false): string {
  if (comparison.spread === undefined) return "";
  const [low, high] = invert
    ? [1 / comparison.spread[1], 1 / comparison.spread[0]]
    : comparison.spread;
  const over =
    comparison.processes === undefined
      ? "middle half of rounds"
      : `${comparison.processes} processes`;
  return `; ${over} ${low.toFixed(2)}x-${high.toFixed(2)}x`;
}

function cleanTarget(measured: Measurements): Verdict {
  const target = `Clean histories of ${count(LIMITS.cleanFromSize)} messages or more: within ${LIMITS.cleanOverFloor}x the floor loop`;
  const found = worst(
    measured.engineVsFloor.filter(
      (entry) => CLEAN_SHAPES.includes(entry.shape) && entry.size >= LIMITS.cleanFromSize,
    ),
  );
  if (found === undefined) return missing(target);
  return {
    target,
    pass: found.ratio <= LIMITS.cleanOverFloor,
    measured: `at worst ${found.ratio.toFixed(2)}x the floor (${where(found)})`,
  };
}

function peerSpeedupTarget(measured: Measurements): Verdict {
  const target = `One dangling call in ${count(LIMITS.peerSpeedupSize)} messages: at least ${LIMITS.peerSpeedup}x faster than the peer`;
  const found = measured.middlewareVsPeer.find(
    (entry) => entry.shape === "one-dangling" && entry.size === LIMITS.peerSpeedupSize,
  );
  if (found === undefined) return missing(target);
  const speedup = 1 / found.ratio;
  return {
    target,
    pass: speedup >= LIMITS.peerSpeedup,
    measured: `${speedup.toFixed(1)}x faster`,
  };
}

function neverSlowerTarget(measured: Measurements): Verdict {
  const target = "Never slower than the peer, at any size or shape";
  const found = worst(measured.middlewareVsPeer);
  if (found === undefined) return missing(target);
  return {
    target,
    pass: found.ratio <= 1,
    measured: `at worst ${(1 / found.ratio).toFixed(2)}x faster (${found.shape}, ${count(found.size)} messages${spreadOf(found, true)})`,
  };
}

function windowTarget(measured: Measurements): Verdict {
  const { window } = measured;
  return {
    target: `Window 50 on 100,000 clean messages: within ${LIMITS.windowGrowth}x of window 50 on 100`,
    pass: window.ratio <= LIMITS.windowGrowth,
    measured: `${window.ratio.toFixed(2)}x`,
  };
}

function agentStepTarget(measured: Measurements): Verdict {
  const { agentStep } = measured;
  const slower = (agentStep.ratio - 1) * 100;
  return {
    target: `createAgent step (with a checkpointer), middleware and telemetry on, 100 clean messages: at most ${Math.round((LIMITS.agentStepOverhead - 1) * 100)}% slower`,
    pass: agentStep.ratio <= LIMITS.agentStepOverhead,
    measured: `${slower >= 0 ? "+" : ""}${slower.toFixed(1)}%`,
  };
}

function allocationTargets(measured: Measurements): Verdict[] {
  return measured.bytesPerCall.map(({ contender, bySize }) => {
    const target = `No allocation that grows with the history on clean calls (${contender})`;
    const sizes = [...bySize.keys()].sort((a, b) => a - b);
    const smallest = sizes[0];
    const largest = sizes[sizes.length - 1];
    if (smallest === undefined || largest === undefined || smallest === largest) {
      return missing(target);
    }
    const small = bySize.get(smallest) as number;
    const large = bySize.get(largest) as number;
    return {
      target,
      pass: large - small <= LIMITS.allocationSlackBytes,
      measured: `${Math.round(small)} B/call at ${count(smallest)} messages, ${Math.round(large)} B/call at ${count(largest)}`,
    };
  });
}
