/** What startTelemetry finds registered already, and how it keeps the SDK from adding extras. */
import { metrics } from "@opentelemetry/api";
import { MeterProvider } from "@opentelemetry/sdk-metrics";
import { afterEach, describe, expect, it } from "vitest";
import {
  alreadyRegistered,
  registeredGlobals,
  startWithoutExtras,
} from "../../src/setup/global-registration.js";

describe("registeredGlobals", () => {
  afterEach(() => metrics.disable());

  it("finds nothing in a process without OpenTelemetry", () => {
    expect(registeredGlobals(true)).toEqual([]);
  });

  it("finds a meter provider another SDK registered", () => {
    metrics.setGlobalMeterProvider(new MeterProvider());
    expect(registeredGlobals(false)).toEqual(["MeterProvider"]);
  });
});

describe("alreadyRegistered", () => {
  it("names what is registered and what to do instead", () => {
    expect(alreadyRegistered(["MeterProvider", "TracerProvider"]).message).toMatch(
      /already registered a global MeterProvider, TracerProvider\. Shut that SDK down first/,
    );
  });
});

describe("startWithoutExtras", () => {
  it("sets the SDK's exporter variables to none while it runs, and restores them after", () => {
    process.env.OTEL_METRICS_EXPORTER = "prometheus";
    delete process.env.OTEL_LOGS_EXPORTER;
    const seen: (string | undefined)[] = [];
    startWithoutExtras(() => {
      seen.push(process.env.OTEL_METRICS_EXPORTER, process.env.OTEL_LOGS_EXPORTER);
    });
    expect(seen).toEqual(["none", "none"]);
    expect(process.env.OTEL_METRICS_EXPORTER).toBe("prometheus");
    expect(process.env.OTEL_LOGS_EXPORTER).toBeUndefined();
    delete process.env.OTEL_METRICS_EXPORTER;
  });

  it("restores them when the setup throws", () => {
    expect(() =>
      startWithoutExtras(() => {
        throw new Error("refused");
      }),
    ).toThrow("refused");
    expect(process.env.OTEL_TRACES_EXPORTER).toBeUndefined();
  });
});
