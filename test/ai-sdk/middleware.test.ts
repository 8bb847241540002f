/**
 * The AI SDK middleware's contract with `wrapLanguageModel`: what `transformParams` hands on (the
 * params themselves when the prompt is sound, a repaired copy otherwise, never a changed input),
 * what it reads of a call (model, provider, tools, thread), that answers and streams pass through
 * as they came, its options, and that it is an AI SDK `LanguageModelMiddleware` without loading
 * the AI SDK.
 */
import { readFileSync } from "node:fs";
import { type LanguageModelMiddleware, wrapLanguageModel } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { describe, expect, expectTypeOf, it, vi } from "vitest";
import {
  isOptionsError,
  THREAD_ID_HEADER,
  THREAD_ID_PROVIDER_OPTIONS_KEY,
  ToolCallResilienceOptionsError,
  toolCallRepairMiddleware,
} from "../../src/stacks/ai-sdk.js";
import { aiSdkProviderName } from "../../src/stacks/ai-sdk-calls.js";
import { genAiProviderName } from "../../src/telemetry/model-identity.js";
import {
  answer,
  type CallOptions,
  danglingPrompt,
  deepFreeze,
  madeCall,
  orphanPrompt,
  paramsOf,
  result,
  streamOf,
  tool,
  user,
} from "./prompts.js";

const GPT = { specificationVersion: "v3", provider: "openai.responses", modelId: "gpt-4.1" };
const MODEL = new MockLanguageModelV3(GPT);

const transform = (params: CallOptions, options = {}) =>
  toolCallRepairMiddleware({ logger: false, ...options }).transformParams({
    type: "generate",
    params,
    model: MODEL,
  });

describe("the middleware's type", () => {
  it("is an AI SDK LanguageModelMiddleware (v3), which wrapLanguageModel takes as it is", () => {
    const middleware = toolCallRepairMiddleware();
    // Compiled by tsc with the test: the structural types match the AI SDK's own.
    const asAiSdk: LanguageModelMiddleware = middleware;
    expectTypeOf(middleware).toExtend<LanguageModelMiddleware>();
    expect(asAiSdk.specificationVersion).toBe("v3");
    const wrapped = wrapLanguageModel({ model: MODEL, middleware });
    expect([wrapped.provider, wrapped.modelId]).toEqual(["openai.responses", "gpt-4.1"]);
  });

  it("loads nothing of the AI SDK: its modules import only the package's own", () => {
    for (const module of ["ai-sdk.ts", "ai-sdk-prompt.ts", "ai-sdk-calls.ts"]) {
      const source = readFileSync(new URL(`../../src/stacks/${module}`, import.meta.url), "utf8");
      // The module's own import and export statements, not the examples in its comments.
      const statements = /^(?:import|export)\b[^;]*?from "([^"]+)";/gm;
      const imported = [...source.matchAll(statements)].map((match) => match[1]);
      expect(imported.length, module).toBeGreaterThan(0);
      expect(
        imported.filter((specifier) => !specifier?.startsWith(".")),
        module,
      ).toEqual([]);
    }
  });
});

describe("transformParams", () => {
  it("returns the very same params when the prompt needs nothing", async () => {
    const params = deepFreeze(paramsOf([user("hi"), tool(result("call_1"))].slice(0, 1)));
    expect(await transform(params)).toBe(params);
  });

  it("returns a copy with the repaired prompt, every other field as it was, the input unchanged", async () => {
    const abortSignal = new AbortController().signal;
    const params = deepFreeze({
      ...paramsOf(orphanPrompt()),
      temperature: 0.2,
      headers: { "x-request-id": "r-1" },
      abortSignal,
    });
    const before = JSON.stringify(params);
    const sent = await transform(params);
    expect(sent).not.toBe(params);
    expect(sent.prompt).toEqual(params.prompt.slice(1));
    expect(sent.prompt[0]).toBe(params.prompt[1]);
    expect({ ...sent, prompt: params.prompt }).toEqual(params);
    expect(sent.abortSignal).toBe(abortSignal);
    expect(sent.tools).toBe(params.tools);
    expect(JSON.stringify(params)).toBe(before);
  });

  it("reads the thread from providerOptions, else from the header in any case, and passes both on", async () => {
    const seen: unknown[] = [];
    const logger = {
      warn: (_message: string, details?: Record<string, unknown>) => seen.push(details?.threadId),
    };
    const fromOptions = paramsOf(danglingPrompt(), "thread-options");
    const fromHeader = {
      ...paramsOf(danglingPrompt()),
      headers: { [THREAD_ID_HEADER]: "thread-header" },
    };
    const upperCase = {
      ...paramsOf(danglingPrompt()),
      headers: { "X-Tool-Call-Resilience-Thread-Id": "thread-upper" },
    };
    const both = { ...fromOptions, headers: { [THREAD_ID_HEADER]: "thread-header" } };
    const middleware = toolCallRepairMiddleware({ logger, countOnceMemory: 0 });
    const sent = [];
    for (const params of [fromOptions, fromHeader, upperCase, both]) {
      sent.push(await middleware.transformParams({ params, model: MODEL }));
    }
    expect(seen).toEqual(["thread-options", "thread-header", "thread-upper", "thread-options"]);
    expect(sent[0]?.providerOptions).toBe(fromOptions.providerOptions);
    expect(sent[1]?.headers).toBe(fromHeader.headers);
    expect(THREAD_ID_PROVIDER_OPTIONS_KEY).toBe("toolCallResilience");
  });

  it("warns about the repair once per thread, as the counters count it", async () => {
    const logger = { warn: vi.fn(), debug: vi.fn() };
    const middleware = toolCallRepairMiddleware({ logger, countOnceMemory: 100 });
    for (let turn = 0; turn < 3; turn++) {
      await middleware.transformParams({ params: paramsOf(danglingPrompt(), "t-1"), model: MODEL });
    }
    expect(logger.warn).toHaveBeenCalledTimes(1);
    expect(logger.warn).toHaveBeenCalledWith(
      "[tool-call-resilience] Injecting 1 placeholder tool result(s) for dangling tool calls",
      expect.objectContaining({ threadId: "t-1" }),
    );
    expect(logger.debug).toHaveBeenCalledTimes(2);
  });
});

describe("the AI SDK's provider ids, as gen_ai.provider.name", () => {
  it.each([
    ["openai.responses", "openai"],
    ["openai.chat", "openai"],
    ["azure.responses", "azure.ai.openai"],
    ["anthropic.messages", "anthropic"],
    ["google.generative-ai", "gcp.gemini"],
    ["google.vertex.chat", "gcp.vertex_ai"],
    ["vertex.anthropic.messages", "gcp.vertex_ai"],
    ["amazon-bedrock", "aws.bedrock"],
    ["bedrock.anthropic.messages", "aws.bedrock"],
    ["mistral.chat", "mistral_ai"],
    ["groq.chat", "groq"],
    ["deepseek.chat", "deepseek"],
    ["cohere.chat", "cohere"],
    ["xai.responses", "x_ai"],
    ["perplexity", "perplexity"],
    ["gateway", "gateway"],
    ["togetherai.chat", "togetherai"],
  ])("%s is %s", (providerId, name) => {
    expect(aiSdkProviderName(providerId)).toBe(name);
  });

  it.each(["ibm", "watsonx", "azure-ai-inference", "google-genai", "mistralai", "amazon_bedrock"])(
    "%s is named as the LangChain attachments name it",
    (providerId) => {
      expect(aiSdkProviderName(`${providerId}.chat`)).toBe(genAiProviderName(providerId));
      expect(aiSdkProviderName(providerId.toUpperCase())).toBe(genAiProviderName(providerId));
    },
  );

  it("is nothing for anything but a non-empty string", () => {
    for (const junk of [undefined, null, "", 42, {}])
      expect(aiSdkProviderName(junk)).toBeUndefined();
  });
});

describe("wrapGenerate and wrapStream", () => {
  it("hand the model's own answer back, the very same object", async () => {
    const made = answer(madeCall("call_9"));
    const model = wrapLanguageModel({
      model: new MockLanguageModelV3({ ...GPT, doGenerate: async () => made }),
      middleware: toolCallRepairMiddleware({ logger: false }),
    });
    expect(await model.doGenerate(paramsOf(danglingPrompt()))).toBe(made);
  });

  it("let the model's own error through, the very same error", async () => {
    const refusal = new Error("400 Bad Request");
    const model = wrapLanguageModel({
      model: new MockLanguageModelV3({
        ...GPT,
        doGenerate: async () => Promise.reject(refusal),
        doStream: async () => Promise.reject(refusal),
      }),
      middleware: toolCallRepairMiddleware({ logger: false }),
    });
    await expect(model.doGenerate(paramsOf(danglingPrompt()))).rejects.toBe(refusal);
    await expect(model.doStream(paramsOf(danglingPrompt()))).rejects.toBe(refusal);
  });

  it("pass every part of a stream on as it came, in order", async () => {
    const parts = [
      { type: "text-start", id: "t" },
      { type: "text-delta", id: "t", delta: "Hi" },
      { type: "text-end", id: "t" },
      madeCall("call_1"),
    ] as const;
    const source = streamOf(...parts);
    const model = wrapLanguageModel({
      model: new MockLanguageModelV3({ ...GPT, doStream: async () => source }),
      middleware: toolCallRepairMiddleware({ logger: false }),
    });
    const { stream } = await model.doStream(paramsOf([user("hi")]));
    const received = [];
    for await (const part of stream) received.push(part);
    expect(received.slice(1, -1)).toEqual(parts);
    expect(received.slice(1, -1).every((part, index) => part === parts[index])).toBe(true);
  });

  it("call the model with params transformParams never saw", async () => {
    const middleware = toolCallRepairMiddleware({ logger: false });
    const made = answer({ type: "text", text: "Hi." });
    const params = paramsOf([user("hi")]);
    await expect(
      middleware.wrapGenerate({ doGenerate: async () => made, params, model: MODEL }),
    ).resolves.toBe(made);
  });
});

describe("options", () => {
  it("are validated once, when the middleware is made, with the library's named error", () => {
    let thrown: unknown;
    try {
      toolCallRepairMiddleware({ window: 0, orphans: "delete" } as never);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ToolCallResilienceOptionsError);
    expect(isOptionsError(thrown)).toBe(true);
    expect((thrown as Error).message).toMatch(/^Invalid toolCallRepairMiddleware options:/);
    expect((thrown as ToolCallResilienceOptionsError).problems.map((p) => p.path)).toEqual([
      "window",
      "orphans",
    ]);
    expect(() => toolCallRepairMiddleware({ nope: true } as never)).toThrow(/unknown option/);
  });

  it("follow the policy: a template, a locale", async () => {
    const templated = await transform(paramsOf(danglingPrompt()), {
      placeholder: "{tool_name} ({tool_call_id}) never answered",
    });
    expect(templated.prompt[2]).toMatchObject({
      role: "tool",
      content: [{ output: { type: "error-text", value: "search (call_1) never answered" } }],
    });
    const german = await transform(paramsOf(danglingPrompt()), { locale: "de" });
    const text = (german.prompt[2] as { content: { output: { value: string } }[] }).content[0];
    expect(text?.output.value).not.toMatch(/interrupted/);
  });
});
