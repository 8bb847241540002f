/** The metrics of a model call: the call, each inspection's duration and repairs, dangling calls once. */
import { describe, expect, it } from "vitest";
import type { CallLabels } from "../../src/telemetry/call-labels.js";
import {
  type MetricsTarget,
  recordInspectionMetrics,
  recordModelCallMetric,
} from "../../src/telemetry/call-metrics.js";
import { CountOnceMemory } from "../../src/telemetry/count-once.js";
import type { Inspection } from "../../src/telemetry/inspection.js";
import { createInstruments } from "../../src/telemetry/instruments.js";
import {
  METRIC_DANGLING_TOOL_CALLS,
  METRIC_MODEL_CALLS,
  METRIC_REPAIRS,
} from "../../src/telemetry/semconv.js";
import type { TelemetrySettings } from "../../src/telemetry/settings.js";
import { sharedThreadActivity } from "../../src/telemetry/thread-activity.js";
import { metricsHarness } from "../helpers/telemetry.js";

const LABELS: CallLabels = {
  provider: "openai",
  model: "gpt-4.1",
  agent: "support",
  offeredTools: new Set(["search"]),
};

const SETTINGS: TelemetrySettings = {
  threadMetrics: true,
  threadSeriesLimit: 10,
  threadWindow: 900,
  threadIdAttribute: "raw",
  traceAllCalls: false,
  agentNameOfCurrentRun: () => undefined,
  modelIdentityOf: () => ({ provider: "openai", model: "gpt-4.1" }),
  inferProvider: () => undefined,
  onFailure: () => {},
};

const history = [
  { type: "human", content: "hi" },
  { type: "ai", id: "ai-1", tool_calls: [{ id: "call_1", name: "search", args: {} }] },
];

const dangling: Inspection = {
  outcome: "repaired",
  repairs: [
    { kind: "placeholder_inserted", toolCallId: "call_1", toolName: "search", callIndex: 1 },
  ],
  messageCount: 2,
  history,
  startedAt: 0,
  endedAt: 0,
};

function setUp() {
  const harness = metricsHarness();
  const instruments = createInstruments(harness.meterProvider.getMeter("test"));
  const target: MetricsTarget = {
    provider: harness.meterProvider,
    instruments,
    memory: new CountOnceMemory(100),
    threadActivity: sharedThreadActivity(harness.meterProvider),
  };
  return { harness, instruments, target };
}

describe("recordModelCallMetric", () => {
  it("counts the call with its labels and its outcome", async () => {
    const { harness, instruments } = setUp();
    recordModelCallMetric(instruments, LABELS, [dangling]);
    expect(
      await harness.sum(METRIC_MODEL_CALLS, {
        "gen_ai.agent.name": "support",
        "tool_call_resilience.outcome": "repaired",
      }),
    ).toBe(1);
  });
});

describe("recordInspectionMetrics", () => {
  it("counts a repair on every inspection, and its dangling call once", async () => {
    const { harness, instruments, target } = setUp();
    const call = { model: {}, tools: [], threadId: "thread-1" };
    for (let run = 0; run < 2; run++) {
      recordInspectionMetrics(target, instruments, SETTINGS, call, [dangling], LABELS, (id) => id);
    }
    expect(await harness.sum(METRIC_REPAIRS)).toBe(2);
    expect(
      await harness.sum(METRIC_DANGLING_TOOL_CALLS, {
        "gen_ai.tool.name": "search",
        "tool_call_resilience.reason": "interrupted",
      }),
    ).toBe(1);
  });

  it("asks for the conversation id only with the per-thread metric on and a thread", () => {
    const { instruments, target } = setUp();
    const asked: string[] = [];
    const conversationIdOf = (id: string) => {
      asked.push(id);
      return id;
    };
    const off = { ...SETTINGS, threadMetrics: false };
    recordInspectionMetrics(
      target,
      instruments,
      off,
      { model: {}, tools: [], threadId: "a" },
      [dangling],
      LABELS,
      conversationIdOf,
    );
    recordInspectionMetrics(
      target,
      instruments,
      SETTINGS,
      { model: {}, tools: [], threadId: "b" },
      [dangling],
      LABELS,
      conversationIdOf,
    );
    expect(asked).toEqual(["b"]);
  });
});
