/** The repair targets, and how the Responses API types a call's answer. */
import { describe, expect, it } from "vitest";
import { answerKindOf, REPAIR_TARGETS, resultKindOf } from "../../src/core/wire-targets.js";

describe("resultKindOf", () => {
  it("reads a plain tool message as answering a function call", () => {
    expect(resultKindOf({ type: "tool", tool_call_id: "call_1" })).toBe("function");
    expect(resultKindOf({ additional_kwargs: null })).toBe("function");
    expect(resultKindOf(null)).toBe("function");
  });

  it("reads the custom-tool marker ChatOpenAI sets as answering a custom call", () => {
    expect(resultKindOf({ additional_kwargs: { customTool: true } })).toBe("custom");
  });

  it("reads a computer_call_output type as answering a computer call", () => {
    expect(resultKindOf({ additional_kwargs: { type: "computer_call_output" } })).toBe("computer");
  });
});

describe("answerKindOf", () => {
  it("asks the Responses API, and any client, for an answer of the call's own kind", () => {
    expect(answerKindOf("custom", "openai-responses")).toBe("custom");
    expect(answerKindOf("computer", "any")).toBe("computer");
  });

  it("takes any result on Chat Completions and Anthropic", () => {
    expect(answerKindOf("custom", "openai-completions")).toBeUndefined();
    expect(answerKindOf("computer", "anthropic")).toBeUndefined();
  });

  it("knows every repair target", () => {
    expect(REPAIR_TARGETS).toEqual(["any", "openai-completions", "openai-responses", "anthropic"]);
  });
});
