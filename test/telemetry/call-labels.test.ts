/** The labels of a model call: provider, model, agent, offered tools, and what a call is charged to. */
import { describe, expect, it } from "vitest";
import { callLabelsOf, chargedTo, metricToolName } from "../../src/telemetry/call-labels.js";
import type { TelemetrySettings } from "../../src/telemetry/settings.js";

function settingsWith(overrides: Partial<TelemetrySettings> = {}): TelemetrySettings {
  return {
    threadMetrics: false,
    threadSeriesLimit: 10,
    threadWindow: 900,
    threadIdAttribute: "raw",
    traceAllCalls: false,
    agentNameOfCurrentRun: () => undefined,
    modelIdentityOf: () => ({ provider: "openai", model: "gpt-4.1" }),
    inferProvider: () => undefined,
    onFailure: () => {},
    ...overrides,
  };
}

describe("callLabelsOf", () => {
  it("reads the provider and model of the request's chat model, and names no agent as unknown", () => {
    const labels = callLabelsOf(settingsWith(), {
      model: {},
      tools: [{ name: "search" }],
      threadId: undefined,
    });
    expect(labels).toMatchObject({ provider: "openai", model: "gpt-4.1", agent: "unknown" });
    expect([...labels.offeredTools]).toEqual(["search"]);
  });

  it("prefers the options' names, then the call's identity, over the chat model", () => {
    const settings = settingsWith({ providerName: "anthropic", agentName: "support" });
    const labels = callLabelsOf(settings, {
      model: {},
      tools: undefined,
      threadId: undefined,
      identity: { model: "claude-sonnet-4" },
    });
    expect(labels).toMatchObject({
      provider: "anthropic",
      model: "claude-sonnet-4",
      agent: "support",
    });
  });

  it("names the agent of the current run when the options name none", () => {
    const settings = settingsWith({ agentNameOfCurrentRun: () => "researcher" });
    expect(callLabelsOf(settings, { model: {}, tools: [], threadId: undefined }).agent).toBe(
      "researcher",
    );
  });
});

describe("chargedTo", () => {
  const labels = callLabelsOf(settingsWith(), { model: {}, tools: [], threadId: undefined });

  it("charges a message of the request's model to the call's labels", () => {
    expect(chargedTo(settingsWith(), labels, { type: "ai" })).toEqual({
      provider: "openai",
      model: "gpt-4.1",
    });
  });

  it("gives the call's labels as they are when the options name both provider and model", () => {
    const settings = settingsWith({ providerName: "openai", modelName: "gpt-4.1" });
    expect(chargedTo(settings, labels, { type: "ai" })).toBe(labels);
  });
});

describe("metricToolName", () => {
  const labels = callLabelsOf(settingsWith(), {
    model: {},
    tools: [{ name: "search" }],
    threadId: undefined,
  });

  it("keeps the name of a tool the request offers", () => {
    expect(metricToolName(labels, "search")).toBe("search");
  });

  it("records any other name, or none, as _OTHER", () => {
    expect(metricToolName(labels, "invented_by_the_model")).toBe("_OTHER");
    expect(metricToolName(labels, undefined)).toBe("_OTHER");
  });
});
