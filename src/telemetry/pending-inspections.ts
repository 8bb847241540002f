/**
 * Where a repair made in `beforeModel` (with `persist`) waits for the model call that follows it:
 * that hook knows neither the model nor the tools, the model call does. A repair is written to the
 * thread either way, so one whose model call does not come (another middleware ended the run
 * before the model, a later hook failed) is handed back, to be recorded without it.
 */
import type { HistoryPlace } from "./call-identity.js";
import type { Inspection } from "./inspection.js";

/** Most histories with inspections waiting at once; beyond it the oldest one's are handed back. */
const MAX_WAITING_HISTORIES = 10_000;

/**
 * How long a repair waits for its model call before it is handed back. A model call follows its
 * `beforeModel` hooks within one step, but the hooks in between may call a model themselves (a
 * summary), and a checkpointer may be slow: the wait is long enough for both.
 */
export const MODEL_CALL_WAIT_MS = 30_000;

const NONE_WAITING: readonly Inspection[] = Object.freeze([]);

interface Waiting {
  readonly place: HistoryPlace;
  readonly inspections: Inspection[];
  readonly timer: ReturnType<typeof setTimeout>;
}

/**
 * Inspections waiting per history (thread, and the run of the graph that holds it), in order. A history's `beforeModel`
 * and its model call run one after the other in one process, so the history pairs them whatever
 * other middleware does to the messages in between. Runs without a thread id share one queue.
 *
 * @example
 * ```ts
 * const waiting = new PendingInspections((place, inspections) => record(place, inspections));
 * waiting.add({ threadId: "thread-1" }, inspection);
 * waiting.take({ threadId: "thread-1" }); // [inspection]
 * ```
 */
export class PendingInspections {
  readonly #byHistory = new Map<string, Waiting>();

  /**
   * @param onUnclaimed - gets the inspections no model call took: after `waitMs`, or when newer
   *   histories push them out; it must not throw
   * @param waitMs - how long inspections wait for their model call
   */
  constructor(
    private readonly onUnclaimed: (place: HistoryPlace, inspections: readonly Inspection[]) => void,
    private readonly waitMs: number = MODEL_CALL_WAIT_MS,
  ) {}

  /** Keeps an inspection until the history's next model call, or until it is handed back. */
  add(place: HistoryPlace, inspection: Inspection): void {
    const key = keyOf(place);
    const waiting = this.#byHistory.get(key);
    if (waiting !== undefined) {
      waiting.inspections.push(inspection);
      return;
    }
    if (this.#byHistory.size >= MAX_WAITING_HISTORIES) {
      const oldest = this.#byHistory.keys().next();
      if (!oldest.done) this.#handBack(oldest.value);
    }
    const timer = setTimeout(() => this.#handBack(key), this.waitMs);
    // Waiting inspections never keep a process alive.
    timer.unref?.();
    this.#byHistory.set(key, { place, inspections: [inspection], timer });
  }

  /** The history's waiting inspections, oldest first, now no longer waiting. */
  take(place: HistoryPlace): readonly Inspection[] {
    const key = keyOf(place);
    const waiting = this.#byHistory.get(key);
    if (waiting === undefined) return NONE_WAITING;
    this.#byHistory.delete(key);
    clearTimeout(waiting.timer);
    return waiting.inspections;
  }

  #handBack(key: string): void {
    const waiting = this.#byHistory.get(key);
    if (waiting === undefined) return;
    this.#byHistory.delete(key);
    clearTimeout(waiting.timer);
    this.onUnclaimed(waiting.place, waiting.inspections);
  }
}

/** A history's key: its thread and its graph's run (else namespace). */
function keyOf(place: HistoryPlace): string {
  return `${place.threadId ?? ""}\u0000${place.run ?? place.namespace ?? ""}`;
}
