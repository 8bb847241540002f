/**
 * What the per-thread metric reports: for each thread (and model) with dangling calls counted in
 * the last `threadWindow` seconds, how many, at most `threadSeriesLimit` of them, the most first.
 *
 * An instrument of the OpenTelemetry API cannot report such a set: under cumulative temporality
 * the JS SDK reports every attribute set an instrument ever had, for the life of the process (and
 * an asynchronous instrument's memory of attribute sets grows under any temporality), so a
 * per-thread counter or gauge either grows with every thread ever seen or keeps the first threads
 * and loses the rest. The recorder writes here instead, and a `MetricProducer` (the setup entry
 * point's `threadMetricsProducer`) reads it at each collection and reports exactly what it
 * returns. Plain TypeScript: nothing here loads the SDK.
 *
 * Memory is bounded whatever the load: at most {@link trackedSeriesBound} series are tracked
 * (past it, those with the fewest calls in the window are forgotten, the least recently active
 * first among equals, so that a flood of threads with one call each never pushes out the worst
 * ones), and each keeps its calls in at most {@link BUCKETS_PER_WINDOW} + 1 time buckets, however
 * many calls it has.
 */

/** Series the per-thread metric reports at most, unless `threadSeriesLimit` says otherwise. */
export const DEFAULT_THREAD_SERIES_LIMIT = 100;

/** Seconds a counted dangling call stays in the per-thread metric, unless `threadWindow` says otherwise. */
export const DEFAULT_THREAD_WINDOW_SECONDS = 900;

/** Fewest series tracked, however low the limit. */
const MIN_TRACKED_SERIES = 1_000;

/**
 * How many buckets a window is cut into: a call stays in the metric for the window, and at most
 * one bucket (a fifteenth of the window, 60 s by default) longer.
 */
export const BUCKETS_PER_WINDOW = 15;

/**
 * How many series a store with this limit tracks at most: ten times what it reports, so that a
 * thread that is climbing is known before it is among the worst, and never fewer than 1,000.
 */
export function trackedSeriesBound(limit: number): number {
  return Math.max(10 * limit, MIN_TRACKED_SERIES);
}

/** One series of the per-thread metric, as a collection reports it. */
export interface RecentThreadSeries {
  /** The thread's `gen_ai.conversation.id`, as the `threadIdAttribute` option maps it. */
  readonly thread: string;
  /** The `gen_ai.request.model` its calls were charged to. */
  readonly model: string;
  /** Dangling calls counted in the window. */
  readonly count: number;
}

/** The calls counted from `first` to `last` (epoch milliseconds). */
interface Bucket {
  readonly first: number;
  last: number;
  count: number;
}

interface Series {
  readonly thread: string;
  readonly model: string;
  /** Oldest first. */
  readonly buckets: Bucket[];
  /** When its last call was counted. */
  lastAt: number;
}

/**
 * The dangling calls counted per thread and model over a sliding window, bounded in memory.
 *
 * Every middleware that records to one meter provider shares one store ({@link sharedThreadActivity}),
 * since the provider's per-thread metric is one set of series: the largest `threadWindow` and
 * `threadSeriesLimit` among them apply.
 *
 * @example
 * ```ts
 * const store = new ThreadActivity();
 * store.configure(900, 100);
 * store.record("thread-1", "gpt-4.1");
 * store.top(); // [{ thread: "thread-1", model: "gpt-4.1", count: 1 }]
 * ```
 */
export class ThreadActivity {
  /** By key, least recently active first: a series active again moves to the end. */
  readonly #series = new Map<string, Series>();
  readonly #now: () => number;
  #windowMillis = 0;
  #limit = 0;

  /** @param now - the clock, in epoch milliseconds; `Date.now` (read at each call) by default */
  constructor(now?: () => number) {
    this.#now = now ?? (() => Date.now());
  }

  /**
   * Makes the window at least `windowSeconds` long and the limit at least `limit`: middleware
   * recording to one store may be configured differently, and the largest of each applies.
   */
  configure(windowSeconds: number, limit: number): void {
    this.#windowMillis = Math.max(this.#windowMillis, windowSeconds * 1000);
    this.#limit = Math.max(this.#limit, limit);
  }

  /** The window, in seconds. */
  get windowSeconds(): number {
    return this.#windowMillis / 1000;
  }

  /** How many series it reports at most. */
  get limit(): number {
    return this.#limit;
  }

  /**
   * How many series it tracks now; never more than {@link trackedSeriesBound} of its limit (and
   * after a pass that forgot some, a tenth of it fewer).
   */
  get size(): number {
    return this.#series.size;
  }

  /** Counts one dangling call of `thread`, charged to `model`, now. */
  record(thread: string, model: string): void {
    const now = this.#now();
    const key = `${thread}\u0000${model}`;
    let series = this.#series.get(key);
    if (series === undefined) {
      series = { thread, model, buckets: [], lastAt: now };
    } else {
      this.#series.delete(key);
    }
    this.#series.set(key, series);
    series.lastAt = Math.max(series.lastAt, now);
    const width = this.#windowMillis / BUCKETS_PER_WINDOW;
    const newest = series.buckets[series.buckets.length - 1];
    if (newest !== undefined && now - newest.first < width) {
      newest.count += 1;
      newest.last = Math.max(newest.last, now);
    } else {
      series.buckets.push({ first: now, last: now, count: 1 });
      dropExpired(series.buckets, now - this.#windowMillis);
    }
    this.#forgetStale(now);
  }

  /**
   * The series with calls in the window, at most the limit of them: the most calls first, ties to
   * the most recently active. Forgets what has left the window.
   */
  top(): RecentThreadSeries[] {
    const since = this.#now() - this.#windowMillis;
    // In the map's order, least recently active first: the later of two ties is the more recent.
    const live: { readonly series: Series; readonly count: number; readonly order: number }[] = [];
    for (const [key, series] of this.#series) {
      dropExpired(series.buckets, since);
      const count = series.buckets.reduce((sum, bucket) => sum + bucket.count, 0);
      if (count === 0) this.#series.delete(key);
      else live.push({ series, count, order: live.length });
    }
    live.sort((a, b) => b.count - a.count || b.order - a.order);
    return live.slice(0, this.#limit).map(({ series, count }) => ({
      thread: series.thread,
      model: series.model,
      count,
    }));
  }

  /**
   * Forgets the series whose last call has left the window (they are first in the map, so this
   * stops at the first that stays), then, past the bound, the least bad ones.
   */
  #forgetStale(now: number): void {
    const since = now - this.#windowMillis;
    for (const [key, series] of this.#series) {
      if (series.lastAt > since) break;
      this.#series.delete(key);
    }
    const bound = trackedSeriesBound(this.#limit);
    if (this.#series.size > bound) this.#shrink(since, bound);
  }

  /**
   * Keeps the `bound` series with the most calls in the window, the most recently active first
   * among equals, and forgets the rest: those are the ones that could be among the worst. Each
   * pass frees a tenth of the bound below it, so the sorting is paid once per that many new
   * series, not at every call.
   */
  #shrink(since: number, bound: number): void {
    const keep = bound - Math.ceil(bound / 10);
    const ranked: { readonly key: string; readonly count: number; readonly order: number }[] = [];
    for (const [key, series] of this.#series) {
      dropExpired(series.buckets, since);
      const count = series.buckets.reduce((sum, bucket) => sum + bucket.count, 0);
      ranked.push({ key, count, order: ranked.length });
    }
    ranked.sort((a, b) => b.count - a.count || b.order - a.order);
    for (const { key } of ranked.slice(keep)) this.#series.delete(key);
  }
}

/** Drops the buckets whose last call is at or before `since`; they are oldest first. */
function dropExpired(buckets: Bucket[], since: number): void {
  let expired = 0;
  while (expired < buckets.length && (buckets[expired] as Bucket).last <= since) expired++;
  if (expired > 0) buckets.splice(0, expired);
}

const sharedStores = new WeakMap<object, ThreadActivity>();

/**
 * The store of a meter provider, shared by every middleware that records to it and read by the
 * producer of its per-thread metric.
 *
 * @example
 * ```ts
 * sharedThreadActivity(meterProvider) === sharedThreadActivity(meterProvider); // true
 * ```
 */
export function sharedThreadActivity(destination: object): ThreadActivity {
  let store = sharedStores.get(destination);
  if (store === undefined) {
    store = new ThreadActivity();
    sharedStores.set(destination, store);
  }
  return store;
}

/** The store of a meter provider, if anything has recorded to it; for the producer. */
export function threadActivityOf(destination: object): ThreadActivity | undefined {
  return sharedStores.get(destination);
}
