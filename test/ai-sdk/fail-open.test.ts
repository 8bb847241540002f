/**
 * The AI SDK middleware fails open: the engine failing (replaced through `vi.mock` by one that
 * throws), a meter, tracer or logger that throws, a prompt it cannot read, an answer it cannot
 * count. In each the model call goes on with the params, the answer or the stream as they came,
 * the failure is logged, and the call is counted `failed_open` where it could not be inspected.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { toolCallRepairMiddleware } from "../../src/stacks/ai-sdk.js";
import {
  ATTR_OUTCOME,
  METRIC_MODEL_CALLS,
  METRIC_TOOL_CALLS,
  OUTCOME_VALUE_FAILED_OPEN,
} from "../../src/telemetry/semconv.js";
import {
  answer,
  type CallOptions,
  danglingPrompt,
  deepFreeze,
  instrumented,
  madeCall,
  orphanPrompt,
  paramsOf,
  streamOf,
  user,
} from "./prompts.js";

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

const FAILED_OPEN = { [ATTR_OUTCOME]: OUTCOME_VALUE_FAILED_OPEN };
const MODEL = { provider: "openai.chat", modelId: "gpt-4.1" };

/** A logger that keeps what the library logged at `error`. */
function errorLogger() {
  return { warn: vi.fn(), error: vi.fn() };
}

describe("when the engine fails", () => {
  it("passes the very same params on, the model answers, and the call counts as failed_open", async () => {
    engine.fault = new Error("engine bug");
    const logger = errorLogger();
    const { metrics, model, inner } = instrumented({ logger });
    const params = deepFreeze(paramsOf(orphanPrompt()));
    const result = await model.doGenerate(params);
    expect(result.content).toEqual([{ type: "text", text: "All set." }]);
    expect(inner.doGenerateCalls[0]?.prompt).toBe(params.prompt);
    expect(await metrics.sum(METRIC_MODEL_CALLS, FAILED_OPEN)).toBe(1);
    expect(logger.error).toHaveBeenCalledWith(
      "[tool-call-resilience] Tool-call repair failed; passing the request on unchanged",
      { error: engine.fault },
    );
  });

  it("still counts the answer's tool calls, generated or streamed", async () => {
    engine.fault = new Error("engine bug");
    const { metrics, model, scripted } = instrumented();
    scripted.next = () => answer(madeCall("c1"));
    scripted.stream = () => streamOf(madeCall("c2"));
    await model.doGenerate(paramsOf(danglingPrompt()));
    for await (const _ of (await model.doStream(paramsOf(danglingPrompt()))).stream);
    expect(await metrics.sum(METRIC_TOOL_CALLS)).toBe(2);
    expect(await metrics.sum(METRIC_MODEL_CALLS, FAILED_OPEN)).toBe(2);
  });

  it("hands repairMessages' history back as it is", () => {
    engine.fault = new Error("engine bug");
    const { middleware } = instrumented();
    const history = [{ role: "assistant", content: [{ type: "tool-call", toolCallId: "a" }] }];
    expect(middleware.repairMessages(history).messages).toBe(history);
  });
});

describe("when the telemetry fails", () => {
  it("goes on with the repaired call when the meter and the tracer providers throw, and logs it", async () => {
    const logger = errorLogger();
    const throwing = () => {
      throw new Error("telemetry down");
    };
    const { model, inner } = instrumented({
      logger,
      meterProvider: { getMeter: throwing },
      tracerProvider: { getTracer: throwing },
    });
    await model.doGenerate(paramsOf(orphanPrompt(), "t-1"));
    expect(inner.doGenerateCalls[0]?.prompt).toEqual(orphanPrompt().slice(1));
    expect(logger.error).toHaveBeenCalledWith(
      expect.stringContaining("OpenTelemetry metrics failed; the model call goes on"),
      expect.anything(),
    );
  });

  it("goes on when the logger throws", async () => {
    const logger = {
      warn: () => {
        throw new Error("logger down");
      },
    };
    const { model, inner } = instrumented({ logger });
    await model.doGenerate(paramsOf(danglingPrompt()));
    expect(inner.doGenerateCalls[0]?.prompt).toHaveLength(4);
  });
});

describe("a prompt it cannot read", () => {
  it("is passed on as it is, logged and counted failed_open, when a message throws as it is read", async () => {
    const logger = errorLogger();
    const { metrics, model, inner } = instrumented({ logger });
    const hostile = {
      get role(): string {
        throw new Error("no reading me");
      },
    };
    const params = paramsOf([user("hi"), hostile as never]);
    await model.doGenerate(params);
    expect(inner.doGenerateCalls[0]).toBe(params);
    expect(await metrics.sum(METRIC_MODEL_CALLS, FAILED_OPEN)).toBe(1);
    expect(logger.error).toHaveBeenCalledWith(
      expect.stringContaining(
        "AI SDK tool-call middleware failed; passing the messages on unchanged",
      ),
      expect.objectContaining({ error: expect.any(Error) }),
    );
  });

  it("is passed on as it is, and counted failed_open, when it is no list", async () => {
    const { metrics, middleware } = instrumented();
    for (const prompt of [undefined, "hi", { role: "user" }]) {
      const params = { prompt } as unknown as CallOptions;
      expect(await middleware.transformParams({ params, model: MODEL })).toBe(params);
    }
    const junk = [null, 42] as unknown as CallOptions[];
    for (const params of junk) {
      expect(await middleware.transformParams({ params, model: MODEL })).toBe(params);
    }
    expect(await metrics.sum(METRIC_MODEL_CALLS, FAILED_OPEN)).toBe(5);
  });

  it("reads no thread from params and no provider from a model it cannot read, and repairs", async () => {
    const { middleware } = instrumented();
    const params = new Proxy(paramsOf(danglingPrompt()), {
      get(target, key, receiver) {
        if (key === "providerOptions" || key === "headers") throw new Error("no reading me");
        return Reflect.get(target, key, receiver);
      },
    });
    const model = {
      get provider(): string {
        throw new Error("no reading me");
      },
      modelId: "gpt-4.1",
    };
    const sent = await middleware.transformParams({ params, model });
    expect(sent.prompt).toHaveLength(4);
  });

  it("passes params it cannot copy on as they are, and logs it", async () => {
    const logger = errorLogger();
    const { middleware } = instrumented({ logger });
    const params = paramsOf(danglingPrompt());
    Object.defineProperty(params, "tools", {
      enumerable: true,
      get() {
        throw new Error("no reading me");
      },
    });
    expect(await middleware.transformParams({ params, model: MODEL })).toBe(params);
    expect(logger.error).toHaveBeenCalledWith(
      "[tool-call-resilience] AI SDK tool-call middleware failed; passing the request on unchanged",
      expect.objectContaining({ error: expect.any(Error) }),
    );
  });
});

describe("an answer it cannot count", () => {
  it("comes back as it came, and the failure is logged", async () => {
    const logger = errorLogger();
    const { model, scripted } = instrumented({ logger });
    const made = answer(madeCall("c1"));
    Object.defineProperty(made, "content", {
      get() {
        throw new Error("no reading me");
      },
    });
    scripted.next = () => made;
    expect(await model.doGenerate(paramsOf([user("hi")]))).toBe(made);
    expect(logger.error).toHaveBeenCalledWith(
      "[tool-call-resilience] AI SDK tool-call middleware failed; passing the response on unchanged",
      expect.objectContaining({ error: expect.any(Error) }),
    );
  });

  it("comes back as it came when the stream cannot be observed", async () => {
    const { model, scripted } = instrumented();
    const unpipeable = { stream: { getReader: () => undefined } };
    scripted.stream = () => unpipeable as never;
    expect(await model.doStream(paramsOf([user("hi")]))).toBe(unpipeable);
  });
});

describe("the model's own errors", () => {
  it("pass through untouched, and no tool calls are counted", async () => {
    const refusal = new Error("400 Bad Request");
    const { metrics, model, scripted } = instrumented();
    scripted.next = () => {
      throw refusal;
    };
    scripted.stream = () => {
      throw refusal;
    };
    await expect(model.doGenerate(paramsOf([user("hi")]))).rejects.toBe(refusal);
    await expect(model.doStream(paramsOf([user("hi")]))).rejects.toBe(refusal);
    expect(await metrics.points(METRIC_TOOL_CALLS)).toEqual([]);
  });
});

describe("options", () => {
  it("are the one thing that throws, when the middleware is made", () => {
    expect(() => toolCallRepairMiddleware({ logger: "console" } as never)).toThrow(/logger/);
  });
});
