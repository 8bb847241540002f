/**
 * The AI SDK's retries (`maxRetries`): `generateText` and `streamText` call the wrapped model again
 * after a retryable error, and the middleware's `transformParams` with it, with the prompt built
 * for the step. A retried call is one model call: repaired, logged and recorded once, its answer
 * counted when an attempt succeeds. A call after an answered one is a model call of its own.
 */
import { APICallError, generateText, type ModelMessage, streamText } from "ai";
import { describe, expect, it, vi } from "vitest";
import {
  ATTR_OUTCOME,
  METRIC_MODEL_CALLS,
  METRIC_REPAIRS,
  METRIC_TOOL_CALLS,
  SPAN_REPAIR_TOOL_CALLS,
} from "../../src/telemetry/semconv.js";
import { answer, instrumented, madeCall, paramsOf, streamOf, user } from "./prompts.js";

/** The error of an overloaded provider, which the AI SDK retries at once (`retry-after-ms`). */
const overloaded = () =>
  new APICallError({
    message: "Overloaded",
    url: "https://api.openai.com/v1/responses",
    requestBodyValues: {},
    statusCode: 529,
    responseHeaders: { "retry-after-ms": "0" },
    isRetryable: true,
  });

/** A history whose result answers a call cut off before it: the repair drops it. */
const trimmedHistory = (): ModelMessage[] => [
  {
    role: "tool",
    content: [
      {
        type: "tool-result",
        toolCallId: "call_ghost",
        toolName: "search",
        output: { type: "text", value: "three hits" },
      },
    ],
  },
  { role: "user", content: "Summarize them." },
];

/** Fails the first `failures` attempts with a retryable error, then answers. */
function failingFirst<T>(failures: number, then: () => T): () => T {
  let attempts = 0;
  return () => {
    attempts++;
    if (attempts <= failures) throw overloaded();
    return then();
  };
}

describe("a call the AI SDK retries", () => {
  it("is one model call when its first attempt fails and the retry answers", async () => {
    const warn = vi.fn();
    const { metrics, tracing, model, inner, scripted } = instrumented({ logger: { warn } });
    scripted.next = failingFirst(1, () => answer(madeCall("c1")));
    const { toolCalls } = await generateText({ model, messages: trimmedHistory(), maxRetries: 1 });
    expect(toolCalls.map((made) => made.toolCallId)).toEqual(["c1"]);

    const [first, retry, ...more] = inner.doGenerateCalls;
    expect(more).toEqual([]);
    // Both attempts went with the repaired prompt: the retry with the very same one.
    expect(JSON.stringify(first?.prompt)).not.toContain("call_ghost");
    expect(retry?.prompt).toBe(first?.prompt);
    expect(await metrics.points(METRIC_MODEL_CALLS)).toEqual([
      expect.objectContaining({
        attributes: expect.objectContaining({ [ATTR_OUTCOME]: "repaired" }),
        value: 1,
      }),
    ]);
    expect(await metrics.sum(METRIC_REPAIRS)).toBe(1);
    expect(await metrics.sum(METRIC_TOOL_CALLS)).toBe(1);
    expect(tracing.spans(SPAN_REPAIR_TOOL_CALLS)).toHaveLength(1);
    expect(warn).toHaveBeenCalledTimes(1);
  });

  it("is one model call, with no tool calls, when every attempt fails", async () => {
    const { metrics, inner, model, scripted } = instrumented();
    scripted.next = failingFirst(2, () => answer(madeCall("c1")));
    await expect(
      generateText({ model, messages: trimmedHistory(), maxRetries: 1 }),
    ).rejects.toThrow("Overloaded");
    expect(inner.doGenerateCalls).toHaveLength(2);
    expect(await metrics.sum(METRIC_MODEL_CALLS)).toBe(1);
    expect(await metrics.points(METRIC_TOOL_CALLS)).toEqual([]);
  });

  it("is one model call when streamed, its retried stream's calls counted once", async () => {
    const { metrics, inner, model, scripted } = instrumented();
    scripted.stream = failingFirst(1, () => streamOf(madeCall("c1"), madeCall("c2", "weather")));
    const result = streamText({ model, messages: trimmedHistory(), maxRetries: 1 });
    expect((await result.toolCalls).map((made) => made.toolCallId)).toEqual(["c1", "c2"]);
    expect(inner.doStreamCalls).toHaveLength(2);
    expect(await metrics.sum(METRIC_MODEL_CALLS)).toBe(1);
    expect(await metrics.sum(METRIC_REPAIRS)).toBe(1);
    expect(await metrics.sum(METRIC_TOOL_CALLS)).toBe(2);
  });
});

describe("a call after an answered one", () => {
  it("is a model call of its own, though it sends the same prompt", async () => {
    const { metrics, model, scripted } = instrumented();
    scripted.next = () => answer(madeCall("c1"));
    const params = paramsOf([user("go")]);
    await model.doGenerate(params);
    await model.doGenerate({ ...params });
    expect(await metrics.sum(METRIC_MODEL_CALLS)).toBe(2);
    expect(await metrics.sum(METRIC_TOOL_CALLS)).toBe(2);
  });
});
