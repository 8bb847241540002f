/** stopTelemetry: flushes, stops and unregisters, and never rejects. */
import { diag, metrics } from "@opentelemetry/api";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { MetricReader, SpanProcessor } from "../../src/setup/sdk-types.js";
import {
  LAST_PUSH_MILLIS,
  type RunningTelemetry,
  stopTelemetry,
} from "../../src/setup/shutdown.js";

function flushable(calls: string[], name: string, fails = false) {
  return {
    forceFlush: async () => {
      calls.push(`flush ${name}`);
      if (fails) throw new Error(`${name} refused`);
    },
    onEnd: () => {},
    shutdown: async () => {},
  };
}

function running(calls: string[], overrides: Partial<RunningTelemetry> = {}): RunningTelemetry {
  return {
    sdk: {
      shutdown: async () => {
        calls.push("stop sdk");
      },
    } as unknown as RunningTelemetry["sdk"],
    started: true,
    readers: [flushable(calls, "reader") as unknown as MetricReader],
    spanProcessors: [flushable(calls, "spans") as unknown as SpanProcessor],
    otlpExporters: [],
    prometheusEndpoint: {
      stopServer: async () => {
        calls.push("stop endpoint");
      },
    },
    tracing: false,
    ...overrides,
  };
}

describe("stopTelemetry", () => {
  afterEach(() => {
    vi.restoreAllMocks();
    metrics.disable();
  });

  it("flushes every reader and span processor first, then stops the SDK, then the endpoint", async () => {
    const calls: string[] = [];
    await stopTelemetry(running(calls));
    expect(calls).toEqual(["flush reader", "flush spans", "stop sdk", "stop endpoint"]);
  });

  it("flushes nothing of its own without span processors: the SDK's shutdown pushes the metrics", async () => {
    const calls: string[] = [];
    await stopTelemetry(running(calls, { spanProcessors: [] }));
    expect(calls).toEqual(["stop sdk", "stop endpoint"]);
  });

  it("resolves when a step fails, and reports it through the diagnostic logger", async () => {
    const warn = vi.spyOn(diag, "warn").mockImplementation(() => {});
    const calls: string[] = [];
    const failing = running(calls, {
      spanProcessors: [flushable(calls, "spans", true) as unknown as SpanProcessor],
    });
    await expect(stopTelemetry(failing)).resolves.toBeUndefined();
    expect(calls).toContain("stop endpoint");
    expect(warn).toHaveBeenCalledWith(
      expect.stringMatching(/could not push what was left: spans refused/),
    );
  });

  it("gives every OTLP exporter one deadline, LAST_PUSH_MILLIS ahead, before anything is pushed", async () => {
    const calls: string[] = [];
    const deadlines: number[] = [];
    const exporter = {
      finishBy: (deadline: number) => {
        calls.push("finish by");
        deadlines.push(deadline);
      },
    };
    const before = Date.now();
    await stopTelemetry(running(calls, { otlpExporters: [exporter, exporter] }));
    expect(calls.slice(0, 3)).toEqual(["finish by", "finish by", "flush reader"]);
    expect(deadlines[0]).toBe(deadlines[1]);
    expect(deadlines[0]).toBeGreaterThanOrEqual(before + LAST_PUSH_MILLIS);
    expect(deadlines[0]).toBeLessThanOrEqual(Date.now() + LAST_PUSH_MILLIS);
  });

  it("stops the endpoint of an SDK that never started", async () => {
    const calls: string[] = [];
    await stopTelemetry(running(calls, { sdk: undefined, started: false }));
    expect(calls).toEqual(["stop endpoint"]);
  });
});
