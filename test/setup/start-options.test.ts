/** The options of startTelemetry: what the schema accepts, what it refuses and why. */
import { describe, expect, it } from "vitest";
import { startTelemetryOptionsSchema } from "../../src/setup/start-options.js";

function problemsOf(options: unknown): string[] {
  const parsed = startTelemetryOptionsSchema.safeParse(options);
  return parsed.success ? [] : parsed.error.issues.map((issue) => issue.path.join("."));
}

describe("startTelemetryOptionsSchema", () => {
  it("accepts no options, with no span processors by default", () => {
    const parsed = startTelemetryOptionsSchema.parse({});
    expect(parsed.spanProcessors).toEqual([]);
  });

  it("refuses a port outside 1 to 65535 and an endpoint that is not a path", () => {
    expect(problemsOf({ port: 0 })).toEqual(["port"]);
    expect(problemsOf({ endpoint: "metrics" })).toEqual(["endpoint"]);
  });

  it("refuses an option it does not know", () => {
    expect(problemsOf({ prometheusPort: 9464 })).toHaveLength(1);
  });

  it("refuses Prometheus options when no endpoint is served", () => {
    expect(problemsOf({ otlp: true, port: 9464 })).toEqual(["port"]);
  });

  it("refuses a setup whose metrics would go nowhere", () => {
    expect(problemsOf({ prometheus: false })).toEqual(["prometheus"]);
    expect(problemsOf({ otlp: { metrics: false, traces: true } })).toEqual(["otlp.metrics"]);
  });

  it("refuses OTLP options that push nothing", () => {
    expect(problemsOf({ prometheus: true, otlp: { metrics: false } })).toEqual(["otlp"]);
  });

  it("names every option, for the docs to list", () => {
    expect(Object.keys(startTelemetryOptionsSchema.shape)).toEqual([
      "prometheus",
      "host",
      "port",
      "endpoint",
      "otlp",
      "serviceName",
      "views",
      "spanProcessors",
    ]);
  });
});
