/**
 * What the middleware reports through OpenTelemetry, with its hook driven directly: every model
 * call and its outcome, tool calls as the models issue them, each dangling call once, every
 * repair, one span per repair, and nothing that can break the model call.
 */
import { createHash, createHmac } from "node:crypto";
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import { metrics, trace } from "@opentelemetry/api";
import type { MeterProvider } from "@opentelemetry/sdk-metrics";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  type DanglingToolCallMiddlewareOptions,
  danglingToolCallMiddleware,
  ToolCallResilienceOptionsError,
} from "../src/index.js";
import {
  ATTR_DANGLING_COUNT,
  ATTR_GEN_AI_AGENT_NAME,
  ATTR_GEN_AI_CONVERSATION_ID,
  ATTR_GEN_AI_PROVIDER_NAME,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_TOOL_CALL_ID,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_MESSAGE_COUNT,
  ATTR_MESSAGE_INDEX,
  ATTR_OUTCOME,
  ATTR_REASON,
  ATTR_REPAIR_COUNT,
  ATTR_REPAIR_KIND,
  ATTR_TOOL_CALL_IDS,
  ATTR_TOOL_NAMES,
  EVENT_REPAIR,
  INSTRUMENTATION_SCOPE_NAME,
  METRIC_DANGLING_TOOL_CALLS,
  METRIC_MODEL_CALLS,
  METRIC_REPAIR_DURATION,
  METRIC_REPAIRS,
  METRIC_THREAD_RECENT_DANGLING_TOOL_CALLS,
  METRIC_TOOL_CALLS,
  SPAN_REPAIR_TOOL_CALLS,
} from "../src/telemetry/semconv.js";
import { PACKAGE_VERSION } from "../src/version.js";
import { aiCalls, human, toolResult } from "./helpers/history.js";
import { metricsHarness, tracingHarness } from "./helpers/telemetry.js";

interface FakeRequest {
  messages: BaseMessage[];
  runtime: { context?: unknown; configurable?: { thread_id?: string; checkpoint_ns?: string } };
  state: { messages: BaseMessage[] };
  model: unknown;
  tools: unknown[];
}

type Handler = (request: FakeRequest) => unknown;

const SEARCH = { name: "search", description: "Searches.", schema: {} };
const WEATHER = { type: "function", function: { name: "weather", parameters: {} } };
const GPT = { model: "gpt-4.1", getLsParams: () => ({ ls_provider: "openai" }) };

function requestOn(
  threadId: string | undefined,
  messages: BaseMessage[],
  overrides: Partial<FakeRequest> = {},
): FakeRequest {
  const configurable = threadId === undefined ? {} : { thread_id: threadId };
  return {
    messages,
    runtime: { configurable },
    state: { messages },
    model: GPT,
    tools: [SEARCH, WEATHER],
    ...overrides,
  };
}

/** A thread where call_1 (search) was left without a result, then the user wrote again. */
const danglingThread = () => [human("find it"), aiCalls(["call_1", "search"]), human("go on")];

const answer = () => new AIMessage("fine");

/** A middleware reporting to fresh in-memory metrics and spans, and its hook. */
function instrumented(options: DanglingToolCallMiddlewareOptions = {}) {
  const metricsHarnessed = metricsHarness();
  const tracing = tracingHarness();
  const middleware = danglingToolCallMiddleware({
    logger: false,
    meterProvider: metricsHarnessed.meterProvider,
    tracerProvider: tracing.tracerProvider,
    ...options,
  });
  const hook = middleware.wrapModelCall as unknown as (
    request: FakeRequest,
    handler: Handler,
  ) => unknown;
  return {
    metrics: metricsHarnessed,
    tracing,
    call: (request: FakeRequest, handler: Handler = answer) => hook(request, handler),
  };
}

describe("model calls", () => {
  it("counts a clean call as clean, times it, and creates no span", async () => {
    const { metrics, tracing, call } = instrumented();
    call(requestOn("t1", [human("hi")]));
    expect(await metrics.points(METRIC_MODEL_CALLS)).toEqual([
      {
        attributes: {
          [ATTR_GEN_AI_PROVIDER_NAME]: "openai",
          [ATTR_GEN_AI_REQUEST_MODEL]: "gpt-4.1",
          [ATTR_GEN_AI_AGENT_NAME]: "unknown",
          [ATTR_OUTCOME]: "clean",
        },
        value: 1,
      },
    ]);
    const [duration] = await metrics.points(METRIC_REPAIR_DURATION);
    expect(duration?.attributes).toEqual({ [ATTR_OUTCOME]: "clean" });
    expect(duration?.value).toMatchObject({ count: 1 });
    expect(tracing.spans(SPAN_REPAIR_TOOL_CALLS)).toEqual([]);
  });

  it("counts a repaired call as repaired, with every repair by kind", async () => {
    const { metrics, call } = instrumented();
    const messages = [
      human("go"),
      aiCalls(["call_1", "search"]),
      human("interjection"),
      toolResult("call_1"),
      toolResult("call_ghost"),
    ];
    call(requestOn("t1", messages));
    expect(await metrics.sum(METRIC_MODEL_CALLS, { [ATTR_OUTCOME]: "repaired" })).toBe(1);
    const repairs = await metrics.points(METRIC_REPAIRS);
    expect(
      repairs.map((point) => [point.attributes[ATTR_REPAIR_KIND], point.value]).sort(),
    ).toEqual([
      ["orphan_dropped", 1],
      ["result_moved", 1],
      ["turn_inserted", 1],
    ]);
    expect(repairs[0]?.attributes).toMatchObject({
      [ATTR_GEN_AI_PROVIDER_NAME]: "openai",
      [ATTR_GEN_AI_REQUEST_MODEL]: "gpt-4.1",
    });
    expect(await metrics.points(METRIC_DANGLING_TOOL_CALLS)).toEqual([]);
  });

  it("records the provider, model and agent names given as options", async () => {
    const { metrics, call } = instrumented({
      providerName: "aws.bedrock",
      modelName: "claude-on-bedrock",
      agentName: "support",
    });
    call(requestOn("t1", [human("hi")]));
    const [point] = await metrics.points(METRIC_MODEL_CALLS);
    expect(point?.attributes).toMatchObject({
      [ATTR_GEN_AI_PROVIDER_NAME]: "aws.bedrock",
      [ATTR_GEN_AI_REQUEST_MODEL]: "claude-on-bedrock",
      [ATTR_GEN_AI_AGENT_NAME]: "support",
    });
  });

  it("declares its instruments with units, descriptions and the package's scope", async () => {
    const { metrics, call } = instrumented();
    call(requestOn("t1", danglingThread()), () => aiCalls(["call_2", "search"]));
    const expected = [
      [METRIC_MODEL_CALLS, "{call}"],
      [METRIC_TOOL_CALLS, "{call}"],
      [METRIC_DANGLING_TOOL_CALLS, "{call}"],
      [METRIC_REPAIRS, "{repair}"],
      [METRIC_THREAD_RECENT_DANGLING_TOOL_CALLS, "{call}"],
      [METRIC_REPAIR_DURATION, "s"],
    ];
    for (const [name, unit] of expected) {
      const descriptor = await metrics.descriptor(name as string);
      expect(descriptor, name).toMatchObject({
        unit,
        scope: { name: INSTRUMENTATION_SCOPE_NAME, version: PACKAGE_VERSION },
      });
      expect(descriptor?.description.length, name).toBeGreaterThan(10);
    }
  });
});

describe("tool calls issued", () => {
  it("counts each call of a response once, by tool, whether the handler is sync or async", async () => {
    const { metrics, call } = instrumented();
    const response = aiCalls(["call_1", "search"], ["call_2", "weather"], ["call_3", "search"]);
    expect(call(requestOn("t1", [human("go")]), () => response)).toBe(response);
    await expect(
      call(requestOn("t2", [human("go")]), async () => aiCalls(["call_4", "weather"])),
    ).resolves.toBeInstanceOf(AIMessage);
    expect(await metrics.sum(METRIC_TOOL_CALLS, { [ATTR_GEN_AI_TOOL_NAME]: "search" })).toBe(2);
    expect(await metrics.sum(METRIC_TOOL_CALLS, { [ATTR_GEN_AI_TOOL_NAME]: "weather" })).toBe(2);
  });

  it("records a tool the request does not offer as _OTHER", async () => {
    const { metrics, call } = instrumented();
    call(requestOn("t1", [human("go")]), () => aiCalls(["call_1", "hallucinated_tool"]));
    expect(await metrics.points(METRIC_TOOL_CALLS)).toEqual([
      {
        attributes: {
          [ATTR_GEN_AI_PROVIDER_NAME]: "openai",
          [ATTR_GEN_AI_REQUEST_MODEL]: "gpt-4.1",
          [ATTR_GEN_AI_TOOL_NAME]: "_OTHER",
        },
        value: 1,
      },
    ]);
  });

  it("counts nothing, and lets the error through unchanged, when the model call fails", async () => {
    const { metrics, call } = instrumented();
    const failure = new Error("provider refused");
    await expect(
      call(requestOn("t1", [human("go")]), async () => {
        throw failure;
      }),
    ).rejects.toBe(failure);
    expect(await metrics.points(METRIC_TOOL_CALLS)).toEqual([]);
    expect(await metrics.sum(METRIC_MODEL_CALLS)).toBe(1);
  });
});

describe("dangling calls", () => {
  it("counts a dangling call once although every later call of its thread repairs it", async () => {
    const { metrics, call } = instrumented();
    for (let turn = 0; turn < 3; turn++) call(requestOn("t1", danglingThread()));
    expect(await metrics.points(METRIC_DANGLING_TOOL_CALLS)).toEqual([
      {
        attributes: {
          [ATTR_GEN_AI_PROVIDER_NAME]: "openai",
          [ATTR_GEN_AI_REQUEST_MODEL]: "gpt-4.1",
          [ATTR_GEN_AI_TOOL_NAME]: "search",
          [ATTR_REASON]: "interrupted",
        },
        value: 1,
      },
    ]);
    expect(await metrics.sum(METRIC_REPAIRS, { [ATTR_REPAIR_KIND]: "placeholder_inserted" })).toBe(
      3,
    );
    expect(await metrics.points(METRIC_THREAD_RECENT_DANGLING_TOOL_CALLS)).toEqual([
      {
        attributes: { [ATTR_GEN_AI_CONVERSATION_ID]: "t1", [ATTR_GEN_AI_REQUEST_MODEL]: "gpt-4.1" },
        value: 1,
      },
    ]);
  });

  it("counts the same call id once in each thread", async () => {
    const { metrics, call } = instrumented();
    call(requestOn("t1", danglingThread()));
    call(requestOn("t2", danglingThread()));
    call(requestOn("t1", danglingThread()));
    expect(await metrics.sum(METRIC_DANGLING_TOOL_CALLS)).toBe(2);
    expect(await metrics.points(METRIC_THREAD_RECENT_DANGLING_TOOL_CALLS)).toHaveLength(2);
  });

  it("counts a call again once its memory has forgotten it (countOnceMemory)", async () => {
    const { metrics, call } = instrumented({ countOnceMemory: 1 });
    call(requestOn("t1", danglingThread()));
    call(requestOn("t2", danglingThread())); // forgets t1's call
    call(requestOn("t2", danglingThread()));
    call(requestOn("t1", danglingThread()));
    expect(await metrics.sum(METRIC_DANGLING_TOOL_CALLS)).toBe(3);
  });

  it("counts every sighting with countOnceMemory: 0", async () => {
    const { metrics, call } = instrumented({ countOnceMemory: 0 });
    for (let turn = 0; turn < 3; turn++) call(requestOn("t1", danglingThread()));
    expect(await metrics.sum(METRIC_DANGLING_TOOL_CALLS)).toBe(3);
  });

  it("records the invalid_arguments reason of a call whose arguments could not be parsed", async () => {
    const { metrics, call } = instrumented();
    // A plain object, as a checkpointer may hand it back: the raw call only, cut off mid-JSON.
    const truncated = {
      type: "ai",
      content: "",
      additional_kwargs: {
        tool_calls: [
          { id: "call_1", type: "function", function: { name: "search", arguments: '{"q' } },
        ],
      },
    } as unknown as BaseMessage;
    call(requestOn("t1", [human("go"), truncated, human("and?")]));
    const [point] = await metrics.points(METRIC_DANGLING_TOOL_CALLS);
    expect(point?.attributes).toMatchObject({
      [ATTR_GEN_AI_TOOL_NAME]: "search",
      [ATTR_REASON]: "invalid_arguments",
    });
  });

  it("records a dangling call of a tool the request no longer offers as _OTHER", async () => {
    const { metrics, call } = instrumented();
    call(requestOn("t1", danglingThread(), { tools: [WEATHER] }));
    const [point] = await metrics.points(METRIC_DANGLING_TOOL_CALLS);
    expect(point?.attributes[ATTR_GEN_AI_TOOL_NAME]).toBe("_OTHER");
  });

  it("records no per-thread series with threadMetrics: false, and still counts the call", async () => {
    const { metrics, call } = instrumented({ threadMetrics: false });
    call(requestOn("t1", danglingThread()));
    expect(await metrics.points(METRIC_THREAD_RECENT_DANGLING_TOOL_CALLS)).toEqual([]);
    expect(await metrics.sum(METRIC_DANGLING_TOOL_CALLS)).toBe(1);
  });

  it("reports a thread only while its dangling calls are within threadWindow, then drops it", async () => {
    vi.useFakeTimers({ now: new Date("2025-06-01T12:00:00Z"), toFake: ["Date"] });
    try {
      const { metrics, call } = instrumented({ threadWindow: 60 });
      call(requestOn("t1", danglingThread()));
      vi.advanceTimersByTime(30_000);
      call(requestOn("t2", danglingThread()));
      const threads = async () =>
        (await metrics.points(METRIC_THREAD_RECENT_DANGLING_TOOL_CALLS)).map(
          (point) => point.attributes[ATTR_GEN_AI_CONVERSATION_ID],
        );
      expect(await threads()).toEqual(["t2", "t1"]); // one each: the most recent first
      vi.advanceTimersByTime(29_000); // t1's call is 59 s old
      expect(await threads()).toEqual(["t2", "t1"]);
      vi.advanceTimersByTime(6_000); // 65 s: past the window and its last bucket (4 s)
      expect(await threads()).toEqual(["t2"]);
      // Seen again, t1's call is not counted again, so it does not come back.
      call(requestOn("t1", danglingThread()));
      expect(await threads()).toEqual(["t2"]);
      vi.advanceTimersByTime(60_000);
      expect(await metrics.points(METRIC_THREAD_RECENT_DANGLING_TOOL_CALLS)).toEqual([]);
      // The counter keeps both calls, once each.
      expect(await metrics.sum(METRIC_DANGLING_TOOL_CALLS)).toBe(2);
    } finally {
      vi.useRealTimers();
    }
  });

  it("reports the threadSeriesLimit threads with the most dangling calls, ties to the most recent", async () => {
    vi.useFakeTimers({ now: new Date("2025-06-01T12:00:00Z"), toFake: ["Date"] });
    try {
      const { metrics, call } = instrumented({ threadSeriesLimit: 2 });
      const withCalls = (thread: string, count: number) => [
        human("go"),
        aiCalls(
          ...Array.from({ length: count }, (_, index) => [`${thread}_${index}`, "search"] as const),
        ),
        human("?"),
      ];
      for (const [thread, count] of [
        ["few", 1],
        ["most", 3],
        ["tied_old", 2],
        ["tied_new", 2],
      ] as const) {
        call(requestOn(thread, withCalls(thread, count)));
        vi.advanceTimersByTime(1_000);
      }
      const points = await metrics.points(METRIC_THREAD_RECENT_DANGLING_TOOL_CALLS);
      expect(points).toEqual([
        {
          attributes: {
            [ATTR_GEN_AI_CONVERSATION_ID]: "most",
            [ATTR_GEN_AI_REQUEST_MODEL]: "gpt-4.1",
          },
          value: 3,
        },
        {
          attributes: {
            [ATTR_GEN_AI_CONVERSATION_ID]: "tied_new",
            [ATTR_GEN_AI_REQUEST_MODEL]: "gpt-4.1",
          },
          value: 2,
        },
      ]);
      // No overflow series: the threads left out are simply not reported.
      expect(await metrics.sum(METRIC_DANGLING_TOOL_CALLS)).toBe(8);
    } finally {
      vi.useRealTimers();
    }
  });

  it("is a gauge of the library's scope, with no _total and no overflow series", async () => {
    const harness = metricsHarness();
    const hook = danglingToolCallMiddleware({ logger: false, meterProvider: harness.meterProvider })
      .wrapModelCall as unknown as (request: FakeRequest, handler: Handler) => unknown;
    hook(requestOn("t1", danglingThread()), answer);
    expect(await harness.descriptor(METRIC_THREAD_RECENT_DANGLING_TOOL_CALLS)).toMatchObject({
      name: "tool_call_resilience.thread.recent_dangling_tool_calls",
      unit: "{call}",
      scope: { name: INSTRUMENTATION_SCOPE_NAME, version: PACKAGE_VERSION },
    });
  });

  it("shares the per-thread series of a meter provider between middleware", async () => {
    const harness = metricsHarness();
    const hooks = [1, 2].map(
      () =>
        danglingToolCallMiddleware({
          logger: false,
          meterProvider: harness.meterProvider,
          threadSeriesLimit: 1,
        }).wrapModelCall as unknown as (request: FakeRequest, handler: Handler) => unknown,
    );
    hooks[0]?.(requestOn("t1", danglingThread()), answer);
    hooks[1]?.(
      requestOn("t2", [
        human("go"),
        aiCalls(["call_1", "search"], ["call_2", "search"]),
        human("?"),
      ]),
      answer,
    );
    const threads = (await harness.points(METRIC_THREAD_RECENT_DANGLING_TOOL_CALLS)).map(
      (point) => [point.attributes[ATTR_GEN_AI_CONVERSATION_ID], point.value],
    );
    // One set of series of at most one, whichever middleware counted: the worst thread.
    expect(threads).toEqual([["t2", 2]]);
  });

  it("counts an id-less call of a run without a thread at each sighting, never merging runs", async () => {
    const { metrics, call } = instrumented();
    const idLess = () => [
      human("go"),
      new AIMessage({ content: "", tool_calls: [{ name: "search", args: {} }] }),
      human("and?"),
    ];
    call(requestOn(undefined, idLess()));
    call(requestOn(undefined, idLess()));
    expect(await metrics.sum(METRIC_DANGLING_TOOL_CALLS)).toBe(2);
  });

  describe("in a process that has not seen the call before (a restart, another replica)", () => {
    /** call_1 dangles, the user writes again, and the model answers over it: then one more turn. */
    const answeredThread = () => [
      human("find it"),
      aiCalls(["call_1", "search"]),
      human("go on"),
      new AIMessage("I could not search; what else?"),
      human("never mind"),
    ];

    it("does not count a dangling call that a later AI message answered over: that call counted it", async () => {
      const { metrics, tracing, call } = instrumented(); // a fresh meter provider: a new process
      call(requestOn("t1", answeredThread()));
      expect(await metrics.sum(METRIC_DANGLING_TOOL_CALLS)).toBe(0);
      expect(await metrics.points(METRIC_THREAD_RECENT_DANGLING_TOOL_CALLS)).toEqual([]);
      // It is still repaired, and the repair is still counted and traced.
      expect(
        await metrics.sum(METRIC_REPAIRS, { [ATTR_REPAIR_KIND]: "placeholder_inserted" }),
      ).toBe(1);
      expect(await metrics.sum(METRIC_MODEL_CALLS, { [ATTR_OUTCOME]: "repaired" })).toBe(1);
      const [span] = tracing.spans(SPAN_REPAIR_TOOL_CALLS);
      expect(span?.attributes[ATTR_DANGLING_COUNT]).toBe(1);
      expect(span?.attributes[ATTR_TOOL_CALL_IDS]).toEqual(["call_1"]);
      // Remembered: the next call of the thread does not count it either.
      call(requestOn("t1", [...answeredThread(), new AIMessage("ok"), human("bye")]));
      expect(await metrics.sum(METRIC_DANGLING_TOOL_CALLS)).toBe(0);
      // Each call repairs it again: its placeholder and the reply turn before "go on".
      expect(
        await metrics.sum(METRIC_REPAIRS, { [ATTR_REPAIR_KIND]: "placeholder_inserted" }),
      ).toBe(2);
      expect(await metrics.sum(METRIC_REPAIRS, { [ATTR_REPAIR_KIND]: "turn_inserted" })).toBe(2);
      expect(await metrics.sum(METRIC_REPAIRS)).toBe(4);
    });

    it("counts a dangling call of the latest AI message, which no model call has answered yet", async () => {
      const { metrics, call } = instrumented();
      call(requestOn("t1", danglingThread()));
      expect(await metrics.sum(METRIC_DANGLING_TOOL_CALLS)).toBe(1);
      expect(await metrics.points(METRIC_THREAD_RECENT_DANGLING_TOOL_CALLS)).toEqual([
        {
          attributes: {
            [ATTR_GEN_AI_CONVERSATION_ID]: "t1",
            [ATTR_GEN_AI_REQUEST_MODEL]: "gpt-4.1",
          },
          value: 1,
        },
      ]);
    });

    it("counts only the calls of the latest AI message when earlier ones were answered over", async () => {
      const { metrics, call } = instrumented();
      call(requestOn("t1", [...answeredThread(), aiCalls(["call_2", "weather"]), human("?")]));
      expect(await metrics.points(METRIC_DANGLING_TOOL_CALLS)).toEqual([
        expect.objectContaining({
          attributes: expect.objectContaining({ [ATTR_GEN_AI_TOOL_NAME]: "weather" }),
          value: 1,
        }),
      ]);
      // Both calls get a placeholder, and each a reply turn before the user message after it.
      expect(
        await metrics.sum(METRIC_REPAIRS, { [ATTR_REPAIR_KIND]: "placeholder_inserted" }),
      ).toBe(2);
      expect(await metrics.sum(METRIC_REPAIRS, { [ATTR_REPAIR_KIND]: "turn_inserted" })).toBe(2);
      expect(await metrics.sum(METRIC_REPAIRS)).toBe(4);
    });

    it("takes only an answer of the same agent as proof: another agent's message, or an unnamed one written without a model call, proves nothing", async () => {
      // createAgent names each answer after its agent. A sub-agent's answer copied into a
      // supervisor's history, or the message modelCallLimitMiddleware writes when it ends a run
      // before the model, follows the call without a model call over the supervisor's history.
      const named = (name: string | undefined, message: AIMessage) => {
        message.name = name;
        return message;
      };
      const historyWith = (later: AIMessage) => [
        human("find it"),
        named("supervisor", aiCalls(["call_1", "search"])),
        later,
        human("go on"),
      ];
      const counted = async (later: AIMessage) => {
        const { metrics, call } = instrumented();
        call(requestOn("t1", historyWith(later)));
        return metrics.sum(METRIC_DANGLING_TOOL_CALLS);
      };
      expect(await counted(named("researcher", new AIMessage("found it")))).toBe(1);
      expect(await counted(named(undefined, new AIMessage("Model call limits exceeded")))).toBe(1);
      expect(await counted(named("supervisor", new AIMessage("what else?")))).toBe(0);
    });

    it("warns only about the calls it counts: an answered-over call goes to debug", () => {
      const warn = vi.fn();
      const debug = vi.fn();
      const hook = danglingToolCallMiddleware({ logger: { warn, debug } })
        .wrapModelCall as unknown as (request: FakeRequest, handler: Handler) => unknown;
      hook(requestOn("t1", answeredThread()), answer);
      expect(warn).not.toHaveBeenCalled();
      expect(debug).toHaveBeenCalledTimes(1);
      expect(String(debug.mock.calls[0]?.[0])).toContain("again");
    });
  });

  it("records no per-thread series for a run without a thread id", async () => {
    const { metrics, call } = instrumented();
    call(requestOn(undefined, danglingThread()));
    expect(await metrics.points(METRIC_THREAD_RECENT_DANGLING_TOOL_CALLS)).toEqual([]);
    expect(await metrics.sum(METRIC_DANGLING_TOOL_CALLS)).toBe(1);
  });
});

describe("thread ids as gen_ai.conversation.id (threadIdAttribute)", () => {
  /** The thread id the metric and the span recorded for one repaired call of thread `user-42`. */
  async function recordedThreadIds(options: DanglingToolCallMiddlewareOptions) {
    const error = vi.fn();
    const { metrics, tracing, call } = instrumented({ ...options, logger: { warn() {}, error } });
    call(requestOn("user-42", danglingThread()));
    const [point] = await metrics.points(METRIC_THREAD_RECENT_DANGLING_TOOL_CALLS);
    const [span] = tracing.spans(SPAN_REPAIR_TOOL_CALLS);
    return {
      metric: point?.attributes[ATTR_GEN_AI_CONVERSATION_ID],
      span: span?.attributes[ATTR_GEN_AI_CONVERSATION_ID],
      dangling: await metrics.sum(METRIC_DANGLING_TOOL_CALLS),
      errors: error.mock.calls.map(([message]) => String(message)),
    };
  }

  it("records the id as it is by default", async () => {
    expect(await recordedThreadIds({})).toEqual({
      metric: "user-42",
      span: "user-42",
      dangling: 1,
      errors: [],
    });
  });

  it('records its hex SHA-256 with "sha256", the same on the metric and the span', async () => {
    const hash = createHash("sha256").update("user-42").digest("hex");
    expect(await recordedThreadIds({ threadIdAttribute: "sha256" })).toEqual({
      metric: hash,
      span: hash,
      dangling: 1,
      errors: [],
    });
  });

  it("records what a function makes of it, such as an HMAC with a secret", async () => {
    const hmac = (id: string) => createHmac("sha256", "secret").update(id).digest("hex");
    expect(await recordedThreadIds({ threadIdAttribute: hmac })).toEqual({
      metric: hmac("user-42"),
      span: hmac("user-42"),
      dangling: 1,
      errors: [],
    });
  });

  it.each([
    [
      "throws",
      () => {
        throw new Error("no key");
      },
    ],
    ["returns an empty string", () => ""],
    ["returns a number", () => 42 as unknown as string],
  ])(
    "records no id at all, never the raw one, when the function %s, and logs the failure",
    async (_, mapping) => {
      const recorded = await recordedThreadIds({ threadIdAttribute: mapping });
      expect(recorded).toMatchObject({ metric: undefined, span: undefined, dangling: 1 });
      expect(recorded.errors).toEqual([expect.stringContaining("OpenTelemetry metrics failed")]);
    },
  );

  it("never lets a failing mapping reach the model call, and records the span without the id", async () => {
    const { tracing, call } = instrumented({
      threadIdAttribute: () => {
        throw new Error("no key");
      },
    });
    const response = call(requestOn("user-42", danglingThread()));
    expect(response).toBeInstanceOf(AIMessage);
    const [span] = tracing.spans(SPAN_REPAIR_TOOL_CALLS);
    expect(span?.attributes[ATTR_DANGLING_COUNT]).toBe(1);
    expect(Object.values(span?.attributes ?? {})).not.toContain("user-42");
  });
});

describe("spans", () => {
  it("creates one repair_tool_calls span per repaired call, with an event per repair", async () => {
    const { tracing, call } = instrumented();
    const messages = [
      human("go"),
      aiCalls(["call_1", "search"], ["call_2", "weather"]),
      toolResult("call_2", "sunny", "weather"),
      human("and?"),
    ];
    call(requestOn("t1", messages));
    const [span, ...others] = tracing.spans(SPAN_REPAIR_TOOL_CALLS);
    expect(others).toEqual([]);
    expect(span?.kind).toBe(0); // SpanKind.INTERNAL
    expect(span?.attributes).toMatchObject({
      [ATTR_GEN_AI_PROVIDER_NAME]: "openai",
      [ATTR_GEN_AI_REQUEST_MODEL]: "gpt-4.1",
      [ATTR_GEN_AI_AGENT_NAME]: "unknown",
      [ATTR_GEN_AI_CONVERSATION_ID]: "t1",
      [ATTR_MESSAGE_COUNT]: 4,
      [ATTR_DANGLING_COUNT]: 1,
      [ATTR_REPAIR_COUNT]: 2,
      // The reply turn after call_2's real result is a repair of call_2.
      [ATTR_TOOL_CALL_IDS]: ["call_1", "call_2"],
      [ATTR_TOOL_NAMES]: ["search", "weather"],
    });
    expect(span?.events.map((event) => [event.name, event.attributes])).toEqual([
      [
        EVENT_REPAIR,
        {
          [ATTR_GEN_AI_TOOL_NAME]: "search",
          [ATTR_GEN_AI_TOOL_CALL_ID]: "call_1",
          [ATTR_REPAIR_KIND]: "placeholder_inserted",
          [ATTR_REASON]: "interrupted",
          [ATTR_MESSAGE_INDEX]: 2,
        },
      ],
      [
        EVENT_REPAIR,
        {
          [ATTR_GEN_AI_TOOL_NAME]: "weather",
          [ATTR_GEN_AI_TOOL_CALL_ID]: "call_2",
          [ATTR_REPAIR_KIND]: "turn_inserted",
          [ATTR_MESSAGE_INDEX]: 4,
        },
      ],
    ]);
    expect(span?.instrumentationScope).toMatchObject({
      name: INSTRUMENTATION_SCOPE_NAME,
      version: PACKAGE_VERSION,
    });
  });

  it("is a child of the active span", async () => {
    const { tracing, call } = instrumented();
    const { AsyncLocalStorageContextManager } = await import("@opentelemetry/context-async-hooks");
    const { context } = await import("@opentelemetry/api");
    const manager = new AsyncLocalStorageContextManager().enable();
    context.setGlobalContextManager(manager);
    try {
      const parent = tracing.tracerProvider.getTracer("app").startSpan("handle request");
      context.with(trace.setSpan(context.active(), parent), () =>
        call(requestOn("t1", danglingThread())),
      );
      parent.end();
      const [span] = tracing.spans(SPAN_REPAIR_TOOL_CALLS);
      expect(span?.parentSpanContext?.spanId).toBe(parent.spanContext().spanId);
      expect(span?.spanContext().traceId).toBe(parent.spanContext().traceId);
    } finally {
      context.disable();
    }
  });

  it("traces clean calls too with traceAllCalls", async () => {
    const { tracing, call } = instrumented({ traceAllCalls: true });
    call(requestOn("t1", [human("hi")]));
    const [span] = tracing.spans(SPAN_REPAIR_TOOL_CALLS);
    expect(span?.attributes).toMatchObject({ [ATTR_REPAIR_COUNT]: 0, [ATTR_OUTCOME]: "clean" });
  });
});

describe("a nested agent's model calls", () => {
  /** A request of a sub-agent run from the supervisor's tools node, on the parent's thread. */
  const nestedRequest = (messages: BaseMessage[]) =>
    requestOn("t1", messages, {
      runtime: {
        configurable: { thread_id: "t1", checkpoint_ns: "tools:3f2a|model_request:9c1e" },
      },
    });
  const nextTurn = () => new Promise((resolve) => setImmediate(resolve));
  /** What createAgent does to the answer of an agent named `name` once the call returns. */
  const namedBy = (name: string) => (message: AIMessage) => {
    message.name = name;
    return message;
  };

  it("are recorded under the name createAgent gives their answer, once it is given", async () => {
    const { metrics: harness, tracing, call } = instrumented();
    const answered = new AIMessage("found it");
    const response = (await call(
      nestedRequest(danglingThread()),
      async () => answered,
    )) as AIMessage;
    // Not yet: the agent's node names its answer after the middleware has returned it.
    expect(await harness.sum(METRIC_MODEL_CALLS)).toBe(0);
    namedBy("researcher")(response);
    await nextTurn();
    expect(
      await harness.sum(METRIC_MODEL_CALLS, {
        [ATTR_GEN_AI_AGENT_NAME]: "researcher",
        [ATTR_OUTCOME]: "repaired",
      }),
    ).toBe(1);
    expect(tracing.spans(SPAN_REPAIR_TOOL_CALLS)[0]?.attributes).toMatchObject({
      [ATTR_GEN_AI_AGENT_NAME]: "researcher",
    });
    // What carries no agent is recorded at once, as for any call.
    expect(await harness.sum(METRIC_DANGLING_TOOL_CALLS)).toBe(1);
  });

  it("are recorded under the run's agent when the call fails, or the agent has no name", async () => {
    const { metrics: harness, call } = instrumented();
    const failure = new Error("model down");
    await expect(
      call(nestedRequest([human("hi")]), async () => {
        throw failure;
      }),
    ).rejects.toBe(failure);
    expect(() =>
      call(nestedRequest([human("hi")]), () => {
        throw failure;
      }),
    ).toThrow(failure);
    const unnamed = (await call(nestedRequest([human("hi")]), async () => answer())) as AIMessage;
    namedBy("model")(unnamed);
    await nextTurn();
    expect(await harness.sum(METRIC_MODEL_CALLS, { [ATTR_GEN_AI_AGENT_NAME]: "unknown" })).toBe(3);
  });

  it("are recorded once a streamed answer has been read to its end, unnamed if never named", async () => {
    const { metrics: harness, call } = instrumented();
    async function* chunks() {
      yield new AIMessage({ content: "found" });
    }
    const stream = call(nestedRequest([human("hi")]), () => chunks()) as AsyncGenerator<unknown>;
    await nextTurn();
    // Not while the stream is being read.
    expect(await harness.sum(METRIC_MODEL_CALLS)).toBe(0);
    for await (const _ of stream) {
      // Read to the end.
    }
    // Never named: recorded under the run's agent once the waits for a name are over.
    await vi.waitFor(async () =>
      expect(await harness.sum(METRIC_MODEL_CALLS, { [ATTR_GEN_AI_AGENT_NAME]: "unknown" })).toBe(
        1,
      ),
    );
  });

  it("wait for a name given late, as when a middleware around the call awaits after it", async () => {
    const { metrics: harness, call } = instrumented();
    const response = (await call(nestedRequest([human("hi")]), async () => answer())) as AIMessage;
    setTimeout(() => namedBy("researcher")(response), 5);
    await vi.waitFor(async () =>
      expect(
        await harness.sum(METRIC_MODEL_CALLS, { [ATTR_GEN_AI_AGENT_NAME]: "researcher" }),
      ).toBe(1),
    );
    expect(await harness.sum(METRIC_MODEL_CALLS)).toBe(1);
  });

  it("read the name of a structured answer's AI message", async () => {
    const { metrics: harness, call } = instrumented();
    const message = new AIMessage("{}");
    await call(nestedRequest([human("hi")]), async () => ({
      structuredResponse: {},
      messages: [message],
    }));
    namedBy("researcher")(message);
    await vi.waitFor(async () =>
      expect(
        await harness.sum(METRIC_MODEL_CALLS, { [ATTR_GEN_AI_AGENT_NAME]: "researcher" }),
      ).toBe(1),
    );
  });

  it("are recorded at once under the agentName option, which names every call", async () => {
    const { metrics: harness, call } = instrumented({ agentName: "researcher" });
    await call(nestedRequest([human("hi")]), async () => answer());
    expect(await harness.sum(METRIC_MODEL_CALLS, { [ATTR_GEN_AI_AGENT_NAME]: "researcher" })).toBe(
      1,
    );
  });
});

describe("fail-open telemetry", () => {
  const throwing = () => {
    throw new Error("telemetry backend down");
  };

  it("goes on with the repaired request when the meter provider throws, and logs once", () => {
    const error = vi.fn();
    const middleware = danglingToolCallMiddleware({
      logger: { warn: vi.fn(), error },
      meterProvider: { getMeter: throwing } as unknown as MeterProvider,
    });
    const hook = middleware.wrapModelCall as unknown as (r: FakeRequest, h: Handler) => unknown;
    const handler = vi.fn<Handler>(answer);
    for (let turn = 0; turn < 3; turn++) hook(requestOn("t1", danglingThread()), handler);
    expect(handler).toHaveBeenCalledTimes(3);
    expect(handler.mock.calls[0]?.[0]?.messages).toHaveLength(5);
    expect(error).toHaveBeenCalledTimes(1);
    expect(error.mock.calls[0]?.[0]).toMatch(/OpenTelemetry metrics failed/);
  });

  it("leaves no unhandled rejection behind when an async logger rejects", async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on("unhandledRejection", onUnhandled);
    try {
      const rejecting = async () => {
        throw new Error("log sink down");
      };
      const middleware = danglingToolCallMiddleware({
        logger: { warn: rejecting, error: rejecting },
        meterProvider: { getMeter: throwing } as unknown as MeterProvider,
      });
      const hook = middleware.wrapModelCall as unknown as (r: FakeRequest, h: Handler) => unknown;
      const handler = vi.fn<Handler>(answer);
      hook(requestOn("t1", danglingThread()), handler);
      await new Promise((resolve) => setTimeout(resolve, 10));
      expect(handler).toHaveBeenCalledTimes(1);
      expect(unhandled).toEqual([]);
    } finally {
      process.off("unhandledRejection", onUnhandled);
    }
  });

  it("goes on when every instrument throws", async () => {
    const error = vi.fn();
    const instrument = { add: throwing, record: throwing };
    const meter = { createCounter: () => instrument, createHistogram: () => instrument };
    const middleware = danglingToolCallMiddleware({
      logger: { warn: vi.fn(), error },
      meterProvider: { getMeter: () => meter } as unknown as MeterProvider,
    });
    const hook = middleware.wrapModelCall as unknown as (r: FakeRequest, h: Handler) => unknown;
    const response = aiCalls(["call_2", "search"]);
    await expect(hook(requestOn("t1", danglingThread()), async () => response)).resolves.toBe(
      response,
    );
    expect(error).toHaveBeenCalledTimes(1);
  });

  it("goes on when a span processor throws as the span ends", async () => {
    const { BasicTracerProvider } = await import("@opentelemetry/sdk-trace-base");
    const processor = {
      onStart() {},
      onEnd: throwing,
      forceFlush: async () => {},
      shutdown: async () => {},
    };
    const tracerProvider = new BasicTracerProvider({ spanProcessors: [processor] });
    const error = vi.fn();
    const middleware = danglingToolCallMiddleware({
      logger: { warn: vi.fn(), error },
      tracerProvider,
    });
    const hook = middleware.wrapModelCall as unknown as (r: FakeRequest, h: Handler) => unknown;
    const handler = vi.fn<Handler>(answer);
    hook(requestOn("t1", danglingThread()), handler);
    expect(handler.mock.calls[0]?.[0]?.messages).toHaveLength(5);
    expect(error.mock.calls[0]?.[0]).toMatch(/OpenTelemetry tracing failed/);
  });

  it("goes on when the tracer throws, or its spans do", () => {
    for (const tracerProvider of [
      { getTracer: throwing },
      { getTracer: () => ({ startSpan: throwing }) },
      {
        getTracer: () => ({
          startSpan: () => ({ isRecording: () => true, setAttributes: throwing, end: throwing }),
        }),
      },
    ]) {
      const error = vi.fn();
      const middleware = danglingToolCallMiddleware({
        logger: { warn: vi.fn(), error },
        tracerProvider: tracerProvider as never,
      });
      const hook = middleware.wrapModelCall as unknown as (r: FakeRequest, h: Handler) => unknown;
      const handler = vi.fn<Handler>(answer);
      hook(requestOn("t1", danglingThread()), handler);
      hook(requestOn("t1", danglingThread()), handler);
      expect(handler).toHaveBeenCalledTimes(2);
      expect(handler.mock.calls[1]?.[0]?.messages).toHaveLength(5);
      expect(error).toHaveBeenCalledTimes(1);
      expect(error.mock.calls[0]?.[0]).toMatch(/OpenTelemetry tracing failed/);
    }
  });
});

describe("with no SDK registered", () => {
  afterEach(() => {
    metrics.disable();
    trace.disable();
    vi.restoreAllMocks();
  });

  it("reads no clock: nothing would record the duration", () => {
    const now = vi.spyOn(performance, "now");
    const hook = danglingToolCallMiddleware({ logger: false }).wrapModelCall as unknown as (
      r: FakeRequest,
      h: Handler,
    ) => unknown;
    hook(requestOn("t1", [human("hi")]), answer);
    hook(requestOn("t1", danglingThread()), answer);
    expect(now).not.toHaveBeenCalled();
  });

  it("creates spans once a tracer provider is registered after the agent was built", () => {
    const hook = danglingToolCallMiddleware({ logger: false }).wrapModelCall as unknown as (
      r: FakeRequest,
      h: Handler,
    ) => unknown;
    hook(requestOn("t1", danglingThread()), answer);
    const tracing = tracingHarness();
    trace.setGlobalTracerProvider(tracing.tracerProvider);
    const before = Date.now();
    hook(requestOn("t2", danglingThread()), answer);
    const [span, ...others] = tracing.spans(SPAN_REPAIR_TOOL_CALLS);
    expect(others).toEqual([]);
    expect(span?.attributes[ATTR_GEN_AI_CONVERSATION_ID]).toBe("t2");
    // Timed, now that a tracer records: the span starts when the repair did, not at time origin.
    const [seconds, nanoseconds] = span?.startTime ?? [0, 0];
    expect(seconds * 1e3 + nanoseconds / 1e6).toBeGreaterThanOrEqual(before - 1);
  });

  it("never reads the model's or the tools' names: nothing is computed for telemetry", () => {
    const middleware = danglingToolCallMiddleware({ logger: false });
    const hook = middleware.wrapModelCall as unknown as (r: FakeRequest, h: Handler) => unknown;
    const modelName = vi.fn(() => "gpt-4.1");
    const toolName = vi.fn(() => "search");
    const model = Object.defineProperty({}, "model", { get: modelName });
    const tools = [Object.defineProperty({}, "name", { get: toolName })];
    hook(requestOn("t1", [human("hi")], { model, tools }), () => aiCalls(["call_7", "search"]));
    hook(requestOn("t1", danglingThread(), { model, tools }), () => aiCalls(["call_8", "search"]));
    expect(modelName).not.toHaveBeenCalled();
    expect(toolName).not.toHaveBeenCalled();
  });

  it("hands the handler's own promise back, without waiting on it", () => {
    const middleware = danglingToolCallMiddleware({ logger: false });
    const hook = middleware.wrapModelCall as unknown as (r: FakeRequest, h: Handler) => unknown;
    const response = Promise.resolve(aiCalls(["call_7", "search"]));
    expect(hook(requestOn("t1", [human("hi")]), () => response)).toBe(response);
  });

  it("starts recording when an SDK is registered after the agent was built", async () => {
    const middleware = danglingToolCallMiddleware({ logger: false });
    const hook = middleware.wrapModelCall as unknown as (r: FakeRequest, h: Handler) => unknown;
    hook(requestOn("t1", [human("before")]), answer);
    const harness = metricsHarness();
    metrics.setGlobalMeterProvider(harness.meterProvider);
    hook(requestOn("t1", [human("after")]), answer);
    expect(await harness.sum(METRIC_MODEL_CALLS)).toBe(1);
  });
});

describe("options", () => {
  it.each([
    [{ meterProvider: {} }, "meterProvider"],
    [{ tracerProvider: { getMeter() {} } }, "tracerProvider"],
    [{ threadMetrics: "no" }, "threadMetrics"],
    [{ traceAllCalls: 1 }, "traceAllCalls"],
    [{ countOnceMemory: -1 }, "countOnceMemory"],
    [{ countOnceMemory: 1.5 }, "countOnceMemory"],
    [{ threadSeriesLimit: 0 }, "threadSeriesLimit"],
    [{ threadSeriesLimit: 2.5 }, "threadSeriesLimit"],
    [{ threadWindow: 0 }, "threadWindow"],
    [{ threadWindow: Number.POSITIVE_INFINITY }, "threadWindow"],
    [{ threadWindow: "15m" }, "threadWindow"],
    [{ threadIdAttribute: "md5" }, "threadIdAttribute"],
    [{ threadIdAttribute: true }, "threadIdAttribute"],
    [{ providerName: "" }, "providerName"],
    [{ modelName: 42 }, "modelName"],
    [{ agentName: "" }, "agentName"],
  ])("rejects %j, naming %s", (options, path) => {
    let thrown: unknown;
    try {
      danglingToolCallMiddleware(options as DanglingToolCallMiddlewareOptions);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ToolCallResilienceOptionsError);
    expect((thrown as ToolCallResilienceOptionsError).problems.map((p) => p.path)).toEqual([path]);
  });
});
