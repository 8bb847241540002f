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
 * answered by the results after it in any order, as the Responses API and the SDK take them. What
 * these items share with the Responses API's is `src/formats/openai-tool-items.ts`'s.
 */
import type {
  FormatCall,
  MessageFormat,
  MessagePart,
  PlaceholderResult,
  RepairedItem,
  WrittenMessage,
} from "../formats/message-format.js";
import {
  AGENT_ITEMS,
  ClientCalls,
  EngineCallIds,
  namelessCallName,
  placeholderFields,
  runsOnClient,
  type ToolCallType,
  turnRanges,
} from "../formats/openai-tool-items.js";
import { isParsableJson, recordOf, stringOrUndefined } from "../formats/read.js";

/** Items the model or the provider produce, which may stand between the calls of one turn. */
const MODEL_ITEMS: ReadonlySet<string> = new Set(
  `reasoning hosted_tool_call program program_output unknown tool_search_call tool_search_output
  shell_call shell_call_output`.split(/\s+/),
);

/**
 * What one item is to the repair: a call or a result of a call type, or another role. A result's
 * `answersClient` is whether it answers a call the application runs: by its own `execution` as
 * read alone, by its call once the input is read.
 */
type Reading =
  | {
      readonly role: "call" | "result";
      readonly type: ToolCallType;
      readonly id: string | undefined;
      readonly name: string | undefined;
      readonly invalidArguments?: boolean;
      readonly answersClient?: boolean;
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

/** The key a tool search item keeps its call id under, in the order the SDK reads them. */
function toolSearchIdKey(fields: Record<string, unknown>): "providerData" | "call_id" | "callId" {
  const data = providerDataOf(fields);
  if (stringOrUndefined(data?.call_id ?? data?.callId) !== undefined) return "providerData";
  return stringOrUndefined(fields.call_id) !== undefined ? "call_id" : "callId";
}

function callIdOf(fields: Record<string, unknown>, type: ToolCallType): string | undefined {
  if (type !== "tool_search_call") return stringOrUndefined(fields.callId);
  const key = toolSearchIdKey(fields);
  if (key !== "providerData") return stringOrUndefined(fields[key]);
  const data = providerDataOf(fields);
  return stringOrUndefined(data?.call_id ?? data?.callId);
}

/** An item with another call id, written where the item keeps it; the item itself is unchanged. */
function withCallId(fields: Record<string, unknown>, type: ToolCallType, id: string) {
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
  const kind = AGENT_ITEMS.kinds.get(type);
  if (kind === undefined || (kind.type === "shell_call" && hostedShell)) {
    return MODEL_ITEMS.has(type) ? MODEL : OTHER;
  }
  // The SDK keeps a tool search's execution on the item, or in its provider data.
  const execution = fields.execution ?? providerDataOf(fields)?.execution;
  const [answersClient, id] = [runsOnClient(kind.type, execution), callIdOf(fields, kind.type)];
  const name = stringOrUndefined(fields.name);
  if (kind.role === "output") return { role: "result", type: kind.type, id, name, answersClient };
  if (!answersClient) return MODEL;
  const args = fields.arguments;
  return {
    role: "call",
    type: kind.type,
    id,
    name: namelessCallName(kind.type) ?? name,
    invalidArguments:
      kind.type === "function_call" && typeof args === "string" && !isParsableJson(args),
  };
}

/** The ids of an input where no two call types share one. */
const NO_IDS = new EngineCallIds([]);

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
    readonly ids: EngineCallIds,
  ) {}
}

/**
 * An input's turns, for {@link agentItemsFormat}: one per item, but one for the consecutive calls
 * of a turn. A result answers a call of its own type, whatever its own `execution` says. A result
 * whose call the input does not hold may answer one the provider keeps (`previousResponseId`,
 * `conversationId`, where the SDK sends only the new results): `continues` says whether to pass
 * such results on as they are (`true`), to drop them as orphans (`false`, the input is the whole
 * history), or (`"auto"`) to pass them on only when the input holds nothing the model produced
 * (no call, no assistant message, no reasoning), which is what the SDK sends then.
 *
 * @param hostedShell - the agent's shell runs in the provider's container: its calls pass through
 * @example
 * ```ts
 * const turns = turnsOf(modelData.input, hasHostedShell, "auto");
 * ```
 */
export function turnsOf(
  input: readonly unknown[],
  hostedShell = false,
  continues: boolean | "auto" = "auto",
): Turn[] {
  const read = Array.from(input, (item) => readItem(item, hostedShell));
  const calls = new ClientCalls();
  for (const r of read) if (r.role === "call") calls.add(r.type, r.id);
  const readings = read.map((r): Reading => {
    if (r.role !== "result" || r.answersClient) return r;
    // A server tool search's result is the provider's.
    return calls.has(r.type, r.id) ? { ...r, answersClient: true } : MODEL;
  });
  const modelMade = readings.some(
    ({ role }) => role === "call" || role === "model" || role === "assistant",
  );
  const kept = continues === true || (continues === "auto" && !modelMade) ? calls : undefined;
  const ids = new EngineCallIds(
    readings.flatMap((r) => (r.role === "call" || r.role === "result" ? [r] : [])),
  );
  const places = readings.map(({ role }) =>
    role === "call" ? "call" : role === "model" || role === "assistant" ? "between" : "other",
  );
  return turnRanges(places).map(([start, end]) => {
    const turn = readings.slice(start, end);
    return new ReadTurn(input.slice(start, end), turn, partOf(turn, ids, kept), ids);
  });
}

/**
 * @param kept - the input's calls, when a result none of them has passes on as it is (its call
 *   may be the provider's)
 */
function partOf(turn: readonly Reading[], ids: EngineCallIds, kept?: ClientCalls): MessagePart {
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
      if (kept !== undefined && !kept.has(first.type, first.id)) return OTHER_PART;
      // A result without an id answers nothing (as in the Responses input): never a call of
      // another kind that has none either.
      return {
        role: "tool",
        toolCallId: ids.engineId(first.type, first.id, true),
        toolName: first.name,
      };
    case "assistant":
      return NO_CALLS;
    case "user":
    case "system":
      return { role: first.role };
    default:
      return OTHER_PART;
  }
}

/**
 * The calls of a turn as the SDK's items hold them: type, `callId` and name, and the id the
 * engine knows each by (its `callId`, told apart by type when two call types share it).
 *
 * @example
 * ```ts
 * callsOfTurn(turnsOf([functionCall])[0]); // [{ type: "function_call", callId: "call_1", id: "call_1", name: "search" }]
 * ```
 */
export function callsOfTurn(
  turn: Turn,
): { type: ToolCallType; callId: string; id: string; name: string | undefined }[] {
  if (!(turn instanceof ReadTurn)) return [];
  return turn.readings.flatMap((r) => {
    if (r.role !== "call" || r.id === undefined) return [];
    return [
      { type: r.type, callId: r.id, id: turn.ids.engineId(r.type, r.id) ?? r.id, name: r.name },
    ];
  });
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

/**
 * The SDK items the placeholders are, by the type of the call they answer: each valid under the
 * SDK's protocol schema, and accepted by its converters and by the Responses API. Their payloads
 * are the Responses API's in the SDK's spelling (`openai-tool-items.ts`); a function call's result
 * names its tool, and each repeats its call's caller (and a function call's namespace).
 *
 * @example
 * ```ts
 * const result: AgentItemPlaceholder = {
 *   type: "function_call_result", callId: "call_1", name: "search", status: "completed",
 *   output: "[Tool call was interrupted and did not return a result.]",
 * };
 * ```
 */
export type AgentItemPlaceholder = { callId: string } & (
  | {
      type: "function_call_result";
      name: string | undefined;
      status: "completed";
      output: string;
      namespace?: string;
      caller?: Record<string, unknown>;
    }
  | { type: "computer_call_result"; output: { type: "computer_screenshot"; data: string } }
  | {
      type: "shell_call_output";
      output: { stdout: string; stderr: string; outcome: { type: "exit"; exitCode: number } }[];
      caller?: Record<string, unknown>;
    }
  | {
      type: "apply_patch_call_output";
      status: "failed";
      output: string;
      caller?: Record<string, unknown>;
    }
  | { type: "tool_search_output"; execution: "client"; status: "completed"; tools: never[] }
);

/** The placeholder that answers a call of this type (`call`, its item, when the input has it). */
function placeholderOf(
  type: ToolCallType,
  callId: string,
  { toolName, text }: PlaceholderResult,
  call: Record<string, unknown> | undefined,
): AgentItemPlaceholder {
  const named = type === "function_call" ? { name: toolName, status: "completed" } : {};
  const calls = type === "function_call" || type === "shell_call" || type === "apply_patch_call";
  return {
    type: AGENT_ITEMS.answers[type],
    callId,
    ...named,
    ...placeholderFields(AGENT_ITEMS, type, text),
    ...(calls && repeated(call, type === "function_call")),
  } as AgentItemPlaceholder;
}

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
  let ids: EngineCallIds | undefined;
  for (const item of items) {
    if (item.kind !== "placeholder" && item.message instanceof ReadTurn) {
      ids = item.message.ids;
      break;
    }
  }
  const nativeId = (engineId: string) => ids?.nativeId(engineId) ?? engineId;
  /** The calls met so far, by the engine's id: a placeholder comes after its call. */
  const calls = new Map<
    string,
    { type: ToolCallType; item: Record<string, unknown> | undefined }
  >();
  return items.map((item, index): WrittenMessage<Turn> => {
    if (item.kind === "placeholder") {
      const { toolCallId } = item.placeholder;
      const call = calls.get(toolCallId);
      const type = call?.type ?? "function_call";
      const written = placeholderOf(type, nativeId(toolCallId), item.placeholder, call?.item);
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
        return withCallId(fields ?? {}, reading.type, nativeId(item.toolCallId));
      }
      if (reading.role !== "call") return original;
      const k = position++;
      const engineId = item.kind === "renamed_calls" ? item.ids[k] : callsOf(turn.part)[k]?.id;
      if (engineId !== undefined) calls.set(engineId, { type: reading.type, item: fields });
      if (item.kind !== "renamed_calls" || engineId === undefined) return original;
      const callId = nativeId(engineId);
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
