/** Which calls each client sends, in which order, and whether what it sends lacks a name. */
import { describe, expect, it } from "vitest";
import { readWire, type WireView } from "../../src/core/wire-channels.js";
import { isUnsynced, lacksName, sentCalls } from "../../src/core/wire-clients.js";

/** An Anthropic message whose second call stands in tool_calls alone. */
const anthropic = {
  type: "ai",
  tool_calls: [
    { id: "toolu_1", name: "search", args: {} },
    { id: "toolu_2", name: "fetch", args: {} },
  ],
  content: [{ type: "tool_use", id: "toolu_1", name: "search", input: {} }],
};
const view = readWire(anthropic) as WireView;

describe("sentCalls", () => {
  it("gives ChatAnthropic's order: the tool_use blocks, then the calls of tool_calls they lack", () => {
    expect(sentCalls(view, "anthropic", anthropic).map((call) => call.id)).toEqual([
      "toolu_1",
      "toolu_2",
    ]);
  });

  it("leaves out a tool_calls entry of a server_tool_use block for ChatAnthropic", () => {
    const message = {
      type: "ai",
      tool_calls: [{ id: "srvtoolu_1", name: "web_search", args: {} }],
      content: [{ type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: {} }],
    };
    const read = readWire(message) as WireView;
    expect(sentCalls(read, "anthropic", message)).toEqual([]);
    expect(sentCalls(read, "openai-completions", message)).toHaveLength(1);
  });
});

describe("isUnsynced", () => {
  it("finds a call some client would not send", () => {
    const [first, second] = view.calls;
    expect(isUnsynced(view, first as never, anthropic)).toBe(false);
    // The Responses client of a v0 message without output items sends tool_calls: both calls.
    expect(isUnsynced(view, second as never, anthropic)).toBe(false);
    const blockOnly = {
      type: "ai",
      content: [{ type: "tool_use", id: "t", name: "n", input: {} }],
    };
    const read = readWire(blockOnly) as WireView;
    expect(isUnsynced(read, read.calls[0] as never, blockOnly)).toBe(true);
  });
});

describe("lacksName", () => {
  it("finds a call whose channel, as the client reads it, has no name", () => {
    const message = { type: "ai", tool_calls: [{ id: "call_1", name: "", args: {} }] };
    const read = readWire(message) as WireView;
    expect(lacksName(message, read, read.calls[0] as never, "openai-completions")).toBe(true);
  });

  it("does not ask a computer call's output item for a name", () => {
    const message = {
      type: "ai",
      content: [],
      response_metadata: { output: [{ type: "computer_call", call_id: "c", action: {} }] },
    };
    const read = readWire(message) as WireView;
    expect(lacksName(message, read, read.calls[0] as never, "openai-responses")).toBe(false);
  });
});
