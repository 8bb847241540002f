/**
 * The setup entry point against a real Prometheus endpoint: `startTelemetry()` starts the Node SDK
 * and serves the library's instruments over HTTP on 127.0.0.1, `recommendedViews()` shapes what is
 * served, and `shutdown()` puts the process back as it was. Every test scrapes the endpoint the way
 * Prometheus does, and shuts down every handle it started, even when it fails.
 */
import { createServer } from "node:net";
import {
  context,
  createContextKey,
  createNoopMeter,
  isSpanContextValid,
  metrics,
  ProxyTracerProvider,
  ROOT_CONTEXT,
  trace,
} from "@opentelemetry/api";
import { createNoopLogger, logs } from "@opentelemetry/api-logs";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { afterEach, describe, expect, it } from "vitest";
import { prometheusName, series as seriesNames } from "../dashboards/generator/names.js";
import { danglingToolCallMiddleware, ToolCallResilienceOptionsError } from "../src/index.js";
import {
  type RecommendedViewsOptions,
  recommendedViews,
  type ServedTelemetryHandle,
  type ServingOptions,
  type StartTelemetryOptions,
  startTelemetry,
  type TelemetryHandle,
  type ThreadMetricsProducerOptions,
  ToolCallResilienceSetupError,
  threadMetricsProducer,
} from "../src/setup/index.js";
import {
  ATTR_GEN_AI_AGENT_NAME,
  ATTR_GEN_AI_CONVERSATION_ID,
  ATTR_GEN_AI_PROVIDER_NAME,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_OUTCOME,
  ATTR_REASON,
  ATTR_REPAIR_KIND,
  INSTRUMENTATION_SCOPE_NAME,
  METRIC_DANGLING_TOOL_CALLS,
  METRIC_MODEL_CALLS,
  METRIC_REPAIR_DURATION,
  METRIC_REPAIRS,
  METRIC_THREAD_RECENT_DANGLING_TOOL_CALLS,
  METRIC_TOOL_CALLS,
  OUTCOME_VALUE_CLEAN,
  OUTCOME_VALUE_REPAIRED,
  REASON_VALUE_INTERRUPTED,
  REPAIR_DURATION_BUCKETS,
  REPAIR_KIND_VALUE_PLACEHOLDER_INSERTED,
  REPAIR_KIND_VALUE_TURN_INSERTED,
  SPAN_REPAIR_TOOL_CALLS,
  UNIT_CALL,
  UNIT_REPAIR,
  UNIT_SECONDS,
} from "../src/telemetry/semconv.js";
import { PACKAGE_VERSION } from "../src/version.js";
import {
  abortMidTool,
  agentWith,
  aiAnswer,
  aiToolCall,
  humanTurn,
  onThread,
  scriptedModel,
  searchTool,
  stallingSearchTool,
} from "./helpers/agent.js";
import { aiCalls, type CallSpec, human } from "./helpers/history.js";
import { type Exposition, freePort, type Sample, scrape } from "./helpers/prometheus.js";
import { exporterScopeLabels } from "./helpers/sdk.js";

// --- Names as Prometheus shows them, derived from the code's constants ------------------------

type MetricType = "counter" | "histogram" | "gauge";

/** The histogram's family: its series less the `_count` suffix. */
const DURATION = seriesNames.repairDurationCount.replace(/_count$/, "");

/**
 * Every instrument of the library, as the exposition must describe it, with its family's name as
 * the dashboards read it; each has a view.
 */
const INSTRUMENTS = [
  {
    instrument: METRIC_MODEL_CALLS,
    type: "counter",
    unit: UNIT_CALL,
    family: seriesNames.modelCalls,
  },
  {
    instrument: METRIC_TOOL_CALLS,
    type: "counter",
    unit: UNIT_CALL,
    family: seriesNames.toolCalls,
  },
  {
    instrument: METRIC_DANGLING_TOOL_CALLS,
    type: "counter",
    unit: UNIT_CALL,
    family: seriesNames.danglingToolCalls,
  },
  { instrument: METRIC_REPAIRS, type: "counter", unit: UNIT_REPAIR, family: seriesNames.repairs },
  { instrument: METRIC_REPAIR_DURATION, type: "histogram", unit: UNIT_SECONDS, family: DURATION },
] as const satisfies readonly {
  instrument: string;
  type: MetricType;
  unit: string;
  family: string;
}[];

/** Every metric of the library: the instruments, and the per-thread gauge of its producer. */
const FAMILIES = [
  ...INSTRUMENTS,
  {
    instrument: METRIC_THREAD_RECENT_DANGLING_TOOL_CALLS,
    type: "gauge",
    unit: UNIT_CALL,
    family: seriesNames.threadRecentDanglingToolCalls,
  },
] as const satisfies readonly {
  instrument: string;
  type: MetricType;
  unit: string;
  family: string;
}[];

const MODEL_CALLS = seriesNames.modelCalls;
const TOOL_CALLS = seriesNames.toolCalls;
const DANGLING = seriesNames.danglingToolCalls;
const REPAIRS = seriesNames.repairs;
const THREAD_RECENT = seriesNames.threadRecentDanglingToolCalls;

/** The attributes each instrument documents; a view must drop every other one. */
const DOCUMENTED_ATTRIBUTES: Readonly<Record<string, readonly string[]>> = {
  [METRIC_MODEL_CALLS]: [
    ATTR_GEN_AI_PROVIDER_NAME,
    ATTR_GEN_AI_REQUEST_MODEL,
    ATTR_GEN_AI_AGENT_NAME,
    ATTR_OUTCOME,
  ],
  [METRIC_TOOL_CALLS]: [
    ATTR_GEN_AI_PROVIDER_NAME,
    ATTR_GEN_AI_REQUEST_MODEL,
    ATTR_GEN_AI_TOOL_NAME,
  ],
  [METRIC_DANGLING_TOOL_CALLS]: [
    ATTR_GEN_AI_PROVIDER_NAME,
    ATTR_GEN_AI_REQUEST_MODEL,
    ATTR_GEN_AI_TOOL_NAME,
    ATTR_REASON,
  ],
  [METRIC_REPAIRS]: [ATTR_GEN_AI_PROVIDER_NAME, ATTR_GEN_AI_REQUEST_MODEL, ATTR_REPAIR_KIND],
  [METRIC_REPAIR_DURATION]: [ATTR_OUTCOME],
};

/** The labels the installed exporter adds to every sample of the library's meter. */
const SCOPE = exporterScopeLabels();

/** The `le` labels of the duration histogram, in order. */
const BUCKET_LABELS = [...REPAIR_DURATION_BUCKETS.map(String), "+Inf"];

// --- Handles, ports and scrapes ----------------------------------------------------------------

/** Every handle a test started; `afterEach` shuts them all down, whatever the test did. */
const running: TelemetryHandle[] = [];
/** Other things a test opened (blocking servers, global providers); undone after each test. */
const cleanups: (() => unknown)[] = [];

afterEach(async () => {
  const failures: unknown[] = [];
  for (const handle of running.splice(0).reverse()) {
    await handle.shutdown().catch((error: unknown) => failures.push(error));
  }
  for (const cleanup of cleanups.splice(0).reverse()) {
    try {
      await cleanup();
    } catch (error) {
      failures.push(error);
    }
  }
  if (failures.length > 0) throw new AggregateError(failures, "cleanup after the test failed");
});

/** Starts telemetry and keeps the handle for `afterEach`. */
async function start(options: ServingOptions): Promise<ServedTelemetryHandle> {
  const handle = await startTelemetry(options);
  running.push(handle);
  return handle;
}

function isAddressInUse(error: unknown): boolean {
  return (
    error instanceof ToolCallResilienceSetupError &&
    (error.cause as { code?: unknown } | undefined)?.code === "EADDRINUSE"
  );
}

/**
 * Starts telemetry on a port that was free a moment ago; if another process took it in between
 * (EADDRINUSE), tries once more with a new one.
 */
async function startOnFreePort(
  options: Omit<StartTelemetryOptions, "port" | "prometheus" | "otlp"> = {},
): Promise<{ handle: ServedTelemetryHandle; port: number }> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    try {
      return { handle: await start({ ...options, port }), port };
    } catch (error) {
      if (attempt === 1 && isAddressInUse(error)) continue;
      throw error;
    }
  }
}

/** Listens on a port of 127.0.0.1 so that nobody else can; closed after the test. */
async function occupy(port: number): Promise<void> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen({ host: "127.0.0.1", port }, resolve);
  });
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
}

/** The error code a request to the URL fails with, or `undefined` when something answered. */
async function connectionErrorOf(url: string): Promise<string | undefined> {
  try {
    const response = await fetch(url);
    await response.arrayBuffer();
    return undefined;
  } catch (error) {
    return String((error as { cause?: { code?: unknown } }).cause?.code ?? error);
  }
}

/** The error a promise rejects with; fails the test if it resolves. */
async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => expect.fail("expected a rejection"),
    (error: unknown) => error,
  );
}

/** The error a function throws; fails the test if it returns. */
function thrownBy(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  return expect.fail("expected an error");
}

/** Whether the library's meter is the no-op one, as before any SDK was registered. */
function meterIsNoop(): boolean {
  return metrics.getMeter(INSTRUMENTATION_SCOPE_NAME, PACKAGE_VERSION) === createNoopMeter();
}

/** The samples of a metric, with labels and values only, in a stable order. */
function series(exposition: Exposition, name: string): { labels: object; value: number }[] {
  return exposition
    .find(name)
    .map(({ labels, value }: Sample) => ({ labels: { ...labels }, value }))
    .map((sample) => ({ sample, key: JSON.stringify(sample.labels) }))
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    .map(({ sample }) => sample);
}

/** The `# HELP`, `# UNIT` and `# TYPE` lines of a metric, in the order the exposition has them. */
function metadataOf(exposition: Exposition, name: string): string[] {
  return exposition.metadata.filter((line) => line.split(" ")[2] === name);
}

/** The names of the metric families of the library in the exposition. */
function libraryFamilies(exposition: Exposition): string[] {
  return exposition.metadata
    .filter((line) => line.startsWith("# TYPE tool_call_resilience_"))
    .map((line) => line.split(" ")[2] as string);
}

// --- Agents that leave calls dangling ----------------------------------------------------------

const SEARCH_CALL = { id: "call_search", name: "search", args: { query: "weather" } };

/** A history whose AI message calls these tools and gets no result, then a new human turn. */
function danglingInput(...calls: CallSpec[]) {
  return [human("What's the weather?"), aiCalls(...calls), human("Never mind.")];
}

/** An agent whose model is answered `answers` times with text, offering the `search` tool. */
function textAgent(answers: number, options: Parameters<typeof danglingToolCallMiddleware>[0]) {
  const model = scriptedModel(
    ...Array.from({ length: answers }, (_, index) => aiAnswer(`a${index}`, "Okay.")),
  );
  return agentWith({
    model,
    tools: [searchTool()],
    middleware: [danglingToolCallMiddleware(options)],
  });
}

// --- The spec ------------------------------------------------------------------------------------

describe("startTelemetry() with the middleware on the global meter provider", () => {
  it("serves every instrument with its HELP, UNIT and TYPE lines, exact label sets and values after a run aborted mid-tool", async () => {
    const { handle } = await startOnFreePort({ serviceName: "support-agent" });
    const { tool, started } = stallingSearchTool();
    const model = scriptedModel(aiToolCall("a1", SEARCH_CALL), aiAnswer("a2", "Sure, a joke."));
    Object.assign(model, { model: "gpt-test" });
    const agent = agentWith({
      model,
      tools: [tool],
      // No meterProvider and default threadMetrics: the global provider startTelemetry registered.
      middleware: [
        danglingToolCallMiddleware({
          logger: false,
          providerName: "openai",
          agentName: "weather-agent",
        }),
      ],
    });

    const aborted = await abortMidTool(agent, started, "thread-1", humanTurn("h1", "Weather?"));
    expect(aborted).toMatchObject({ name: "AbortError" });
    await agent.invoke({ messages: [humanTurn("h2", "Never mind.")] }, onThread("thread-1"));
    expect(model.callCount).toBe(2);

    const exposition = await scrape(handle.metricsUrl);

    // Exactly the six families of the library, each described in full.
    expect(libraryFamilies(exposition).sort()).toEqual(FAMILIES.map(({ family }) => family).sort());
    for (const { family: name, type, unit } of FAMILIES) {
      const lines = metadataOf(exposition, name);
      expect(lines, name).toHaveLength(3);
      expect(lines[0], name).toMatch(new RegExp(`^# HELP ${name} \\S.*$`));
      expect(lines[0], name).not.toContain("description missing");
      expect(lines.slice(1), name).toEqual([`# UNIT ${name} ${unit}`, `# TYPE ${name} ${type}`]);
    }

    const modelLabels = {
      [prometheusName(ATTR_GEN_AI_PROVIDER_NAME)]: "openai",
      [prometheusName(ATTR_GEN_AI_REQUEST_MODEL)]: "gpt-test",
    };
    expect(series(exposition, MODEL_CALLS)).toEqual([
      {
        labels: {
          ...modelLabels,
          [prometheusName(ATTR_GEN_AI_AGENT_NAME)]: "weather-agent",
          [prometheusName(ATTR_OUTCOME)]: OUTCOME_VALUE_CLEAN,
          ...SCOPE,
        },
        value: 1,
      },
      {
        labels: {
          ...modelLabels,
          [prometheusName(ATTR_GEN_AI_AGENT_NAME)]: "weather-agent",
          [prometheusName(ATTR_OUTCOME)]: OUTCOME_VALUE_REPAIRED,
          ...SCOPE,
        },
        value: 1,
      },
    ]);
    expect(series(exposition, TOOL_CALLS)).toEqual([
      {
        labels: { ...modelLabels, [prometheusName(ATTR_GEN_AI_TOOL_NAME)]: "search", ...SCOPE },
        value: 1,
      },
    ]);
    expect(series(exposition, DANGLING)).toEqual([
      {
        labels: {
          ...modelLabels,
          [prometheusName(ATTR_GEN_AI_TOOL_NAME)]: "search",
          [prometheusName(ATTR_REASON)]: REASON_VALUE_INTERRUPTED,
          ...SCOPE,
        },
        value: 1,
      },
    ]);
    expect(series(exposition, REPAIRS)).toEqual([
      {
        labels: {
          ...modelLabels,
          [prometheusName(ATTR_REPAIR_KIND)]: REPAIR_KIND_VALUE_PLACEHOLDER_INSERTED,
          ...SCOPE,
        },
        value: 1,
      },
      // The synthetic reply written between the placeholder and "Never mind.".
      {
        labels: {
          ...modelLabels,
          [prometheusName(ATTR_REPAIR_KIND)]: REPAIR_KIND_VALUE_TURN_INSERTED,
          ...SCOPE,
        },
        value: 1,
      },
    ]);
    expect(series(exposition, THREAD_RECENT)).toEqual([
      {
        labels: {
          [prometheusName(ATTR_GEN_AI_CONVERSATION_ID)]: "thread-1",
          [prometheusName(ATTR_GEN_AI_REQUEST_MODEL)]: "gpt-test",
          ...SCOPE,
        },
        value: 1,
      },
    ]);

    // The histogram: one inspection per outcome, the recommended buckets and nothing else.
    for (const outcome of [OUTCOME_VALUE_CLEAN, OUTCOME_VALUE_REPAIRED]) {
      const labels = { [prometheusName(ATTR_OUTCOME)]: outcome, ...SCOPE };
      expect(series(exposition, `${DURATION}_count`)).toContainEqual({ labels, value: 1 });
      const [sum] = exposition.find(`${DURATION}_sum`, { [prometheusName(ATTR_OUTCOME)]: outcome });
      expect(sum?.labels).toEqual(labels);
      expect(sum?.value).toBeGreaterThan(0);
      expect(sum?.value).toBeLessThan(1);
      const buckets = exposition.find(`${DURATION}_bucket`, {
        [prometheusName(ATTR_OUTCOME)]: outcome,
      });
      expect(buckets.map((bucket) => bucket.labels.le)).toEqual(BUCKET_LABELS);
      for (const bucket of buckets)
        expect(bucket.labels).toEqual({ ...labels, le: bucket.labels.le });
      const counts = buckets.map((bucket) => bucket.value);
      expect(counts).toEqual([...counts].sort((a, b) => a - b));
      expect(counts.at(-1)).toBe(1);
    }
    expect(exposition.find(`${DURATION}_count`)).toHaveLength(2);
    expect(exposition.find(`${DURATION}_bucket`)).toHaveLength(2 * BUCKET_LABELS.length);

    // The resource, once, with the service name given.
    expect(metadataOf(exposition, "target_info")).toEqual([
      "# HELP target_info Target metadata",
      "# TYPE target_info gauge",
    ]);
    const targets = exposition.find("target_info");
    expect(targets).toHaveLength(1);
    expect(targets[0]?.labels.service_name).toBe("support-agent");
    expect(targets[0]?.value).toBe(1);
  });
});

describe("the per-thread metric through startTelemetry", () => {
  it("serves a thread's series while its dangling calls are within threadWindow, the worst threadSeriesLimit, then drops it", async () => {
    const { handle } = await startOnFreePort();
    const agent = textAgent(3, {
      logger: false,
      modelName: "gpt-test",
      threadWindow: 1,
      threadSeriesLimit: 2,
    });
    const conversation = prometheusName(ATTR_GEN_AI_CONVERSATION_ID);
    const threads = async () =>
      series(await scrape(handle.metricsUrl), THREAD_RECENT).map(({ labels, value }) => [
        (labels as Record<string, string>)[conversation],
        value,
      ]);

    await agent.invoke(
      { messages: danglingInput(["c1a", "search"], ["c1b", "search"]) },
      onThread("thread-1"),
    );
    await agent.invoke({ messages: danglingInput(["c2", "search"]) }, onThread("thread-2"));
    await agent.invoke({ messages: danglingInput(["c3", "search"]) }, onThread("thread-3"));
    // thread-1 has the most; of the two tied threads, thread-3 is the more recent.
    expect(await threads()).toEqual([
      ["thread-1", 2],
      ["thread-3", 1],
    ]);
    const scraped = await scrape(handle.metricsUrl);
    expect(metadataOf(scraped, THREAD_RECENT).at(-1)).toBe(`# TYPE ${THREAD_RECENT} gauge`);
    expect(scraped.find(THREAD_RECENT, { otel_metric_overflow: "true" })).toEqual([]);

    // A window (1 s) and a bucket (1/15 s) later, every call has left it: no series at all.
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    expect(await threads()).toEqual([]);
    expect(libraryFamilies(await scrape(handle.metricsUrl))).not.toContain(THREAD_RECENT);
    // The counter is cumulative and keeps them all.
    expect((await scrape(handle.metricsUrl)).sum(DANGLING)).toBe(4);
  });

  it("labels the series with the thread id as threadIdAttribute maps it", async () => {
    const { handle } = await startOnFreePort();
    const agent = textAgent(1, {
      logger: false,
      modelName: "gpt-test",
      threadIdAttribute: (threadId) => `tenant-a/${threadId.length}`,
    });
    await agent.invoke({ messages: danglingInput(["c1", "search"]) }, onThread("user-42"));
    expect(series(await scrape(handle.metricsUrl), THREAD_RECENT)).toEqual([
      {
        labels: {
          [prometheusName(ATTR_GEN_AI_CONVERSATION_ID)]: "tenant-a/7",
          [prometheusName(ATTR_GEN_AI_REQUEST_MODEL)]: "gpt-test",
          ...SCOPE,
        },
        value: 1,
      },
    ]);
  });
});

describe("threadMetricsProducer()", () => {
  it("rejects a meterProvider that is none, naming the option", () => {
    const error = thrownBy(() =>
      threadMetricsProducer({ meterProvider: {} } as unknown as ThreadMetricsProducerOptions),
    );
    expect(error).toBeInstanceOf(ToolCallResilienceOptionsError);
    expect((error as ToolCallResilienceOptionsError).problems.map((p) => p.path)).toEqual([
      "meterProvider",
    ]);
  });

  it("reports nothing for a meter provider nothing recorded to", async () => {
    const collected = await threadMetricsProducer({
      meterProvider: metrics.getMeterProvider(),
    }).collect();
    expect(collected.resourceMetrics.scopeMetrics).toEqual([]);
    expect(collected.errors).toEqual([]);
  });
});

describe("recommendedViews()", () => {
  it.each(INSTRUMENTS.map(({ instrument, type }) => ({ instrument, type })))(
    "keeps only the documented attributes of $instrument, dropping any other",
    async ({ instrument, type }) => {
      const { handle } = await startOnFreePort();
      // Every attribute the library uses anywhere, an unknown one, and the thread id on all of them.
      const everything = {
        [ATTR_GEN_AI_PROVIDER_NAME]: "openai",
        [ATTR_GEN_AI_REQUEST_MODEL]: "gpt-test",
        [ATTR_GEN_AI_AGENT_NAME]: "weather-agent",
        [ATTR_GEN_AI_TOOL_NAME]: "search",
        [ATTR_GEN_AI_CONVERSATION_ID]: "thread-1",
        [ATTR_OUTCOME]: OUTCOME_VALUE_REPAIRED,
        [ATTR_REASON]: REASON_VALUE_INTERRUPTED,
        [ATTR_REPAIR_KIND]: REPAIR_KIND_VALUE_PLACEHOLDER_INSERTED,
        extra: "x",
      };
      const meter = metrics.getMeter(INSTRUMENTATION_SCOPE_NAME);
      if (type === "counter") meter.createCounter(instrument).add(1, everything);
      else meter.createHistogram(instrument).record(0.0003, everything);

      const exposition = await scrape(handle.metricsUrl);

      const documented = DOCUMENTED_ATTRIBUTES[instrument] ?? [];
      const expected = Object.fromEntries(
        documented.map((key) => [
          prometheusName(key),
          String(everything[key as keyof typeof everything]),
        ]),
      );
      const name = FAMILIES.find((family) => family.instrument === instrument)?.family ?? "";
      const sampleName = type === "counter" ? name : `${name}_count`;
      const samples = exposition.find(sampleName);
      expect(samples).toEqual([
        {
          name: sampleName,
          labels: { ...expected, ...exporterScopeLabels(INSTRUMENTATION_SCOPE_NAME, null) },
          value: 1,
        },
      ]);
      expect(samples[0]?.labels).not.toHaveProperty("extra");
    },
  );

  it("gives the duration histogram the recommended buckets even when the instrument brings no advice", async () => {
    const { handle } = await startOnFreePort();
    metrics
      .getMeter(INSTRUMENTATION_SCOPE_NAME)
      .createHistogram(METRIC_REPAIR_DURATION)
      .record(0.0003, { [ATTR_OUTCOME]: OUTCOME_VALUE_CLEAN });

    const exposition = await scrape(handle.metricsUrl);

    const buckets = exposition.find(`${DURATION}_bucket`);
    expect(buckets.map((bucket) => bucket.labels.le)).toEqual(BUCKET_LABELS);
    expect(buckets.map((bucket) => bucket.value)).toEqual(
      BUCKET_LABELS.map((le) => (le === "+Inf" || Number(le) >= 0.0003 ? 1 : 0)),
    );
  });

  it("leaves an instrument of the same name on another meter alone", async () => {
    const { handle } = await startOnFreePort();
    metrics
      .getMeter("my-app")
      .createCounter(METRIC_REPAIRS)
      .add(1, { [ATTR_REPAIR_KIND]: REPAIR_KIND_VALUE_PLACEHOLDER_INSERTED, extra: "x" });

    const exposition = await scrape(handle.metricsUrl);

    expect(exposition.find(REPAIRS)).toEqual([
      {
        name: REPAIRS,
        labels: {
          [prometheusName(ATTR_REPAIR_KIND)]: REPAIR_KIND_VALUE_PLACEHOLDER_INSERTED,
          extra: "x",
          ...exporterScopeLabels("my-app", null),
        },
        value: 1,
      },
    ]);
  });

  it("accepts a limit of 2, one series plus the overflow series", () => {
    expect(recommendedViews({ cardinalityLimit: 2 })).toHaveLength(INSTRUMENTS.length);
  });

  it("refuses threadCardinalityLimit, which went with the per-thread counter, saying what bounds the metric now", () => {
    const error = thrownBy(() =>
      recommendedViews({ threadCardinalityLimit: 500 } as unknown as RecommendedViewsOptions),
    );
    expect(error).toBeInstanceOf(ToolCallResilienceOptionsError);
    const problems = (error as ToolCallResilienceOptionsError).problems;
    expect(problems.map((problem) => problem.path)).toEqual(["threadCardinalityLimit"]);
    expect((error as Error).message).toContain("threadSeriesLimit");
  });

  describe.each(["cardinalityLimit"] as const)("rejects a bad %s", (option) => {
    it.each([0, 1, 2.5, "10"])(
      "such as %j, with a ToolCallResilienceOptionsError naming the option",
      (value) => {
        const error = thrownBy(() =>
          recommendedViews({ [option]: value } as unknown as RecommendedViewsOptions),
        );
        expect(error).toBeInstanceOf(ToolCallResilienceOptionsError);
        const problems = (error as ToolCallResilienceOptionsError).problems;
        expect(problems.map((problem) => problem.path)).toEqual([option]);
        expect((error as Error).message).toContain(`- ${option}: expected a whole number`);
        expect((error as Error).message).toContain("recommendedViews");
      },
    );
  });

  it("rejects an unknown option, naming it", () => {
    const error = thrownBy(() =>
      recommendedViews({ threadLimit: 10 } as unknown as RecommendedViewsOptions),
    );
    expect(error).toBeInstanceOf(ToolCallResilienceOptionsError);
    expect((error as Error).message).toContain("threadLimit");
  });
});

describe("shutdown()", () => {
  it("stops the endpoint, unregisters the global meter provider, is idempotent, and lets a second start on the same port export fresh counts", async () => {
    const { handle, port } = await startOnFreePort();
    // Built once, before the restart: the middleware follows the global provider of each call.
    const agent = textAgent(3, { logger: false });
    await agent.invoke({ messages: danglingInput(["c1", "search"]) }, onThread("before"));
    const before = await scrape(handle.metricsUrl);
    expect(
      before.sum(MODEL_CALLS, { [prometheusName(ATTR_OUTCOME)]: OUTCOME_VALUE_REPAIRED }),
    ).toBe(1);
    expect(meterIsNoop()).toBe(false);

    await handle.shutdown();

    expect(await connectionErrorOf(handle.metricsUrl)).toBe("ECONNREFUSED");
    expect(meterIsNoop()).toBe(true);
    await expect(handle.shutdown()).resolves.toBeUndefined();
    await expect(Promise.all([handle.shutdown(), handle.shutdown()])).resolves.toEqual([
      undefined,
      undefined,
    ]);
    // With no SDK, the agent still runs; nothing is recorded anywhere.
    await agent.invoke({ messages: danglingInput(["c2", "search"]) }, onThread("between"));

    const again = await start({ port });
    expect(again.metricsUrl).toBe(handle.metricsUrl);
    expect(libraryFamilies(await scrape(again.metricsUrl))).toEqual([]);
    await agent.invoke({ messages: danglingInput(["c3", "search"]) }, onThread("after"));

    const after = await scrape(again.metricsUrl);
    expect(series(after, MODEL_CALLS).map(({ value }) => value)).toEqual([1]);
    expect(after.sum(MODEL_CALLS, { [prometheusName(ATTR_OUTCOME)]: OUTCOME_VALUE_REPAIRED })).toBe(
      1,
    );
    expect(after.sum(DANGLING)).toBe(1);
    expect(series(after, THREAD_RECENT).map(({ labels }) => labels)).toEqual([
      {
        [prometheusName(ATTR_GEN_AI_CONVERSATION_ID)]: "after",
        [prometheusName(ATTR_GEN_AI_REQUEST_MODEL)]: "unknown",
        ...SCOPE,
      },
    ]);
  });
  it("ends while scrapes are in flight: every scrape settles, shutdown resolves, and the port is free", async () => {
    const { handle, port } = await startOnFreePort();
    const agent = textAgent(1, { logger: false });
    await agent.invoke({ messages: danglingInput(["c1", "search"]) }, onThread("busy"));

    // Each scrape answers or is refused (undefined or an error code); none may hang.
    const scrapes = Array.from({ length: 25 }, () => connectionErrorOf(handle.metricsUrl));
    const stopped = handle.shutdown();
    let timer: NodeJS.Timeout | undefined;
    const hung = new Promise<"hung">((resolve) => {
      timer = setTimeout(() => resolve("hung"), 10_000);
    });
    try {
      const settled = await Promise.race([Promise.all([stopped, ...scrapes]), hung]);
      expect(settled).not.toBe("hung");
    } finally {
      clearTimeout(timer);
    }

    expect(await connectionErrorOf(handle.metricsUrl)).toBe("ECONNREFUSED");
    // Nothing holds the port any more: it can be bound again at once.
    await occupy(port);
  });
});

describe("startTelemetry() refusals", () => {
  it("refuses to start while another one is running, naming the MeterProvider, and leaves the first one working", async () => {
    const { handle } = await startOnFreePort();
    const otherPort = await freePort();

    const error = await rejectionOf(startTelemetry({ port: otherPort }));

    expect(error).toBeInstanceOf(ToolCallResilienceSetupError);
    expect((error as Error).name).toBe("ToolCallResilienceSetupError");
    expect((error as Error).message).toContain("MeterProvider");
    expect(await connectionErrorOf(`http://127.0.0.1:${otherPort}/metrics`)).toBe("ECONNREFUSED");
    const agent = textAgent(1, { logger: false });
    await agent.invoke({ messages: danglingInput(["c1", "search"]) }, onThread("still-working"));
    const exposition = await scrape(handle.metricsUrl);
    expect(exposition.sum(DANGLING)).toBe(1);
  });

  it("rejects a port already taken with a ToolCallResilienceSetupError caused by EADDRINUSE, and leaves nothing registered", async () => {
    const port = await freePort();
    await occupy(port);

    const error = await rejectionOf(startTelemetry({ port }));

    expect(error).toBeInstanceOf(ToolCallResilienceSetupError);
    expect((error as Error).cause).toMatchObject({ code: "EADDRINUSE" });
    expect((error as Error).message).toContain(`127.0.0.1:${port}`);
    expect(meterIsNoop()).toBe(true);
    const { handle } = await startOnFreePort();
    expect(meterIsNoop()).toBe(false);
    expect((await scrape(handle.metricsUrl)).find("target_info")).toHaveLength(1);
  });

  it("rejects a view the SDK refuses with a ToolCallResilienceSetupError, leaving nothing running or registered", async () => {
    const port = await freePort();
    const error = await rejectionOf(
      startTelemetry({
        port,
        views: [{ name: "no selector" }],
        spanProcessors: [new SimpleSpanProcessor(new InMemorySpanExporter())],
      }),
    );
    expect(error).toBeInstanceOf(ToolCallResilienceSetupError);
    expect((error as Error).message).toMatch(/could not start/);
    expect(await connectionErrorOf(`http://127.0.0.1:${port}/metrics`)).toBe("ECONNREFUSED");
    expect(meterIsNoop()).toBe(true);
    const key = createContextKey("probe");
    const probe = ROOT_CONTEXT.setValue(key, true);
    expect(context.with(probe, () => context.active().getValue(key))).toBeUndefined();
    const again = await start({ port });
    expect((await scrape(again.metricsUrl)).find("target_info")).toHaveLength(1);
  });

  it("refuses span processors while a TracerProvider is registered, and starts without them", async () => {
    const appTracing = new BasicTracerProvider();
    expect(trace.setGlobalTracerProvider(appTracing)).toBe(true);
    cleanups.push(() => trace.disable());

    const error = await rejectionOf(
      startTelemetry({
        port: await freePort(),
        spanProcessors: [new SimpleSpanProcessor(new InMemorySpanExporter())],
      }),
    );

    expect(error).toBeInstanceOf(ToolCallResilienceSetupError);
    expect((error as Error).message).toContain("TracerProvider");
    expect(meterIsNoop()).toBe(true);
    const { handle } = await startOnFreePort();
    expect(handle.enabled).toBe(true);
    await handle.shutdown();
    // Without span processors it owns no tracer provider, so it leaves the application's alone.
    expect((trace.getTracerProvider() as ProxyTracerProvider).getDelegate()).toBe(appTracing);
  });

  it.each([
    [{ port: 0 }, "port"],
    [{ port: 70000 }, "port"],
    [{ port: 9464.5 }, "port"],
    [{ endpoint: "metrics" }, "endpoint"],
    [{ host: "" }, "host"],
    [{ spanProcessors: [{}] }, "spanProcessors.0"],
  ])(
    "rejects bad options %j with a ToolCallResilienceOptionsError listing %s",
    async (options, path) => {
      const error = await rejectionOf(startTelemetry(options as StartTelemetryOptions));

      expect(error).toBeInstanceOf(ToolCallResilienceOptionsError);
      expect(
        (error as ToolCallResilienceOptionsError).problems.map((problem) => problem.path),
      ).toEqual([path]);
      expect((error as Error).message).toContain(`- ${path}: `);
      expect((error as Error).message).toContain("startTelemetry");
      expect(meterIsNoop()).toBe(true);
    },
  );

  it("rejects an unknown option with a ToolCallResilienceOptionsError naming it", async () => {
    const error = await rejectionOf(
      startTelemetry({ metricsPort: 9464 } as unknown as StartTelemetryOptions),
    );

    expect(error).toBeInstanceOf(ToolCallResilienceOptionsError);
    expect((error as ToolCallResilienceOptionsError).problems).toEqual([
      { path: "", message: "unknown option(s) metricsPort" },
    ]);
    expect(meterIsNoop()).toBe(true);
  });
});

describe("OTEL_SDK_DISABLED=true", () => {
  /** Runs `body` with OTEL_SDK_DISABLED set, and puts the variable back as it was. */
  async function withSdkDisabled(value: string, body: () => Promise<void>): Promise<void> {
    const saved = process.env.OTEL_SDK_DISABLED;
    process.env.OTEL_SDK_DISABLED = value;
    try {
      await body();
    } finally {
      if (saved === undefined) delete process.env.OTEL_SDK_DISABLED;
      else process.env.OTEL_SDK_DISABLED = saved;
    }
  }

  it("starts nothing: enabled is false, nothing listens on the port, shutdown resolves", async () => {
    await withSdkDisabled("true", async () => {
      const port = await freePort();
      const handle = await start({ port });

      expect(handle.enabled).toBe(false);
      expect(handle.metricsUrl).toBe(`http://127.0.0.1:${port}/metrics`);
      expect(await connectionErrorOf(handle.metricsUrl)).toBe("ECONNREFUSED");
      expect(meterIsNoop()).toBe(true);
      await expect(handle.shutdown()).resolves.toBeUndefined();
    });
  });

  it("is read case-insensitively and with spaces around", async () => {
    await withSdkDisabled(" TRUE ", async () => {
      const handle = await start({ port: await freePort() });
      expect(handle.enabled).toBe(false);
      expect(meterIsNoop()).toBe(true);
    });
  });

  it("still says where the endpoint would be, with an IPv6 host in brackets", async () => {
    await withSdkDisabled("true", async () => {
      const handle = await start({ host: "::1", port: 9999, endpoint: "/custom" });
      expect(handle.metricsUrl).toBe("http://[::1]:9999/custom");
    });
  });
});

describe("startTelemetry() with span processors", () => {
  it("records a repair_tool_calls span as a child of the active span, and unregisters the tracer provider and context manager on shutdown", async () => {
    const spans = new InMemorySpanExporter();
    const processor = new SimpleSpanProcessor(spans);
    const { handle } = await startOnFreePort({ spanProcessors: [processor] });
    const agent = textAgent(1, { logger: false });
    const parent = await trace.getTracer("app").startActiveSpan("request", async (span) => {
      try {
        await agent.invoke({ messages: danglingInput(["c1", "search"]) }, onThread("traced"));
        return span.spanContext();
      } finally {
        span.end();
      }
    });

    // Export is asynchronous (the SDK's resource has attributes still being detected).
    await processor.forceFlush();
    const repairs = spans.getFinishedSpans().filter((span) => span.name === SPAN_REPAIR_TOOL_CALLS);
    expect(repairs).toHaveLength(1);
    const [repair] = repairs;
    expect(isSpanContextValid(parent)).toBe(true);
    expect(repair?.spanContext().traceId).toBe(parent.traceId);
    expect(repair?.parentSpanContext?.spanId).toBe(parent.spanId);
    expect(repair?.attributes[ATTR_GEN_AI_CONVERSATION_ID]).toBe("traced");
    expect(repair?.instrumentationScope).toMatchObject({
      name: INSTRUMENTATION_SCOPE_NAME,
      version: PACKAGE_VERSION,
    });
    // Metrics are served alongside.
    expect((await scrape(handle.metricsUrl)).sum(DANGLING)).toBe(1);

    await handle.shutdown();

    expect(meterIsNoop()).toBe(true);
    const provider = trace.getTracerProvider();
    expect(provider).toBeInstanceOf(ProxyTracerProvider);
    expect((provider as ProxyTracerProvider).getDelegateTracer("app")).toBeUndefined();
    const after = trace.getTracer("app").startSpan("after");
    expect(after.isRecording()).toBe(false);
    after.end();
    const key = createContextKey("probe");
    const probe = ROOT_CONTEXT.setValue(key, true);
    expect(context.with(probe, () => context.active().getValue(key))).toBeUndefined();
    // And so it can start again with tracing.
    const { handle: again } = await startOnFreePort({
      spanProcessors: [new SimpleSpanProcessor(new InMemorySpanExporter())],
    });
    expect(again.enabled).toBe(true);
  });
});

describe("the endpoint", () => {
  it("honours endpoint and host: metricsUrl is exactly http://127.0.0.1:<port>/custom and only that path is served", async () => {
    const { handle, port } = await startOnFreePort({ host: "127.0.0.1", endpoint: "/custom" });

    expect(handle.metricsUrl).toBe(`http://127.0.0.1:${port}/custom`);
    expect((await scrape(handle.metricsUrl)).find("target_info")).toHaveLength(1);
    const elsewhere = await fetch(`http://127.0.0.1:${port}/metrics`);
    await elsewhere.arrayBuffer();
    expect(elsewhere.status).toBe(404);
  });

  it("serves /metrics on 127.0.0.1 by default", async () => {
    const { handle, port } = await startOnFreePort();

    expect(handle.metricsUrl).toBe(`http://127.0.0.1:${port}/metrics`);
    expect(handle.enabled).toBe(true);
    expect((await scrape(handle.metricsUrl)).find("target_info")).toHaveLength(1);
  });
});

describe("what startTelemetry leaves to the application", () => {
  it("shutdown() leaves alone a LoggerProvider the application registered before startTelemetry()", async () => {
    const appLoggerProvider = { getLogger: () => createNoopLogger() };
    expect(logs.setGlobalLoggerProvider(appLoggerProvider)).toBe(appLoggerProvider);
    cleanups.push(() => logs.disable());

    const { handle } = await startOnFreePort();
    expect(logs.getLoggerProvider()).toBe(appLoggerProvider);
    await handle.shutdown();

    expect(logs.getLoggerProvider()).toBe(appLoggerProvider);
  });

  it("registers no logger provider, so one the application registers later takes effect", async () => {
    const logsExporterBefore = process.env.OTEL_LOGS_EXPORTER;
    const { handle } = await startOnFreePort();
    const appLoggerProvider = { getLogger: () => createNoopLogger() };
    expect(logs.setGlobalLoggerProvider(appLoggerProvider)).toBe(appLoggerProvider);
    cleanups.push(() => logs.disable());
    expect(logs.getLoggerProvider()).toBe(appLoggerProvider);
    await handle.shutdown();
    expect(logs.getLoggerProvider()).toBe(appLoggerProvider);
    expect(process.env.OTEL_LOGS_EXPORTER).toBe(logsExporterBefore);
  });

  it("of two startTelemetry() calls made at once, only one starts; the other is refused", async () => {
    // Two ports, told apart: a port freed once may be handed out again.
    const first = await freePort();
    let second = await freePort();
    while (second === first) second = await freePort();
    const ports = [first, second];
    // Both pass the first check before either has registered: the second check must catch it.
    const outcomes = await Promise.allSettled(ports.map((port) => startTelemetry({ port })));
    for (const outcome of outcomes) {
      if (outcome.status === "fulfilled") running.push(outcome.value);
    }

    const refused = outcomes.filter((outcome) => outcome.status === "rejected");
    expect(refused).toHaveLength(1);
    expect(refused[0]?.reason).toBeInstanceOf(ToolCallResilienceSetupError);
    expect(String(refused[0]?.reason)).toContain("MeterProvider");
  });
});
