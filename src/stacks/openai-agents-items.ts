/**
 * The OpenAI Agents SDK's model input items (`AgentInputItem`), as the engine reads and writes
 * them. A call is an item with a `callId`, answered by an item of its own type. The calls the
 * application runs, and so must answer: `function_call` (by `function_call_result`),
 * `computer_call` (`computer_call_result`), `shell_call` on a local shell (`shell_call_output`),
 * `apply_patch_call` (`apply_patch_call_output`), a client `tool_search_call` (`tool_search_output`).
 * Every other item passes through and is never read as a call waiting for an answer: what the
 * provider runs and answers itself (`hosted_tool_call`: built-in tools, MCP calls; a `program`; a
 * server tool search; a shell in its container), MCP approval requests (a person's decision, which
 * no placeholder may make), reasoning, compaction, messages and `unknown` items. Consecutive calls
 * (with reasoning, an assistant message or the provider's items between them) are one turn,
 * answered by the results after it in any order, as the Responses API and the SDK take them.
 */
import { BLANK_SCREENSHOT } from "../core/placeholder-message.js";
import type {
  FormatCall,
  MessageFormat,
  MessagePart,
  PlaceholderResult,
  RepairedItem,
  WrittenMessage,
} from "../formats/message-format.js";
import { isParsableJson, recordOf, stringOrUndefined } from "../formats/read.js";
import { CALL_TOOL_NAMES } from "./openai-agents-run.js";

/** The calls the application runs, the item type that answers each, the name of a nameless one. */
const CALLS = {
  function_call: { result: "function_call_result", name: undefined },
  computer_call: { result: "computer_call_result", name: CALL_TOOL_NAMES.computer },
  shell_call: { result: "shell_call_output", name: CALL_TOOL_NAMES.shell },
  apply_patch_call: { result: "apply_patch_call_output", name: CALL_TOOL_NAMES.apply_patch },
  tool_search_call: { result: "tool_search_output", name: "tool_search" },
} as const;
type CallType = keyof typeof CALLS;

const CALL_OF_RESULT: ReadonlyMap<string, CallType> = new Map(
  Object.entries(CALLS).map(([call, { result }]) => [result, call as CallType]),
);

/** Items the model or the provider produce, which may stand between the calls of one turn. */
const MODEL_ITEMS: ReadonlySet<string> = new Set(
  `reasoning hosted_tool_call program program_output unknown tool_search_call tool_search_output
  shell_call shell_call_output`.split(/\s+/),
);

/** What one item is to the repair: a call or a result of a call type, or another role. */
type Reading =
  | {
      readonly role: "call" | "result";
      readonly type: CallType;
      readonly id: string | undefined;
      readonly name: string | undefined;
      readonly invalidArguments?: boolean;
    }
  | { readonly role: "model" | "assistant" | "user" | "system" | "other" };

const MODEL: Reading = { role: "model" };
const OTHER: Reading = { role: "other" };
const OTHER_PART: MessagePart = Object.freeze({ role: "other" });
const NO_CALLS: MessagePart = Object.freeze({ role: "assistant", calls: Object.freeze([]) });

/** A message item, by its role. */
const MESSAGES: Readonly<Record<string, Reading>> = {
  user: { role: "user" },
  system: { role: "system" },
  developer: { role: "system" },
  assistant: { role: "assistant" },
};

/** The provider data of an item, where a tool search keeps its call id and its execution. */
function providerDataOf(fields: Record<string, unknown>): Record<string, unknown> | undefined {
  return recordOf(fields.providerData);
}

/** Whether a tool search item is the client's to run, as the SDK tells (its `execution`). */
function isClientToolSearch(fields: Record<string, unknown>): boolean {
  return (fields.execution ?? providerDataOf(fields)?.execution) === "client";
}

/** The key a tool search item keeps its call id under, in the order the SDK reads them. */
function toolSearchIdKey(fields: Record<string, unknown>): "providerData" | "call_id" | "callId" {
  const data = providerDataOf(fields);
  if (stringOrUndefined(data?.call_id ?? data?.callId) !== undefined) return "providerData";
  return stringOrUndefined(fields.call_id) !== undefined ? "call_id" : "callId";
}

function callIdOf(fields: Record<string, unknown>, type: CallType): string | undefined {
  if (type !== "tool_search_call") return stringOrUndefined(fields.callId);
  const key = toolSearchIdKey(fields);
  if (key !== "providerData") return stringOrUndefined(fields[key]);
  const data = providerDataOf(fields);
  return stringOrUndefined(data?.call_id ?? data?.callId);
}

/** An item with another call id, written where the item keeps it; the item itself is unchanged. */
function withCallId(fields: Record<string, unknown>, type: CallType, id: string) {
  if (type !== "tool_search_call") return { ...fields, callId: id };
  const key = toolSearchIdKey(fields);
  if (key !== "providerData") return { ...fields, [key]: id };
  const data = providerDataOf(fields) ?? {};
  const dataKey = stringOrUndefined(data.call_id) !== undefined ? "call_id" : "callId";
  return { ...fields, providerData: { ...data, [dataKey]: id } };
}

/** @param hostedShell - whether the agent's shell runs in the provider's container */
function readItem(item: unknown, hostedShell: boolean): Reading {
  const fields = recordOf(item);
  if (fields === undefined) return OTHER;
  const { type, role } = fields;
  if (type === undefined || type === "message") {
    return (typeof role === "string" && Object.hasOwn(MESSAGES, role) && MESSAGES[role]) || OTHER;
  }
  if (typeof type !== "string") return OTHER;
  const providers =
    (type.startsWith("tool_search") && !isClientToolSearch(fields)) ||
    (type.startsWith("shell_call") && hostedShell);
  const answers = providers ? undefined : CALL_OF_RESULT.get(type);
  if (answers !== undefined) {
    const name = stringOrUndefined(fields.name);
    return { role: "result", type: answers, id: callIdOf(fields, answers), name };
  }
  if (providers || !Object.hasOwn(CALLS, type)) return MODEL_ITEMS.has(type) ? MODEL : OTHER;
  const callType = type as CallType;
  const args = fields.arguments;
  return {
    role: "call",
    type: callType,
    id: callIdOf(fields, callType),
    name: CALLS[callType].name ?? stringOrUndefined(fields.name),
    invalidArguments:
      callType === "function_call" && typeof args === "string" && !isParsableJson(args),
  };
}

/**
 * The `callId`s of one input that items of two call types share, told apart for the engine by
 * their type (the SDK pairs a result with a call of its own type), and back.
 */
class CallIds {
  readonly #shared: ReadonlySet<string>;
  readonly #native = new Map<string, string>();

  constructor(readings: readonly Reading[]) {
    const typeOf = new Map<string, CallType | null>();
    for (const reading of readings) {
      if ((reading.role !== "call" && reading.role !== "result") || reading.id === undefined) {
        continue;
      }
      const known = typeOf.get(reading.id);
      typeOf.set(reading.id, known === undefined || known === reading.type ? reading.type : null);
    }
    this.#shared = new Set([...typeOf].filter(([, type]) => type === null).map(([id]) => id));
  }

  /** The id the engine knows a call or result by. */
  engineId(type: CallType, id: string | undefined): string | undefined {
    if (id === undefined || !this.#shared.has(id)) return id;
    const engineId = `${id} (${type})`;
    this.#native.set(engineId, id);
    return engineId;
  }

  /** The `callId` to write for an id of the engine's (one it assigned is written as it is). */
  callIdOf(engineId: string): string {
    return this.#native.get(engineId) ?? engineId;
  }
}

/** The ids of an input where no two call types share one. */
const NO_IDS = new CallIds([]);

/**
 * One message as the engine reads it: an item, or the calls of one turn with the model's items
 * between them, and what it is to the repair.
 *
 * @example
 * ```ts
 * const turns = turnsOf(input);
 * turns[1]?.items; // [functionCall, reasoning, functionCall]: one turn of parallel calls
 * ```
 */
export interface Turn {
  /** The SDK's items this turn stands for, in order; never changed. */
  readonly items: readonly unknown[];
  /** What the turn is to the engine. */
  readonly part: MessagePart;
}

/** A turn as {@link turnsOf} reads it: each item's reading, and the ids of its input. */
class ReadTurn implements Turn {
  constructor(
    readonly items: readonly unknown[],
    readonly readings: readonly Reading[],
    readonly part: MessagePart,
    readonly ids: CallIds,
  ) {}
}

/**
 * An input's turns, for {@link agentItemsFormat}: one per item, but one for the consecutive calls
 * of a turn. An input that holds nothing the model produced (no call, no assistant message, no
 * reasoning) is the part of a conversation the provider keeps (`previousResponseId`,
 * `conversationId`): its results answer calls the provider holds, and pass on as they are rather
 * than being dropped as orphans.
 *
 * @param hostedShell - the agent's shell runs in the provider's container: its calls pass through
 * @example
 * ```ts
 * const turns = turnsOf(modelData.input, hasHostedShell(agent));
 * ```
 */
export function turnsOf(input: readonly unknown[], hostedShell = false): Turn[] {
  const readings = Array.from(input, (item) => readItem(item, hostedShell));
  const ids = new CallIds(readings);
  const modelMade = readings.some(
    (reading) =>
      reading.role === "call" || reading.role === "model" || reading.role === "assistant",
  );
  const turns: Turn[] = [];
  for (let index = 0; index < input.length; ) {
    const reading = readings[index] as Reading;
    let end = index;
    for (let next = index + 1; reading.role === "call" && next < input.length; next++) {
      const role = (readings[next] as Reading).role;
      if (role === "call") end = next;
      else if (role !== "model" && role !== "assistant") break;
    }
    const turn = readings.slice(index, end + 1);
    turns.push(new ReadTurn(input.slice(index, end + 1), turn, partOf(turn, ids, modelMade), ids));
    index = end + 1;
  }
  return turns;
}

function partOf(turn: readonly Reading[], ids: CallIds, modelMade: boolean): MessagePart {
  const first = turn[0] as Reading;
  switch (first.role) {
    case "call": {
      const calls: FormatCall[] = [];
      for (const reading of turn) {
        if (reading.role !== "call") continue;
        const { type, name, invalidArguments } = reading;
        calls.push({ id: ids.engineId(type, reading.id), name, invalidArguments });
      }
      return { role: "assistant", calls };
    }
    case "result":
      if (!modelMade) return OTHER_PART;
      return { role: "tool", toolCallId: ids.engineId(first.type, first.id), toolName: first.name };
    case "assistant":
      return NO_CALLS;
    case "user":
    case "system":
      return { role: first.role };
    default:
      return OTHER_PART;
  }
}

/** The call's own fields its answer repeats: who called it (a program), and its namespace. */
function repeated(call: Record<string, unknown> | undefined, namespace = false) {
  const caller = recordOf(call?.caller);
  const space = namespace ? stringOrUndefined(call?.namespace) : undefined;
  return {
    ...(space !== undefined && { namespace: space }),
    ...(caller !== undefined && { caller }),
  };
}

type Call = Record<string, unknown> | undefined;

/** The placeholder of each call type: its answer item, with the text where the item has room. */
const PLACEHOLDERS = {
  function_call: (callId: string, { toolName, text }: PlaceholderResult, call: Call) => ({
    type: "function_call_result" as const,
    callId,
    name: toolName,
    status: "completed" as const,
    output: text,
    ...repeated(call, true),
  }),
  // A computer call takes nothing but a screenshot: the model sees a blank screen.
  computer_call: (callId: string) => ({
    type: "computer_call_result" as const,
    callId,
    output: { type: "computer_screenshot" as const, data: BLANK_SCREENSHOT },
  }),
  shell_call: (callId: string, { text }: PlaceholderResult, call: Call) => ({
    type: "shell_call_output" as const,
    callId,
    output: [{ stdout: "", stderr: text, outcome: { type: "exit" as const, exitCode: 1 } }],
    ...repeated(call),
  }),
  apply_patch_call: (callId: string, { text }: PlaceholderResult, call: Call) => ({
    type: "apply_patch_call_output" as const,
    callId,
    status: "failed" as const,
    output: text,
    ...repeated(call),
  }),
  // No tools found: the output has no room for text.
  tool_search_call: (callId: string) => ({
    type: "tool_search_output" as const,
    callId,
    execution: "client" as const,
    status: "completed" as const,
    tools: [] as never[],
  }),
} satisfies Record<
  CallType,
  (callId: string, placeholder: PlaceholderResult, call: Call) => object
>;

/**
 * The SDK items the placeholders are, by the type of the call they answer: each valid under the
 * SDK's protocol schema, and accepted by its converters and by the Responses API.
 *
 * @example
 * ```ts
 * const result: AgentItemPlaceholder = {
 *   type: "function_call_result", callId: "call_1", name: "search", status: "completed",
 *   output: "[Tool call was interrupted and did not return a result.]",
 * };
 * ```
 */
export type AgentItemPlaceholder = ReturnType<(typeof PLACEHOLDERS)[CallType]>;

/**
 * The OpenAI Agents SDK's input items as the engine reads and writes them, over the turns of
 * {@link turnsOf}: a placeholder is the answer item of its call's type ({@link AgentItemPlaceholder}),
 * a call or a result given a new id is a copy with that `callId`, and every item that needed
 * nothing is the same object.
 *
 * @example
 * ```ts
 * const { repaired } = prepareInFormat(agentItemsFormat, turns, options, context);
 * const items = repaired.messages.flatMap((turn) => turn.items);
 * ```
 */
export const agentItemsFormat: MessageFormat<Turn> = Object.freeze({
  name: "openai-agents",
  provider: "openai",
  partsOf: (turn: Turn) => [turn instanceof ReadTurn ? turn.part : OTHER_PART],
  write: (items: readonly RepairedItem<Turn>[]) => write(items),
});

function write(items: readonly RepairedItem<Turn>[]): WrittenMessage<Turn>[] {
  let ids: CallIds | undefined;
  for (const item of items) {
    if (item.kind !== "placeholder" && item.message instanceof ReadTurn) {
      ids = item.message.ids;
      break;
    }
  }
  const callIdOf = (engineId: string) => ids?.callIdOf(engineId) ?? engineId;
  /** The calls met so far, by the engine's id: a placeholder comes after its call. */
  const calls = new Map<string, { type: CallType; item: Record<string, unknown> | undefined }>();
  return items.map((item, index): WrittenMessage<Turn> => {
    if (item.kind === "placeholder") {
      const { toolCallId } = item.placeholder;
      const call = calls.get(toolCallId);
      const type = call?.type ?? "function_call";
      const written = PLACEHOLDERS[type](callIdOf(toolCallId), item.placeholder, call?.item);
      const turn = new ReadTurn([written], [readItem(written, false)], OTHER_PART, ids ?? NO_IDS);
      return { message: turn, items: [index] };
    }
    const turn = item.message;
    if (!(turn instanceof ReadTurn)) return { message: turn, items: [index] };
    let position = 0;
    const written = turn.items.map((original, at) => {
      const reading = turn.readings[at] as Reading;
      const fields = recordOf(original);
      if (reading.role === "result" && item.kind === "renamed_result") {
        return withCallId(fields ?? {}, reading.type, callIdOf(item.toolCallId));
      }
      if (reading.role !== "call") return original;
      const k = position++;
      const engineId = item.kind === "renamed_calls" ? item.ids[k] : callsOf(turn.part)[k]?.id;
      if (engineId !== undefined) calls.set(engineId, { type: reading.type, item: fields });
      if (item.kind !== "renamed_calls" || engineId === undefined) return original;
      const callId = callIdOf(engineId);
      const name = item.names[k];
      const renames =
        reading.type === "function_call" && name !== undefined && reading.name !== name;
      if (callId === reading.id && !renames) return original;
      return withCallId({ ...fields, ...(renames && { name }) }, reading.type, callId);
    });
    if (item.kind === "message" || item.kind === "part") return { message: turn, items: [index] };
    return { message: new ReadTurn(written, turn.readings, turn.part, turn.ids), items: [index] };
  });
}

function callsOf(part: MessagePart): readonly FormatCall[] {
  return part.role === "assistant" ? part.calls : [];
}
