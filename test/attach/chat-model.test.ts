/**
 * withToolCallRepair: any LangChain chat model repairs its input on every way in, keeps doing so
 * through what is built on it, records like the middleware, and fails open.
 */
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import { ChatPromptValue } from "@langchain/core/prompt_values";
import { RunnableBinding, RunnableLambda } from "@langchain/core/runnables";
import { ChatOpenAI } from "@langchain/openai";
import type { MeterProvider } from "@opentelemetry/api";
import { createAgent } from "langchain";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { unrepairedModelOf } from "../../src/attach/chat-model.js";
import { TURN_CATALOG } from "../../src/core/locales.js";
import {
  syntheticReasonOf,
  ToolCallResilienceOptionsError,
  withToolCallRepair,
} from "../../src/index.js";
import {
  METRIC_DANGLING_TOOL_CALLS,
  METRIC_MODEL_CALLS,
  METRIC_THREAD_RECENT_DANGLING_TOOL_CALLS,
  METRIC_TOOL_CALLS,
} from "../../src/telemetry/semconv.js";
import { receivedBy, scriptedModel, searchTool } from "../helpers/agent.js";
import { aiCalls, human, shapeOf, toolResult } from "../helpers/history.js";
import { chatOpenAIOn } from "../helpers/provider-clients.js";
import { openAIViolations } from "../helpers/provider-rules.js";
import {
  type StrictProviderServer,
  startStrictProviderServer,
} from "../helpers/strict-provider-server.js";
import { metricsHarness } from "../helpers/telemetry.js";

const quiet = { logger: false } as const;
const dangling = () => [human("Find x"), aiCalls("call_1"), human("Go on")];
/** The placeholder, then the synthetic reply the order of turns needs before the user's message. */
const REPAIRED = ["human", "ai(call_1)", "tool(call_1)", "ai", "human"];

const answers = (count: number) =>
  Array.from({ length: count }, (_, index) => new AIMessage(`answer ${index}`));

describe("withToolCallRepair", () => {
  it("repairs the input of invoke, stream, batch and streamEvents", async () => {
    const base = scriptedModel(...answers(5));
    const model = withToolCallRepair(base, quiet);
    await model.invoke(dangling());
    for await (const _chunk of await model.stream(dangling())) {
      // read to the end
    }
    await model.batch([dangling(), dangling()]);
    for await (const _event of model.streamEvents(dangling(), { version: "v2" })) {
      // read to the end
    }
    expect(base.callCount).toBe(5);
    for (let call = 0; call < 5; call++) {
      const received = receivedBy(base, call);
      expect(shapeOf(received)).toEqual(REPAIRED);
      expect(received[3]?.content).toBe(TURN_CATALOG.en.reply);
      expect(syntheticReasonOf(received[3] as BaseMessage)).toBe("turn_order");
    }
  });

  it("repairs a history that changed since an earlier stream of it was left unread", async () => {
    const base = scriptedModel(...answers(2));
    const model = withToolCallRepair(base, quiet);
    const history: BaseMessage[] = [human("Find x")];
    await model.stream(history); // never read
    history.push(aiCalls("call_1"), human("Go on"));
    await model.invoke(history);
    expect(shapeOf(receivedBy(base, base.callCount - 1))).toEqual(REPAIRED);
  });

  it("repairs a ChatPromptValue and leaves a string alone", async () => {
    const base = scriptedModel(...answers(2));
    const model = withToolCallRepair(base, quiet);
    await model.invoke(new ChatPromptValue(dangling()));
    await model.invoke("just text");
    expect(shapeOf(receivedBy(base, 0))).toEqual(REPAIRED);
    expect(shapeOf(receivedBy(base, 1))).toEqual(["human"]);
  });

  it("passes a clean history on as it is, without a word", async () => {
    const base = scriptedModel(...answers(1));
    const logger = { warn: vi.fn() };
    const model = withToolCallRepair(base, { logger });
    const clean = [
      human("Find x"),
      aiCalls("call_1"),
      toolResult("call_1"),
      new AIMessage("Found x."),
      human("Thanks"),
    ];
    const invoke = vi.spyOn(BaseChatModel.prototype, "invoke");
    await model.invoke(clean);
    expect(invoke.mock.calls[0]?.[0]).toBe(clean);
    invoke.mockRestore();
    expect(logger.warn).not.toHaveBeenCalled();
  });

  it("is the model itself behind a proxy: its class, fields and own methods", () => {
    const base = scriptedModel();
    const model = withToolCallRepair(base, quiet);
    expect(model).toBeInstanceOf(BaseChatModel);
    expect(model._llmType()).toBe(base._llmType());
    expect(model.invoke).toBe(model.invoke);
  });

  it("keeps repairing through bindTools and withConfig, even on a model that builds a new instance", async () => {
    const base = scriptedModel(...answers(2));
    const model = withToolCallRepair(base, quiet);
    await model.bindTools([searchTool()]).invoke(dangling());
    await model.withConfig({ runName: "configured" }).invoke(dangling());
    expect(shapeOf(receivedBy(base, 0))).toEqual(REPAIRED);
    expect(shapeOf(receivedBy(base, 1))).toEqual(REPAIRED);
  });

  it("keeps repairing in a chain built on it", async () => {
    const base = scriptedModel(...answers(1));
    const chain = RunnableLambda.from(() => dangling()).pipe(withToolCallRepair(base, quiet));
    await chain.invoke({});
    expect(shapeOf(receivedBy(base, 0))).toEqual(REPAIRED);
  });

  it("wrapping a wrapper wraps the model once, with the newer options", async () => {
    const base = scriptedModel(...answers(1));
    const twice = withToolCallRepair(withToolCallRepair(base, quiet), {
      ...quiet,
      placeholder: "gone: {tool_name}",
    });
    await twice.invoke(dangling());
    expect(receivedBy(base, 0)[2]?.content).toBe("gone: search");
  });

  it("refuses bad options at once, naming them, and persist, which a model cannot do", () => {
    const base = scriptedModel();
    expect(() => withToolCallRepair(base, { window: -1 })).toThrow(ToolCallResilienceOptionsError);
    expect(() => withToolCallRepair(base, { window: -1 })).toThrow(/withToolCallRepair.*window/s);
    expect(() => withToolCallRepair(base, { persist: true } as never)).toThrow(
      "- persist: belongs to danglingToolCallMiddleware, whose hooks write the repair into the agent's state; withToolCallRepair repairs each request and cannot write the thread",
    );
  });

  it("refuses what is not a chat model, saying what it expected and what it got", () => {
    const expected =
      "withToolCallRepair expects a LangChain chat model first (new ChatOpenAI(...), await initChatModel(...), ...) and its options second; got";
    const refusal = (model: unknown) => {
      try {
        withToolCallRepair(model as never);
      } catch (error) {
        expect(error).toBeInstanceOf(TypeError);
        return (error as Error).message.replace(expected, "").trim();
      }
      throw new Error("expected withToolCallRepair to throw");
    };
    const agent = createAgent({ model: scriptedModel(), tools: [] });
    const pending = Promise.resolve(scriptedModel());
    expect(refusal({ logger: false, target: "auto" })).toBe(
      "the options { logger, target } in the model's place",
    );
    expect(refusal({ model: "gpt-4.1", temperature: 0 })).toBe(
      "a plain object { model, temperature }",
    );
    expect(refusal(ChatOpenAI)).toBe(
      "the class ChatOpenAI itself, not an instance (new ChatOpenAI(...))",
    );
    expect(refusal(pending)).toBe("a promise; await it first (initChatModel is async)");
    expect(refusal(agent)).toBe(
      "a ReactAgent, which has invoke() but is no chat model (it has no _streamIterator())",
    );
    expect(refusal("openai:gpt-4.1")).toBe('the string "openai:gpt-4.1"');
    expect(refusal(null)).toBe("null");
  });

  it("lets the model's own errors through unchanged", async () => {
    const failure = new Error("provider down");
    const model = withToolCallRepair(scriptedModel(failure), quiet);
    await expect(model.invoke(dangling())).rejects.toBe(failure);
  });

  it("fails open when the telemetry throws: the repaired call goes on", async () => {
    const broken = {
      getMeter() {
        throw new Error("meter down");
      },
    } as unknown as MeterProvider;
    const logger = { warn: vi.fn(), error: vi.fn() };
    const base = scriptedModel(...answers(1));
    const model = withToolCallRepair(base, { logger, meterProvider: broken });
    await model.invoke(dangling());
    expect(shapeOf(receivedBy(base, 0))).toEqual(REPAIRED);
    expect(logger.error).toHaveBeenCalled();
  });
});

describe("withToolCallRepair telemetry", () => {
  it("records each call once, per model, tool and thread, and counts tool calls of streams", async () => {
    const harness = metricsHarness();
    const base = scriptedModel(
      new AIMessage({ content: "", tool_calls: [{ id: "call_2", name: "search", args: {} }] }),
      new AIMessage("done"),
    );
    const model = withToolCallRepair(base, { ...quiet, meterProvider: harness.meterProvider });
    const bound = model.bindTools([searchTool()]);
    const config = { configurable: { thread_id: "thread-9" } };
    // A model without streaming answers stream through invoke: inspected once all the same.
    for await (const _chunk of await bound.stream(dangling(), config)) {
      // read to the end
    }
    await bound.invoke(dangling(), config);
    expect(await harness.sum(METRIC_MODEL_CALLS)).toBe(2);
    // The test model keeps its bound tools to itself: tools it does not show go to _OTHER.
    expect(await harness.sum(METRIC_DANGLING_TOOL_CALLS, { "gen_ai.tool.name": "_OTHER" })).toBe(1);
    expect(
      await harness.sum(METRIC_THREAD_RECENT_DANGLING_TOOL_CALLS, {
        "gen_ai.conversation.id": "thread-9",
      }),
    ).toBe(1);
    expect(await harness.sum(METRIC_TOOL_CALLS)).toBe(1);
    await harness.shutdown();
  });
});

describe("withToolCallRepair on the real ChatOpenAI client", () => {
  let server: StrictProviderServer;
  beforeAll(async () => {
    server = await startStrictProviderServer();
  });
  afterAll(async () => {
    await server.close();
  });

  const chatOpenAI = () => chatOpenAIOn(server);

  it("withStructuredOutput keeps repairing: the request OpenAI receives is valid", async () => {
    const model = withToolCallRepair(chatOpenAI(), quiet);
    const structured = model.withStructuredOutput(z.object({ answer: z.string() }), {
      method: "functionCalling",
    });
    // The stand-in answers with text, which the parser refuses; the request is what is tested.
    await structured.invoke(dangling()).catch(() => undefined);
    const request = server.received.at(-1);
    expect(request?.status).toBe(200);
    expect(openAIViolations(request?.body.messages ?? [])).toEqual([]);
    // The schema goes out as the request's one tool.
    expect(request?.body.tools).toMatchObject([
      {
        type: "function",
        function: { name: "extract", parameters: { properties: { answer: { type: "string" } } } },
      },
    ]);
  });

  it("records the tools bound with bindTools, and the provider and model of the client", async () => {
    const harness = metricsHarness();
    const model = withToolCallRepair(chatOpenAI(), {
      ...quiet,
      meterProvider: harness.meterProvider,
    });
    await model
      .bindTools([searchTool()])
      .invoke(dangling(), { configurable: { thread_id: "t-1" } });
    expect(
      await harness.sum(METRIC_DANGLING_TOOL_CALLS, {
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "gpt-4.1",
        "gen_ai.tool.name": "search",
      }),
    ).toBe(1);
    await harness.shutdown();
  });
});

describe("unrepairedModelOf, for the middleware beside a wrapper", () => {
  it("gives the model behind a wrapper, alone or bound, and nothing for a model that does not repair", () => {
    const model = scriptedModel();
    const wrapped = withToolCallRepair(model, { logger: false });
    expect(unrepairedModelOf(wrapped)).toBe(model);
    const bound = wrapped.withConfig({ tags: ["bound"] });
    const unbound = unrepairedModelOf(bound) as RunnableBinding<unknown, unknown>;
    expect(unbound).toBeInstanceOf(RunnableBinding);
    expect(unbound.bound).toBe(model);
    expect(unbound.config).toEqual((bound as RunnableBinding<unknown, unknown>).config);
    // One binding per binding: what is read of a model once is read once.
    expect(unrepairedModelOf(bound)).toBe(unbound);
    expect(unrepairedModelOf(model)).toBeUndefined();
    expect(unrepairedModelOf(model.withConfig({ tags: ["plain"] }))).toBeUndefined();
    expect(unrepairedModelOf(undefined)).toBeUndefined();
  });
});
