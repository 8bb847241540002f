/**
 * Which provider and model a request is recorded under: read from LangChain's own chat model
 * classes, mapped to the well-known gen_ai.provider.name values, and never a reason to throw.
 */
import { ChatAnthropic } from "@langchain/anthropic";
import { fakeModel } from "@langchain/core/testing";
import { ChatOpenAI } from "@langchain/openai";
import { initChatModel } from "langchain";
import { describe, expect, it } from "vitest";
import { genAiProviderName, modelIdentityOf } from "../../src/index.js";

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
