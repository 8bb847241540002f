/**
 * Faults, injected: the repair engine failing (it guards itself against any history, so its
 * failure here is a bug made to happen by replacing it), a failure of the middleware outside the
 * engine, and a handler that throws. In each the model call goes on, or the handler's own error
 * comes back, and each model call is counted once. A meter, tracer or logger that throws is in
 * middleware.telemetry.test.ts; a port already taken and a scrape during shutdown in setup.test.ts.
 */
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import { MiddlewareError } from "langchain";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  type DanglingToolCallMiddlewareOptions,
  danglingToolCallMiddleware,
} from "../../src/index.js";
import {
  ATTR_ERROR_TYPE,
  ATTR_OUTCOME,
  METRIC_DANGLING_TOOL_CALLS,
  METRIC_MODEL_CALLS,
  METRIC_TOOL_CALLS,
  OUTCOME_VALUE_FAILED_OPEN,
  OUTCOME_VALUE_REPAIRED,
  SPAN_REPAIR_TOOL_CALLS,
} from "../../src/telemetry/semconv.js";
import {
  agentWith,
  aiAnswer,
  aiToolCall,
  humanTurn,
  onThread,
  receivedBy,
  scriptedModel,
  searchTool,
} from "../helpers/agent.js";
import { aiCalls, human, shapeOf } from "../helpers/history.js";
import { metricsHarness, tracingHarness } from "../helpers/telemetry.js";

/** When set, the engine throws this instead of repairing. */
const engine = vi.hoisted(() => ({ fault: undefined as Error | undefined }));

vi.mock("../../src/core/repair.js", async (importOriginal) => {
  const actual = await importOriginal<typeof import("../../src/core/repair.js")>();
  return {
    ...actual,
    repairHistory: (...args: Parameters<typeof actual.repairHistory>) => {
      if (engine.fault !== undefined) throw engine.fault;
      return actual.repairHistory(...args);
    },
  };
});

afterEach(() => {
  engine.fault = undefined;
});

interface Request {
  messages: BaseMessage[];
  runtime: { configurable?: { thread_id?: string } };
  state: { messages: BaseMessage[] };
  model: unknown;
  tools: unknown[];
}

type Handler = (request: Request) => unknown;

const GPT = { model: "gpt-4.1", getLsParams: () => ({ ls_provider: "openai" }) };
const FAILED_OPEN = { [ATTR_OUTCOME]: OUTCOME_VALUE_FAILED_OPEN };

function requestOn(threadId: string, messages: BaseMessage[]): Request {
  return {
    messages,
    runtime: { configurable: { thread_id: threadId } },
    state: { messages },
    model: GPT,
    tools: [],
  };
}

/** A thread whose call_1 (search) was left without a result. */
const danglingThread = () => [human("find it"), aiCalls(["call_1", "search"]), human("go on")];

/** A middleware reporting to fresh in-memory metrics and spans, and its hook. */
function instrumented(options: DanglingToolCallMiddlewareOptions = {}) {
  const metrics = metricsHarness();
  const tracing = tracingHarness();
  const middleware = danglingToolCallMiddleware({
    logger: false,
    meterProvider: metrics.meterProvider,
    tracerProvider: tracing.tracerProvider,
    ...options,
  });
  const hook = middleware.wrapModelCall as unknown as (r: Request, h: Handler) => unknown;
  return { metrics, tracing, middleware, hook };
}

describe("an engine that fails", () => {
  it("hands the handler the original request, logs the error, and counts failed_open once", async () => {
    engine.fault = new TypeError("engine bug");
    const error = vi.fn();
    const { metrics, tracing, hook } = instrumented({ logger: { warn: vi.fn(), error } });
    const request = requestOn("t1", danglingThread());
    const response = new AIMessage("fine");
    const handler = vi.fn<Handler>(() => response);

    expect(hook(request, handler)).toBe(response);

    expect(handler).toHaveBeenCalledTimes(1);
    expect(handler.mock.calls[0]?.[0]).toBe(request);
    expect(error).toHaveBeenCalledTimes(1);
    expect(error).toHaveBeenCalledWith(
      "[tool-call-resilience] Tool-call repair failed; passing the request on unchanged",
      {
        error: engine.fault,
      },
    );
    expect(await metrics.sum(METRIC_MODEL_CALLS)).toBe(1);
    expect(await metrics.sum(METRIC_MODEL_CALLS, FAILED_OPEN)).toBe(1);
    // Nothing was repaired, so no dangling call is claimed either.
    expect(await metrics.sum(METRIC_DANGLING_TOOL_CALLS)).toBe(0);
    const [span] = tracing.spans(SPAN_REPAIR_TOOL_CALLS);
    expect(span?.status).toEqual({ code: 2, message: "engine bug" }); // SpanStatusCode.ERROR
    expect(span?.attributes[ATTR_ERROR_TYPE]).toBe("TypeError");
    expect(span?.events.some((event) => event.name === "exception")).toBe(true);
  });

  it("still counts the tool calls of the model's answer, sync or async", async () => {
    engine.fault = new Error("engine bug");
    const { metrics, hook } = instrumented();
    const response = aiCalls(["call_2", "search"]);
    hook(requestOn("t1", danglingThread()), () => response);
    await hook(requestOn("t1", danglingThread()), async () => response);
    expect(await metrics.sum(METRIC_MODEL_CALLS, FAILED_OPEN)).toBe(2);
    expect(await metrics.sum(METRIC_TOOL_CALLS)).toBe(2);
  });

  it("falls back to warn when the logger's error method throws", () => {
    engine.fault = new Error("engine bug");
    const warn = vi.fn();
    const logger = {
      warn,
      error: () => {
        throw new Error("sink down");
      },
    };
    const handler = vi.fn<Handler>(() => new AIMessage("fine"));
    danglingToolCallMiddleware({ logger }).wrapModelCall?.(
      requestOn("t1", danglingThread()) as never,
      handler as never,
    );
    expect(handler).toHaveBeenCalledTimes(1);
    expect(warn).toHaveBeenCalledWith(
      "[tool-call-resilience] Tool-call repair failed; passing the request on unchanged",
      {
        error: engine.fault,
      },
    );
  });

  it("uses warn when the logger has no error method", () => {
    engine.fault = new Error("engine bug");
    const warn = vi.fn();
    danglingToolCallMiddleware({ logger: { warn } }).wrapModelCall?.(
      requestOn("t1", danglingThread()) as never,
      (() => new AIMessage("fine")) as never,
    );
    expect(warn).toHaveBeenCalledWith(
      "[tool-call-resilience] Tool-call repair failed; passing the request on unchanged",
      {
        error: engine.fault,
      },
    );
  });

  it("keeps a createAgent run going: the model gets the messages as they were, and answers", async () => {
    engine.fault = new Error("engine bug");
    const { metrics, middleware } = instrumented();
    const model = scriptedModel(aiAnswer("a1", "here you are"));
    const agent = agentWith({ model, tools: [searchTool()], middleware: [middleware] });
    const input = [
      humanTurn("h1", "find it"),
      aiToolCall("a0", { id: "call_1", name: "search", args: { query: "x" } }),
      humanTurn("h2", "go on"),
    ];

    const result = (await agent.invoke({ messages: input }, onThread("t1"))) as {
      messages: BaseMessage[];
    };

    expect(result.messages.at(-1)?.content).toBe("here you are");
    expect(shapeOf(receivedBy(model, 0))).toEqual(["human", "ai(call_1)", "human"]);
    expect(await metrics.sum(METRIC_MODEL_CALLS, FAILED_OPEN)).toBe(1);
  });
});

describe("a failure of the middleware outside the engine", () => {
  it("passes the original request on when the request cannot even be copied", () => {
    const error = vi.fn();
    const { hook } = instrumented({ logger: { warn: vi.fn(), error } });
    const inner = requestOn("t1", danglingThread());
    // Its messages can be read and repaired, but spreading it (to pass the repair on) throws.
    const request = new Proxy(inner, {
      ownKeys() {
        throw new Error("request cannot be listed");
      },
    });
    const response = new AIMessage("fine");
    const handler = vi.fn<Handler>(() => response);

    expect(hook(request, handler)).toBe(response);

    expect(handler).toHaveBeenCalledTimes(1);
    expect(handler.mock.calls[0]?.[0]).toBe(request);
    expect(error).toHaveBeenCalledWith(
      "[tool-call-resilience] Tool-call middleware failed; passing the request on unchanged",
      { error: expect.objectContaining({ message: "request cannot be listed" }) },
    );
  });

  it("passes a request on whose messages throw on every read, counted as failed_open", async () => {
    const { metrics, hook } = instrumented();
    const messages = new Proxy([] as BaseMessage[], {
      get() {
        throw new Error("messages unavailable");
      },
    });
    const request = { ...requestOn("t1", []), messages };
    const handler = vi.fn<Handler>(() => new AIMessage("fine"));
    hook(request, handler);
    expect(handler).toHaveBeenCalledTimes(1);
    expect(handler.mock.calls[0]?.[0]).toBe(request);
    expect(await metrics.sum(METRIC_MODEL_CALLS)).toBe(1);
    // Not even its length can be read: the call went uninspected, which is failing open.
    expect(await metrics.sum(METRIC_MODEL_CALLS, FAILED_OPEN)).toBe(1);
  });

  it("hands the model's answer back when the answer cannot be counted", () => {
    const error = vi.fn();
    const { hook } = instrumented({ logger: { warn: vi.fn(), error } });
    // Counting reads the answer's `then` to tell a promise from a message: this one throws.
    // biome-ignore lint/suspicious/noThenProperty: a `then` that throws is the fault under test
    const answer = Object.defineProperty({}, "then", {
      get() {
        throw new Error("answer unreadable");
      },
    });
    expect(hook(requestOn("t1", danglingThread()), () => answer)).toBe(answer);
    expect(error).toHaveBeenCalledWith(
      "[tool-call-resilience] Tool-call middleware failed; passing the response on unchanged",
      { error: expect.objectContaining({ message: "answer unreadable" }) },
    );
  });
});

describe("a handler that throws", () => {
  it("gets its own error back, sync and async, with the call counted once and nothing logged", async () => {
    const error = vi.fn();
    const warn = vi.fn();
    const { metrics, hook } = instrumented({ logger: { warn, error } });
    const failure = new Error("provider refused");

    expect(() =>
      hook(requestOn("t1", danglingThread()), () => {
        throw failure;
      }),
    ).toThrow(failure);
    await expect(
      hook(requestOn("t2", danglingThread()), async () => {
        throw failure;
      }),
    ).rejects.toBe(failure);

    expect(await metrics.sum(METRIC_MODEL_CALLS)).toBe(2);
    expect(await metrics.sum(METRIC_MODEL_CALLS, { [ATTR_OUTCOME]: OUTCOME_VALUE_REPAIRED })).toBe(
      2,
    );
    expect(await metrics.sum(METRIC_DANGLING_TOOL_CALLS)).toBe(2);
    expect(await metrics.sum(METRIC_TOOL_CALLS)).toBe(0);
    expect(error).not.toHaveBeenCalled();
    // The repairs themselves are reported; the handler's error is not ours to log.
    expect(warn).toHaveBeenCalledTimes(2);
    expect(warn.mock.calls.flat()).not.toContain(failure);
  });

  it("reaches the caller of a createAgent run as the cause of createAgent's MiddlewareError, counted once", async () => {
    const { metrics, middleware } = instrumented();
    const failure = new Error("provider refused");
    const agent = agentWith({
      model: scriptedModel(failure),
      tools: [searchTool()],
      middleware: [middleware],
    });
    const input = [
      humanTurn("h1", "find it"),
      aiToolCall("a0", { id: "call_1", name: "search", args: { query: "x" } }),
      humanTurn("h2", "go on"),
    ];

    const caught = await agent.invoke({ messages: input }, onThread("t1")).then(
      () => undefined,
      (error: unknown) => error,
    );

    expect(caught).toBeInstanceOf(MiddlewareError);
    expect((caught as Error).cause).toBe(failure);
    expect((caught as Error).message).toBe("provider refused");
    expect(await metrics.sum(METRIC_MODEL_CALLS)).toBe(1);
    expect(await metrics.sum(METRIC_DANGLING_TOOL_CALLS)).toBe(1);
  });
});
