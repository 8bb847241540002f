/**
 * What toolCallRepairInputFilter records through OpenTelemetry in real runs of the OpenAI Agents
 * SDK against the strict local server: each model call with its provider, model, agent and
 * outcome; the tool calls the model made, counted once each when they first reach a model call's
 * input (the filter never sees the answer); each dangling call once per thread, however many
 * model calls repair it; the thread from the option or from the run's trace group; and nothing
 * that can break a run.
 */
import {
  Agent,
  type AgentInputItem,
  type Computer,
  computerTool,
  OpenAIResponsesModel,
  Runner,
  setTraceProcessors,
  setTracingDisabled,
  tool,
} from "@openai/agents";
import OpenAI from "openai";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { COMPUTER_TOOL_NAME } from "../../src/core/wire-targets.js";
import { repairResponsesInput } from "../../src/formats/index.js";
import {
  type ToolCallRepairInputFilterOptions,
  toolCallRepairInputFilter,
} from "../../src/stacks/openai-agents.js";
import {
  ATTR_GEN_AI_AGENT_NAME,
  ATTR_GEN_AI_CONVERSATION_ID,
  ATTR_GEN_AI_PROVIDER_NAME,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_OUTCOME,
  ATTR_REPAIR_KIND,
  METRIC_DANGLING_TOOL_CALLS,
  METRIC_MODEL_CALLS,
  METRIC_REPAIRS,
  METRIC_THREAD_RECENT_DANGLING_TOOL_CALLS,
  METRIC_TOOL_CALLS,
  SPAN_REPAIR_TOOL_CALLS,
} from "../../src/telemetry/semconv.js";
import {
  COMPLETION_TEXT,
  type StrictProviderServer,
  startStrictProviderServer,
} from "../helpers/strict-provider-server.js";
import { metricsHarness, tracingHarness } from "../helpers/telemetry.js";
import { computerCall, functionCall, functionResult, providerFor, shellCall, user } from "./sdk.js";

let server: StrictProviderServer;
beforeAll(async () => {
  server = await startStrictProviderServer();
});
afterAll(() => server.close());

const harnesses: { shutdown: () => Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(harnesses.splice(0).map((harness) => harness.shutdown()));
  setTracingDisabled(true);
});

function recorded() {
  const metrics = metricsHarness();
  const tracing = tracingHarness();
  harnesses.push(metrics, tracing);
  return { metrics, tracing };
}

const lookup = tool({
  name: "lookup",
  description: "Looks an order up.",
  parameters: z.object({ order: z.string() }),
  execute: async ({ order }) => `order ${order}: shipped`,
});
const refund = tool({
  name: "refund",
  description: "Refunds an order.",
  parameters: z.object({ order: z.string() }),
  needsApproval: true,
  execute: async ({ order }) => `refunded ${order}`,
});
const billing = new Agent({ name: "billing", model: "gpt-4.1-mini" });
const support = new Agent({
  name: "support",
  instructions: "Help.",
  model: "gpt-4.1",
  tools: [lookup, refund],
  handoffs: [billing],
});

const threadOfContext: ToolCallRepairInputFilterOptions["threadId"] = ({ context }) =>
  (context as { threadId?: string } | undefined)?.threadId;

const runnerWith = (options: ToolCallRepairInputFilterOptions, groupId?: string) =>
  new Runner({
    modelProvider: providerFor(server),
    callModelInputFilter: toolCallRepairInputFilter({ logger: false, ...options }),
    groupId,
  });

/**
 * A conversation the application keeps itself, whose refund call was left waiting for an approval
 * that never came: its items, with the user's next message.
 */
async function pendingRefund(callId: string): Promise<AgentInputItem[]> {
  server.script("responses", { calls: [{ id: callId, name: "refund", args: { order: "42" } }] });
  const first = await new Runner({ modelProvider: providerFor(server) }).run(
    support,
    "Refund order 42",
  );
  expect(first.interruptions).toHaveLength(1);
  const calls = first.newItems
    .filter((item) => item.type === "tool_call_item")
    .map((item) => item.rawItem as AgentInputItem);
  return [user("Refund order 42"), ...calls, user("Never mind. Anything else?")];
}

describe("model calls and the tool calls the model made", () => {
  it("records each model call with the provider, the agent's model and its name", async () => {
    const { metrics } = recorded();
    const runner = runnerWith({ meterProvider: metrics.meterProvider, threadId: threadOfContext });
    server.script("responses", {
      calls: [{ id: "call_l1", name: "lookup", args: { order: "1" } }],
    });
    await runner.run(support, "Where is order 1?", { context: { threadId: "thread-1" } });
    expect(await metrics.points(METRIC_MODEL_CALLS)).toEqual([
      {
        attributes: {
          [ATTR_GEN_AI_PROVIDER_NAME]: "openai",
          [ATTR_GEN_AI_REQUEST_MODEL]: "gpt-4.1",
          [ATTR_GEN_AI_AGENT_NAME]: "support",
          [ATTR_OUTCOME]: "clean",
        },
        value: 2,
      },
    ]);
  });

  it("counts each call once, when it first reaches a model call's input, per thread", async () => {
    const { metrics } = recorded();
    const runner = runnerWith({ meterProvider: metrics.meterProvider, threadId: threadOfContext });
    const lookups = () =>
      metrics.sum(METRIC_TOOL_CALLS, {
        [ATTR_GEN_AI_TOOL_NAME]: "lookup",
        [ATTR_GEN_AI_REQUEST_MODEL]: "gpt-4.1",
      });
    server.script("responses", {
      calls: [{ id: "call_l2", name: "lookup", args: { order: "2" } }],
    });
    const first = await runner.run(support, "Where is order 2?", {
      context: { threadId: "thread-1" },
    });
    // Seen by the run's second model call, which carried the call and its result.
    expect(await lookups()).toBe(1);

    await runner.run(support, [...first.history, user("Thanks")], {
      context: { threadId: "thread-1" },
    });
    expect(await lookups()).toBe(1);

    // A conversation started from a copy of that one is a thread of its own.
    await runner.run(support, [...first.history, user("Thanks")], {
      context: { threadId: "thread-2" },
    });
    expect(await lookups()).toBe(2);
  });

  it("labels calls by the agent's tools and handoffs, others as _OTHER", async () => {
    const { metrics } = recorded();
    const filter = toolCallRepairInputFilter({
      logger: false,
      meterProvider: metrics.meterProvider,
    });
    const input = [
      user("a"),
      functionCall("call_h1", "transfer_to_billing"),
      functionCall("call_u1", "unknown_tool"),
      functionResult("call_h1", "transfer_to_billing"),
      functionResult("call_u1", "unknown_tool"),
    ];
    filter({ modelData: { input }, agent: support, context: undefined });
    const byTool = (name: string) =>
      metrics.sum(METRIC_TOOL_CALLS, { [ATTR_GEN_AI_TOOL_NAME]: name });
    expect(await byTool("transfer_to_billing")).toBe(1);
    expect(await byTool("_OTHER")).toBe(1);
  });

  it("labels a computer call as repairResponsesInput does, by the one name both give it: never _OTHER", async () => {
    const { metrics } = recorded();
    const options = { logger: false as const, meterProvider: metrics.meterProvider };
    const screen = { screenshot: () => "", click: () => {} } as unknown as Computer;
    // The SDK's computer tool is named `computer_use_preview` unless given a name: any name will do.
    for (const name of [undefined, "browser"]) {
      const agent = new Agent({
        name: "ops",
        model: "gpt-5",
        tools: [computerTool({ computer: screen, name })],
      });
      const input = [user("Click it"), computerCall(`call_${name}`), user("Well?")];
      toolCallRepairInputFilter(options)({ modelData: { input }, agent, context: undefined });
    }
    // The Responses API offers a computer tool by its type alone, which the SDK sends.
    const sent = [{ type: "computer" }];
    const item = { type: "computer_call", call_id: "call_r", action: { type: "screenshot" } };
    repairResponsesInput([user("Click it"), item, user("Well?")], options, { tools: sent });
    const byTool = (name: string) =>
      metrics.sum(METRIC_DANGLING_TOOL_CALLS, { [ATTR_GEN_AI_TOOL_NAME]: name });
    expect(await byTool(COMPUTER_TOOL_NAME)).toBe(3);
    expect(await byTool("_OTHER")).toBe(0);
  });

  it("counts a call once by its type and callId, when a later input has a call of another type with its id", async () => {
    const { metrics } = recorded();
    const filter = toolCallRepairInputFilter({
      logger: false,
      meterProvider: metrics.meterProvider,
    });
    const first = [user("a"), functionCall("call_1", "lookup"), functionResult("call_1", "lookup")];
    const shellOutput = {
      type: "shell_call_output",
      callId: "call_1",
      output: [{ stdout: "", stderr: "", outcome: { type: "exit", exitCode: 0 } }],
    } as AgentInputItem;
    const second = [...first, user("b"), shellCall("call_1"), shellOutput];
    for (const input of [first, second]) {
      filter({ modelData: { input }, agent: support, context: undefined });
    }
    const byTool = (name: string) =>
      metrics.sum(METRIC_TOOL_CALLS, { [ATTR_GEN_AI_TOOL_NAME]: name });
    expect(await byTool("lookup")).toBe(1);
    expect(await metrics.sum(METRIC_TOOL_CALLS)).toBe(2);
  });

  it("reads the model a Model object holds; the run's default model is the modelName option's", async () => {
    const { metrics } = recorded();
    const client = new OpenAI({ baseURL: server.openAIBaseURL, apiKey: "test" });
    const withModel = new Agent({ name: "a", model: new OpenAIResponsesModel(client, "gpt-5") });
    const withDefault = new Agent({ name: "b" });
    const input = [user("hi")];
    const options = { logger: false as const, meterProvider: metrics.meterProvider };
    toolCallRepairInputFilter(options)({ modelData: { input }, agent: withModel, context: 1 });
    toolCallRepairInputFilter(options)({ modelData: { input }, agent: withDefault, context: 1 });
    toolCallRepairInputFilter({ ...options, modelName: "gpt-4.1-nano" })({
      modelData: { input },
      agent: withDefault,
      context: 1,
    });
    const byModel = (model: string) =>
      metrics.sum(METRIC_MODEL_CALLS, { [ATTR_GEN_AI_REQUEST_MODEL]: model });
    expect(await byModel("gpt-5")).toBe(1);
    expect(await byModel("unknown")).toBe(1);
    expect(await byModel("gpt-4.1-nano")).toBe(1);
  });
});

describe("dangling calls", () => {
  it("counts a dangling call once per thread, however many model calls repair it", async () => {
    const { metrics, tracing } = recorded();
    const runner = runnerWith({
      meterProvider: metrics.meterProvider,
      tracerProvider: tracing.tracerProvider,
      threadId: "thread-7",
    });
    const stored = await pendingRefund("call_d1");
    const second = await runner.run(support, stored);
    expect(second.finalOutput).toBe(COMPLETION_TEXT);
    // The application keeps its items: the call is still unanswered on the thread's next call.
    await runner.run(support, [...second.history, user("Bye")]);

    const refunds = { [ATTR_GEN_AI_TOOL_NAME]: "refund", [ATTR_GEN_AI_REQUEST_MODEL]: "gpt-4.1" };
    expect(await metrics.sum(METRIC_DANGLING_TOOL_CALLS, refunds)).toBe(1);
    expect(await metrics.sum(METRIC_TOOL_CALLS, refunds)).toBe(1);
    expect(await metrics.sum(METRIC_REPAIRS, { [ATTR_REPAIR_KIND]: "placeholder_inserted" })).toBe(
      2,
    );
    expect(await metrics.sum(METRIC_MODEL_CALLS, { [ATTR_OUTCOME]: "repaired" })).toBe(2);
    expect(
      await metrics.sum(METRIC_THREAD_RECENT_DANGLING_TOOL_CALLS, {
        [ATTR_GEN_AI_CONVERSATION_ID]: "thread-7",
      }),
    ).toBe(1);
    const spans = tracing.spans(SPAN_REPAIR_TOOL_CALLS);
    expect(spans).toHaveLength(2);
    expect(spans[0]?.attributes).toMatchObject({
      [ATTR_GEN_AI_CONVERSATION_ID]: "thread-7",
      [ATTR_GEN_AI_AGENT_NAME]: "support",
    });
  });

  it("takes the thread from the run's trace group when tracing is on, and has none when it is off", async () => {
    const { metrics } = recorded();
    const byThread = (id: string) =>
      metrics.sum(METRIC_THREAD_RECENT_DANGLING_TOOL_CALLS, { [ATTR_GEN_AI_CONVERSATION_ID]: id });
    // Tracing on, with no processor: nothing is exported.
    setTraceProcessors([]);
    setTracingDisabled(false);
    const stored = await pendingRefund("call_g1");
    await runnerWith({ meterProvider: metrics.meterProvider }, "group-7").run(support, stored);
    expect(await byThread("group-7")).toBe(1);

    setTracingDisabled(true);
    const again = await pendingRefund("call_g2");
    await runnerWith({ meterProvider: metrics.meterProvider }, "group-8").run(support, again);
    expect(await byThread("group-8")).toBe(0);
    expect(await metrics.sum(METRIC_DANGLING_TOOL_CALLS)).toBe(2);
  });
});

describe("nothing of the telemetry breaks a run", () => {
  it("a threadId function that throws is logged once; the calls go on without a thread", async () => {
    const { metrics } = recorded();
    const logger = { warn: vi.fn(), error: vi.fn() };
    const runner = new Runner({
      modelProvider: providerFor(server),
      callModelInputFilter: toolCallRepairInputFilter({
        logger,
        meterProvider: metrics.meterProvider,
        threadId: () => {
          throw new Error("no thread here");
        },
      }),
    });
    const stored = await pendingRefund("call_t1");
    expect((await runner.run(support, stored)).finalOutput).toBe(COMPLETION_TEXT);
    expect((await runner.run(support, stored)).finalOutput).toBe(COMPLETION_TEXT);
    const threadFailures = logger.error.mock.calls.filter(([message]) =>
      String(message).includes("threadId"),
    );
    expect(threadFailures).toHaveLength(1);
    expect(await metrics.sum(METRIC_MODEL_CALLS, { [ATTR_OUTCOME]: "repaired" })).toBe(2);
    expect(await metrics.points(METRIC_THREAD_RECENT_DANGLING_TOOL_CALLS)).toEqual([]);
  });

  it("a meter and a tracer that throw are logged; the run is repaired and answered", async () => {
    const logger = { warn: vi.fn(), error: vi.fn() };
    const failing = () => {
      throw new Error("exporter down");
    };
    const runner = new Runner({
      modelProvider: providerFor(server),
      callModelInputFilter: toolCallRepairInputFilter({
        logger,
        meterProvider: { getMeter: failing },
        tracerProvider: { getTracer: failing },
        threadId: "thread-9",
      }),
    });
    const stored = await pendingRefund("call_m1");
    expect((await runner.run(support, stored)).finalOutput).toBe(COMPLETION_TEXT);
    expect(server.received.at(-1)?.status).toBe(200);
    expect(logger.error).toHaveBeenCalledWith(
      expect.stringContaining("OpenTelemetry metrics failed"),
      expect.objectContaining({ error: expect.any(Error) }),
    );
  });
});
