/**
 * The bound on the per-thread counter's series. The OpenTelemetry JS SDK applies a view's
 * cardinality limit to what is recorded between two collections, so with cumulative temporality
 * (Prometheus) a process that meets a few new threads per scrape keeps adding series forever. The
 * recorder therefore keeps its own budget of thread series: the first threads keep theirs for the
 * life of the process, as cumulative counters do anyway, and further threads are counted in one
 * series marked `otel.metric.overflow`, the SDK's own overflow marker.
 */

/** Thread series per meter provider unless the `threadSeriesLimit` option says otherwise. */
export const DEFAULT_THREAD_SERIES_LIMIT = 1_000;

/**
 * The threads that have a series of their own, at most `limit`.
 *
 * @example
 * ```ts
 * const series = new ThreadSeries(2);
 * series.admit("a"); // true
 * series.admit("b"); // true
 * series.admit("c"); // false: counted in the overflow series
 * series.admit("a"); // true: it keeps its series
 * ```
 */
export class ThreadSeries {
  readonly #threads = new Set<string>();

  /** @param limit - how many threads get a series of their own */
  constructor(readonly limit: number) {}

  /** Whether this thread has, or now gets, a series of its own. */
  admit(threadId: string): boolean {
    if (this.#threads.has(threadId)) return true;
    if (this.#threads.size >= this.limit) return false;
    this.#threads.add(threadId);
    return true;
  }

  /** How many threads have a series of their own. */
  get size(): number {
    return this.#threads.size;
  }
}

const sharedSeries = new WeakMap<object, Map<number, ThreadSeries>>();

/**
 * The budget every middleware with this limit shares for one meter provider: the provider's
 * per-thread counter is one set of series, whichever middleware records into it.
 */
export function sharedThreadSeries(destination: object, limit: number): ThreadSeries {
  let byLimit = sharedSeries.get(destination);
  if (byLimit === undefined) {
    byLimit = new Map();
    sharedSeries.set(destination, byLimit);
  }
  let series = byLimit.get(limit);
  if (series === undefined) {
    series = new ThreadSeries(limit);
    byLimit.set(limit, series);
  }
  return series;
}
