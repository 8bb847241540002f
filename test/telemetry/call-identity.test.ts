/** What makes a dangling call one call: its history, its AI message, its id. */
import { AIMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import {
  danglingCallKey,
  graphRunOf,
  historyNamespaceOf,
} from "../../src/telemetry/call-identity.js";

describe("historyNamespaceOf", () => {
  it("is none for the root graph, whose tasks' namespaces are their own node's", () => {
    expect(historyNamespaceOf("model_request:9c1e8a")).toBeUndefined();
    expect(historyNamespaceOf("DanglingToolCallMiddleware.before_model:77aa")).toBeUndefined();
    expect(historyNamespaceOf("")).toBeUndefined();
  });

  it("is the graph's path without task ids, the same on every step of a sub-agent", () => {
    expect(historyNamespaceOf("tools:3f2a|model_request:9c1e")).toBe("tools");
    expect(historyNamespaceOf("tools:5b5b|model_request:0d0d")).toBe("tools");
    expect(historyNamespaceOf("research:1|agent:2")).toBe("research");
    expect(historyNamespaceOf("outer:1|inner:2|model_request:3")).toBe("outer|inner");
  });

  it("drops the numeric segments LangGraph adds for Send tasks", () => {
    expect(historyNamespaceOf("tools:3f2a|4|model_request:9c1e")).toBe("tools");
  });

  it("is none for anything but a string", () => {
    for (const junk of [undefined, null, 42, {}]) expect(historyNamespaceOf(junk)).toBeUndefined();
  });
});

describe("graphRunOf", () => {
  it("is none for the root graph", () => {
    expect(graphRunOf("model_request:9c1e")).toBeUndefined();
    expect(graphRunOf(undefined)).toBeUndefined();
  });

  it("is the same for a sub-agent's hook and model call, and differs between two sub-agents run at once", () => {
    expect(graphRunOf("tools:3f2a|DanglingToolCallMiddleware.before_model:77aa")).toBe(
      "tools:3f2a",
    );
    expect(graphRunOf("tools:3f2a|model_request:9c1e")).toBe("tools:3f2a");
    expect(graphRunOf("tools:5b5b|model_request:0d0d")).toBe("tools:5b5b");
  });
});

describe("danglingCallKey", () => {
  const ai = (id?: string) =>
    new AIMessage({ id, content: "", tool_calls: [{ id: "call_0", name: "search", args: {} }] });

  it("tells apart one call id made by two AI messages of one thread", () => {
    const place = { threadId: "t1" };
    expect(danglingCallKey(place, ai("ai_1"), 1, "call_0")).not.toBe(
      danglingCallKey(place, ai("ai_2"), 3, "call_0"),
    );
  });

  it("is the same for one call seen again, wherever its message now stands", () => {
    const place = { threadId: "t1" };
    expect(danglingCallKey(place, ai("ai_1"), 1, "call_0")).toBe(
      danglingCallKey(place, ai("ai_1"), 7, "call_0"),
    );
  });

  it("tells apart the histories of two graphs on one thread, by namespace", () => {
    expect(danglingCallKey({ threadId: "t1", namespace: "research" }, ai(), 1, "call_0")).not.toBe(
      danglingCallKey({ threadId: "t1", namespace: "write" }, ai(), 1, "call_0"),
    );
  });

  it("uses the message's position on a thread when the message has no id", () => {
    const place = { threadId: "t1" };
    expect(danglingCallKey(place, ai(), 1, "call_0")).not.toBe(
      danglingCallKey(place, ai(), 3, "call_0"),
    );
    expect(danglingCallKey(place, ai(), 1, "call_0")).toBe(
      danglingCallKey(place, ai(), 1, "call_0"),
    );
  });

  it("tells apart two id-less messages at one position that make different calls of one id", () => {
    const place = { threadId: "t1" };
    const asking = (query: string) =>
      new AIMessage({
        content: "",
        tool_calls: [{ id: "call_0", name: "search", args: { query } }],
      });
    expect(danglingCallKey(place, asking("flights"), 1, "call_0")).not.toBe(
      danglingCallKey(place, asking("hotels"), 1, "call_0"),
    );
  });

  it("is a key without a thread when the message has an id of its own", () => {
    const place = { threadId: undefined };
    const key = danglingCallKey(place, ai("ai_1"), 1, "call_0");
    expect(key).toEqual(expect.any(String));
    expect(danglingCallKey(place, ai("ai_1"), 4, "call_0")).toBe(key);
    expect(danglingCallKey(place, ai("ai_2"), 1, "call_0")).not.toBe(key);
    expect(danglingCallKey(place, ai("ai_1"), 1, "call_1")).not.toBe(key);
  });

  it("is none without a thread and a message id: such a call counts at every sighting", () => {
    expect(danglingCallKey({ threadId: undefined }, ai(), 1, "call_0")).toBeUndefined();
    expect(danglingCallKey({ threadId: undefined }, { id: "" }, 1, "call_0")).toBeUndefined();
  });
});
