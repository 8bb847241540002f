/**
 * The telemetry names are a public contract: the copied semantic-convention names must equal the
 * published ones, and the library's own names must keep the shape the README promises.
 */
import * as upstream from "@opentelemetry/semantic-conventions";
import * as incubating from "@opentelemetry/semantic-conventions/incubating";
import { describe, expect, it } from "vitest";
import packageJson from "../../package.json" with { type: "json" };
import * as semconv from "../../src/telemetry/semconv.js";
import { PACKAGE_VERSION } from "../../src/version.js";

describe("semconv", () => {
  it("copies the gen_ai attribute keys exactly as the semantic conventions publish them", () => {
    expect(semconv.ATTR_GEN_AI_PROVIDER_NAME).toBe(incubating.ATTR_GEN_AI_PROVIDER_NAME);
    expect(semconv.ATTR_GEN_AI_REQUEST_MODEL).toBe(incubating.ATTR_GEN_AI_REQUEST_MODEL);
    expect(semconv.ATTR_GEN_AI_AGENT_NAME).toBe(incubating.ATTR_GEN_AI_AGENT_NAME);
    expect(semconv.ATTR_GEN_AI_CONVERSATION_ID).toBe(incubating.ATTR_GEN_AI_CONVERSATION_ID);
    expect(semconv.ATTR_GEN_AI_TOOL_NAME).toBe(incubating.ATTR_GEN_AI_TOOL_NAME);
    expect(semconv.ATTR_GEN_AI_TOOL_CALL_ID).toBe(incubating.ATTR_GEN_AI_TOOL_CALL_ID);
    expect(semconv.ATTR_ERROR_TYPE).toBe(upstream.ATTR_ERROR_TYPE);
  });

  it("copies every well-known gen_ai.provider.name value as published, and adds only unknown", () => {
    const valuesIn = (names: object) =>
      Object.entries(names)
        .filter(([name]) => name.startsWith("GEN_AI_PROVIDER_NAME_VALUE_"))
        .sort(([a], [b]) => a.localeCompare(b));
    const ours = valuesIn(semconv).filter(
      ([name]) => name !== "GEN_AI_PROVIDER_NAME_VALUE_UNKNOWN",
    );
    expect(ours).toEqual(valuesIn(incubating));
    expect(semconv.GEN_AI_PROVIDER_NAME_VALUE_UNKNOWN).toBe("unknown");
    // The collection of them holds each well-known value once, and not unknown.
    expect(Object.values(semconv.GEN_AI_PROVIDER_NAME_VALUES).sort()).toEqual(
      ours.map(([, value]) => value).sort(),
    );
  });

  it("copies error.type's fallback value as published", () => {
    expect(semconv.ERROR_TYPE_VALUE_OTHER).toBe(upstream.ERROR_TYPE_VALUE_OTHER);
  });

  it("names each attribute value after its attribute, as the semantic conventions do", () => {
    const attributes = Object.keys(semconv)
      .filter((name) => name.startsWith("ATTR_"))
      .map((name) => name.slice("ATTR_".length));
    const values = Object.keys(semconv).filter((name) => name.includes("_VALUE_"));
    expect(values.length).toBeGreaterThan(0);
    for (const value of values) {
      const attribute = value.slice(0, value.indexOf("_VALUE_"));
      expect(attributes, `${value} belongs to no ATTR_ constant`).toContain(attribute);
    }
  });

  it("names every metric under the tool_call_resilience namespace, in lower snake case", () => {
    const metricNames = Object.entries(semconv)
      .filter(([name]) => name.startsWith("METRIC_"))
      .map(([, value]) => value as string);
    expect(metricNames).toHaveLength(6);
    for (const name of metricNames) expect(name).toMatch(/^tool_call_resilience(\.[a-z_]+)+$/);
  });

  it("has duration buckets from 1 µs to 100 ms, in seconds and increasing", () => {
    const buckets = semconv.REPAIR_DURATION_BUCKETS;
    expect(buckets[0]).toBe(0.000001);
    expect(buckets.at(-1)).toBe(0.1);
    for (let index = 1; index < buckets.length; index++) {
      expect(buckets[index]).toBeGreaterThan(buckets[index - 1] as number);
    }
  });

  it("reports the version of package.json", () => {
    expect(PACKAGE_VERSION).toBe(packageJson.version);
  });
});
