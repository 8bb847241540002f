/**
 * Timing through mitata's `measure`: batched runs of sub-microsecond functions, warm-up, and the
 * median of the samples. A ratio is taken over rounds that alternate the two sides, so that a
 * machine that slows down for a while slows both sides alike, and is judged by the median of the
 * rounds' ratios: a round that a collection or another process spoiled is an outlier, not the
 * verdict. Short calls get many short rounds, since one slow moment weighs most there.
 */
import { measure } from "mitata";

/** How long to sample each side of a comparison, per round, and how many rounds. */
export interface Effort {
  /** Minimum CPU time per measurement, in nanoseconds. */
  readonly sampleTimeNs: number;
  /** Rounds of a paired comparison; the median of their ratios is reported. */
  readonly rounds: number;
  /** Minimum samples per measurement (one sample may be one slow call). */
  readonly minSamples: number;
  /** How long each side runs before it is measured, in nanoseconds. */
  readonly warmUpNs: number;
  /** Rounds, and time per measurement, for calls shorter than {@link SHORT_CALL_NS}. */
  readonly shortRounds: number;
  readonly shortSampleTimeNs: number;
  /**
   * Fresh processes that each measure the short workloads (10 to 1,000 messages): how V8
   * compiles the code of one process moves a sub-microsecond call by up to 2x (measured: the same
   * build at 360 ns in one process, 900 ns in the next), which no number of rounds inside one
   * process averages out. The verdict reads the median across processes.
   */
  readonly processes: number;
}

/**
 * Calls shorter than this get {@link Effort.shortRounds}: at 10 and 100 messages a call takes well
 * under a microsecond or a few, and a quick run's five rounds left their verdict to chance.
 */
export const SHORT_CALL_NS = 20e3;

/** How long to wait after a full collection before timing anything, in milliseconds. */
const SWEEP_PAUSE_MS = 100;

/** Quick: the whole suite within a minute and a half on a shared two-core machine. */
export const QUICK_EFFORT: Effort = {
  sampleTimeNs: 8e6,
  rounds: 7,
  minSamples: 5,
  warmUpNs: 20e6,
  shortRounds: 5,
  shortSampleTimeNs: 20e6,
  processes: 5,
};
/** Full: the numbers BENCHMARKS.md quotes. */
export const FULL_EFFORT: Effort = {
  sampleTimeNs: 150e6,
  rounds: 9,
  minSamples: 12,
  warmUpNs: 200e6,
  shortRounds: 15,
  shortSampleTimeNs: 30e6,
  processes: 9,
};

/** The median time of one call of `run`, in nanoseconds. */
export async function medianNs(run: () => unknown, effort: Effort): Promise<number> {
  const stats = await measure(run, {
    min_cpu_time: effort.sampleTimeNs,
    min_samples: effort.minSamples,
    // A sample of a call under 65 µs is a batch of calls: 512, not mitata's 4,096, which made
    // one sample of a 1,000-message history 25 ms, whatever the time asked for.
    batch_samples: 512,
    // No full collection before each measurement: with 100,000-message histories alive it would
    // cost more than the measurement. Collections during one fall into the median's outliers.
    gc: false,
  });
  return stats.p50;
}

/** Medians of both sides and the median of their per-round ratio (`subject / baseline`). */
export interface Paired {
  readonly subjectNs: number;
  readonly baselineNs: number;
  readonly ratio: number;
  /** The middle half of the rounds' ratios (25th to 75th percentile), when there were rounds. */
  readonly spread?: readonly [low: number, high: number];
}

/** How a paired comparison runs. */
export interface PairedOptions {
  /** Short calls: {@link Effort.shortRounds} rounds of {@link Effort.shortSampleTimeNs}. */
  readonly short?: boolean;
  /**
   * Run before each side of a long call is measured: a full collection where one side leaves
   * much garbage behind (the peer's copies of 10,000 messages), so that collecting it never
   * lands on the other side's measurement. Not for short calls: after a full collection V8
   * recompiles the repair path (the engine measured 4x slower for a few hundred calls, before
   * this change too), and their garbage is small.
   */
  readonly settle?: () => void;
}

/** Measures `subject` against `baseline` in rounds that alternate which side goes first. */
export async function paired(
  subject: () => unknown,
  baseline: () => unknown,
  effort: Effort,
  options: PairedOptions = {},
): Promise<Paired> {
  const rounds = options.short === true ? effort.shortRounds : effort.rounds;
  const sampled =
    options.short === true ? { ...effort, sampleTimeNs: effort.shortSampleTimeNs } : effort;
  const settle = options.short === true ? undefined : options.settle;
  const time = async (run: () => unknown) => {
    if (settle !== undefined) {
      settle();
      // The collector sweeps on in other threads for a while after a full collection, and code
      // that allocates meanwhile (a repair: placeholders, a copy of the history) measured ten
      // times slower for the first few thousand calls. That must not fall on one side only.
      await new Promise((resolve) => setTimeout(resolve, SWEEP_PAUSE_MS));
    }
    return medianNs(run, sampled);
  };
  const subjects: number[] = [];
  const baselines: number[] = [];
  const ratios: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const baselineFirst = round % 2 === 0;
    const a = baselineFirst ? await time(baseline) : undefined;
    const s = await time(subject);
    const b = a ?? (await time(baseline));
    subjects.push(s);
    baselines.push(b);
    ratios.push(s / b);
  }
  return {
    subjectNs: median(subjects),
    baselineNs: median(baselines),
    ratio: median(ratios),
    spread: [percentile(ratios, 0.25), percentile(ratios, 0.75)],
  };
}

/** The `p`-th quantile (0 to 1) of a non-empty list, interpolated between neighbours. */
export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (sorted.length - 1) * p;
  const below = Math.floor(at);
  const above = Math.ceil(at);
  const low = sorted[below] as number;
  return low + ((sorted[above] as number) - low) * (at - below);
}

/** The median of a non-empty list. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

/**
 * Measures two slow, asynchronous contenders call by call, alternating which goes first: for
 * calls of milliseconds, where a collection or a slow moment would otherwise land on one side of
 * a round. The first `warmUpCalls` of each are not counted.
 */
export async function interleaved(
  subject: () => unknown,
  baseline: () => unknown,
  calls: number,
  warmUpCalls: number,
): Promise<Paired> {
  const subjects: number[] = [];
  const baselines: number[] = [];
  for (let call = 0; call < warmUpCalls + calls; call++) {
    const subjectFirst = call % 2 === 0;
    const first = await timedNs(subjectFirst ? subject : baseline);
    const second = await timedNs(subjectFirst ? baseline : subject);
    if (call < warmUpCalls) continue;
    subjects.push(subjectFirst ? first : second);
    baselines.push(subjectFirst ? second : first);
  }
  const subjectNs = median(subjects);
  const baselineNs = median(baselines);
  return { subjectNs, baselineNs, ratio: subjectNs / baselineNs };
}

/** The time of one call of `run`, awaited, in nanoseconds. */
export async function timedNs(run: () => unknown): Promise<number> {
  const started = performance.now();
  await run();
  return (performance.now() - started) * 1e6;
}
