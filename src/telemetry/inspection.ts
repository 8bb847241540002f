/**
 * One inspection of a request's messages by the engine, as the telemetry records it, and the
 * outcome of a model call made from its inspections.
 */

import type { ToolCallRepair } from "../core/repair-log.js";
import {
  OUTCOME_VALUE_CLEAN,
  OUTCOME_VALUE_FAILED_OPEN,
  OUTCOME_VALUE_REPAIRED,
} from "./semconv.js";

/** What became of one inspection of a request, or of a model call. */
export type Outcome =
  | typeof OUTCOME_VALUE_CLEAN
  | typeof OUTCOME_VALUE_REPAIRED
  | typeof OUTCOME_VALUE_FAILED_OPEN;

/**
 * One run of the engine over a request's messages, timed with `performance.now()` (both times 0
 * when nothing was recording as it ran).
 */
export interface Inspection {
  readonly outcome: Outcome;
  readonly repairs: readonly ToolCallRepair[];
  readonly messageCount: number;
  /**
   * The messages inspected, which the repairs' `callIndex` points into: a dangling call is told
   * apart, and charged to its model, by the AI message that made it.
   */
  readonly history?: readonly unknown[];
  readonly startedAt: number;
  readonly endedAt: number;
  /** Why the engine failed, on `failed_open`. */
  readonly error?: unknown;
}

/**
 * A model call's outcome: failed open if its last inspection failed, repaired if any repaired,
 * failed open if any failed, else clean.
 *
 * @example
 * ```ts
 * outcomeOfCall([repairedInspection, cleanInspection]); // "repaired"
 * ```
 */
export function outcomeOfCall(inspections: readonly Inspection[]): Outcome {
  const last = inspections[inspections.length - 1];
  if (last?.outcome === OUTCOME_VALUE_FAILED_OPEN) return OUTCOME_VALUE_FAILED_OPEN;
  if (inspections.some((inspection) => inspection.outcome === OUTCOME_VALUE_REPAIRED)) {
    return OUTCOME_VALUE_REPAIRED;
  }
  return inspections.some((inspection) => inspection.outcome === OUTCOME_VALUE_FAILED_OPEN)
    ? OUTCOME_VALUE_FAILED_OPEN
    : OUTCOME_VALUE_CLEAN;
}
