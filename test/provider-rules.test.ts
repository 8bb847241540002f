/**
 * The provider rules the reliability tests rely on refuse what each provider refuses, with its
 * own words, and accept what it accepts: a validator that accepted everything would make every
 * test built on it pass for nothing.
 */
import { describe, expect, it } from "vitest";
import { repairToolCalls } from "../src/index.js";
import { aiCalls, aiText, human, system, toolResult } from "./helpers/history.js";
import { ACCEPTED_BY_ALL, providerViolations } from "./helpers/provider-payloads.js";
import {
  anthropicViolations,
  openAIViolations,
  responsesViolations,
} from "./helpers/provider-rules.js";

const NONE = ACCEPTED_BY_ALL;

describe("provider rules", () => {
  it("accept a history whose every call is answered right after it", () => {
    const history = [
      system("be brief"),
      human("weather in Lyon and Osaka?"),
      aiCalls("call_1", "call_2"),
      toolResult("call_1"),
      toolResult("call_2"),
      aiText("Sunny in both."),
      human("thanks"),
    ];
    expect(providerViolations(history)).toEqual(NONE);
  });

  it("refuse a call without a result, each provider in its own words", () => {
    const { openai, anthropic, gemini } = providerViolations([
      human("deploy"),
      aiCalls("call_1"),
      human("stop"),
    ]);
    expect(openai.map((violation) => violation.message)).toEqual([
      "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: call_1",
    ]);
    expect(anthropic.map((violation) => violation.message)).toEqual([
      "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: call_1. Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
    ]);
    expect(gemini).toHaveLength(1);
  });

  it("refuse one missing result among parallel calls", () => {
    const { openai, anthropic, gemini } = providerViolations([
      human("both"),
      aiCalls("call_1", "call_2"),
      toolResult("call_2"),
      human("and?"),
    ]);
    expect(openai[0]?.message).toMatch(/did not have response messages: call_1$/);
    expect(anthropic[0]?.message).toMatch(/immediately after: call_1\./);
    expect(gemini).toHaveLength(1);
  });

  it("refuse a result that answers no call", () => {
    const { openai, anthropic, gemini } = providerViolations([
      human("hi"),
      toolResult("call_9"),
      aiText("hello"),
    ]);
    expect(openai[0]?.message).toBe(
      "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
    );
    expect(anthropic[0]?.message).toMatch(
      /unexpected `tool_use_id` found in `tool_result` blocks: call_9/,
    );
    expect(gemini).toHaveLength(1);
  });

  it("refuse a result separated from its call by a human message", () => {
    const { openai, anthropic } = providerViolations([
      aiCalls("call_1"),
      human("still there?"),
      toolResult("call_1"),
    ]);
    expect(openai.length).toBeGreaterThan(0);
    expect(anthropic.length).toBeGreaterThan(0);
  });

  it("refuse text before a tool_result in Anthropic's user turn", () => {
    const violations = anthropicViolations([
      { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "search", input: {} }] },
      {
        role: "user",
        content: [
          { type: "text", text: "first" },
          { type: "tool_result", tool_use_id: "t1", content: "ok" },
        ],
      },
    ]);
    expect(violations.map((violation) => violation.param)).toEqual([
      "messages.0",
      "messages.1.content.1",
    ]);
  });

  it("point OpenAI's error at the assistant message", () => {
    const violations = openAIViolations([
      { role: "user", content: "go" },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "c1", type: "function", function: { name: "search", arguments: "{}" } }],
      },
      { role: "user", content: "stop" },
    ]);
    expect(violations.map((violation) => violation.param)).toEqual(["messages.[1].role"]);
  });

  it("refuse a call without a name or an id, each provider in its own words", () => {
    expect(
      openAIViolations([
        {
          role: "assistant",
          content: null,
          tool_calls: [
            { id: "c1", type: "function", function: { name: "", arguments: "{}" } },
            { type: "function", function: { name: "search", arguments: "{}" } },
          ],
        },
      ]).map((violation) => violation.message),
    ).toEqual([
      "Invalid 'messages[0].tool_calls[0].function.name': empty string. Expected a string with minimum length 1, but got an empty string instead.",
      "Missing required parameter: 'messages[0].tool_calls[1].id'.",
      "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: c1, undefined",
    ]);
    expect(
      anthropicViolations([
        {
          role: "assistant",
          content: [
            { type: "tool_use", id: "", name: "search", input: {} },
            { type: "tool_use", id: "t1", name: "", input: {} },
            { type: "tool_use", id: "t1", name: "search", input: {} },
          ],
        },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "", content: "a" },
            { type: "tool_result", tool_use_id: "t1", content: "b" },
            { type: "tool_result", tool_use_id: "t1", content: "c" },
          ],
        },
      ]).map((violation) => violation.message),
    ).toEqual([
      "messages.0.content.0.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'",
      "messages.0.content.1.tool_use.name: String should have at least 1 character",
      "messages.0.content.2: `tool_use` ids must be unique",
      "messages.1: each tool_use must have a single result. Found multiple `tool_result` blocks with id: t1",
    ]);
  });

  it("refuse on the Responses API a call without an output, an output without a call, and an output of another type", () => {
    const call = (type: string, id: string) =>
      type === "computer_call"
        ? { type, call_id: id, action: { type: "screenshot" } }
        : { type, call_id: id, name: "grep", arguments: "{}", input: "x" };
    expect(
      responsesViolations([
        { type: "function_call_output", call_id: "early", output: "x" },
        call("function_call", "early"),
        call("function_call", "fc"),
        call("custom_tool_call", "ctc"),
        { type: "function_call_output", call_id: "ctc", output: "x" },
        call("computer_call", "cu"),
        {
          type: "computer_call_output",
          call_id: "cu",
          output: { type: "input_image", image_url: "[interrupted]" },
        },
        { type: "function_call_output", call_id: "fc", output: "x" },
        { type: "function_call_output", call_id: "fc", output: "again" },
      ]).map((violation) => violation.message),
    ).toEqual([
      "No tool call found for function call output with call_id early.",
      "No tool call found for function call output with call_id ctc.",
      "Invalid 'input[6].output': expected a screenshot (an image URL or a file id).",
      "Duplicate function call output for call_id fc in 'input[8]'.",
      "No tool output found for function call early.",
      "No tool output found for custom tool call ctc.",
    ]);
  });

  it("accept on the Responses API each call answered once, after it, by an output of its own type", () => {
    expect(
      responsesViolations([
        { type: "message", role: "user", content: "go" },
        { type: "function_call", call_id: "fc", name: "search", arguments: "{}" },
        { type: "custom_tool_call", call_id: "ctc", name: "grep", input: "x" },
        { type: "computer_call", call_id: "cu", action: { type: "screenshot" } },
        { type: "web_search_call", id: "ws", status: "completed" },
        {
          type: "computer_call_output",
          call_id: "cu",
          output: { type: "input_image", image_url: "data:image/png;base64,AA" },
        },
        { type: "custom_tool_call_output", call_id: "ctc", output: "x" },
        { type: "function_call_output", call_id: "fc", output: "x" },
      ]),
    ).toEqual([]);
  });

  it("accept what the repair makes of each of these histories", () => {
    const broken = [
      [human("deploy"), aiCalls("call_1"), human("stop")],
      [human("both"), aiCalls("call_1", "call_2"), toolResult("call_2"), human("and?")],
      [human("hi"), toolResult("call_9"), aiText("hello")],
      [aiCalls("call_1"), human("still there?"), toolResult("call_1")],
    ];
    for (const history of broken) {
      expect(providerViolations(repairToolCalls(history).messages)).toEqual(NONE);
    }
  });
});
