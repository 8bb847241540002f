/**
 * The library's instruments, declared in full (description, unit, histogram buckets as advice) on
 * whatever meter the application provides. The per-thread metric is no instrument: see
 * `thread-activity.ts`, and its descriptor below.
 */
import type { Counter, Histogram, Meter } from "@opentelemetry/api";
import {
  METRIC_DANGLING_TOOL_CALLS,
  METRIC_MODEL_CALLS,
  METRIC_REPAIR_DURATION,
  METRIC_REPAIRS,
  METRIC_TOOL_CALLS,
  REPAIR_DURATION_BUCKETS,
  UNIT_CALL,
  UNIT_REPAIR,
  UNIT_SECONDS,
} from "./semconv.js";

/** The instruments the middleware records to. */
export interface RepairInstruments {
  readonly modelCalls: Counter;
  readonly toolCalls: Counter;
  readonly danglingToolCalls: Counter;
  readonly repairs: Counter;
  readonly repairDuration: Histogram;
}

/**
 * Creates the instruments on a meter.
 *
 * @example
 * ```ts
 * const instruments = createInstruments(metrics.getMeter("tool-call-resilience"));
 * instruments.modelCalls.add(1, { "tool_call_resilience.outcome": "clean" });
 * ```
 */
export function createInstruments(meter: Meter): RepairInstruments {
  return {
    modelCalls: meter.createCounter(METRIC_MODEL_CALLS, {
      description: "Model calls seen by the tool-call repair middleware, by outcome.",
      unit: UNIT_CALL,
    }),
    toolCalls: meter.createCounter(METRIC_TOOL_CALLS, {
      description: "Tool calls issued in model responses, counted once when the model issues them.",
      unit: UNIT_CALL,
    }),
    danglingToolCalls: meter.createCounter(METRIC_DANGLING_TOOL_CALLS, {
      description: "Tool calls left without a result, counted once, the first time they are seen.",
      unit: UNIT_CALL,
    }),
    repairs: meter.createCounter(METRIC_REPAIRS, {
      description:
        "Repairs applied to model requests, counted on every request they are applied to.",
      unit: UNIT_REPAIR,
    }),
    repairDuration: meter.createHistogram(METRIC_REPAIR_DURATION, {
      description:
        "Time taken to inspect, and where needed repair, the messages of a model request.",
      unit: UNIT_SECONDS,
      advice: { explicitBucketBoundaries: [...REPAIR_DURATION_BUCKETS] },
    }),
  };
}

/** What the per-thread gauge is described as; its producer reports it under the library's scope. */
export const THREAD_RECENT_DANGLING_DESCRIPTION =
  "Dangling tool calls per thread counted in the last threadWindow seconds, for the threads that had one (at most threadSeriesLimit, the most first).";
