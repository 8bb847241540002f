/**
 * The metrics of one model call: the call itself, and for each inspection of its request the
 * duration, the repairs, each dangling call once, and the thread it dangles in.
 */

import type { Attributes, MeterProvider } from "@opentelemetry/api";
import { answeredByLaterModelCall, danglingCallKey } from "./call-identity.js";
import {
  type CallLabels,
  chargedTo,
  metricToolName,
  type ObservedModelCall,
} from "./call-labels.js";
import type { CountOnceMemory } from "./count-once.js";
import { type Inspection, type Outcome, outcomeOfCall } from "./inspection.js";
import type { RepairInstruments } from "./instruments.js";
import {
  ATTR_GEN_AI_AGENT_NAME,
  ATTR_GEN_AI_PROVIDER_NAME,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_OUTCOME,
  ATTR_REASON,
  ATTR_REPAIR_KIND,
  OUTCOME_VALUE_CLEAN,
  OUTCOME_VALUE_FAILED_OPEN,
  OUTCOME_VALUE_REPAIRED,
  REASON_VALUE_INTERRUPTED,
  REPAIR_KIND_VALUE_PLACEHOLDER_INSERTED,
  REPAIR_KIND_VALUES,
} from "./semconv.js";
import type { TelemetrySettings } from "./settings.js";
import type { ThreadActivity } from "./thread-activity.js";

/** The instruments of one meter provider, and the memories shared with it. */
export interface MetricsTarget {
  readonly provider: MeterProvider;
  /** `undefined` when the provider is the no-op one: nothing is recorded, nothing is computed. */
  readonly instruments: RepairInstruments | undefined;
  readonly memory: CountOnceMemory;
  /** The recent dangling calls per thread, which the per-thread metric's producer reads. */
  readonly threadActivity: ThreadActivity;
}

/** The duration's attributes for each outcome, built once: the SDK does not change them. */
const OUTCOME_ATTRIBUTES: Readonly<Record<Outcome, Attributes>> = Object.freeze({
  [OUTCOME_VALUE_CLEAN]: Object.freeze({ [ATTR_OUTCOME]: OUTCOME_VALUE_CLEAN }),
  [OUTCOME_VALUE_REPAIRED]: Object.freeze({ [ATTR_OUTCOME]: OUTCOME_VALUE_REPAIRED }),
  [OUTCOME_VALUE_FAILED_OPEN]: Object.freeze({ [ATTR_OUTCOME]: OUTCOME_VALUE_FAILED_OPEN }),
});

/**
 * Counts the model call, with its outcome.
 *
 * @example
 * ```ts
 * recordModelCallMetric(instruments, labels, [inspection]);
 * ```
 */
export function recordModelCallMetric(
  instruments: RepairInstruments,
  labels: CallLabels,
  inspections: readonly Inspection[],
): void {
  // Attributes written out in full each time: spreading a shared part into them measured as the
  // costliest line of a recorded call.
  instruments.modelCalls.add(1, {
    [ATTR_GEN_AI_PROVIDER_NAME]: labels.provider,
    [ATTR_GEN_AI_REQUEST_MODEL]: labels.model,
    [ATTR_GEN_AI_AGENT_NAME]: labels.agent,
    [ATTR_OUTCOME]: outcomeOfCall(inspections),
  });
}

/**
 * Records the metrics of each inspection: its duration, its repairs, and each dangling call the
 * first time it is seen (in this process's memory, and unless a later model call answered it),
 * with the thread it dangles in for the per-thread metric.
 *
 * @param conversationIdOf - the thread's `gen_ai.conversation.id`, asked for only when a dangling
 *   call is counted on the per-thread metric
 *
 * @example
 * ```ts
 * recordInspectionMetrics(target, instruments, settings, call, [inspection], labels, (id) => id);
 * ```
 */
export function recordInspectionMetrics(
  target: MetricsTarget,
  instruments: RepairInstruments,
  settings: TelemetrySettings,
  call: ObservedModelCall,
  inspections: readonly Inspection[],
  labels: CallLabels,
  conversationIdOf: (threadId: string) => string | undefined,
): void {
  for (const inspection of inspections) {
    instruments.repairDuration.record(
      (inspection.endedAt - inspection.startedAt) / 1000,
      OUTCOME_ATTRIBUTES[inspection.outcome],
    );
    for (const repair of inspection.repairs) {
      instruments.repairs.add(1, {
        [ATTR_GEN_AI_PROVIDER_NAME]: labels.provider,
        [ATTR_GEN_AI_REQUEST_MODEL]: labels.model,
        [ATTR_REPAIR_KIND]: REPAIR_KIND_VALUES[repair.kind],
      });
      if (repair.kind !== REPAIR_KIND_VALUE_PLACEHOLDER_INSERTED) continue;
      const madeBy =
        repair.callIndex === undefined ? undefined : inspection.history?.[repair.callIndex];
      const key = danglingCallKey(call, madeBy, repair.callIndex, repair.toolCallId);
      if (key !== undefined && !target.memory.firstSighting(key)) continue;
      // First seen here, but a model call was made over it already (in this process before its
      // memory forgot it, or in another one): that call counted it.
      if (answeredByLaterModelCall(inspection.history, repair.callIndex)) continue;
      const charged = chargedTo(settings, labels, madeBy);
      instruments.danglingToolCalls.add(1, {
        [ATTR_GEN_AI_PROVIDER_NAME]: charged.provider,
        [ATTR_GEN_AI_REQUEST_MODEL]: charged.model,
        [ATTR_GEN_AI_TOOL_NAME]: metricToolName(labels, repair.toolName),
        [ATTR_REASON]: repair.reason ?? REASON_VALUE_INTERRUPTED,
      });
      if (settings.threadMetrics && call.threadId !== undefined) {
        const conversation = conversationIdOf(call.threadId);
        if (conversation !== undefined) target.threadActivity.record(conversation, charged.model);
      }
    }
  }
}
