import type { ToolMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { PLACEHOLDER_CATALOG } from "../../src/core/locales.js";
import {
  createRepairPolicy,
  isOptionsError,
  isToolCallResilienceError,
  type RepairOptions,
  type RepairPolicy,
  repairToolCalls,
  ToolCallResilienceOptionsError,
} from "../../src/index.js";
import { aiCalls } from "../helpers/history.js";

function placeholderFor(options: RepairOptions, history = [aiCalls(["call_1", "search"])]) {
  return repairToolCalls(history, createRepairPolicy(options)).messages[1] as ToolMessage;
}

/** The placeholder texts for one interrupted call (`a`) and one invalid call (`b`). */
function placeholderTextsOfBothReasons(policy: RepairPolicy) {
  const history = [
    {
      type: "ai",
      content: [
        { type: "tool_use", id: "call_1", name: "a", input: {} },
        { type: "tool_use", id: "call_2", name: "b", input: {} },
      ],
      tool_calls: [{ id: "call_1", name: "a", args: {} }],
      invalid_tool_calls: [{ id: "call_2", name: "b", args: "{" }],
    },
  ];
  return repairToolCalls(history, policy)
    .messages.slice(1)
    .map((message) => (message as ToolMessage).content);
}

function problemsOf(options: unknown) {
  try {
    createRepairPolicy(options as RepairOptions);
  } catch (error) {
    if (isOptionsError(error)) return error;
    throw error;
  }
  throw new Error("expected createRepairPolicy to throw");
}

describe("placeholder templates", () => {
  it("fills {tool_name} and {tool_call_id}", () => {
    const text = placeholderFor({
      placeholder: "[{tool_name} ({tool_call_id}) was stopped.]",
    }).content;
    expect(text).toBe("[search (call_1) was stopped.]");
  });

  it("substitutes in a single pass, so a tool name that looks like a variable stays literal", () => {
    const history = [aiCalls(["call_1", "{tool_call_id}"])];
    const text = placeholderFor({ placeholder: "{tool_name}/{tool_call_id}" }, history).content;
    expect(text).toBe("{tool_call_id}/call_1");
  });

  it("applies a single template to every reason", () => {
    const policy = createRepairPolicy({ placeholder: "no result" });
    const texts = placeholderTextsOfBothReasons(policy);
    expect(texts).toEqual(["no result", "no result"]);
  });

  it("takes a map from reason to template, and uses the catalog for reasons left out", () => {
    const policy = createRepairPolicy({
      locale: "de",
      placeholder: { invalid_arguments: "bad args for {tool_name}" },
    });
    const texts = placeholderTextsOfBothReasons(policy);
    expect(texts).toEqual([PLACEHOLDER_CATALOG.de.interrupted, "bad args for b"]);
  });

  it("calls a function with the whole context", () => {
    const seen: unknown[] = [];
    const text = placeholderFor({
      locale: "es-MX",
      placeholder: (context) => {
        seen.push(context);
        return `${context.reason}: ${context.toolName}`;
      },
    }).content;
    expect(text).toBe("interrupted: search");
    expect(seen).toEqual([
      {
        toolName: "search",
        toolCallId: "call_1",
        reason: "interrupted",
        locale: "es-MX",
        defaultText: PLACEHOLDER_CATALOG.es.interrupted,
      },
    ]);
  });

  it("falls back to the catalog text and reports the error when the function throws", () => {
    const boom = new Error("boom");
    const { messages, repairs } = repairToolCalls([aiCalls("call_1")], {
      placeholder: () => {
        throw boom;
      },
    });
    expect((messages[1] as ToolMessage).content).toBe(PLACEHOLDER_CATALOG.en.interrupted);
    expect(repairs[0]?.placeholderError).toBe(boom);
  });

  it.each([
    ["an empty string", ""],
    ["a number", 42],
    ["undefined", undefined],
  ])("falls back to the catalog text when the function returns %s", (_label, value) => {
    const { messages, repairs } = repairToolCalls([aiCalls("call_1")], {
      placeholder: () => value as string,
    });
    expect((messages[1] as ToolMessage).content).toBe(PLACEHOLDER_CATALOG.en.interrupted);
    expect(repairs[0]?.placeholderError).toBeInstanceOf(TypeError);
  });
});

describe("option validation", () => {
  it("accepts no options and gives the defaults", () => {
    expect(createRepairPolicy()).toMatchObject({
      window: undefined,
      markSynthetic: true,
      orphans: "drop",
      misplaced: "regroup",
      locale: undefined,
    });
  });

  it("returns a frozen policy", () => {
    expect(Object.isFrozen(createRepairPolicy({ window: 10 }))).toBe(true);
  });

  it.each<[string, unknown, string, RegExp]>([
    ["a window of zero", { window: 0 }, "window", /at least 1/],
    ["a fractional window", { window: 2.5 }, "window", /integer/],
    ["a window given as text", { window: "50" }, "window", /number/],
    ["an unknown orphan policy", { orphans: "delete" }, "orphans", /"drop"|drop/],
    ["an unknown misplaced policy", { misplaced: "move" }, "misplaced", /regroup/],
    ["a malformed locale", { locale: "not a locale!" }, "locale", /BCP 47/],
    ["a non-boolean marker switch", { markSynthetic: "yes" }, "markSynthetic", /boolean/],
    [
      "an unknown template variable",
      { placeholder: "{toolname} stopped" },
      "placeholder",
      /\{toolname\}/,
    ],
    ["an unknown reason in a template map", { placeholder: { timeout: "x" } }, "placeholder", /.+/],
    ["a placeholder of the wrong type", { placeholder: 42 }, "placeholder", /template/],
    ["an unknown option", { windw: 10 }, "", /windw/],
    ["an empty template", { placeholder: "  " }, "placeholder", /some text/],
    [
      "an empty template in a map",
      { placeholder: { interrupted: "" } },
      "placeholder",
      /some text/,
    ],
  ])("rejects %s with a named error that says what is wrong", (_label, options, path, message) => {
    const error = problemsOf(options);
    expect(error).toBeInstanceOf(ToolCallResilienceOptionsError);
    expect(isToolCallResilienceError(error)).toBe(true);
    expect(error.name).toBe("ToolCallResilienceOptionsError");
    const problem = error.problems.find((candidate) => candidate.path.startsWith(path));
    expect(problem, JSON.stringify(error.problems)).toBeDefined();
    expect(`${problem?.path} ${problem?.message}`).toMatch(message);
    expect(error.message).toContain(problem?.message);
    expect(error.cause).toBeDefined();
  });

  it("words every value outside a set one way: the values it takes, then the one given", () => {
    const messages = (options: unknown) =>
      problemsOf(options).problems.map((problem) => `${problem.path}: ${problem.message}`);
    expect(messages({ orphans: "delete", misplaced: 3, target: "openai" })).toEqual([
      'orphans: expected one of "drop", "keep"; got "delete"',
      'misplaced: expected one of "regroup", "keep"; got 3',
      'target: expected one of "any", "openai-completions", "openai-responses", "anthropic"; got "openai"',
    ]);
    // The target a call's context names, checked by hand, reads the same.
    expect(() => repairToolCalls([], undefined, { target: "openai" as never })).toThrow(
      '- target: expected one of "any", "openai-completions", "openai-responses", "anthropic"; got "openai"',
    );
  });

  it("lists every problem at once", () => {
    const error = problemsOf({ window: -1, orphans: "nope" });
    expect(error.problems.map((problem) => problem.path).sort()).toEqual(["orphans", "window"]);
  });

  it("validates plain options passed straight to repairToolCalls too", () => {
    expect(() => repairToolCalls([], { window: 0 })).toThrow(ToolCallResilienceOptionsError);
  });
});
