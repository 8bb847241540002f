/**
 * Native-format histories for the adapters' tests: OpenAI Chat Completions bodies turned into AI
 * SDK `ModelMessage`s, and what the AI SDK itself refuses before it calls any model.
 */
import { convertToLanguageModelPrompt, standardizePrompt } from "ai/internal";

type Fields = Record<string, unknown>;

function fieldsOf(value: unknown): Fields {
  return value !== null && typeof value === "object" ? (value as Fields) : {};
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content.map((part) => String(fieldsOf(part).text ?? "")).join("");
  }
  return "";
}

/** The AI SDK's `ModelMessage`s for an OpenAI Chat Completions `messages` array. */
export function modelMessagesOf(openAIMessages: readonly unknown[]): unknown[] {
  const names = new Map<string, string>();
  return openAIMessages.map((entry) => {
    const message = fieldsOf(entry);
    switch (message.role) {
      case "assistant": {
        const text = textOf(message.content);
        const calls = (Array.isArray(message.tool_calls) ? message.tool_calls : []).map((raw) => {
          const call = fieldsOf(raw);
          const fn = fieldsOf(call.function);
          const toolName = typeof fn.name === "string" ? fn.name : "unknown";
          if (typeof call.id === "string") names.set(call.id, toolName);
          let input: unknown = {};
          try {
            input = JSON.parse(String(fn.arguments));
          } catch {
            // A cut-off call: the AI SDK keeps what it has.
          }
          return { type: "tool-call", toolCallId: call.id, toolName, input };
        });
        return {
          role: "assistant",
          content: [...(text === "" ? [] : [{ type: "text", text }]), ...calls],
        };
      }
      case "tool": {
        const id = message.tool_call_id;
        return {
          role: "tool",
          content: [
            {
              type: "tool-result",
              toolCallId: id,
              toolName: names.get(String(id)) ?? "unknown",
              output: { type: "text", value: textOf(message.content) },
            },
          ],
        };
      }
      case "system":
      case "developer":
        return { role: "system", content: textOf(message.content) };
      default:
        return { role: "user", content: textOf(message.content) };
    }
  });
}

/**
 * What the AI SDK refuses in these messages before any model is called (its prompt schema, or
 * `MissingToolResultsError`); `undefined` when it accepts them.
 */
export async function aiSdkRefusal(messages: readonly unknown[]): Promise<string | undefined> {
  try {
    const prompt = await standardizePrompt({ messages: messages as never });
    await convertToLanguageModelPrompt({ prompt, supportedUrls: {}, download: undefined });
    return undefined;
  } catch (error) {
    return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  }
}
