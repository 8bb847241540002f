/** recordRepairSpan: the span of one inspection, its repair events, and a failure's error. */
import { context, SpanStatusCode } from "@opentelemetry/api";
import { afterEach, describe, expect, it } from "vitest";
import type { CallLabels } from "../../src/telemetry/call-labels.js";
import type { Inspection } from "../../src/telemetry/inspection.js";
import { recordRepairSpan } from "../../src/telemetry/repair-span.js";
import {
  ATTR_DANGLING_COUNT,
  ATTR_ERROR_TYPE,
  ATTR_GEN_AI_CONVERSATION_ID,
  ATTR_REPAIR_COUNT,
  EVENT_REPAIR,
  SPAN_REPAIR_TOOL_CALLS,
} from "../../src/telemetry/semconv.js";
import { tracingHarness } from "../helpers/telemetry.js";

const LABELS: CallLabels = {
  provider: "openai",
  model: "gpt-4.1",
  agent: "support",
  offeredTools: new Set(),
};

const repaired: Inspection = {
  outcome: "repaired",
  repairs: [
    { kind: "placeholder_inserted", toolCallId: "call_1", toolName: "search", callIndex: 1 },
    { kind: "orphan_dropped", toolCallId: "call_9", toolName: "unknown", resultIndex: 3 },
  ],
  messageCount: 4,
  startedAt: performance.now(),
  endedAt: performance.now(),
};

describe("recordRepairSpan", () => {
  const harness = tracingHarness();
  const tracer = harness.tracerProvider.getTracer("test");
  afterEach(() => harness.reset());

  it("records the counts, one event per repair, and the conversation id the thread maps to", () => {
    recordRepairSpan(tracer, repaired, LABELS, context.active(), "thread-1", (id) => `c/${id}`);
    const [span] = harness.spans(SPAN_REPAIR_TOOL_CALLS);
    expect(span?.attributes).toMatchObject({
      [ATTR_DANGLING_COUNT]: 1,
      [ATTR_REPAIR_COUNT]: 2,
      [ATTR_GEN_AI_CONVERSATION_ID]: "c/thread-1",
    });
    expect(span?.events.map((event) => event.name)).toEqual([EVENT_REPAIR, EVENT_REPAIR]);
  });

  it("records no conversation id for a call without a thread, nor when the mapping gives none", () => {
    recordRepairSpan(tracer, repaired, LABELS, context.active(), undefined, () => "never");
    recordRepairSpan(tracer, repaired, LABELS, context.active(), "thread-1", () => undefined);
    for (const span of harness.spans(SPAN_REPAIR_TOOL_CALLS)) {
      expect(span.attributes[ATTR_GEN_AI_CONVERSATION_ID]).toBeUndefined();
    }
  });

  it("records a failure's error type and message, with an error status", () => {
    const failed: Inspection = { ...repaired, outcome: "failed_open", error: new RangeError("x") };
    recordRepairSpan(tracer, failed, LABELS, context.active(), undefined, () => undefined);
    const [span] = harness.spans(SPAN_REPAIR_TOOL_CALLS);
    expect(span?.attributes[ATTR_ERROR_TYPE]).toBe("RangeError");
    expect(span?.status).toEqual({ code: SpanStatusCode.ERROR, message: "x" });
  });

  it("records _OTHER as the error type of a failure that is not an Error", () => {
    const failed: Inspection = { ...repaired, outcome: "failed_open", error: "text" };
    recordRepairSpan(tracer, failed, LABELS, context.active(), undefined, () => undefined);
    expect(harness.spans(SPAN_REPAIR_TOOL_CALLS)[0]?.attributes[ATTR_ERROR_TYPE]).toBe("_OTHER");
  });
});
