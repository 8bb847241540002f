/**
 * The promise through the AI SDK itself: `generateText` and `streamText` with `@ai-sdk/openai`
 * (the Responses API and Chat Completions) wrapped by `wrapLanguageModel`, against a strict local
 * server that applies OpenAI's tool-calling rules and answers with OpenAI's error text. A broken
 * prompt gets the provider's 400 without the middleware and an answer with it; a history the AI
 * SDK refuses itself is repaired before the call with `repairMessages`; the calls the model makes
 * are counted, generated and streamed.
 */
import { createOpenAI } from "@ai-sdk/openai";
import {
  generateText,
  jsonSchema,
  MissingToolResultsError,
  type ModelMessage,
  streamText,
  tool,
  wrapLanguageModel,
} from "ai";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { toolCallRepairMiddleware } from "../../src/stacks/ai-sdk.js";
import {
  ATTR_GEN_AI_PROVIDER_NAME,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_OUTCOME,
  METRIC_DANGLING_TOOL_CALLS,
  METRIC_MODEL_CALLS,
  METRIC_TOOL_CALLS,
} from "../../src/telemetry/semconv.js";
import {
  COMPLETION_TEXT,
  type ServedApi,
  type StrictProviderServer,
  startStrictProviderServer,
} from "../helpers/strict-provider-server.js";
import { metricsHarness } from "../helpers/telemetry.js";
import { danglingPrompt, paramsOf } from "./prompts.js";

let server: StrictProviderServer;
beforeAll(async () => {
  server = await startStrictProviderServer();
});
afterAll(async () => {
  await server?.close();
});

type OpenAIProvider = ReturnType<typeof createOpenAI>;
/** `LanguageModelV3`, which `wrapLanguageModel` wraps. */
type ProviderModel = Parameters<typeof wrapLanguageModel>[0]["model"];

const APIS: readonly {
  readonly api: string;
  readonly served: ServedApi;
  readonly modelOf: (openai: OpenAIProvider) => ProviderModel;
}[] = [
  { api: "the Responses API", served: "responses", modelOf: (openai) => openai("gpt-4.1") },
  { api: "Chat Completions", served: "openai", modelOf: (openai) => openai.chat("gpt-4.1") },
];

const search = tool({ description: "Searches.", inputSchema: jsonSchema({ type: "object" }) });

/** A history cut to its last messages: the search call went, its result stayed. */
const trimmedHistory = (): ModelMessage[] => [
  {
    role: "tool",
    content: [
      {
        type: "tool-result",
        toolCallId: "call_cut_off",
        toolName: "search",
        output: { type: "text", value: "three hits" },
      },
    ],
  },
  { role: "assistant", content: "I found three hits." },
  { role: "user", content: "Summarize them." },
];

/** A history whose search call got no result: the user pressed stop while it ran. */
const interruptedHistory = (): ModelMessage[] => [
  { role: "user", content: "Search for flights" },
  {
    role: "assistant",
    content: [{ type: "tool-call", toolCallId: "call_stop", toolName: "search", input: {} }],
  },
  { role: "user", content: "Never mind." },
];

/** The last request the server received, and its status. */
function lastRequest() {
  const request = server.received.at(-1);
  if (request === undefined) throw new Error("the server received nothing");
  return request;
}

/** The error and text parts of a `streamText` run, read to its end (its errors not logged). */
async function streamed(options: Omit<Parameters<typeof streamText>[0], "onError">) {
  const result = streamText({ ...options, onError: () => {} } as Parameters<typeof streamText>[0]);
  const errors: unknown[] = [];
  let text = "";
  for await (const part of result.fullStream) {
    if (part.type === "error") errors.push(part.error);
    if (part.type === "text-delta") text += part.text;
  }
  return { errors, text };
}

describe.each(APIS)("@ai-sdk/openai on $api", ({ served, modelOf }) => {
  const openai = () => createOpenAI({ baseURL: server.openAIBaseURL, apiKey: "test" });
  const repaired = (options = {}) =>
    wrapLanguageModel({
      model: modelOf(openai()),
      middleware: toolCallRepairMiddleware({ logger: false, ...options }),
    });

  it("an orphan tool result gets the provider's 400 without the middleware, an answer with it", async () => {
    const refused = generateText({ model: modelOf(openai()), messages: trimmedHistory() });
    await expect(refused).rejects.toMatchObject({ statusCode: 400 });
    expect(lastRequest().status).toBe(400);

    const { text } = await generateText({ model: repaired(), messages: trimmedHistory() });
    expect(text).toBe(COMPLETION_TEXT);
    expect(lastRequest()).toMatchObject({ provider: served, status: 200 });
    expect(lastRequest().raw).not.toContain("call_cut_off");
  });

  it("streams the answer with the middleware, where without it the stream fails with the 400", async () => {
    const without = await streamed({ model: modelOf(openai()), messages: trimmedHistory() });
    expect(without.errors).toEqual([expect.objectContaining({ statusCode: 400 })]);

    const withIt = await streamed({ model: repaired(), messages: trimmedHistory() });
    expect(withIt).toEqual({ errors: [], text: COMPLETION_TEXT });
    expect(lastRequest()).toMatchObject({ provider: served, status: 200 });
  });

  it("a direct doGenerate with a dangling call gets the 400 without the middleware, an answer with it", async () => {
    await expect(modelOf(openai()).doGenerate(paramsOf(danglingPrompt()))).rejects.toMatchObject({
      statusCode: 400,
    });

    const result = await repaired().doGenerate(paramsOf(danglingPrompt()));
    expect(result.content).toEqual([
      expect.objectContaining({ type: "text", text: COMPLETION_TEXT }),
    ]);
    // The placeholder reached the provider as the call's output.
    expect(lastRequest().raw).toContain("[Tool call was interrupted and did not return a result.]");
  });

  it("counts the calls the model makes, generated and streamed, by tool", async () => {
    const metrics = metricsHarness();
    const model = repaired({ meterProvider: metrics.meterProvider });
    server.script(served, { calls: [{ id: "call_a", name: "search", args: { q: "a" } }] });
    const generated = await generateText({ model, tools: { search }, prompt: "Search for a" });
    expect(generated.toolCalls.map((made) => made.toolCallId)).toEqual(["call_a"]);
    server.script(served, {
      calls: [
        { id: "call_b", name: "search", args: { q: "b" } },
        { id: "call_c", name: "lookup", args: { q: "c" } },
      ],
    });
    const stream = streamText({ model, tools: { search }, prompt: "Search for b" });
    expect((await stream.toolCalls).map((made) => made.toolCallId)).toEqual(["call_b", "call_c"]);
    const labels = {
      [ATTR_GEN_AI_PROVIDER_NAME]: "openai",
      [ATTR_GEN_AI_REQUEST_MODEL]: "gpt-4.1",
    };
    expect(
      await metrics.sum(METRIC_TOOL_CALLS, { ...labels, [ATTR_GEN_AI_TOOL_NAME]: "search" }),
    ).toBe(2);
    // A tool the request did not offer.
    expect(await metrics.sum(METRIC_TOOL_CALLS, { [ATTR_GEN_AI_TOOL_NAME]: "_OTHER" })).toBe(1);
    expect(await metrics.sum(METRIC_MODEL_CALLS, { ...labels, [ATTR_OUTCOME]: "clean" })).toBe(2);
    await metrics.shutdown();
  });
});

describe("the AI SDK's own prompt check", () => {
  const openai = () => createOpenAI({ baseURL: server.openAIBaseURL, apiKey: "test" });

  it("refuses a history with a call without a result (MissingToolResultsError) before any middleware runs", async () => {
    const middleware = toolCallRepairMiddleware({ logger: false });
    const transformParams = vi.spyOn(middleware, "transformParams");
    const model = wrapLanguageModel({ model: openai()("gpt-4.1"), middleware });
    const requests = server.received.length;
    const error = await generateText({ model, messages: interruptedHistory() }).catch((e) => e);
    expect(MissingToolResultsError.isInstance(error)).toBe(true);
    expect((error as MissingToolResultsError).toolCallIds).toEqual(["call_stop"]);
    const streamedErrors = (await streamed({ model, messages: interruptedHistory() })).errors;
    expect(streamedErrors.every((e) => MissingToolResultsError.isInstance(e))).toBe(true);
    expect(streamedErrors.length).toBeGreaterThan(0);
    expect(transformParams).not.toHaveBeenCalled();
    expect(server.received.length).toBe(requests);
  });

  it("takes such a history once repairMessages has repaired it, and records one model call for both", async () => {
    const metrics = metricsHarness();
    const middleware = toolCallRepairMiddleware({
      logger: false,
      meterProvider: metrics.meterProvider,
    });
    const model = wrapLanguageModel({ model: openai()("gpt-4.1"), middleware });
    const { messages } = middleware.repairMessages(interruptedHistory(), { threadId: "t-e2e" });
    const { text } = await generateText({
      model,
      messages,
      providerOptions: { toolCallResilience: { threadId: "t-e2e" } },
    });
    expect(text).toBe(COMPLETION_TEXT);
    expect(lastRequest().raw).toContain("call_stop");
    expect(await metrics.points(METRIC_MODEL_CALLS)).toEqual([
      expect.objectContaining({
        attributes: expect.objectContaining({
          [ATTR_GEN_AI_PROVIDER_NAME]: "openai",
          [ATTR_GEN_AI_REQUEST_MODEL]: "gpt-4.1",
          [ATTR_OUTCOME]: "repaired",
        }),
        value: 1,
      }),
    ]);
    expect(
      await metrics.sum(METRIC_DANGLING_TOOL_CALLS, { [ATTR_GEN_AI_REQUEST_MODEL]: "gpt-4.1" }),
    ).toBe(1);
    await metrics.shutdown();
  });
});
