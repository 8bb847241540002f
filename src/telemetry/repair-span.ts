/**
 * The span of one inspection of a request: its attributes, an event per repair, and the error
 * of an inspection that failed open.
 */

import {
  type Attributes,
  type Context,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
} from "@opentelemetry/api";
import type { CallLabels } from "./call-labels.js";
import type { Inspection } from "./inspection.js";
import {
  ATTR_DANGLING_COUNT,
  ATTR_ERROR_TYPE,
  ATTR_GEN_AI_AGENT_NAME,
  ATTR_GEN_AI_CONVERSATION_ID,
  ATTR_GEN_AI_PROVIDER_NAME,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_TOOL_CALL_ID,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_MESSAGE_COUNT,
  ATTR_MESSAGE_INDEX,
  ATTR_OUTCOME,
  ATTR_REASON,
  ATTR_REPAIR_COUNT,
  ATTR_REPAIR_KIND,
  ATTR_TOOL_CALL_IDS,
  ATTR_TOOL_NAMES,
  ERROR_TYPE_VALUE_OTHER,
  EVENT_REPAIR,
  OUTCOME_VALUE_FAILED_OPEN,
  REPAIR_KIND_VALUE_PLACEHOLDER_INSERTED,
  REPAIR_KIND_VALUES,
  SPAN_REPAIR_TOOL_CALLS,
} from "./semconv.js";

/**
 * Records the span of one inspection, timed as the inspection ran, under `parent`.
 *
 * @param threadId - the call's thread, if any
 * @param conversationIdOf - what the thread id becomes as `gen_ai.conversation.id` (`undefined`
 *   for none), asked for only when the span records
 *
 * @example
 * ```ts
 * recordRepairSpan(tracer, inspection, labels, context.active(), "thread-1", (id) => id);
 * ```
 */
export function recordRepairSpan(
  tracer: Tracer,
  inspection: Inspection,
  labels: CallLabels,
  parent: Context,
  threadId: string | undefined,
  conversationIdOf: (threadId: string) => string | undefined,
): void {
  const span = tracer.startSpan(
    SPAN_REPAIR_TOOL_CALLS,
    { kind: SpanKind.INTERNAL, startTime: epochMillis(inspection.startedAt) },
    parent,
  );
  try {
    if (span.isRecording()) {
      const conversation = threadId === undefined ? undefined : conversationIdOf(threadId);
      describeSpan(span, conversation, inspection, labels);
    }
  } finally {
    span.end(epochMillis(inspection.endedAt));
  }
}

function describeSpan(
  span: Span,
  conversation: string | undefined,
  inspection: Inspection,
  labels: CallLabels,
): void {
  const { repairs } = inspection;
  const attributes: Attributes = {
    [ATTR_GEN_AI_PROVIDER_NAME]: labels.provider,
    [ATTR_GEN_AI_REQUEST_MODEL]: labels.model,
    [ATTR_GEN_AI_AGENT_NAME]: labels.agent,
    [ATTR_MESSAGE_COUNT]: inspection.messageCount,
    [ATTR_DANGLING_COUNT]: repairs.filter(
      (repair) => repair.kind === REPAIR_KIND_VALUE_PLACEHOLDER_INSERTED,
    ).length,
    [ATTR_REPAIR_COUNT]: repairs.length,
    [ATTR_TOOL_CALL_IDS]: [...new Set(repairs.map((repair) => repair.toolCallId))],
    [ATTR_TOOL_NAMES]: [...new Set(repairs.map((repair) => repair.toolName))],
    [ATTR_OUTCOME]: inspection.outcome,
  };
  if (conversation !== undefined) attributes[ATTR_GEN_AI_CONVERSATION_ID] = conversation;
  span.setAttributes(attributes);
  for (const repair of repairs) {
    const event: Attributes = {
      [ATTR_GEN_AI_TOOL_NAME]: repair.toolName,
      [ATTR_GEN_AI_TOOL_CALL_ID]: repair.toolCallId,
      [ATTR_REPAIR_KIND]: REPAIR_KIND_VALUES[repair.kind],
    };
    if (repair.reason !== undefined) event[ATTR_REASON] = repair.reason;
    const index = repair.outputIndex ?? repair.resultIndex ?? repair.callIndex;
    if (index !== undefined) event[ATTR_MESSAGE_INDEX] = index;
    span.addEvent(EVENT_REPAIR, event);
  }
  if (inspection.outcome === OUTCOME_VALUE_FAILED_OPEN) {
    span.setAttribute(ATTR_ERROR_TYPE, errorTypeOf(inspection.error));
    if (inspection.error instanceof Error) span.recordException(inspection.error);
    span.setStatus({ code: SpanStatusCode.ERROR, message: errorMessageOf(inspection.error) });
  }
}

/** A `performance.now()` time as milliseconds since the epoch, as spans take it. */
function epochMillis(performanceMillis: number): number {
  return performance.timeOrigin + performanceMillis;
}

function errorTypeOf(error: unknown): string {
  if (error instanceof Error) return error.name || error.constructor.name || "Error";
  return ERROR_TYPE_VALUE_OTHER;
}

function errorMessageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
