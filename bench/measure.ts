/**
 * Timing through mitata's `measure`: batched runs of sub-microsecond functions, warm-up, and the
 * median of the samples. A ratio is taken over rounds that alternate the two sides, so that a
 * machine that slows down for a while slows both sides alike.
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
}

/** Quick: the whole suite within a minute on a shared two-core machine. */
export const QUICK_EFFORT: Effort = {
  sampleTimeNs: 8e6,
  rounds: 5,
  minSamples: 5,
  warmUpNs: 20e6,
};
/** Full: the numbers BENCHMARKS.md quotes. */
export const FULL_EFFORT: Effort = {
  sampleTimeNs: 150e6,
  rounds: 9,
  minSamples: 12,
  warmUpNs: 200e6,
};

/** The median time of one call of `run`, in nanoseconds. */
export async function medianNs(run: () => unknown, effort: Effort): Promise<number> {
  const stats = await measure(run, {
    min_cpu_time: effort.sampleTimeNs,
    min_samples: effort.minSamples,
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
}

/** Measures `subject` against `baseline` in alternating rounds. */
export async function paired(
  subject: () => unknown,
  baseline: () => unknown,
  effort: Effort,
): Promise<Paired> {
  const subjects: number[] = [];
  const baselines: number[] = [];
  const ratios: number[] = [];
  for (let round = 0; round < effort.rounds; round++) {
    const first = round % 2 === 0;
    const a = first ? await medianNs(baseline, effort) : undefined;
    const s = await medianNs(subject, effort);
    const b = a ?? (await medianNs(baseline, effort));
    subjects.push(s);
    baselines.push(b);
    ratios.push(s / b);
  }
  return { subjectNs: median(subjects), baselineNs: median(baselines), ratio: median(ratios) };
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
