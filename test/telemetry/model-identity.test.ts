/**
 * Which provider and model a request is recorded under: read from LangChain's own chat model
 * classes, mapped to the well-known gen_ai.provider.name values, and never a reason to throw.
 */
import { ChatAnthropic } from "@langchain/anthropic";
import { AIMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { ChatOpenAI } from "@langchain/openai";
import { initChatModel } from "langchain";
import { describe, expect, it } from "vitest";
import { LANGCHAIN_MESSAGES, modelIdentityOf } from "../../src/attach/langchain.js";
import {
  answersForRequestedModel,
  chargedModelOf,
  genAiProviderName,
  modelNamedBy,
} from "../../src/telemetry/model-identity.js";

describe("modelIdentityOf", () => {
  it("reads ChatOpenAI's model and provider", () => {
    expect(modelIdentityOf(new ChatOpenAI({ model: "gpt-4.1", apiKey: "test" }))).toEqual({
      provider: "openai",
      model: "gpt-4.1",
    });
  });

  it("reads ChatAnthropic's model and provider", () => {
    expect(
      modelIdentityOf(new ChatAnthropic({ model: "claude-sonnet-4-5", apiKey: "test" })),
    ).toEqual({ provider: "anthropic", model: "claude-sonnet-4-5" });
  });

  it("reads a ConfigurableModel's default config, as createAgent builds it from a model string", async () => {
    const model = await initChatModel("openai:gpt-4.1-mini", { apiKey: "test" });
    expect(modelIdentityOf(model)).toEqual({ provider: "openai", model: "gpt-4.1-mini" });
  });

  it("infers a ConfigurableModel's provider from its model name the way LangChain does", async () => {
    const model = await initChatModel("claude-sonnet-4-5", { apiKey: "test" });
    expect(modelIdentityOf(model)).toEqual({ provider: "anthropic", model: "claude-sonnet-4-5" });
  });

  it("falls back to modelName, then getLsParams(), then _llmType()", () => {
    expect(modelIdentityOf({ modelName: "legacy-model", _llmType: () => "groq" })).toEqual({
      provider: "groq",
      model: "legacy-model",
    });
    expect(
      modelIdentityOf({
        getLsParams: () => ({ ls_provider: "google_genai", ls_model_name: "gemini-2.5-pro" }),
      }),
    ).toEqual({ provider: "gcp.gemini", model: "gemini-2.5-pro" });
    expect(modelIdentityOf({ _llmType: () => "mistral_ai" })).toEqual({
      provider: "mistral_ai",
      model: "unknown",
    });
  });

  it("gives unknown for what it cannot find, and a fake model's own provider name", () => {
    expect(modelIdentityOf(undefined)).toEqual({ provider: "unknown", model: "unknown" });
    expect(modelIdentityOf({})).toEqual({ provider: "unknown", model: "unknown" });
    expect(modelIdentityOf(fakeModel())).toEqual({ provider: "FakeBuiltModel", model: "unknown" });
  });

  it("skips accessors that throw or return junk instead of failing", () => {
    const hostile = {
      get model(): string {
        throw new Error("no model here");
      },
      modelName: 42,
      getLsParams() {
        throw new Error("no params");
      },
      _llmType: () => "anthropic",
    };
    expect(modelIdentityOf(hostile)).toEqual({ provider: "anthropic", model: "unknown" });
  });

  it("reads a model object once and remembers the answer", () => {
    let reads = 0;
    const model = {
      get model() {
        reads++;
        return "counted";
      },
    };
    modelIdentityOf(model);
    modelIdentityOf(model);
    expect(reads).toBe(1);
  });
});

describe("genAiProviderName", () => {
  it.each([
    ["openai", "openai"],
    ["azure_openai", "azure.ai.openai"],
    ["anthropic", "anthropic"],
    ["google-genai", "gcp.gemini"],
    ["google-vertexai", "gcp.vertex_ai"],
    ["bedrock", "aws.bedrock"],
    ["amazon_bedrock", "aws.bedrock"],
    ["mistralai", "mistral_ai"],
    ["groq", "groq"],
    ["deepseek", "deepseek"],
    ["cohere", "cohere"],
    ["xai", "x_ai"],
    ["perplexity", "perplexity"],
    ["gcp.gemini", "gcp.gemini"],
  ])("maps LangChain's %s to %s", (providerId, expected) => {
    expect(genAiProviderName(providerId)).toBe(expected);
  });

  it("passes a provider it does not know through unchanged", () => {
    expect(genAiProviderName("ollama")).toBe("ollama");
  });
});

describe("modelNamedBy", () => {
  it("reads the model a ChatOpenAI answer names, as the provider named it, and its provider", () => {
    const answer = new AIMessage({
      content: "hi",
      response_metadata: { model_name: "gpt-4.1-2025-04-14", model_provider: "openai" },
    });
    expect(modelNamedBy(answer)).toEqual({ model: "gpt-4.1-2025-04-14", provider: "openai" });
  });

  it("reads Anthropic's `model`, and a streamed Anthropic answer's `additional_kwargs.model`", () => {
    const whole = new AIMessage({
      content: "hi",
      response_metadata: { model: "claude-sonnet-4-5-20250929", model_provider: "anthropic" },
    });
    const streamed = new AIMessage({
      content: "hi",
      additional_kwargs: { model: "claude-sonnet-4-5-20250929" },
      response_metadata: { model_provider: "anthropic" },
    });
    for (const answer of [whole, streamed]) {
      expect(modelNamedBy(answer)).toEqual({
        model: "claude-sonnet-4-5-20250929",
        provider: "anthropic",
      });
    }
  });

  it("maps the provider to its gen_ai.provider.name value", () => {
    const answer = {
      response_metadata: { model_name: "gemini-2.5-pro", model_provider: "google-genai" },
    };
    expect(modelNamedBy(answer)).toEqual({ model: "gemini-2.5-pro", provider: "gcp.gemini" });
  });

  it("names nothing for a message without a model name, or junk, and never throws", () => {
    const throwing = Object.defineProperty({}, "response_metadata", {
      get() {
        throw new Error("unreadable");
      },
    });
    for (const junk of [new AIMessage("hi"), undefined, null, 42, "text", throwing]) {
      expect(modelNamedBy(junk)).toBeUndefined();
    }
  });
});

describe("answersForRequestedModel", () => {
  it("is true for the requested model and its dated snapshots", () => {
    expect(answersForRequestedModel("gpt-4.1", "gpt-4.1")).toBe(true);
    expect(answersForRequestedModel("gpt-4.1-2025-04-14", "gpt-4.1")).toBe(true);
    expect(answersForRequestedModel("claude-sonnet-4-5-20250929", "claude-sonnet-4-5")).toBe(true);
  });

  it("is false for another model whose name starts alike", () => {
    expect(answersForRequestedModel("gpt-4.1-mini-2025-04-14", "gpt-4.1")).toBe(false);
    expect(answersForRequestedModel("gpt-4.1-mini", "gpt-4.1")).toBe(false);
    expect(answersForRequestedModel("claude-sonnet-4-5", "gpt-4.1")).toBe(false);
  });
});

describe("chargedModelOf", () => {
  /** Names no other test of this file uses: what is learned stays with the process. */
  const unique = (name: string) => `${name}-${Math.random().toString(36).slice(2, 8)}`;

  it("is the request's model and provider when the message names none", () => {
    const request = { provider: "openai", model: "gpt-4.1" };
    expect(chargedModelOf(new AIMessage("hi"), request)).toBe(request);
  });

  it("is the request's when the message names it or a dated snapshot of it, as providers do", () => {
    const request = { provider: "azure.ai.openai", model: "gpt-4.1" };
    for (const answered of ["gpt-4.1", "gpt-4.1-2025-04-14"]) {
      const answer = { response_metadata: { model_name: answered, model_provider: "openai" } };
      expect(chargedModelOf(answer, request)).toBe(request);
    }
  });

  it("is the model that made the message, as its requests name it, once an answer taught it", () => {
    const backup = { provider: "anthropic", model: unique("claude-backup") };
    const answer = { response_metadata: { model: `${backup.model}-20250929` } };
    const primary = { provider: "openai", model: "gpt-4.1" };
    // Seen first in the backup's own request (its answer), then in the primary's (a later turn).
    expect(chargedModelOf(answer, backup)).toBe(backup);
    expect(chargedModelOf(answer, primary)).toEqual(backup);
  });

  it("remembers the 1,000 names answers taught last", () => {
    const request = { provider: "anthropic", model: unique("claude-bound") };
    const answerNaming = (index: number) => ({
      response_metadata: { model: `${request.model}-2025-01-01-${index}` },
    });
    const other = { provider: "openai", model: "gpt-4.1" };
    for (let index = 0; index <= 1_000; index++) chargedModelOf(answerNaming(index), request);
    // The first name taught has been forgotten, the last 1,000 are known.
    expect(chargedModelOf(answerNaming(0), other).model).not.toBe(request.model);
    expect(chargedModelOf(answerNaming(1), other)).toEqual(request);
    expect(chargedModelOf(answerNaming(1_000), other)).toEqual(request);
  });

  it("is the name the message gives, with its provider, for a model no answer taught", () => {
    const primary = { provider: "openai", model: "gpt-4.1" };
    const named = unique("claude-never-answered");
    const withProvider = { response_metadata: { model_name: named, model_provider: "anthropic" } };
    expect(chargedModelOf(withProvider, primary)).toEqual({ provider: "anthropic", model: named });
    // No provider named: LangChain's inference from the name, else the request's.
    const langChainGuess = LANGCHAIN_MESSAGES.inferProvider;
    const inferred = { response_metadata: { model_name: named } };
    expect(chargedModelOf(inferred, primary, langChainGuess)).toEqual({
      provider: "anthropic",
      model: named,
    });
    const inHouse = unique("in-house-7b");
    const unknownName = { response_metadata: { model_name: inHouse } };
    expect(chargedModelOf(unknownName, primary, langChainGuess)).toEqual({
      provider: "openai",
      model: inHouse,
    });
    // Without LangChain (the native-format adapters) there is no guess: the request's provider.
    expect(chargedModelOf(inferred, primary)).toEqual({ provider: "openai", model: named });
  });
});
