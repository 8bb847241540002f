/** withWireChanges: a repair's changes, written to every channel that carries a call. */
import { describe, expect, it } from "vitest";
import { copyWith } from "../../src/core/messages.js";
import { withWireChanges } from "../../src/core/wire-changes.js";
import { readWire, type WireView } from "../../src/core/wire-channels.js";

describe("withWireChanges", () => {
  it("gives the message itself when there is nothing to change", () => {
    const message = { type: "ai", tool_calls: [{ id: "call_1", name: "search", args: {} }] };
    const view = readWire(message) as WireView;
    expect(withWireChanges(message, view, new Map(), [], copyWith).message).toBe(message);
  });

  it("writes a new id to tool_calls and to the tool_use block of the same call", () => {
    const message = {
      type: "ai",
      tool_calls: [{ name: "search", args: {} }],
      content: [{ type: "tool_use", name: "search", input: {} }],
    };
    const view = readWire(message) as WireView;
    const written = withWireChanges(message, view, new Map([[0, { id: "tcr_0_0" }]]), [], copyWith);
    const copy = written.message as typeof message & { tool_calls: { id?: string }[] };
    expect(copy.tool_calls[0]?.id).toBe("tcr_0_0");
    expect((copy.content[0] as { id?: string }).id).toBe("tcr_0_0");
    expect(message.tool_calls[0]).not.toHaveProperty("id");
  });

  it("writes a call that stands only in a block into tool_calls, typed as a tool call", () => {
    const message = {
      type: "ai",
      content: [{ type: "tool_use", id: "toolu_1", name: "search", input: { query: "x" } }],
    };
    const view = readWire(message) as WireView;
    const written = withWireChanges(message, view, new Map(), [0], copyWith);
    expect(written.listed).toEqual([0]);
    expect((written.message as { tool_calls: unknown[] }).tool_calls).toEqual([
      { id: "toolu_1", name: "search", args: { query: "x" }, type: "tool_call" },
    ]);
  });

  it("copies a changed tool_calls entry that is an array as the object it is read as", () => {
    const message = { type: "ai", tool_calls: [["junk"]] };
    const view = readWire(message) as WireView;
    const written = withWireChanges(message, view, new Map([[0, { id: "tcr_0_0" }]]), [], copyWith);
    expect((written.message as { tool_calls: unknown[] }).tool_calls).toEqual([
      { 0: "junk", id: "tcr_0_0" },
    ]);
  });
});
