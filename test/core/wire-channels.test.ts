/** readWire: every channel of an AI message's calls, matched into one list. */
import { describe, expect, it } from "vitest";
import { hasInvalidArguments, readWire } from "../../src/core/wire-channels.js";

describe("readWire", () => {
  it("gives undefined for anything that is not an object", () => {
    expect(readWire(null)).toBeUndefined();
    expect(readWire("ai")).toBeUndefined();
    expect(readWire(42)).toBeUndefined();
  });

  it("reads an array standing for an AI message like any object: its calls, none when it has none", () => {
    expect(readWire([])?.calls).toEqual([]);
    const message = Object.assign([], {
      type: "ai",
      tool_calls: [{ id: "a", name: "s", args: {} }],
    });
    expect(readWire(message)?.calls).toMatchObject([{ id: "a", name: "s", listed: 0 }]);
  });

  it("matches a tool_use block with the tool_calls entry of the same id", () => {
    const view = readWire({
      type: "ai",
      tool_calls: [{ id: "toolu_1", name: "search", args: {} }],
      content: [{ type: "tool_use", id: "toolu_1", name: "search", input: {} }],
    });
    expect(view?.calls).toHaveLength(1);
    expect(view?.calls[0]).toMatchObject({ id: "toolu_1", listed: 0, block: 0, raw: -1 });
  });

  it("reads the raw list only when tool_calls holds no entry", () => {
    const raw = [{ id: "call_1", type: "function", function: { name: "search", arguments: "{}" } }];
    const view = readWire({ type: "ai", tool_calls: [], additional_kwargs: { tool_calls: raw } });
    expect(view?.listedUsed).toBe(false);
    expect(view?.calls[0]).toMatchObject({ id: "call_1", name: "search", raw: 0 });
  });

  it("counts any object in tool_calls as a call, an array too, and skips the rest by position", () => {
    const view = readWire({ type: "ai", tool_calls: ["junk", [], { id: "call_2", name: "x" }] });
    expect(view?.calls.map((call) => call.listed)).toEqual([1, 2]);
    expect(view?.calls[0]?.id).toBeUndefined();
  });

  it("reads typed Responses output items of a message with content blocks", () => {
    const view = readWire({
      type: "ai",
      content: [],
      tool_calls: [{ id: "call_1", name: "search", args: {} }],
      response_metadata: {
        output: [
          { type: "function_call", call_id: "call_1", name: "search", arguments: "{}" },
          { type: "custom_tool_call", call_id: "call_2", name: "patch", input: "" },
        ],
      },
    });
    expect(view?.output).toBe(true);
    expect(view?.calls.map((call) => [call.id, call.kind, call.item])).toEqual([
      ["call_1", "function", 0],
      ["call_2", "custom", 1],
    ]);
  });
});

describe("hasInvalidArguments", () => {
  it("finds a call LangChain listed in invalid_tool_calls", () => {
    const message = {
      type: "ai",
      tool_calls: [{ id: "call_1", name: "search", args: {} }],
      invalid_tool_calls: [{ id: "call_1" }],
    };
    const call = readWire(message)?.calls[0];
    expect(call && hasInvalidArguments(message, call)).toBe(true);
  });

  it("finds raw arguments that do not parse, and passes those that do", () => {
    const message = (text: string) => ({
      type: "ai",
      additional_kwargs: { tool_calls: [{ id: "c", function: { name: "f", arguments: text } }] },
    });
    const broken = message('{"query": "cu');
    const whole = message('{"query": "cut"}');
    expect(hasInvalidArguments(broken, readWire(broken)?.calls[0] as never)).toBe(true);
    expect(hasInvalidArguments(whole, readWire(whole)?.calls[0] as never)).toBe(false);
  });
});
