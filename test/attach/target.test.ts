/**
 * repairTargetOf: the client a request goes through, read from the model the request holds, so
 * that the repair is for what that client's converter sends (README, "Which client a repair is
 * for").
 */
import { ChatAnthropic } from "@langchain/anthropic";
import { fakeModel } from "@langchain/core/testing";
import {
  AzureChatOpenAI,
  ChatOpenAI,
  ChatOpenAICompletions,
  ChatOpenAIResponses,
} from "@langchain/openai";
import { initChatModel } from "langchain";
import { describe, expect, it } from "vitest";
import { repairTargetOf } from "../../src/attach/target.js";

const openAIFields = { model: "gpt-4.1", apiKey: "test-key" };
const functionTool = {
  type: "function",
  function: { name: "search", description: "Searches.", parameters: { type: "object" } },
};

describe("repairTargetOf", () => {
  it("ChatOpenAI: Chat Completions by default, the Responses API when it chooses that API", () => {
    expect(repairTargetOf(new ChatOpenAI(openAIFields))).toBe("openai-completions");
    expect(repairTargetOf(new ChatOpenAI({ ...openAIFields, useResponsesApi: true }))).toBe(
      "openai-responses",
    );
    expect(repairTargetOf(new AzureChatOpenAI({ ...openAIFields, useResponsesApi: true }))).toBe(
      "openai-responses",
    );
  });

  it("ChatOpenAI: the request's tools decide too (a built-in tool goes through the Responses API)", () => {
    const model = new ChatOpenAI(openAIFields);
    expect(repairTargetOf(model, [functionTool])).toBe("openai-completions");
    expect(repairTargetOf(model, [{ type: "web_search_preview" }])).toBe("openai-responses");
  });

  it("ChatOpenAI's two halves, built alone, are what they say", () => {
    expect(repairTargetOf(new ChatOpenAIResponses(openAIFields))).toBe("openai-responses");
    expect(repairTargetOf(new ChatOpenAICompletions(openAIFields))).toBe("openai-completions");
  });

  it("ChatAnthropic, with v0 or v1 output", () => {
    const fields = { model: "claude-sonnet-4-5", apiKey: "test-key" };
    expect(repairTargetOf(new ChatAnthropic(fields))).toBe("anthropic");
    expect(repairTargetOf(new ChatAnthropic({ ...fields, outputVersion: "v1" }))).toBe("anthropic");
  });

  it("a bound model: the model it binds", () => {
    const bound = new ChatOpenAI({ ...openAIFields, useResponsesApi: true }).bindTools([
      functionTool,
    ]);
    expect(repairTargetOf(bound)).toBe("openai-responses");
  });

  it("a model made by initChatModel (as createAgent makes one from a string): the model it holds", async () => {
    const model = await initChatModel("openai:gpt-4.1", { apiKey: "test-key" });
    expect(repairTargetOf(model)).toBe("openai-completions");
    const anthropic = await initChatModel("anthropic:claude-sonnet-4-5", { apiKey: "test-key" });
    expect(repairTargetOf(anthropic)).toBe("anthropic");
  });

  it("asks again on every call: a model that holds another model now gets that model's target", async () => {
    const model = await initChatModel("openai:gpt-4.1", { apiKey: "test-key" });
    expect(repairTargetOf(model)).toBe("openai-completions");
    const held = (model as unknown as { _modelInstanceCache: Map<string, unknown> })
      ._modelInstanceCache;
    held.clear();
    held.set("claude", new ChatAnthropic({ model: "claude-sonnet-4-5", apiKey: "test-key" }));
    expect(repairTargetOf(model)).toBe("anthropic");
  });

  it('anything else, or a model that throws when read: "any"', () => {
    expect(repairTargetOf(fakeModel())).toBe("any");
    expect(repairTargetOf(undefined)).toBe("any");
    expect(repairTargetOf("openai:gpt-4.1")).toBe("any");
    const hostile = new Proxy(
      {},
      {
        get() {
          throw new Error("unreadable");
        },
      },
    );
    expect(repairTargetOf(hostile)).toBe("any");
  });
});
