/**
 * The providers' documented tool-calling rules, checked on request bodies as each provider
 * receives them, with each provider's own error text. The strict provider server answers 400 with
 * these; the property tests hold every repaired history to all three.
 *
 * - OpenAI Chat Completions: an assistant message with `tool_calls` is followed directly by tool
 *   messages answering each `tool_call_id`; a tool message answers a call of the assistant message
 *   before its run of tool messages.
 * - Anthropic Messages: an assistant message with `tool_use` blocks is followed by a user message
 *   that opens with a `tool_result` block for each of them, before any other block; a
 *   `tool_result` answers a `tool_use` of the message right before.
 * - Gemini: a model turn with function calls is followed by a turn with as many function
 *   responses.
 */

/** A rule a request body breaks, with the provider's error text and where it points. */
export interface Violation {
  readonly message: string;
  /** The OpenAI `param`, or the Anthropic path at the start of the message. */
  readonly param: string;
}

type Fields = Record<string, unknown>;

function fieldsOf(value: unknown): Fields | undefined {
  return value !== null && typeof value === "object" ? (value as Fields) : undefined;
}

function listOf(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

// ---------------------------------------------------------------------------------------------
// OpenAI Chat Completions

/**
 * What OpenAI refuses in a Chat Completions `messages` array, first problem first (the API
 * reports one at a time).
 *
 * @example
 * ```ts
 * openAIViolations([{ role: "assistant", tool_calls: [{ id: "c1" }] }, { role: "user" }]);
 * // [{ message: "An assistant message with 'tool_calls' must be followed by ...: c1", ... }]
 * ```
 */
export function openAIViolations(messages: readonly unknown[]): Violation[] {
  const violations: Violation[] = [];
  let index = 0;
  while (index < messages.length) {
    const message = fieldsOf(messages[index]);
    if (message?.role === "tool") {
      violations.push({
        message:
          "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
        param: `messages.[${index}].role`,
      });
      index++;
      continue;
    }
    const calls = message?.role === "assistant" ? listOf(message.tool_calls) : [];
    if (calls.length === 0) {
      index++;
      continue;
    }
    const unanswered = new Set(calls.map((call) => String(fieldsOf(call)?.id)));
    let next = index + 1;
    for (; next < messages.length; next++) {
      const result = fieldsOf(messages[next]);
      if (result?.role !== "tool") break;
      const id = String(result.tool_call_id);
      if (!unanswered.delete(id) && !calls.some((call) => fieldsOf(call)?.id === id)) {
        violations.push({
          message:
            "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
          param: `messages.[${next}].role`,
        });
      }
    }
    if (unanswered.size > 0) {
      violations.push({
        message: `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${[...unanswered].join(", ")}`,
        param: `messages.[${index}].role`,
      });
    }
    index = next;
  }
  return violations;
}

// ---------------------------------------------------------------------------------------------
// Anthropic Messages

/**
 * What Anthropic refuses in a Messages API `messages` array.
 *
 * @example
 * ```ts
 * anthropicViolations([
 *   { role: "assistant", content: [{ type: "tool_use", id: "t1" }] },
 *   { role: "user", content: "hi" },
 * ]); // [{ message: "messages.0: `tool_use` ids were found without `tool_result` ...", ... }]
 * ```
 */
export function anthropicViolations(messages: readonly unknown[]): Violation[] {
  const violations: Violation[] = [];
  let previousToolUses: string[] = [];
  messages.forEach((entry, index) => {
    const message = fieldsOf(entry);
    const blocks = listOf(message?.content).map((block) => fieldsOf(block) ?? {});
    if (message?.role === "user") {
      let leading = true;
      blocks.forEach((block, position) => {
        if (block.type !== "tool_result") {
          leading = false;
          return;
        }
        const id = String(block.tool_use_id);
        if (!previousToolUses.includes(id) || !leading) {
          violations.push({
            message: `messages.${index}.content.${position}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${id}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`,
            param: `messages.${index}.content.${position}`,
          });
        }
      });
    }
    const toolUses =
      message?.role === "assistant"
        ? blocks.filter((block) => block.type === "tool_use").map((block) => String(block.id))
        : [];
    if (toolUses.length > 0) {
      const next = fieldsOf(messages[index + 1]);
      const answered = new Set<string>();
      if (next?.role === "user") {
        for (const block of listOf(next.content).map((value) => fieldsOf(value) ?? {})) {
          if (block.type !== "tool_result") break;
          answered.add(String(block.tool_use_id));
        }
      }
      const missing = toolUses.filter((id) => !answered.has(id));
      if (missing.length > 0) {
        violations.push({
          message: `messages.${index}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(", ")}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`,
          param: `messages.${index}`,
        });
      }
    }
    previousToolUses = toolUses;
  });
  return violations;
}

// ---------------------------------------------------------------------------------------------
// Gemini

/** A Gemini `contents` entry: a role and its parts. */
export interface GeminiContent {
  readonly role: "user" | "model";
  readonly parts: readonly Fields[];
}

/**
 * What Gemini refuses in `contents`: a turn of function calls not followed by a turn with as many
 * function responses, or function responses after anything but such a turn.
 */
export function geminiViolations(contents: readonly GeminiContent[]): Violation[] {
  const count = (content: GeminiContent | undefined, key: string) =>
    content?.parts.filter((part) => part[key] !== undefined).length ?? 0;
  const violations: Violation[] = [];
  contents.forEach((content, index) => {
    const calls = count(content, "functionCall");
    const responses = count(content, "functionResponse");
    const mismatched =
      (calls > 0 && count(contents[index + 1], "functionResponse") !== calls) ||
      (responses > 0 && count(contents[index - 1], "functionCall") === 0);
    if (mismatched) {
      violations.push({
        message:
          "Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.",
        param: `contents[${index}]`,
      });
    }
  });
  return violations;
}

/**
 * A LangChain history as Gemini's `contents`: human and tool messages as user turns (a tool
 * message as a `functionResponse` part), AI messages as model turns (text, then a `functionCall`
 * part per call), system messages left out (they go to `systemInstruction`), and consecutive
 * turns of one role merged into one, as the Google clients send them.
 */
export function toGeminiContents(messages: readonly unknown[]): GeminiContent[] {
  const contents: { role: "user" | "model"; parts: Fields[] }[] = [];
  for (const entry of messages) {
    const message = fieldsOf(entry);
    const type = message?.type;
    let role: "user" | "model";
    const parts: Fields[] = [];
    if (type === "ai") {
      role = "model";
      if (typeof message?.content === "string" && message.content !== "") {
        parts.push({ text: message.content });
      }
      for (const call of listOf(message?.tool_calls)) {
        const fields = fieldsOf(call);
        parts.push({ functionCall: { name: fields?.name, args: fields?.args ?? {} } });
      }
    } else if (type === "tool") {
      role = "user";
      parts.push({
        functionResponse: { name: message?.name, response: { content: message?.content } },
      });
    } else if (type === "human") {
      role = "user";
      parts.push({ text: typeof message?.content === "string" ? message.content : "" });
    } else {
      continue;
    }
    const last = contents.at(-1);
    if (last?.role === role) last.parts.push(...parts);
    else contents.push({ role, parts });
  }
  return contents;
}
