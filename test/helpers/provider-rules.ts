/**
 * The providers' documented tool-calling rules, checked on request bodies as each provider
 * receives them, with each provider's own error text. The strict provider server answers 400 with
 * these; the property tests hold every repaired history to all three.
 *
 * - OpenAI Chat Completions: an assistant message with `tool_calls` is followed directly by tool
 *   messages answering each `tool_call_id`; a tool message answers a call of the assistant message
 *   before its run of tool messages; every call has an id and a function name.
 * - OpenAI Responses API: each call the application runs (`function_call`, `custom_tool_call`,
 *   `computer_call`, `local_shell_call`, `shell_call`, `apply_patch_call`, and `tool_search_call`
 *   with `execution: "client"`) is answered exactly once, after it, by an output of its own type
 *   with its `call_id` (an output answers the earliest such call still unanswered; a tool search
 *   output does whatever its own `execution` says); no output stands without its call; calls have
 *   a `call_id`, and function and custom tool calls a name; each output has the shape of its type
 *   (a computer call's is a screenshot, a shell call's a list of chunks, an apply-patch call's a
 *   status); no two items share an `id`. What the API runs itself needs no output: built-in tools,
 *   MCP calls, a server-side tool search (whose output may follow, as may a tool search output
 *   without `execution` that answers no client call), and a shell call in its own container
 *   (whose output may follow).
 * - Anthropic Messages: an assistant message with `tool_use` blocks is followed by a user message
 *   that opens with a `tool_result` block for each of them, before any other block; a
 *   `tool_result` answers a `tool_use` of the message right before, once; `tool_use` blocks have
 *   a name and an id of their own.
 * - Gemini: a model turn with function calls is followed by a turn with as many function
 *   responses; with `geminiTurnViolations`, each also named as the call it answers, in order (the
 *   API reference of `FunctionResponse.name`: "Matches FunctionDeclaration.name and
 *   FunctionCall.name"; the text of a mismatch is ours, the count's is the API's).
 * - Bedrock Converse (the `ConverseCommand`'s `messages`, AWS's `ValidationException` texts): the
 *   conversation starts with a user message and alternates user and assistant roles; every
 *   `toolUse` of an assistant message is answered by a `toolResult` with its `toolUseId` in the
 *   user message right after; a user message has no more `toolResult` blocks than the message
 *   before has `toolUse` blocks.
 * - Mistral chat completions (`messages`, in the wire's snake_case or the Mistral SDK's
 *   camelCase): a `tool` message follows an assistant message with tool calls or another tool
 *   message; after tool messages the next message is an assistant message; every tool call is
 *   answered by a tool message with its id before the next message of another role, and no tool
 *   message answers anything else; tool call ids are 9 characters of `[a-zA-Z0-9]` (Mistral's
 *   API errors, as reported in its client's and users' issues).
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
  messages.forEach((entry, index) => {
    const message = fieldsOf(entry);
    if (message?.role !== "assistant") return;
    listOf(message.tool_calls).forEach((call, position) => {
      const fields = fieldsOf(call);
      const path = `messages[${index}].tool_calls[${position}]`;
      if (typeof fields?.id !== "string") {
        violations.push({
          message: `Missing required parameter: '${path}.id'.`,
          param: `${path}.id`,
        });
      }
      const name = fieldsOf(fields?.function)?.name;
      if (typeof name !== "string") {
        violations.push({
          message: `Missing required parameter: '${path}.function.name'.`,
          param: `${path}.function.name`,
        });
      } else if (name === "") {
        violations.push({
          message: `Invalid '${path}.function.name': empty string. Expected a string with minimum length 1, but got an empty string instead.`,
          param: `${path}.function.name`,
        });
      }
    });
  });
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
    if (message?.role === "assistant") {
      const seen = new Set<string>();
      blocks.forEach((block, position) => {
        if (block.type !== "tool_use") return;
        const path = `messages.${index}.content.${position}`;
        if (typeof block.name !== "string" || block.name === "") {
          violations.push({
            message: `${path}.tool_use.name: String should have at least 1 character`,
            param: path,
          });
        }
        if (typeof block.id !== "string" || !/^[a-zA-Z0-9_-]+$/.test(block.id)) {
          violations.push({
            message: `${path}.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'`,
            param: path,
          });
        } else if (seen.has(block.id)) {
          violations.push({ message: `${path}: \`tool_use\` ids must be unique`, param: path });
        }
        if (typeof block.id === "string") seen.add(block.id);
      });
    }
    if (message?.role === "user") {
      let leading = true;
      const answered = new Set<string>();
      blocks.forEach((block, position) => {
        if (block.type !== "tool_result") {
          leading = false;
          return;
        }
        const id = String(block.tool_use_id);
        if (answered.has(id)) {
          violations.push({
            message: `messages.${index}: each tool_use must have a single result. Found multiple \`tool_result\` blocks with id: ${id}`,
            param: `messages.${index}`,
          });
        }
        answered.add(id);
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
// OpenAI Responses API

/**
 * The Responses API's call item types the application answers: the output type that answers each,
 * its wording, and whether the call carries a name.
 */
const RESPONSES_CALLS: Readonly<Record<string, { output: string; words: string; named: boolean }>> =
  {
    function_call: { output: "function_call_output", words: "function call", named: true },
    custom_tool_call: { output: "custom_tool_call_output", words: "custom tool call", named: true },
    computer_call: { output: "computer_call_output", words: "computer call", named: false },
    local_shell_call: {
      output: "local_shell_call_output",
      words: "local shell call",
      named: false,
    },
    shell_call: { output: "shell_call_output", words: "shell call", named: false },
    apply_patch_call: {
      output: "apply_patch_call_output",
      words: "apply patch call",
      named: false,
    },
    tool_search_call: { output: "tool_search_output", words: "tool search call", named: false },
  };

const RESPONSES_OUTPUTS: ReadonlyMap<string, string> = new Map(
  Object.entries(RESPONSES_CALLS).map(([call, { output }]) => [output, call]),
);

/**
 * Whether the application runs this item's tool: a shell call only outside the API's own
 * container; a tool search call only with `execution: "client"`, and a tool search output when it
 * says so or when its `call_id` is on such a call of the input (the SDK's input type makes an
 * output's `execution` optional: an output answers its call, whatever it says of itself).
 *
 * @param clientSearches - the `call_id`s of the input's client tool search calls
 */
function isClientRun(item: Fields, type: string, clientSearches: ReadonlySet<unknown>): boolean {
  if (type === "shell_call") return fieldsOf(item.environment)?.type !== "container_reference";
  if (type === "tool_search_output" && clientSearches.has(item.call_id)) return true;
  return !type.startsWith("tool_search") || item.execution === "client";
}

/**
 * What the Responses API refuses in an `input` list, first problem first. The texts of a call
 * without an output and of an output without a call are the API's own ("No tool output found for
 * function call call_bad."); the others follow its wording for invalid parameters.
 *
 * @example
 * ```ts
 * responsesViolations([{ type: "function_call", call_id: "c1", name: "search", arguments: "{}" }]);
 * // [{ message: "No tool output found for function call c1.", param: "input" }]
 * ```
 */
export function responsesViolations(input: readonly unknown[]): Violation[] {
  const violations: Violation[] = [];
  /** Calls met so far, in order: their call_id, type, and whether an output answered them. */
  const calls: { id: string; type: string; answered: boolean }[] = [];
  const itemIds = new Set<string>();
  /** The shell calls the API runs in its container, and so answers itself. */
  const hostedShellCalls = new Set<unknown>();
  const clientSearches = new Set(
    input
      .map((entry) => fieldsOf(entry) ?? {})
      .filter((item) => item.type === "tool_search_call" && item.execution === "client")
      .map((item) => item.call_id),
  );
  input.forEach((entry, index) => {
    const item = fieldsOf(entry) ?? {};
    const type = String(item.type);
    if (typeof item.id === "string") {
      if (itemIds.has(item.id)) {
        violations.push({
          message: `Duplicate item found with id ${item.id}. Remove duplicate items from your input and try again.`,
          param: "input",
        });
      }
      itemIds.add(item.id);
    }
    if (!isClientRun(item, type, clientSearches)) {
      if (type === "shell_call") hostedShellCalls.add(item.call_id);
      return;
    }
    if (type === "shell_call_output" && hostedShellCalls.has(item.call_id)) return;
    const call = RESPONSES_CALLS[type];
    if (call !== undefined) {
      const id = item.call_id;
      if (typeof id !== "string" || id === "") {
        violations.push({
          message: `Invalid 'input[${index}].call_id': empty string. Expected a string with minimum length 1, but got an empty string instead.`,
          param: `input[${index}].call_id`,
        });
        return;
      }
      if (call.named && (typeof item.name !== "string" || item.name === "")) {
        violations.push({
          message: `Invalid 'input[${index}].name': empty string. Expected a string with minimum length 1, but got an empty string instead.`,
          param: `input[${index}].name`,
        });
      }
      calls.push({ id, type, answered: false });
      return;
    }
    const answers = RESPONSES_OUTPUTS.get(type);
    if (answers === undefined) return;
    // A local shell output was once keyed by its `id`; it is keyed by `call_id` now.
    const key = item.call_id ?? (type === "local_shell_call_output" ? item.id : undefined);
    const id = String(key);
    const words = (RESPONSES_CALLS[answers] as { words: string }).words;
    const ofItsType = calls.filter((call) => call.id === id && call.type === answers);
    if (ofItsType.length === 0) {
      violations.push({
        message: `No tool call found for ${words} output with call_id ${id}.`,
        param: "input",
      });
      return;
    }
    const called = ofItsType.find((call) => !call.answered);
    if (called === undefined) {
      violations.push({
        message: `Duplicate ${words} output for call_id ${id} in 'input[${index}]'.`,
        param: `input[${index}]`,
      });
      return;
    }
    called.answered = true;
    const shape = outputShapeViolation(item, type, index);
    if (shape !== undefined) violations.push(shape);
  });
  for (const call of calls) {
    if (call.answered) continue;
    const words = (RESPONSES_CALLS[call.type] as { words: string }).words;
    violations.push({ message: `No tool output found for ${words} ${call.id}.`, param: "input" });
  }
  return violations;
}

/** What the API refuses in the fields of an output item of this type, if anything. */
function outputShapeViolation(item: Fields, type: string, index: number): Violation | undefined {
  const output = item.output;
  const param = `input[${index}].output`;
  const gotWords = (value: unknown) => {
    const kind = Array.isArray(value) ? "array" : value === null ? "null" : typeof value;
    return kind === "null" ? kind : `${/^[aeiou]/.test(kind) ? "an" : "a"} ${kind}`;
  };
  switch (type) {
    case "computer_call_output":
      return isScreenshot(output)
        ? undefined
        : {
            message: `Invalid '${param}': expected a screenshot (an image URL or a file id).`,
            param,
          };
    case "local_shell_call_output":
      return typeof output === "string"
        ? undefined
        : {
            message: `Invalid type for '${param}': expected a string, but got ${gotWords(output)} instead.`,
            param,
          };
    case "shell_call_output":
      return Array.isArray(output) && output.every(isShellChunk)
        ? undefined
        : {
            message: `Invalid '${param}': expected an array of shell output chunks (stdout, stderr and an outcome).`,
            param,
          };
    case "apply_patch_call_output":
      return item.status === "completed" || item.status === "failed"
        ? undefined
        : {
            message: `Invalid value: '${String(item.status)}'. Supported values are: 'completed' and 'failed'.`,
            param: `input[${index}].status`,
          };
    case "tool_search_output":
      return Array.isArray(item.tools)
        ? undefined
        : {
            message: `Invalid type for 'input[${index}].tools': expected an array, but got ${gotWords(item.tools)} instead.`,
            param: `input[${index}].tools`,
          };
    default:
      return undefined;
  }
}

function isShellChunk(chunk: unknown): boolean {
  const fields = fieldsOf(chunk);
  const outcome = fieldsOf(fields?.outcome);
  return (
    typeof fields?.stdout === "string" &&
    typeof fields.stderr === "string" &&
    (outcome?.type === "timeout" ||
      (outcome?.type === "exit" && typeof outcome.exit_code === "number"))
  );
}

function isScreenshot(output: unknown): boolean {
  const fields = fieldsOf(output);
  if (fields?.type !== "input_image" && fields?.type !== "computer_screenshot") return false;
  const url = fields.image_url;
  if (typeof url === "string") return /^(data:image\/|https?:\/\/)/.test(url);
  return typeof fields.file_id === "string";
}

// ---------------------------------------------------------------------------------------------
// Gemini

/**
 * A Gemini `contents` entry: a role and its parts. `@langchain/google-common` (Vertex AI) sends
 * tool results under the role `function`, which Gemini reads as a user turn.
 */
export interface GeminiContent {
  readonly role: "user" | "model" | "function";
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
 * {@link geminiViolations}, and a function response named otherwise than the call it answers (the
 * i-th response of a turn answers the i-th call of the turn before). The text of the name's
 * violation is ours: the API's own was not found.
 *
 * @example
 * ```ts
 * geminiTurnViolations([
 *   { role: "model", parts: [{ functionCall: { name: "lookup" } }, { functionCall: { name: "deploy" } }] },
 *   { role: "function", parts: [{ functionResponse: { name: "lookup" } }, { functionResponse: { name: "lookup" } }] },
 * ]); // [{ message: "contents[1].parts[1].function_response.name: the name \"lookup\" does not match ...", ... }]
 * ```
 */
export function geminiTurnViolations(contents: readonly GeminiContent[]): Violation[] {
  const violations = geminiViolations(contents);
  contents.forEach((content, index) => {
    const calls = (contents[index - 1]?.parts ?? [])
      .map((part) => fieldsOf(part.functionCall))
      .filter((call) => call !== undefined);
    let answered = 0;
    content.parts.forEach((part, position) => {
      const response = fieldsOf(part.functionResponse);
      if (response === undefined) return;
      const call = calls[answered++];
      if (call === undefined || response.name === call.name) return;
      const param = `contents[${index}].parts[${position}].function_response.name`;
      violations.push({
        message: `${param}: the name ${JSON.stringify(response.name)} does not match the name ${JSON.stringify(call.name)} of the function call it answers.`,
        param,
      });
    });
  });
  return violations;
}

/**
 * A LangChain history as Gemini's `contents`: human and tool messages as user turns (a tool
 * message as a `functionResponse` part), AI messages as model turns (text, then a `functionCall`
 * part per call), system messages left out (they go to `systemInstruction`), and consecutive
 * turns of one role merged into one. The real clients differ (see `provider-captures.ts`):
 * `ChatGoogleGenerativeAI` sends every message as a turn of its own, `ChatVertexAI` merges only
 * consecutive tool results.
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

// ---------------------------------------------------------------------------------------------
// Bedrock Converse

/** The `toolUseId`s of a Converse message's blocks of this kind (`toolUse` or `toolResult`). */
function converseIdsOf(message: unknown, kind: "toolUse" | "toolResult"): string[] {
  return listOf(fieldsOf(message)?.content)
    .map((block) => fieldsOf(fieldsOf(block)?.[kind]))
    .filter((block) => block !== undefined)
    .map((block) => String(block.toolUseId));
}

/**
 * What Bedrock's Converse API refuses in a `ConverseCommand`'s `messages`, with its
 * `ValidationException` texts.
 *
 * @example
 * ```ts
 * converseViolations([
 *   { role: "user", content: [{ text: "hi" }] },
 *   { role: "assistant", content: [{ toolUse: { toolUseId: "t1", name: "f", input: {} } }] },
 *   { role: "user", content: [{ text: "and?" }] },
 * ]); // [{ message: "Expected toolResult blocks at messages.2.content for the following Ids: t1", ... }]
 * ```
 */
export function converseViolations(messages: readonly unknown[]): Violation[] {
  const violations: Violation[] = [];
  const roles = messages.map((entry) => fieldsOf(entry)?.role);
  if (roles.length > 0 && roles[0] !== "user") {
    violations.push({
      message:
        "A conversation must start with a user message. Try again with a conversation that starts with a user message.",
      param: "messages.0",
    });
  }
  messages.forEach((entry, index) => {
    const role = roles[index];
    if (index > 0 && role === roles[index - 1]) {
      violations.push({
        message:
          "A conversation must alternate between user and assistant roles. Make sure the conversation alternates between user and assistant roles and try again.",
        param: `messages.${index}`,
      });
    }
    const previousUses =
      index > 0 && roles[index - 1] === "assistant"
        ? converseIdsOf(messages[index - 1], "toolUse")
        : [];
    if (role === "user" && converseIdsOf(entry, "toolResult").length > previousUses.length) {
      violations.push({
        message: `The number of toolResult blocks at messages.${index}.content exceeds the number of toolUse blocks of previous turn.`,
        param: `messages.${index}.content`,
      });
    }
    const uses = role === "assistant" ? converseIdsOf(entry, "toolUse") : [];
    const answered = new Set(
      roles[index + 1] === "user" ? converseIdsOf(messages[index + 1], "toolResult") : [],
    );
    const missing = uses.filter((id) => !answered.has(id));
    if (missing.length > 0) {
      violations.push({
        message: `Expected toolResult blocks at messages.${index + 1}.content for the following Ids: ${missing.join(", ")}`,
        param: `messages.${index + 1}.content`,
      });
    }
  });
  return violations;
}

// ---------------------------------------------------------------------------------------------
// Mistral

/** Mistral's tool call ids: nine letters or digits. */
const MISTRAL_TOOL_CALL_ID = /^[a-zA-Z0-9]{9}$/;

/** A Mistral message's tool calls, in the wire's `tool_calls` or the SDK's `toolCalls`. */
function mistralCallsOf(message: Fields | undefined): unknown[] {
  return listOf(message?.tool_calls ?? message?.toolCalls);
}

/** The call a Mistral tool message answers, from `tool_call_id` or the SDK's `toolCallId`. */
function mistralAnsweredIdOf(message: Fields | undefined): unknown {
  return message?.tool_call_id ?? message?.toolCallId;
}

/**
 * What Mistral refuses in a chat completion's `messages` (the wire's snake_case, or the
 * Mistral SDK's camelCase as `ChatMistralAI` hands it to the SDK).
 *
 * @example
 * ```ts
 * mistralViolations([
 *   { role: "assistant", tool_calls: [{ id: "abcDEF123" }] },
 *   { role: "tool", tool_call_id: "abcDEF123", content: "ok" },
 *   { role: "user", content: "and?" },
 * ]); // [{ message: "Unexpected role 'user' after role 'tool'", param: "messages[2].role" }]
 * ```
 */
export function mistralViolations(messages: readonly unknown[]): Violation[] {
  const violations: Violation[] = [];
  const badId = (id: unknown, param: string) => {
    if (typeof id === "string" && MISTRAL_TOOL_CALL_ID.test(id)) return;
    violations.push({
      message: `Tool call id was ${String(id)} but must be a-z, A-Z, 0-9, with a length of 9.`,
      param,
    });
  };
  const unbalanced = (index: number) =>
    violations.push({
      message: "Not the same number of function calls and responses",
      param: `messages[${index}]`,
    });
  /** The ids the current run of tool messages may answer, and those it has not yet. */
  let open: {
    readonly index: number;
    readonly ids: Set<string>;
    readonly unanswered: Set<string>;
  } = { index: -1, ids: new Set(), unanswered: new Set() };
  let previousRole: unknown;
  messages.forEach((entry, index) => {
    const message = fieldsOf(entry);
    const role = message?.role;
    if (role === "tool") {
      const id = mistralAnsweredIdOf(message);
      badId(id, `messages[${index}].tool_call_id`);
      const follows = previousRole === "tool" || open.index === index - 1;
      if (previousRole === undefined) {
        unbalanced(index);
      } else if (!follows) {
        violations.push({
          message: `Unexpected role 'tool' after role '${String(previousRole)}'`,
          param: `messages[${index}].role`,
        });
      } else if (!open.ids.has(String(id)) || !open.unanswered.delete(String(id))) {
        unbalanced(index);
      }
      previousRole = role;
      return;
    }
    if (previousRole === "tool" && role !== "assistant") {
      violations.push({
        message: `Unexpected role '${String(role)}' after role 'tool'`,
        param: `messages[${index}].role`,
      });
    }
    if (open.unanswered.size > 0) unbalanced(open.index);
    const calls = role === "assistant" ? mistralCallsOf(message) : [];
    calls.forEach((call, position) => {
      badId(fieldsOf(call)?.id, `messages[${index}].tool_calls[${position}].id`);
    });
    const ids = calls.map((call) => String(fieldsOf(call)?.id));
    open = { index: calls.length > 0 ? index : -1, ids: new Set(ids), unanswered: new Set(ids) };
    previousRole = role;
  });
  if (open.unanswered.size > 0) unbalanced(open.index);
  return violations;
}
