/**
 * What providers receive: the repaired history run through the real LangChain converters of
 * OpenAI Chat Completions and Anthropic Messages. The synthetic marker must not reach the wire.
 */
import { convertPromptToAnthropic } from "@langchain/anthropic";
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import { ChatPromptValue } from "@langchain/core/prompt_values";
import { convertMessagesToCompletionsMessageParams } from "@langchain/openai";
import { describe, expect, it } from "vitest";
import { TURN_CATALOG } from "../src/core/locales.js";
import { repairToolCalls } from "../src/index.js";
import { aiCalls, human, toolResult } from "./helpers/history.js";

const broken = () => [
  human("weather in Lyon and Osaka?"),
  aiCalls(["call_1", "get_weather"], ["call_2", "get_weather"]),
  toolResult("call_2", "sunny", "get_weather"),
  human("hello?"),
];

function repaired(markSynthetic: boolean): BaseMessage[] {
  return repairToolCalls(broken(), { markSynthetic }).messages;
}

const toOpenAI = (messages: BaseMessage[]) =>
  convertMessagesToCompletionsMessageParams({ messages, model: "gpt-4.1" });
const toAnthropic = (messages: BaseMessage[]) =>
  convertPromptToAnthropic(new ChatPromptValue(messages));

describe("provider payloads", () => {
  it("sends OpenAI a tool message for every call, directly after the assistant message", () => {
    const payload = toOpenAI(repaired(true));
    // The synthetic reply stands between the tool messages and the user message.
    expect(payload.map((message) => message.role)).toEqual([
      "user",
      "assistant",
      "tool",
      "tool",
      "assistant",
      "user",
    ]);
    expect(payload[4]).toMatchObject({ role: "assistant", content: TURN_CATALOG.en.reply });
    expect(payload[4]).not.toHaveProperty("tool_calls");
    expect(payload.slice(2, 4)).toEqual([
      {
        role: "tool",
        name: "get_weather",
        tool_call_id: "call_1",
        content: "[Tool call was interrupted and did not return a result.]",
      },
      { role: "tool", name: "get_weather", tool_call_id: "call_2", content: "sunny" },
    ]);
  });

  it("sends Anthropic a tool_result for every tool_use in the next user turn", () => {
    const { messages } = toAnthropic(repaired(true));
    type Block = { type: string; id?: string; tool_use_id?: string; content?: unknown };
    const blocksOf = (index: number) => (messages[index]?.content ?? []) as Block[];
    expect(messages.map((message) => message.role)).toEqual([
      "user",
      "assistant",
      "user",
      "assistant",
      "user",
    ]);
    const toolUses = blocksOf(1).filter((block) => block.type === "tool_use");
    expect(toolUses.map((block) => block.id)).toEqual(["call_1", "call_2"]);
    const results = blocksOf(2).filter((block) => block.type === "tool_result");
    expect(results.map((block) => [block.tool_use_id, block.content])).toEqual([
      ["call_1", "[Tool call was interrupted and did not return a result.]"],
      ["call_2", "sunny"],
    ]);
    expect(JSON.stringify(messages[3]?.content)).toContain(TURN_CATALOG.en.reply);
  });

  it("sends the same payload with and without the synthetic marker", () => {
    expect(toOpenAI(repaired(true))).toEqual(toOpenAI(repaired(false)));
    expect(toAnthropic(repaired(true))).toEqual(toAnthropic(repaired(false)));
    expect(JSON.stringify(toOpenAI(repaired(true)))).not.toContain("synthetic");
    expect(JSON.stringify(toAnthropic(repaired(true)))).not.toContain("synthetic");
  });

  it("sends OpenAI no stray tool message for an invalid call it never receives", () => {
    const mixed = new AIMessage({
      content: "",
      tool_calls: [{ id: "call_1", name: "search", args: {} }],
      invalid_tool_calls: [{ id: "call_2", name: "search", args: "{", error: "bad JSON" }],
      additional_kwargs: {
        tool_calls: [
          { id: "call_1", type: "function", function: { name: "search", arguments: "{}" } },
          { id: "call_2", type: "function", function: { name: "search", arguments: "{" } },
        ],
      },
    });
    const payload = toOpenAI(repairToolCalls([human("go"), mixed, human("next")]).messages);
    const calls = (payload[1] as { tool_calls?: { id: string }[] }).tool_calls ?? [];
    const answered = payload.flatMap((message) =>
      "tool_call_id" in message ? [message.tool_call_id] : [],
    );
    expect(answered).toEqual(calls.map((call) => call.id));
  });
});
