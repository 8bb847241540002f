/**
 * The middleware's hook driven directly, with hand-made requests and handlers: the contract of
 * wrapModelCall, fail-open and logging. The createAgent runs are in middleware.agent.test.ts.
 */
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { describe, expect, it, vi } from "vitest";
import { PLACEHOLDER_CATALOG } from "../src/core/locales.js";
import {
  type DanglingToolCallMiddlewareOptions,
  danglingToolCallMiddleware,
  syntheticReasonOf,
  ToolCallResilienceOptionsError,
} from "../src/index.js";
import { MIDDLEWARE_NAME } from "../src/middleware.js";
import { aiCalls, human, shapeOf, toolResult } from "./helpers/history.js";

interface FakeRequest {
  messages: BaseMessage[];
  runtime: { context?: unknown; configurable?: { thread_id?: string } };
  state: { messages: BaseMessage[] };
  model: unknown;
}

type Handler = (request: FakeRequest) => AIMessage | Promise<AIMessage>;

function requestWith(messages: BaseMessage[], runtime: FakeRequest["runtime"] = {}): FakeRequest {
  return { messages, runtime, state: { messages }, model: {} };
}

/** Calls the middleware's wrapModelCall as createAgent would. */
function wrap(options: DanglingToolCallMiddlewareOptions, request: FakeRequest, handler: Handler) {
  const middleware = danglingToolCallMiddleware({ logger: false, ...options });
  const hook = middleware.wrapModelCall as unknown as (
    request: FakeRequest,
    handler: Handler,
  ) => unknown;
  return hook(request, handler);
}

const answer = new AIMessage("fine");
const dangling = () => [human("find it"), aiCalls(["call_1", "search"]), human("go on")];

describe("danglingToolCallMiddleware", () => {
  it("registers under its own name with a wrapModelCall hook and no state hook by default", () => {
    const middleware = danglingToolCallMiddleware();
    expect(middleware.name).toBe(MIDDLEWARE_NAME);
    expect(typeof middleware.wrapModelCall).toBe("function");
    expect(middleware.beforeModel).toBeUndefined();
  });

  it("passes a clean request to the handler as the very same object", () => {
    const request = requestWith([human("hi"), aiCalls("call_1"), toolResult("call_1")]);
    const handler = vi.fn<Handler>(() => answer);
    expect(wrap({}, request, handler)).toBe(answer);
    expect(handler).toHaveBeenCalledTimes(1);
    expect(handler.mock.calls[0]?.[0]).toBe(request);
  });

  it("passes the repaired messages and keeps every other field of the request", () => {
    const request = requestWith(dangling(), { configurable: { thread_id: "t-1" } });
    const handler = vi.fn<Handler>(() => answer);
    wrap({}, request, handler);
    const passed = handler.mock.calls[0]?.[0] as FakeRequest;
    expect(passed).not.toBe(request);
    expect(shapeOf(passed.messages)).toEqual([
      "human",
      "ai(call_1)",
      "tool(call_1)",
      "ai",
      "human",
    ]);
    expect(syntheticReasonOf(passed.messages[3] as BaseMessage)).toBe("turn_order");
    expect(passed.runtime).toBe(request.runtime);
    expect(passed.state).toBe(request.state);
    expect(passed.model).toBe(request.model);
    expect(shapeOf(request.messages)).toEqual(["human", "ai(call_1)", "human"]);
  });

  it("gives the same result whether the handler returns a value or a promise", async () => {
    const seen: BaseMessage[][] = [];
    const syncHandler: Handler = (request) => {
      seen.push(request.messages);
      return answer;
    };
    const asyncHandler: Handler = async (request) => {
      seen.push(request.messages);
      return answer;
    };
    const fromSync = wrap({}, requestWith(dangling()), syncHandler);
    const fromAsync = wrap({}, requestWith(dangling()), asyncHandler);
    expect(fromSync).toBe(answer);
    expect(fromAsync).toBeInstanceOf(Promise);
    expect(await fromAsync).toBe(answer);
    expect(shapeOf(seen[0] ?? [])).toEqual(shapeOf(seen[1] ?? []));
  });

  it("lets an error from the handler propagate unchanged", async () => {
    const failure = new Error("provider refused");
    expect(() =>
      wrap({}, requestWith(dangling()), () => {
        throw failure;
      }),
    ).toThrow(failure);
    await expect(
      wrap({}, requestWith(dangling()), async () => {
        throw failure;
      }),
    ).rejects.toBe(failure);
  });

  it("rejects bad options at construction with a named error", () => {
    expect(() => danglingToolCallMiddleware({ window: -3 })).toThrow(
      ToolCallResilienceOptionsError,
    );
    expect(() => danglingToolCallMiddleware({ persist: "yes" as unknown as boolean })).toThrow(
      /persist/,
    );
    expect(() =>
      danglingToolCallMiddleware({ logger: { log() {} } as unknown as Console }),
    ).toThrow(/logger: expected false or an object with a warn/);
    expect(() => danglingToolCallMiddleware({ locale: "??" })).toThrow(/locale: expected a BCP 47/);
    expect(() =>
      danglingToolCallMiddleware({ logger: { warn() {}, error: 42 } as unknown as Console }),
    ).toThrow(/logger: expected false or an object with a warn/);
  });
});

describe("logging", () => {
  it("warns once per repaired model call with the count of placeholders and the other repairs", () => {
    const warn = vi.fn();
    const history = [
      aiCalls("call_1", "call_2", "call_3"),
      human("wait"),
      toolResult("call_2"),
      toolResult("ghost"),
      human("next"),
    ];
    wrap(
      { logger: { warn } },
      requestWith(history, { configurable: { thread_id: "t-9" } }),
      () => answer,
    );
    expect(warn).toHaveBeenCalledTimes(1);
    const [message, details] = warn.mock.calls[0] ?? [];
    expect(message).toBe(
      "[tool-call-resilience] Injecting 2 placeholder ToolMessage(s) for dangling tool calls; moved 1 misplaced tool result(s); dropped 1 orphan tool result(s); inserted 1 synthetic turn(s) the order of turns needs",
    );
    expect(details.threadId).toBe("t-9");
    expect(details.repairs).toHaveLength(5);
  });

  it("logs nothing for a clean request", () => {
    const warn = vi.fn();
    wrap({ logger: { warn } }, requestWith([human("hi")]), () => answer);
    expect(warn).not.toHaveBeenCalled();
  });

  it("defaults to console.warn, and logger: false silences it", () => {
    const spy = vi.spyOn(console, "warn").mockImplementation(() => {});
    try {
      const middleware = danglingToolCallMiddleware();
      const hook = middleware.wrapModelCall as unknown as (r: FakeRequest, h: Handler) => unknown;
      hook(requestWith(dangling()), () => answer);
      expect(spy).toHaveBeenCalledTimes(1);
      expect(spy.mock.calls[0]?.[0]).toMatch(
        /^\[tool-call-resilience\] Injecting 1 placeholder ToolMessage\(s\)/,
      );
      spy.mockClear();
      wrap({ logger: false }, requestWith(dangling()), () => answer);
      expect(spy).not.toHaveBeenCalled();
    } finally {
      spy.mockRestore();
    }
  });
});

describe("fail-open", () => {
  // An engine failure, and the logger fallbacks it uses, are in reliability/fail-open.test.ts.
  it("falls back to English when the locale resolver throws", () => {
    const warn = vi.fn();
    const handler = vi.fn<Handler>(() => answer);
    wrap(
      {
        logger: { warn },
        locale: () => {
          throw new Error("no locale");
        },
      },
      requestWith(dangling()),
      handler,
    );
    const placeholder = handler.mock.calls[0]?.[0].messages[2] as ToolMessage;
    expect(placeholder.content).toBe(PLACEHOLDER_CATALOG.en.interrupted);
    expect(warn.mock.calls[0]?.[0]).toMatch(/Locale resolver failed/);
  });

  it("falls back to English when the resolver returns a malformed tag", () => {
    const handler = vi.fn<Handler>(() => answer);
    wrap({ locale: () => "¿¿" }, requestWith(dangling()), handler);
    const placeholder = handler.mock.calls[0]?.[0].messages[2] as ToolMessage;
    expect(placeholder.content).toBe(PLACEHOLDER_CATALOG.en.interrupted);
  });
});

describe("locale", () => {
  it("reads the locale of each request through a resolver", () => {
    const handler = vi.fn<Handler>(() => answer);
    const options: DanglingToolCallMiddlewareOptions = {
      locale: (request) => (request.runtime?.context as { locale?: string } | undefined)?.locale,
    };
    wrap(options, requestWith(dangling(), { context: { locale: "ja-JP" } }), handler);
    wrap(options, requestWith(dangling(), { context: { locale: "pt-BR" } }), handler);
    const texts = handler.mock.calls.map((call) => (call[0].messages[2] as ToolMessage).content);
    expect(texts).toEqual([
      PLACEHOLDER_CATALOG.ja.interrupted,
      PLACEHOLDER_CATALOG["pt-BR"].interrupted,
    ]);
  });

  it("asks the resolver only when a placeholder needs its text", () => {
    const resolver = vi.fn(() => "ko");
    const handler = vi.fn<Handler>(() => answer);
    wrap(
      { locale: resolver },
      requestWith([human("hi"), aiCalls("call_1"), toolResult("call_1")]),
      handler,
    );
    wrap({ locale: resolver }, requestWith([human("hi"), toolResult("ghost")]), handler);
    expect(resolver).not.toHaveBeenCalled();
    wrap({ locale: resolver }, requestWith([aiCalls("call_1", "call_2")]), handler);
    expect(resolver).toHaveBeenCalledTimes(1);
  });

  it("takes a fixed tag", () => {
    const handler = vi.fn<Handler>(() => answer);
    wrap({ locale: "zh-Hant-TW" }, requestWith(dangling()), handler);
    const placeholder = handler.mock.calls[0]?.[0].messages[2];
    expect(placeholder).toBeInstanceOf(ToolMessage);
    expect((placeholder as ToolMessage).content).toBe(PLACEHOLDER_CATALOG["zh-TW"].interrupted);
  });
});
