/**
 * What the AI SDK middleware reports through OpenTelemetry, as the `createAgent` middleware does:
 * every model call and its outcome, labelled with the AI SDK model's provider and id, every
 * repair, each dangling call once per thread, the tool calls of generated and streamed answers,
 * a span per repair, and a `ModelMessage` repair made with `repairMessages` recorded with the
 * model call it was made for.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { repairModelMessages } from "../../src/formats/ai-sdk.js";
import { THREAD_ID_HEADER } from "../../src/stacks/ai-sdk.js";
import {
  ATTR_DANGLING_COUNT,
  ATTR_GEN_AI_AGENT_NAME,
  ATTR_GEN_AI_CONVERSATION_ID,
  ATTR_GEN_AI_PROVIDER_NAME,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_OUTCOME,
  ATTR_REASON,
  ATTR_REPAIR_KIND,
  ATTR_TOOL_CALL_IDS,
  METRIC_DANGLING_TOOL_CALLS,
  METRIC_MODEL_CALLS,
  METRIC_REPAIR_DURATION,
  METRIC_REPAIRS,
  METRIC_THREAD_RECENT_DANGLING_TOOL_CALLS,
  METRIC_TOOL_CALLS,
  SPAN_REPAIR_TOOL_CALLS,
} from "../../src/telemetry/semconv.js";
import {
  answer,
  assistant,
  call,
  danglingPrompt,
  instrumented,
  madeCall,
  paramsOf,
  result,
  streamOf,
  tool,
  user,
} from "./prompts.js";

const CLAUDE = { provider: "anthropic.messages", modelId: "claude-sonnet-4-5" };

afterEach(() => {
  vi.useRealTimers();
});

/** Reads a stream to its end. */
async function drain(stream: ReadableStream<unknown>): Promise<void> {
  for await (const _ of stream);
}

describe("model calls", () => {
  it("counts a clean call as clean, under the model's provider and id, and creates no span", async () => {
    const { metrics, tracing, model } = instrumented({}, CLAUDE);
    await model.doGenerate(paramsOf([user("hi")], "t-1"));
    expect(await metrics.points(METRIC_MODEL_CALLS)).toEqual([
      {
        attributes: {
          [ATTR_GEN_AI_PROVIDER_NAME]: "anthropic",
          [ATTR_GEN_AI_REQUEST_MODEL]: "claude-sonnet-4-5",
          [ATTR_GEN_AI_AGENT_NAME]: "unknown",
          [ATTR_OUTCOME]: "clean",
        },
        value: 1,
      },
    ]);
    expect(tracing.spans(SPAN_REPAIR_TOOL_CALLS)).toEqual([]);
  });

  it("counts a repaired call as repaired, with every repair by kind", async () => {
    const { metrics, model } = instrumented();
    // The result of `a` written after the user's message, beside a result of a call cut off.
    const prompt = [
      assistant(call("a")),
      user("hurry"),
      tool(result("a"), result("call_ghost")),
      user("and?"),
    ];
    await model.doGenerate(paramsOf(prompt));
    expect(await metrics.sum(METRIC_MODEL_CALLS, { [ATTR_OUTCOME]: "repaired" })).toBe(1);
    const repairs = await metrics.points(METRIC_REPAIRS);
    expect(
      repairs.map((point) => [point.attributes[ATTR_REPAIR_KIND], point.value]).sort(),
    ).toEqual([
      ["orphan_dropped", 1],
      ["result_moved", 1],
    ]);
    expect(await metrics.points(METRIC_DANGLING_TOOL_CALLS)).toEqual([]);
  });

  it("records the provider and model names given as options instead", async () => {
    const { metrics, model } = instrumented({ providerName: "aws.bedrock", modelName: "claude" });
    await model.doGenerate(paramsOf([user("hi")]));
    const [point] = await metrics.points(METRIC_MODEL_CALLS);
    expect(point?.attributes).toMatchObject({
      [ATTR_GEN_AI_PROVIDER_NAME]: "aws.bedrock",
      [ATTR_GEN_AI_REQUEST_MODEL]: "claude",
    });
  });

  it("counts a call whose model fails, and no tool calls for it", async () => {
    const { metrics, model, scripted } = instrumented();
    scripted.next = () => {
      throw new Error("503");
    };
    await expect(model.doGenerate(paramsOf([user("hi")]))).rejects.toThrow("503");
    expect(await metrics.sum(METRIC_MODEL_CALLS)).toBe(1);
    expect(await metrics.points(METRIC_TOOL_CALLS)).toEqual([]);
  });
});

describe("dangling calls", () => {
  it("counts a dangling call once although every later call of its thread repairs it again", async () => {
    const { metrics, model } = instrumented({}, CLAUDE);
    for (let turn = 0; turn < 3; turn++) await model.doGenerate(paramsOf(danglingPrompt(), "t-1"));
    expect(await metrics.points(METRIC_DANGLING_TOOL_CALLS)).toEqual([
      {
        attributes: {
          [ATTR_GEN_AI_PROVIDER_NAME]: "anthropic",
          [ATTR_GEN_AI_REQUEST_MODEL]: "claude-sonnet-4-5",
          [ATTR_GEN_AI_TOOL_NAME]: "search",
          [ATTR_REASON]: "interrupted",
        },
        value: 1,
      },
    ]);
    expect(await metrics.sum(METRIC_MODEL_CALLS, { [ATTR_OUTCOME]: "repaired" })).toBe(3);
    expect(
      await metrics.sum(METRIC_THREAD_RECENT_DANGLING_TOOL_CALLS, {
        [ATTR_GEN_AI_CONVERSATION_ID]: "t-1",
      }),
    ).toBe(1);
  });

  it("counts the same call once in each thread, whether named in providerOptions or the header", async () => {
    const { metrics, model } = instrumented();
    await model.doGenerate(paramsOf(danglingPrompt(), "t-1"));
    await model.doGenerate({
      ...paramsOf(danglingPrompt()),
      headers: { [THREAD_ID_HEADER]: "t-2" },
    });
    await model.doGenerate({
      ...paramsOf(danglingPrompt()),
      headers: { [THREAD_ID_HEADER]: "t-2" },
    });
    expect(await metrics.sum(METRIC_DANGLING_TOOL_CALLS)).toBe(2);
    for (const thread of ["t-1", "t-2"]) {
      expect(
        await metrics.sum(METRIC_THREAD_RECENT_DANGLING_TOOL_CALLS, {
          [ATTR_GEN_AI_CONVERSATION_ID]: thread,
        }),
      ).toBe(1);
    }
  });

  it("counts a call of a tool the request does not offer as _OTHER", async () => {
    const { metrics, model } = instrumented();
    await model.doGenerate(paramsOf([assistant(call("x", "deploy")), user("?")], "t-1"));
    expect(
      await metrics.sum(METRIC_DANGLING_TOOL_CALLS, { [ATTR_GEN_AI_TOOL_NAME]: "_OTHER" }),
    ).toBe(1);
  });
});

describe("tool calls issued", () => {
  it("counts each call of a generated answer by tool, but the provider's own", async () => {
    const { metrics, model, scripted } = instrumented();
    scripted.next = () =>
      answer(madeCall("c1"), madeCall("c2", "weather"), madeCall("c3"), {
        ...madeCall("ws", "web_search"),
        providerExecuted: true,
      });
    await model.doGenerate(paramsOf([user("go")]));
    expect(await metrics.sum(METRIC_TOOL_CALLS, { [ATTR_GEN_AI_TOOL_NAME]: "search" })).toBe(2);
    expect(await metrics.sum(METRIC_TOOL_CALLS, { [ATTR_GEN_AI_TOOL_NAME]: "weather" })).toBe(1);
    expect(await metrics.sum(METRIC_TOOL_CALLS)).toBe(3);
  });

  it("counts a streamed answer's calls once the stream has ended, and not before", async () => {
    const { metrics, model, scripted } = instrumented();
    scripted.stream = () => streamOf(madeCall("c1"), madeCall("c2", "weather"));
    const { stream } = await model.doStream(paramsOf([user("go")]));
    const reader = stream.getReader();
    await reader.read();
    await reader.read();
    expect(await metrics.points(METRIC_TOOL_CALLS)).toEqual([]);
    while (!(await reader.read()).done);
    expect(await metrics.sum(METRIC_TOOL_CALLS)).toBe(2);
  });

  it("counts none for a stream that fails, carries an error part, or is cancelled", async () => {
    const { metrics, model, scripted } = instrumented();
    scripted.stream = () => ({
      stream: new ReadableStream({
        start(controller) {
          controller.enqueue(madeCall("c1"));
          controller.error(new Error("connection reset"));
        },
      }),
    });
    const failing = await model.doStream(paramsOf([user("go")]));
    await expect(drain(failing.stream)).rejects.toThrow("connection reset");

    scripted.stream = () =>
      streamOf(madeCall("c2"), { type: "error", error: new Error("overloaded") });
    await drain((await model.doStream(paramsOf([user("go")]))).stream);

    scripted.stream = () => streamOf(madeCall("c3"), madeCall("c4"));
    const cancelled = (await model.doStream(paramsOf([user("go")]))).stream.getReader();
    await cancelled.read();
    await cancelled.cancel("user left");

    expect(await metrics.points(METRIC_TOOL_CALLS)).toEqual([]);
    expect(await metrics.sum(METRIC_MODEL_CALLS)).toBe(3);
  });
});

describe("spans", () => {
  it("creates one repair_tool_calls span per repaired call, with the thread and the model", async () => {
    const { tracing, model } = instrumented({}, CLAUDE);
    await model.doGenerate(paramsOf(danglingPrompt(), "t-span"));
    const [span, ...others] = tracing.spans(SPAN_REPAIR_TOOL_CALLS);
    expect(others).toEqual([]);
    expect(span?.attributes).toMatchObject({
      [ATTR_GEN_AI_PROVIDER_NAME]: "anthropic",
      [ATTR_GEN_AI_REQUEST_MODEL]: "claude-sonnet-4-5",
      [ATTR_GEN_AI_CONVERSATION_ID]: "t-span",
      [ATTR_DANGLING_COUNT]: 1,
      [ATTR_TOOL_CALL_IDS]: ["call_1"],
    });
  });
});

describe("a ModelMessage history repaired with repairMessages", () => {
  const interrupted = () => [
    { role: "user", content: "find it" },
    {
      role: "assistant",
      content: [{ type: "tool-call", toolCallId: "call_1", toolName: "search", input: {} }],
    },
    { role: "user", content: "go on" },
  ];

  it("is recorded with the thread's next model call: one model call, repaired, its call counted once", async () => {
    const { metrics, tracing, middleware, model } = instrumented({}, CLAUDE);
    const { messages } = middleware.repairMessages(interrupted(), { threadId: "t-1" });
    expect(messages[2]).toMatchObject({ role: "tool" });
    expect(await metrics.points(METRIC_MODEL_CALLS)).toEqual([]);
    // The prompt generateText would make of the repaired messages: clean now.
    await model.doGenerate(paramsOf([user("find it")], "t-1"));
    expect(await metrics.points(METRIC_MODEL_CALLS)).toEqual([
      expect.objectContaining({
        attributes: expect.objectContaining({
          [ATTR_GEN_AI_PROVIDER_NAME]: "anthropic",
          [ATTR_OUTCOME]: "repaired",
        }),
        value: 1,
      }),
    ]);
    expect(
      await metrics.sum(METRIC_DANGLING_TOOL_CALLS, {
        [ATTR_GEN_AI_REQUEST_MODEL]: "claude-sonnet-4-5",
        [ATTR_GEN_AI_TOOL_NAME]: "search",
      }),
    ).toBe(1);
    expect(tracing.spans(SPAN_REPAIR_TOOL_CALLS)).toHaveLength(1);
    // Another thread's call does not take it; the next call of the thread is clean.
    middleware.repairMessages(interrupted(), { threadId: "t-1" });
    await model.doGenerate(paramsOf([user("find it")], "t-other"));
    await model.doGenerate(paramsOf([user("find it")], "t-1"));
    expect(await metrics.sum(METRIC_DANGLING_TOOL_CALLS)).toBe(1);
    expect(await metrics.sum(METRIC_MODEL_CALLS, { [ATTR_OUTCOME]: "repaired" })).toBe(2);
    expect(await metrics.sum(METRIC_MODEL_CALLS, { [ATTR_OUTCOME]: "clean" })).toBe(1);
  });

  it("adds nothing to the model call when it needed no repair", async () => {
    const { metrics, middleware, model } = instrumented();
    const sound = [{ role: "user", content: "hi" }];
    expect(middleware.repairMessages(sound, { threadId: "t-1" }).messages).toBe(sound);
    await model.doGenerate(paramsOf([user("hi")], "t-1"));
    expect(await metrics.sum(METRIC_MODEL_CALLS, { [ATTR_OUTCOME]: "clean" })).toBe(1);
    const [duration] = await metrics.points(METRIC_REPAIR_DURATION);
    expect(duration?.value).toMatchObject({ count: 1 });
  });

  it("is recorded without a model call when none comes within 30 s", async () => {
    vi.useFakeTimers();
    const { metrics, middleware } = instrumented();
    middleware.repairMessages(interrupted(), { threadId: "t-lost" });
    await vi.advanceTimersByTimeAsync(29_000);
    expect(await metrics.points(METRIC_DANGLING_TOOL_CALLS)).toEqual([]);
    await vi.advanceTimersByTimeAsync(2_000);
    expect(await metrics.sum(METRIC_DANGLING_TOOL_CALLS)).toBe(1);
    expect(await metrics.points(METRIC_MODEL_CALLS)).toEqual([]);
  });

  it("where repairModelMessages records a model call of its own: two for one", async () => {
    const { metrics, model } = instrumented();
    repairModelMessages(interrupted(), { logger: false, meterProvider: metrics.meterProvider });
    await model.doGenerate(paramsOf([user("find it")], "t-1"));
    expect(await metrics.sum(METRIC_MODEL_CALLS)).toBe(2);
  });
});
