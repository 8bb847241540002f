/** Builders for chat histories, so tests read like the conversations they describe. */
import { AIMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";

/** A call as the tests write it: `"call_1"` or `["call_1", "search"]`. */
export type CallSpec = string | readonly [id: string, name: string];

function toolCall(spec: CallSpec) {
  const [id, name] = typeof spec === "string" ? [spec, "search"] : spec;
  return { id, name, args: { query: id }, type: "tool_call" as const };
}

/** An AI message that makes the given tool calls. */
export function aiCalls(...calls: CallSpec[]): AIMessage {
  return new AIMessage({ content: "", tool_calls: calls.map(toolCall) });
}

/** An AI message with text and no tool calls. */
export function aiText(text: string): AIMessage {
  return new AIMessage(text);
}

/** A tool message answering the call with this id. */
export function toolResult(id: string, content = `result of ${id}`, name = "search"): ToolMessage {
  return new ToolMessage({ content, tool_call_id: id, name });
}

/** A human message. */
export function human(text: string): HumanMessage {
  return new HumanMessage(text);
}

/** A system message. */
export function system(text: string): SystemMessage {
  return new SystemMessage(text);
}

/**
 * The README's thread: a `deploy` call stopped before its result (`call_deploy_1`), then the user
 * writes again.
 */
export function readmeThread(): [HumanMessage, AIMessage, HumanMessage] {
  return [
    new HumanMessage("Deploy billing, please."),
    new AIMessage({
      content: "",
      tool_calls: [{ id: "call_deploy_1", name: "deploy", args: { service: "billing" } }],
    }),
    new HumanMessage("Never mind. What happened?"),
  ];
}

/** A compact picture of a history: `ai(call_1,call_2)`, `tool(call_1)`, `human`, ... */
export function shapeOf(messages: readonly unknown[]): string[] {
  return messages.map((message) => {
    if (message === null || typeof message !== "object") return `junk(${String(message)})`;
    const fields = message as Record<string, unknown>;
    const type = fields.type ?? fields.role;
    if (type === "ai" || type === "assistant") {
      const calls = [
        ...((fields.tool_calls as ({ id?: string } | null)[] | undefined) ?? []),
        ...((fields.invalid_tool_calls as ({ id?: string } | null)[] | undefined) ?? []),
      ];
      return calls.length === 0 ? "ai" : `ai(${calls.map((call) => call?.id ?? "").join(",")})`;
    }
    if (type === "tool") return `tool(${String(fields.tool_call_id)})`;
    return String(type);
  });
}
