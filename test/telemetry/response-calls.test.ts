/** countResponseToolCalls: each tool call of a response, counted as its client sends it. */
import { metrics } from "@opentelemetry/api";
import { afterEach, describe, expect, it } from "vitest";
import type { CallLabels } from "../../src/telemetry/call-labels.js";
import { createInstruments } from "../../src/telemetry/instruments.js";
import { aiMessagesOf, countResponseToolCalls } from "../../src/telemetry/response-calls.js";
import { METRIC_TOOL_CALLS } from "../../src/telemetry/semconv.js";
import { metricsHarness } from "../helpers/telemetry.js";

const LABELS: CallLabels = {
  provider: "openai",
  model: "gpt-4.1",
  agent: "unknown",
  offeredTools: new Set(["search"]),
};
const charge = (labels: CallLabels) => labels;

describe("aiMessagesOf", () => {
  it("gives an AI message as the one message of the response", () => {
    const ai = { type: "ai", tool_calls: [] };
    expect(aiMessagesOf(ai)).toEqual([ai]);
  });

  it("gives the AI messages of a command's update, and nothing for anything else", () => {
    const ai = { role: "assistant" };
    expect(aiMessagesOf({ update: { messages: [{ type: "tool" }, ai] } })).toEqual([ai]);
    expect(aiMessagesOf({ update: { messages: "none" } })).toEqual([]);
    expect(aiMessagesOf(null)).toEqual([]);
  });
});

describe("countResponseToolCalls", () => {
  const harness = metricsHarness();
  const instruments = createInstruments(harness.meterProvider.getMeter("test"));
  afterEach(() => metrics.disable());

  it("counts each call the client sends, an unoffered tool as _OTHER", async () => {
    const response = {
      type: "ai",
      tool_calls: [
        { id: "call_1", name: "search", args: {} },
        { id: "call_2", name: "invented", args: {} },
      ],
    };
    countResponseToolCalls(instruments, response, "any", undefined, () => LABELS, charge);
    expect(await harness.sum(METRIC_TOOL_CALLS, { "gen_ai.tool.name": "search" })).toBe(1);
    expect(await harness.sum(METRIC_TOOL_CALLS, { "gen_ai.tool.name": "_OTHER" })).toBe(1);
  });

  it("asks for the labels only when the response holds an AI message", () => {
    let asked = 0;
    countResponseToolCalls(
      instruments,
      { type: "human" },
      "any",
      undefined,
      () => {
        asked++;
        return LABELS;
      },
      charge,
    );
    expect(asked).toBe(0);
  });
});
