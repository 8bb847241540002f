/**
 * `startTelemetry({ otlp })` against a local OTLP/HTTP receiver that decodes what arrives: the
 * library's metrics pushed over OTLP with exact counts, the names, units, temporality, attributes,
 * scope and resource a Collector or Prometheus would read, the same numbers as the Prometheus
 * endpoint of the same process, the standard `OTEL_EXPORTER_OTLP_*` variables, spans on request,
 * and headers that never leak into a log line or an error.
 */
import { type Context, type DiagLogger, DiagLogLevel, diag, propagation } from "@opentelemetry/api";
import { createNoopLogger, logs } from "@opentelemetry/api-logs";
import { afterEach, describe, expect, it, vi } from "vitest";
import { danglingToolCallMiddleware, ToolCallResilienceOptionsError } from "../src/index.js";
import {
  type StartTelemetryOptions,
  startTelemetry,
  type TelemetryHandle,
  ToolCallResilienceSetupError,
} from "../src/setup/index.js";
import {
  ATTR_GEN_AI_CONVERSATION_ID,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_OUTCOME,
  INSTRUMENTATION_SCOPE_NAME,
  METRIC_DANGLING_TOOL_CALLS,
  METRIC_MODEL_CALLS,
  METRIC_REPAIR_DURATION,
  METRIC_REPAIRS,
  METRIC_THREAD_RECENT_DANGLING_TOOL_CALLS,
  METRIC_TOOL_CALLS,
  OUTCOME_VALUE_CLEAN,
  OUTCOME_VALUE_REPAIRED,
  REPAIR_DURATION_BUCKETS,
  SPAN_REPAIR_TOOL_CALLS,
  UNIT_CALL,
  UNIT_REPAIR,
  UNIT_SECONDS,
} from "../src/telemetry/semconv.js";
import { PACKAGE_VERSION } from "../src/version.js";
import {
  agentWith,
  aiAnswer,
  aiToolCall,
  onThread,
  scriptedModel,
  searchTool,
} from "./helpers/agent.js";
import { aiCalls, type CallSpec, human } from "./helpers/history.js";
import {
  latestPoints,
  type MetricPoint,
  type OtlpReceiver,
  type ReceivedRequest,
  startOtlpReceiver,
  TEMPORALITY,
} from "./helpers/otlp-receiver.js";
import {
  jobAndInstance,
  translatedExposition,
  translatedMetricName,
} from "./helpers/otlp-translation.js";
import { freePort, parseExposition, scrape } from "./helpers/prometheus.js";
import { exporterScopeLabels } from "./helpers/sdk.js";

// --- Receivers, handles and the environment -----------------------------------------------------

const receivers: OtlpReceiver[] = [];
const handles: TelemetryHandle[] = [];

afterEach(async () => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
  diag.disable();
  await Promise.allSettled(handles.splice(0).map((handle) => handle.shutdown()));
  await Promise.allSettled(receivers.splice(0).map((receiver) => receiver.close()));
});

async function receiver(options?: Parameters<typeof startOtlpReceiver>[0]): Promise<OtlpReceiver> {
  const started = await startOtlpReceiver(options);
  receivers.push(started);
  return started;
}

async function start(options: StartTelemetryOptions): Promise<TelemetryHandle> {
  const handle = await startTelemetry(options);
  handles.push(handle);
  return handle;
}

/** Where a Prometheus endpoint started with the defaults would listen. */
const DEFAULT_PROMETHEUS_URL = "http://127.0.0.1:9464/metrics";

/** Whether something answers HTTP at `url`. */
async function listens(url: string): Promise<boolean> {
  try {
    await (await fetch(url)).arrayBuffer();
    return true;
  } catch {
    return false;
  }
}

/** The lines OpenTelemetry's diagnostic logger receives from now on, warnings and errors. */
function captureDiagnostics(): string[] {
  const lines: string[] = [];
  const record = (...parts: unknown[]) => lines.push(parts.map(String).join(" "));
  const ignore = () => {};
  diag.setLogger(
    { error: record, warn: record, info: ignore, debug: ignore, verbose: ignore },
    { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true },
  );
  return lines;
}

/** An export interval that never elapses during a test: only shutdown() pushes. */
const NO_PERIODIC_EXPORT = 3_600_000;

async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected a rejection");
}

// --- The workload ----------------------------------------------------------------------------------

/** A history whose AI message calls these tools and gets no result, then a new human turn. */
function danglingInput(...calls: CallSpec[]) {
  return [human("What's the weather?"), aiCalls(...calls), human("Never mind.")];
}

/**
 * Four model calls on the global meter provider: two repaired (one and two dangling `search`
 * calls, on threads t1 and t2), then two clean ones on t3, the first of which calls `search`.
 */
async function runWorkload(): Promise<void> {
  const model = scriptedModel(
    aiAnswer("a1", "Okay."),
    aiAnswer("a2", "Okay."),
    aiToolCall("a3", { id: "c4", name: "search", args: { query: "weather" } }),
    aiAnswer("a4", "Sunny."),
  );
  Object.assign(model, { model: "gpt-test" });
  const agent = agentWith({
    model,
    tools: [searchTool()],
    middleware: [danglingToolCallMiddleware({ logger: false, providerName: "openai" })],
  });
  await agent.invoke({ messages: danglingInput(["c1", "search"]) }, onThread("t1"));
  await agent.invoke(
    { messages: danglingInput(["c2", "search"], ["c3", "search"]) },
    onThread("t2"),
  );
  await agent.invoke({ messages: [human("Weather?")] }, onThread("t3"));
}

/** The points of one instrument. */
function pointsOf(points: readonly MetricPoint[], metric: string): MetricPoint[] {
  return points.filter((point) => point.metric === metric);
}

function sumOf(points: readonly MetricPoint[], metric: string): number {
  return pointsOf(points, metric).reduce(
    (total, point) => total + (point.kind === "histogram" ? point.count : point.value),
    0,
  );
}

function metricsOf(requests: readonly ReceivedRequest[]): MetricPoint[] {
  return latestPoints(requests.filter((request) => request.signal === "metrics")).filter(
    (point) => point.scope.name === INSTRUMENTATION_SCOPE_NAME,
  );
}

// --- The spec ------------------------------------------------------------------------------------

describe("startTelemetry({ otlp }) pushing metrics over OTLP/HTTP", () => {
  it("pushes every instrument with its unit, cumulative temporality, scope and exact counts, and the resource names the service and a process of its own", async () => {
    const otlp = await receiver();
    await start({
      serviceName: "support-agent",
      otlp: { endpoint: otlp.url, exportIntervalMillis: NO_PERIODIC_EXPORT },
    });
    await runWorkload();
    await handles[0]?.shutdown();

    expect(otlp.refused).toEqual([]);
    const [request] = otlp.requests;
    expect(request?.signal).toBe("metrics");
    expect(request?.contentType).toBe("application/x-protobuf");
    const points = metricsOf(otlp.requests);

    const units = Object.fromEntries(points.map((point) => [point.metric, point.unit]));
    expect(units).toEqual({
      [METRIC_MODEL_CALLS]: UNIT_CALL,
      [METRIC_TOOL_CALLS]: UNIT_CALL,
      [METRIC_DANGLING_TOOL_CALLS]: UNIT_CALL,
      [METRIC_REPAIRS]: UNIT_REPAIR,
      [METRIC_THREAD_RECENT_DANGLING_TOOL_CALLS]: UNIT_CALL,
      [METRIC_REPAIR_DURATION]: UNIT_SECONDS,
    });
    for (const point of points) {
      // A gauge has no temporality in OTLP: the per-thread metric's points are values, not sums.
      expect(point.temporality, point.metric).toBe(
        point.kind === "gauge" ? 0 : TEMPORALITY.cumulative,
      );
      expect(point.scope).toEqual({ name: INSTRUMENTATION_SCOPE_NAME, version: PACKAGE_VERSION });
      if (point.kind === "sum") expect(point.monotonic, point.metric).toBe(true);
    }

    const modelCalls = pointsOf(points, METRIC_MODEL_CALLS).map((point) => [
      point.attributes[ATTR_OUTCOME],
      point.kind === "sum" ? point.value : Number.NaN,
    ]);
    expect(Object.fromEntries(modelCalls)).toEqual({
      [OUTCOME_VALUE_REPAIRED]: 2,
      [OUTCOME_VALUE_CLEAN]: 2,
    });
    expect(sumOf(points, METRIC_TOOL_CALLS)).toBe(1);
    expect(sumOf(points, METRIC_DANGLING_TOOL_CALLS)).toBe(3);
    expect(
      pointsOf(points, METRIC_DANGLING_TOOL_CALLS).map((p) => p.attributes[ATTR_GEN_AI_TOOL_NAME]),
    ).toEqual(["search"]);
    const perThread = pointsOf(points, METRIC_THREAD_RECENT_DANGLING_TOOL_CALLS).map((point) => [
      point.attributes[ATTR_GEN_AI_CONVERSATION_ID],
      point.kind === "gauge" ? point.value : Number.NaN,
    ]);
    expect(Object.fromEntries(perThread)).toEqual({ t1: 1, t2: 2 });
    expect(sumOf(points, METRIC_REPAIR_DURATION)).toBe(4);
    for (const point of pointsOf(points, METRIC_REPAIR_DURATION)) {
      expect(point.kind === "histogram" && point.explicitBounds).toEqual([
        ...REPAIR_DURATION_BUCKETS,
      ]);
    }

    // One resource: the service, and a random service.instance.id of this process.
    const resources = new Set(points.map((point) => JSON.stringify(point.resource)));
    expect(resources.size).toBe(1);
    const [resource] = points.map((point) => point.resource);
    expect(resource?.["service.name"]).toBe("support-agent");
    expect(resource?.["service.instance.id"]).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    expect(resource?.["telemetry.sdk.language"]).toBe("nodejs");
  });

  it("pushes the per-thread metric of the threads in the window only: a thread whose calls left it is in no later push", async () => {
    const otlp = await receiver();
    await start({ otlp: { endpoint: otlp.url, exportIntervalMillis: 100 } });
    const agent = agentWith({
      model: scriptedModel(aiAnswer("a1", "Okay."), aiAnswer("a2", "Okay.")),
      tools: [searchTool()],
      middleware: [danglingToolCallMiddleware({ logger: false, threadWindow: 1 })],
    });
    /** The threads of the per-thread metric in the latest push, once a push has `expected`. */
    const threadsPushed = async (expected: string[]) => {
      let threads: unknown[] = [];
      for (let attempt = 0; attempt < 50; attempt++) {
        const pushes = otlp.requests.filter((request) => request.signal === "metrics");
        threads = pointsOf(pushes.at(-1)?.points ?? [], METRIC_THREAD_RECENT_DANGLING_TOOL_CALLS)
          .map((point) => point.attributes[ATTR_GEN_AI_CONVERSATION_ID])
          .sort();
        if (JSON.stringify(threads) === JSON.stringify(expected)) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      return threads;
    };

    await agent.invoke({ messages: danglingInput(["c1", "search"]) }, onThread("t1"));
    expect(await threadsPushed(["t1"])).toEqual(["t1"]);
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    await agent.invoke({ messages: danglingInput(["c2", "search"]) }, onThread("t2"));
    expect(await threadsPushed(["t2"])).toEqual(["t2"]);
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    expect(await threadsPushed([])).toEqual([]);
    // The counter, cumulative, still carries both.
    const pushes = otlp.requests.filter((request) => request.signal === "metrics");
    expect(sumOf(pushes.at(-1)?.points ?? [], METRIC_DANGLING_TOOL_CALLS)).toBe(2);
  });

  it("pushes the very numbers its own Prometheus endpoint serves, under the names Prometheus's OTLP translation gives them", async () => {
    const otlp = await receiver();
    const handle = await start({
      prometheus: true,
      port: await freePort(),
      serviceName: "support-agent",
      otlp: { endpoint: otlp.url, exportIntervalMillis: NO_PERIODIC_EXPORT },
    });
    expect(handle.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    await runWorkload();
    const scraped = await scrape(handle.metricsUrl as string);
    await handle.shutdown();

    const points = metricsOf(otlp.requests);
    const pushed = parseExposition(translatedExposition(points));
    const { job, instance } = jobAndInstance(points[0]?.resource ?? {});
    expect(job).toBe("support-agent");
    const names = new Set(points.map(translatedMetricName));
    expect([...names].sort()).toEqual([
      "tool_call_resilience_dangling_tool_calls_total",
      "tool_call_resilience_model_calls_total",
      "tool_call_resilience_repair_duration_seconds",
      "tool_call_resilience_repairs_total",
      "tool_call_resilience_thread_recent_dangling_tool_calls",
      "tool_call_resilience_tool_calls_total",
    ]);
    // Every sample the endpoint serves, under its OTLP name, with job and instance instead of the
    // scope labels, and the same value.
    const library = scraped.samples.filter((s) => s.name.startsWith("tool_call_resilience_"));
    expect(library.length).toBeGreaterThan(20);
    for (const sample of library) {
      const name = sample.name.replace(
        /^tool_call_resilience_repair_duration_(bucket|sum|count)$/,
        "tool_call_resilience_repair_duration_seconds_$1",
      );
      const { otel_scope_name, otel_scope_version, ...labels } = sample.labels;
      expect({ otel_scope_name, otel_scope_version }).toEqual({
        otel_scope_name: undefined,
        otel_scope_version: undefined,
        ...exporterScopeLabels(),
      });
      const match = pushed.find(name, {
        ...labels,
        job: job as string,
        instance: instance as string,
      });
      expect(match, `${name} ${JSON.stringify(labels)}`).toHaveLength(1);
      if (!name.endsWith("_sum")) expect(match[0]?.value, name).toBe(sample.value);
    }
    expect(pushed.samples.filter((s) => s.name.startsWith("tool_call_resilience_"))).toHaveLength(
      library.length,
    );
    expect(pushed.find("target_info")).toHaveLength(1);
  });

  it("reads the endpoint, protocol and headers from the standard variables: JSON to OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", async () => {
    const otlp = await receiver();
    vi.stubEnv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1");
    vi.stubEnv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", `${otlp.url}/custom/v1/metrics`);
    vi.stubEnv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json");
    vi.stubEnv("OTEL_EXPORTER_OTLP_HEADERS", "x-tenant=acme,authorization=Bearer%20k-123");
    vi.stubEnv("OTEL_METRIC_EXPORT_INTERVAL", String(NO_PERIODIC_EXPORT));
    vi.stubEnv("OTEL_SERVICE_NAME", "from-env");
    vi.stubEnv("OTEL_RESOURCE_ATTRIBUTES", "service.namespace=shop,service.instance.id=pod-7");
    await start({ otlp: true });
    await runWorkload();
    await handles[0]?.shutdown();

    expect(otlp.refused).toEqual([]);
    expect(otlp.requests).toHaveLength(1);
    const [request] = otlp.requests;
    expect(request?.contentType).toMatch(/^application\/json/);
    expect(request?.headers["x-tenant"]).toBe("acme");
    expect(request?.headers.authorization).toBe("Bearer k-123");
    const points = metricsOf(otlp.requests);
    expect(sumOf(points, METRIC_DANGLING_TOOL_CALLS)).toBe(3);
    expect(sumOf(points, METRIC_MODEL_CALLS)).toBe(4);
    expect(jobAndInstance(points[0]?.resource ?? {})).toEqual({
      job: "shop/from-env",
      instance: "pod-7",
    });
  });

  it("pushes at every OTEL_METRIC_EXPORT_INTERVAL, the counts growing in place (cumulative)", async () => {
    const otlp = await receiver();
    vi.stubEnv("OTEL_METRIC_EXPORT_INTERVAL", "100");
    await start({ otlp: { endpoint: otlp.url } });
    await runWorkload();
    await otlp.metricsRequests(otlp.requests.length + 2);
    const before = sumOf(metricsOf(otlp.requests), METRIC_MODEL_CALLS);
    expect(before).toBe(4);
    await runWorkload();
    await otlp.metricsRequests(otlp.requests.length + 2);
    expect(sumOf(metricsOf(otlp.requests), METRIC_MODEL_CALLS)).toBe(8);
  });

  it("sends deltas when OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE=delta asks for them", async () => {
    const otlp = await receiver();
    vi.stubEnv("OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE", "delta");
    await start({ otlp: { endpoint: otlp.url, exportIntervalMillis: NO_PERIODIC_EXPORT } });
    await runWorkload();
    await handles[0]?.shutdown();
    const points = metricsOf(otlp.requests);
    expect(points.length).toBeGreaterThan(0);
    for (const point of points) {
      // The per-thread gauge is a value, not a sum: it has no temporality either way.
      expect(point.temporality, point.metric).toBe(point.kind === "gauge" ? 0 : TEMPORALITY.delta);
    }
    // Prometheus refuses delta points: nothing of them would be stored, but the gauge.
    const stored = translatedExposition(points)
      .split("\n")
      .filter((line) => line.startsWith("tool_call_resilience_"));
    expect(stored.length).toBeGreaterThan(0);
    for (const line of stored) {
      expect(line).toMatch(/^tool_call_resilience_thread_recent_dangling_tool_calls\{/);
    }
  });

  it("posts to the path Prometheus's OTLP receiver listens on when given its base URL", async () => {
    const otlp = await receiver();
    await start({
      otlp: { endpoint: `${otlp.url}/api/v1/otlp/`, exportIntervalMillis: NO_PERIODIC_EXPORT },
    });
    await runWorkload();
    await handles[0]?.shutdown();
    expect(otlp.refused).toEqual([]);
    expect(otlp.requests.map((request) => request.signal)).toEqual(["metrics"]);
    expect(sumOf(metricsOf(otlp.requests), METRIC_MODEL_CALLS)).toBe(4);
  });

  it("serves no Prometheus endpoint when it pushes over OTLP, unless asked", async () => {
    const otlp = await receiver();
    const listeningBefore = await listens(DEFAULT_PROMETHEUS_URL);
    const handle = await start({ otlp: { endpoint: otlp.url } });
    expect(handle.metricsUrl).toBeUndefined();
    expect(await listens(DEFAULT_PROMETHEUS_URL)).toBe(listeningBefore);
    await handle.shutdown();
  });

  it("lets a header of otlp.headers win over one of the same name in OTEL_EXPORTER_OTLP_HEADERS, keeping the others", async () => {
    const otlp = await receiver();
    vi.stubEnv("OTEL_EXPORTER_OTLP_HEADERS", "x-api-key=from-env,x-tenant=acme");
    await start({
      otlp: {
        endpoint: otlp.url,
        headers: { "x-api-key": "from-options" },
        exportIntervalMillis: NO_PERIODIC_EXPORT,
      },
    });
    await runWorkload();
    await handles[0]?.shutdown();
    expect(otlp.requests[0]?.headers["x-api-key"]).toBe("from-options");
    expect(otlp.requests[0]?.headers["x-tenant"]).toBe("acme");
  });
});

describe("startTelemetry({ otlp }) shutdown()", () => {
  it("resolves, with every metric pushed, when the receiver refuses the spans (as Prometheus's OTLP receiver does)", async () => {
    const otlp = await receiver({ status: { traces: 404 }, delayMs: { metrics: 500 } });
    const warnings = captureDiagnostics();
    await start({
      otlp: { endpoint: otlp.url, traces: true, exportIntervalMillis: NO_PERIODIC_EXPORT },
    });
    await runWorkload();
    await expect(handles[0]?.shutdown()).resolves.toBeUndefined();

    expect(otlp.requests.some((request) => request.signal === "traces")).toBe(true);
    const points = metricsOf(otlp.requests);
    expect(sumOf(points, METRIC_MODEL_CALLS)).toBe(4);
    expect(sumOf(points, METRIC_DANGLING_TOOL_CALLS)).toBe(3);
    expect(warnings.join("\n")).toMatch(/404|Not Found/);
  });

  it("resolves when the receiver cannot be reached, the model calls having gone on", async () => {
    vi.stubEnv("OTEL_EXPORTER_OTLP_TIMEOUT", "1000");
    const closed = `http://127.0.0.1:${await freePort()}`;
    const handle = await start({ otlp: { endpoint: closed, traces: true } });
    await runWorkload();
    await expect(handle.shutdown()).resolves.toBeUndefined();
    await expect(handle.shutdown()).resolves.toBeUndefined();
  });
});

describe("startTelemetry({ otlp }) toward an endpoint where nothing listens", () => {
  /** The warnings that say nothing answers, among the console's lines. */
  function unanswered(lines: readonly string[]): string[] {
    return lines.filter((line) => line.includes("nothing answers"));
  }

  /** What `console.warn` prints from now on: there, not only to a diagnostic logger nobody set. */
  function captureConsoleWarnings(): string[] {
    const lines: string[] = [];
    vi.spyOn(console, "warn").mockImplementation((...parts: unknown[]) => {
      lines.push(parts.map(String).join(" "));
    });
    return lines;
  }

  it("warns once, naming the endpoint, that the metrics are not delivered, however many pushes fail", async () => {
    // Each push gives up after 300 ms, so that several fail while the test waits.
    vi.stubEnv("OTEL_EXPORTER_OTLP_TIMEOUT", "300");
    const warnings = captureConsoleWarnings();
    const port = await freePort();
    await start({
      otlp: { endpoint: `http://collector:s3cr3t@127.0.0.1:${port}`, exportIntervalMillis: 100 },
    });
    await runWorkload();
    await vi.waitFor(() => expect(unanswered(warnings)).not.toEqual([]), { timeout: 5_000 });
    await new Promise((resolve) => setTimeout(resolve, 1_000));

    const [warning, ...more] = unanswered(warnings);
    expect(more).toEqual([]);
    expect(warning).toContain(`http://127.0.0.1:${port}/v1/metrics`);
    expect(warning).toMatch(/ECONNREFUSED/);
    expect(warning).toMatch(/metrics .*not delivered/);
    expect(warning).toMatch(/tries again/);
    expect(warning).not.toContain("s3cr3t");
  });

  it("warns at shutdown() when its last push is the first to find nothing there", async () => {
    const warnings = captureConsoleWarnings();
    const closed = `http://127.0.0.1:${await freePort()}`;
    const handle = await start({
      otlp: { endpoint: closed, exportIntervalMillis: NO_PERIODIC_EXPORT },
    });
    await runWorkload();
    expect(unanswered(warnings)).toEqual([]);
    await handle.shutdown();
    expect(unanswered(warnings)).toEqual([expect.stringContaining(`${closed}/v1/metrics`)]);
  });

  it("lets shutdown() end within 3 s, its last push given up", async () => {
    const closed = `http://127.0.0.1:${await freePort()}`;
    const handle = await start({
      otlp: { endpoint: closed, exportIntervalMillis: NO_PERIODIC_EXPORT },
    });
    await runWorkload();
    const began = performance.now();
    await expect(handle.shutdown()).resolves.toBeUndefined();
    expect(performance.now() - began).toBeLessThan(3_000);
  });

  it("lets shutdown() end within 3 s with spans too, each signal warned of once", async () => {
    const warnings = captureConsoleWarnings();
    const closed = `http://127.0.0.1:${await freePort()}`;
    const handle = await start({
      otlp: { endpoint: closed, traces: true, exportIntervalMillis: NO_PERIODIC_EXPORT },
    });
    await runWorkload();
    const began = performance.now();
    await expect(handle.shutdown()).resolves.toBeUndefined();
    expect(performance.now() - began).toBeLessThan(3_000);
    expect(unanswered(warnings).sort()).toEqual([
      expect.stringContaining(`${closed}/v1/metrics`),
      expect.stringContaining(`${closed}/v1/traces`),
    ]);
  });

  it("still gives a receiver that answers slowly the time to take the last push", async () => {
    const otlp = await receiver({ delayMs: { metrics: 1_200 } });
    const warnings = captureConsoleWarnings();
    const handle = await start({
      otlp: { endpoint: otlp.url, exportIntervalMillis: NO_PERIODIC_EXPORT },
    });
    await runWorkload();
    await handle.shutdown();

    expect(sumOf(metricsOf(otlp.requests), METRIC_MODEL_CALLS)).toBe(4);
    expect(unanswered(warnings)).toEqual([]);
  });
});

describe("what startTelemetry({ otlp }) leaves to the application", () => {
  it("registers no propagator with spans on, so one the application registers later takes effect", async () => {
    const otlp = await receiver();
    await start({ otlp: { endpoint: otlp.url, traces: true } });
    expect(propagation.fields()).toEqual([]);
    await handles[0]?.shutdown();
    expect(propagation.fields()).toEqual([]);
    const appPropagator = {
      inject: () => {},
      extract: (context: Context) => context,
      fields: () => ["x-app-trace"],
    };
    expect(propagation.setGlobalPropagator(appPropagator)).toBe(true);
    expect(propagation.fields()).toEqual(["x-app-trace"]);
    propagation.disable();
  });

  it("sets up no exporter of its own from OTEL_*_EXPORTER, and leaves those variables as they were", async () => {
    const otlp = await receiver();
    vi.stubEnv("OTEL_METRICS_EXPORTER", "prometheus,otlp");
    vi.stubEnv("OTEL_TRACES_EXPORTER", "otlp");
    vi.stubEnv("OTEL_LOGS_EXPORTER", "otlp");
    vi.stubEnv("OTEL_EXPORTER_OTLP_ENDPOINT", otlp.url);
    const listeningBefore = await listens(DEFAULT_PROMETHEUS_URL);
    const handle = await start({ prometheus: true, port: await freePort() });
    expect(await listens(DEFAULT_PROMETHEUS_URL)).toBe(listeningBefore);
    // No logger provider was registered: the application's own still can be.
    const appLoggerProvider = { getLogger: () => createNoopLogger() };
    expect(logs.setGlobalLoggerProvider(appLoggerProvider)).toBe(appLoggerProvider);
    logs.disable();
    await runWorkload();
    await handle.shutdown();
    // Nothing was pushed: OTLP was not asked for.
    expect(otlp.requests).toEqual([]);
    expect(process.env.OTEL_METRICS_EXPORTER).toBe("prometheus,otlp");
    expect(process.env.OTEL_TRACES_EXPORTER).toBe("otlp");
    expect(process.env.OTEL_LOGS_EXPORTER).toBe("otlp");
  });
});

describe("startTelemetry({ otlp: { traces: true } })", () => {
  it("pushes the repair span with the service's resource, beside the metrics", async () => {
    const otlp = await receiver();
    await start({
      serviceName: "support-agent",
      otlp: { endpoint: otlp.url, traces: true, exportIntervalMillis: NO_PERIODIC_EXPORT },
    });
    await runWorkload();
    await handles[0]?.shutdown();
    expect(otlp.refused).toEqual([]);
    const spans = otlp.requests.flatMap((request) => request.spans);
    const repairs = spans.filter((span) => span.name === SPAN_REPAIR_TOOL_CALLS);
    expect(repairs.map((span) => span.attributes[ATTR_GEN_AI_CONVERSATION_ID]).sort()).toEqual([
      "t1",
      "t2",
    ]);
    expect(repairs[0]?.scope.name).toBe(INSTRUMENTATION_SCOPE_NAME);
    expect(repairs[0]?.resource["service.name"]).toBe("support-agent");
    expect(sumOf(metricsOf(otlp.requests), METRIC_MODEL_CALLS)).toBe(4);
  });
});

describe("OTLP headers", () => {
  const SECRET = "s3cr3t-4p1-k3y";

  /** Everything the process could print or log while `run` runs, and what `run` threw. */
  async function everythingSaidDuring(run: () => Promise<unknown>): Promise<string> {
    const said: string[] = [];
    const record = (...parts: unknown[]) => {
      said.push(
        parts.map((part) => (part instanceof Error ? `${part.stack}` : String(part))).join(" "),
      );
      try {
        said.push(JSON.stringify(parts));
      } catch {}
    };
    const logger: DiagLogger = {
      error: record,
      warn: record,
      info: record,
      debug: record,
      verbose: record,
    };
    diag.setLogger(logger, { logLevel: DiagLogLevel.ALL, suppressOverrideMessage: true });
    for (const method of ["log", "info", "warn", "error", "debug"] as const) {
      vi.spyOn(console, method).mockImplementation(record);
    }
    vi.spyOn(process.stderr, "write").mockImplementation((chunk) => {
      record(chunk);
      return true;
    });
    vi.spyOn(process.stdout, "write").mockImplementation((chunk) => {
      record(chunk);
      return true;
    });
    try {
      await run();
    } catch (error) {
      record(error, (error as Error).cause);
    }
    return said.join("\n");
  }

  it("never appear in a log line or an error when the receiver refuses the export", async () => {
    const otlp = await receiver({ status: 401 });
    vi.stubEnv("OTEL_EXPORTER_OTLP_HEADERS", `authorization=Bearer ${SECRET}`);
    const said = await everythingSaidDuring(async () => {
      await start({ otlp: { endpoint: otlp.url, headers: { "x-api-key": SECRET } } });
      await runWorkload();
      await handles[0]?.shutdown();
    });
    // It was sent, and refused...
    expect(otlp.requests[0]?.headers.authorization).toBe(`Bearer ${SECRET}`);
    expect(otlp.requests[0]?.headers["x-api-key"]).toBe(SECRET);
    expect(said).toMatch(/401|Unauthorized/);
    // ...and never said.
    expect(said).not.toContain(SECRET);
  });

  it("never appear when the receiver cannot be reached, and the model calls go on", async () => {
    const closed = `http://127.0.0.1:${await freePort()}`;
    vi.stubEnv("OTEL_EXPORTER_OTLP_HEADERS", `authorization=Bearer ${SECRET}`);
    // Each periodic push retries until this runs out.
    vi.stubEnv("OTEL_EXPORTER_OTLP_TIMEOUT", "1000");
    const said = await everythingSaidDuring(async () => {
      await start({ otlp: { endpoint: closed, traces: true } });
      await runWorkload();
      await handles[0]?.shutdown();
    });
    expect(said).toMatch(/ECONNREFUSED/);
    expect(said).not.toContain(SECRET);
  });

  it("never appear in the error for a header option that is not a string", async () => {
    const error = await rejectionOf(
      startTelemetry({
        otlp: { headers: { authorization: `Bearer ${SECRET}`, "x-bad": 7 as unknown as string } },
      }),
    );
    expect(error).toBeInstanceOf(ToolCallResilienceOptionsError);
    expect((error as Error).message).toContain("otlp.headers");
    expect(JSON.stringify(error, Object.getOwnPropertyNames(error))).not.toContain(SECRET);
    expect(String((error as Error).cause)).not.toContain(SECRET);
  });
});

describe("startTelemetry({ otlp }) refusals", () => {
  it.each<[string, StartTelemetryOptions, RegExp]>([
    ["no destination at all", { prometheus: false }, /prometheus: the metrics would go nowhere/],
    [
      "OTLP that pushes nothing",
      { otlp: { metrics: false, traces: false } },
      /otlp: pushes nothing/,
    ],
    [
      "metrics neither served nor pushed",
      { otlp: { metrics: false, traces: true } },
      /otlp\.metrics: the metrics would go nowhere/,
    ],
    [
      "a port for an endpoint that is not served",
      { otlp: true, port: 9464 },
      /port: configures the Prometheus endpoint, which is not served when otlp is given; set prometheus: true/,
    ],
    [
      "an endpoint that is not an http URL",
      { otlp: { endpoint: "collector:4318" } },
      /otlp\.endpoint: expected an http/,
    ],
    [
      "gRPC",
      { otlp: { protocol: "grpc" as "http/json" } },
      /otlp\.protocol: expected one of "http\/protobuf", "http\/json"; got "grpc" \(startTelemetry pushes OTLP over HTTP\)/,
    ],
    [
      "an endpoint with a query, which the signal's path would follow",
      { otlp: { endpoint: "http://collector:4318/?tenant=a" } },
      /otlp\.endpoint: expected a base URL without a query or a fragment/,
    ],
    [
      "an endpoint that already names the signal's path",
      { otlp: { endpoint: "http://collector:4318/v1/metrics" } },
      /otlp\.endpoint: expected the base URL, to which \/v1\/metrics and \/v1\/traces are appended/,
    ],
    [
      "a zero export interval",
      { otlp: { exportIntervalMillis: 0 } },
      /otlp\.exportIntervalMillis: expected a whole number of milliseconds, from 1 to 2147483647/,
    ],
    [
      "an export interval longer than a timer can wait",
      { otlp: { exportIntervalMillis: 2 ** 31 } },
      /otlp\.exportIntervalMillis: expected a whole number of milliseconds, from 1 to 2147483647/,
    ],
    ["an unknown OTLP option", { otlp: { url: "x" } as never }, /otlp: unknown key\(s\) url/],
  ])("rejects %s with a ToolCallResilienceOptionsError naming it", async (_, options, message) => {
    const error = await rejectionOf(startTelemetry(options));
    expect(error).toBeInstanceOf(ToolCallResilienceOptionsError);
    expect((error as Error).message).toMatch(message);
  });

  it.each([
    ["OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"],
    ["OTEL_EXPORTER_OTLP_METRICS_PROTOCOL", "http/xml"],
    ["OTEL_METRIC_EXPORT_INTERVAL", "soon"],
    ["OTEL_METRIC_EXPORT_TIMEOUT", "-5"],
    ["OTEL_METRIC_EXPORT_INTERVAL", "2147483648"],
  ])(
    "rejects %s=%s with a ToolCallResilienceSetupError naming the variable, leaving nothing registered",
    async (name, value) => {
      vi.stubEnv(name, value);
      const error = await rejectionOf(startTelemetry({ otlp: true }));
      expect(error).toBeInstanceOf(ToolCallResilienceSetupError);
      expect((error as Error).message).toMatch(new RegExp(`^${name}\\b.*"${value}"`));
      // Nothing was registered: a start without the variable works.
      vi.unstubAllEnvs();
      const otlp = await receiver();
      const handle = await start({ otlp: { endpoint: otlp.url } });
      expect(handle.enabled).toBe(true);
    },
  );

  it("lets the otlp.protocol option win over a variable it could not use", async () => {
    const otlp = await receiver();
    vi.stubEnv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc");
    await start({ otlp: { endpoint: otlp.url, protocol: "http/json" } });
    await runWorkload();
    await handles[0]?.shutdown();
    expect(otlp.requests[0]?.contentType).toMatch(/^application\/json/);
  });

  it("starts nothing and pushes nothing under OTEL_SDK_DISABLED=true", async () => {
    const otlp = await receiver();
    vi.stubEnv("OTEL_SDK_DISABLED", "true");
    const handle = await start({ otlp: { endpoint: otlp.url } });
    expect(handle.enabled).toBe(false);
    expect(handle.metricsUrl).toBeUndefined();
    await runWorkload();
    await handle.shutdown();
    expect(otlp.requests).toEqual([]);
  });
});
