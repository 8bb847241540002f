/**
 * Where a repair made in `beforeModel` (with `persist`) waits for the model call that follows it:
 * that hook knows neither the model nor the tools, the model call does.
 */
import type { Inspection } from "./recorder.js";

/** Most threads with inspections waiting at once; beyond it the oldest thread's are dropped. */
const MAX_WAITING_THREADS = 10_000;

/**
 * Inspections waiting per thread, in order. A thread's `beforeModel` and its model call run one
 * after the other in one process, so the thread id pairs them whatever other middleware does to
 * the messages in between. Runs without a thread id share one queue.
 *
 * @example
 * ```ts
 * const waiting = new PendingInspections();
 * waiting.add("thread-1", inspection);
 * waiting.take("thread-1"); // [inspection]
 * ```
 */
const NONE_WAITING: readonly Inspection[] = Object.freeze([]);

export class PendingInspections {
  readonly #byThread = new Map<string, Inspection[]>();

  /** Keeps an inspection until the thread's next model call. */
  add(threadId: string | undefined, inspection: Inspection): void {
    const key = threadId ?? "";
    const waiting = this.#byThread.get(key);
    if (waiting !== undefined) {
      waiting.push(inspection);
      return;
    }
    if (this.#byThread.size >= MAX_WAITING_THREADS) {
      const oldest = this.#byThread.keys().next();
      if (!oldest.done) this.#byThread.delete(oldest.value);
    }
    this.#byThread.set(key, [inspection]);
  }

  /** The thread's waiting inspections, oldest first, now no longer waiting. */
  take(threadId: string | undefined): readonly Inspection[] {
    const key = threadId ?? "";
    const waiting = this.#byThread.get(key);
    if (waiting === undefined) return NONE_WAITING;
    this.#byThread.delete(key);
    return waiting;
  }
}
