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
import { genAiProviderName, modelIdentityOf } from "../../src/index.js";
import { chargedModelOf, modelNamedBy } from "../../src/telemetry/model-identity.js";

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

describe("chargedModelOf", () => {
  const request = { provider: "openai", model: "gpt-4.1" };

  it("is the model the message names, a dated snapshot included, with the message's provider", () => {
    const answer = {
      response_metadata: { model_name: "gpt-4.1-2025-04-14", model_provider: "openai" },
    };
    expect(chargedModelOf(answer, request)).toEqual({
      provider: "openai",
      model: "gpt-4.1-2025-04-14",
    });
  });

  it("is another model's when another model made the message, whatever the request", () => {
    const backups = {
      response_metadata: { model: "claude-sonnet-4-5", model_provider: "anthropic" },
    };
    expect(chargedModelOf(backups, request)).toEqual({
      provider: "anthropic",
      model: "claude-sonnet-4-5",
    });
  });

  it("takes the provider LangChain infers from the name when the message names none", () => {
    const answer = { response_metadata: { model_name: "claude-sonnet-4-5" } };
    expect(chargedModelOf(answer, request)).toEqual({
      provider: "anthropic",
      model: "claude-sonnet-4-5",
    });
    const unknownName = { response_metadata: { model_name: "in-house-7b" } };
    expect(chargedModelOf(unknownName, request)).toEqual({
      provider: "openai",
      model: "in-house-7b",
    });
  });

  it("is the request's model and provider when the message names none", () => {
    expect(chargedModelOf(new AIMessage("hi"), request)).toBe(request);
    const sameModel = { response_metadata: { model_name: "gpt-4.1" } };
    expect(chargedModelOf(sameModel, request)).toBe(request);
  });

  it("is the provider the message names, even for the request's model: one series for a call and its sighting", () => {
    const azureAnswer = { response_metadata: { model_name: "gpt-4.1", model_provider: "openai" } };
    const azureRequest = { provider: "azure.ai.openai", model: "gpt-4.1" };
    const primaryRequest = { provider: "anthropic", model: "claude-sonnet-4-5" };
    expect(chargedModelOf(azureAnswer, azureRequest)).toEqual({
      provider: "openai",
      model: "gpt-4.1",
    });
    expect(chargedModelOf(azureAnswer, primaryRequest)).toEqual(
      chargedModelOf(azureAnswer, azureRequest),
    );
  });
});
