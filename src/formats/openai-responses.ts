/**
 * OpenAI Responses API input items. A call is an item of its own, answered by an output item of
 * its own type with the same `call_id`. The calls the application runs, and so must answer, are
 * `function_call`, `custom_tool_call`, `computer_call`, `local_shell_call`, `shell_call` (but in
 * the API's container), `apply_patch_call`, and a `tool_search_call` with `execution: "client"`.
 * Every other item passes through as it is, never a call waiting for an answer: what the API runs
 * itself (web and file search, code interpreter, image generation, MCP calls, which carry their
 * output, programs, a server tool search, a hosted shell and its output), reasoning, messages,
 * item references, and MCP approval requests, whose answer is a person's decision.
 *
 * Parallel calls are consecutive call items (reasoning and other items of the model's own may
 * stand between them): the engine reads them as one turn, answered by the outputs right after it.
 */
import type { ToolCallRepairOptions } from "../attach/options.js";
import { BLANK_SCREENSHOT } from "../core/placeholder-message.js";
import type { Mutable, ToolCallRepair } from "../core/repair-log.js";
import { COMPUTER_TOOL_NAME } from "../core/wire-targets.js";
import { repairInFormat } from "./format.js";
import type {
  FormatCall,
  FormatRepairContext,
  FormatRepairResult,
  MessageFormat,
  MessagePart,
  PlaceholderResult,
  RepairedItem,
  WrittenMessage,
} from "./message-format.js";
import { isParsableJson, recordOf, stringOrUndefined } from "./read.js";

/** The calls the application runs: the output type that answers each, the name of a nameless one. */
const CALLS = {
  function_call: { output: "function_call_output" },
  custom_tool_call: { output: "custom_tool_call_output" },
  computer_call: { output: "computer_call_output", name: COMPUTER_TOOL_NAME },
  local_shell_call: { output: "local_shell_call_output", name: "local_shell" },
  shell_call: { output: "shell_call_output", name: "shell" },
  apply_patch_call: { output: "apply_patch_call_output", name: "apply_patch" },
  tool_search_call: { output: "tool_search_output", name: "tool_search" },
} as const satisfies Record<string, { readonly output: string; readonly name?: string }>;
type CallType = keyof typeof CALLS;

const fixedName = (type: CallType) => (CALLS[type] as { readonly name?: string }).name;
const CALL_OF: ReadonlyMap<string, CallType> = new Map(
  Object.entries(CALLS).map(([call, { output }]) => [output, call as CallType]),
);

/** Items of the model's own output, which may stand between the calls of one turn. */
const MODEL_ITEMS: ReadonlySet<string> = new Set(
  `reasoning web_search_call file_search_call code_interpreter_call image_generation_call mcp_call
  mcp_list_tools mcp_approval_request tool_search_call tool_search_output program program_output
  compaction`.split(/\s+/),
);

/**
 * An output item a placeholder is, by the type of the call it answers.
 *
 * @example
 * ```ts
 * const inserted: ResponsesPlaceholderItem = { type: "function_call_output", call_id: "c1", output: "[…]" };
 * ```
 */
export type ResponsesPlaceholderItem = { call_id: string } & (
  | { type: "function_call_output" | "custom_tool_call_output"; output: string }
  | { type: "computer_call_output"; output: { type: "computer_screenshot"; image_url: string } }
  | { type: "local_shell_call_output"; id: string; output: string }
  | { type: "shell_call_output"; output: { stdout: string; stderr: string; outcome: ShellExit }[] }
  | { type: "apply_patch_call_output"; status: "failed"; output: string }
  | { type: "tool_search_output"; execution: "client"; status: "completed"; tools: never[] }
);
type ShellExit = { type: "exit"; exit_code: number };

/**
 * Per-call settings of {@link repairResponsesInput}: those of every format, and one more.
 *
 * @example
 * ```ts
 * repairResponsesInput(input, options, { model: "gpt-5", continuesStoredResponse: true });
 * ```
 */
export interface ResponsesRepairContext extends FormatRepairContext {
  /**
   * Set when the request continues a response the API keeps (`previous_response_id`, or a
   * `conversation`): an output whose call the input does not hold then answers a kept call, and
   * is passed on as it is rather than dropped as an orphan. Outputs after an `item_reference`
   * are read that way in any case, since the item referred to may be their call.
   */
  readonly continuesStoredResponse?: boolean;
}

/** What one item is to the repair. */
type Reading =
  | { readonly role: "call"; readonly type: CallType; readonly call: FormatCall }
  | { readonly role: "output"; readonly type: CallType; readonly callId: string | undefined }
  | { readonly role: "model"; readonly hostedCallId?: string | undefined }
  | { readonly role: "reference" | "user" | "system" | "other" };

const MODEL: Reading = { role: "model" };
const OTHER: Reading = { role: "other" };
const OTHER_PART: MessagePart = { role: "other" };

function readItem(item: unknown): Reading {
  const fields = recordOf(item);
  if (fields === undefined) return OTHER;
  const { type, role } = fields;
  if (type === undefined || type === null || type === "message") {
    if (role === "user") return { role: "user" };
    if (role === "system" || role === "developer") return { role: "system" };
    if (role === "assistant") return MODEL;
    // `{ id }` alone is an item reference.
    return type !== "message" && typeof fields.id === "string" ? { role: "reference" } : OTHER;
  }
  if (typeof type !== "string") return OTHER;
  if (type === "item_reference") return { role: "reference" };
  // A shell call in the API's own container is the API's to answer, like a server tool search.
  if (type === "shell_call" && recordOf(fields.environment)?.type === "container_reference") {
    return { role: "model", hostedCallId: stringOrUndefined(fields.call_id) };
  }
  const clientRun = !type.startsWith("tool_search") || fields.execution === "client";
  const answers = CALL_OF.get(type);
  if (!clientRun || (answers === undefined && !Object.hasOwn(CALLS, type))) {
    return MODEL_ITEMS.has(type) ? MODEL : OTHER;
  }
  if (answers !== undefined) {
    // A local shell output was once keyed by its `id`; it is keyed by `call_id` now.
    const key = fields.call_id ?? (answers === "local_shell_call" ? fields.id : undefined);
    return { role: "output", type: answers, callId: stringOrUndefined(key) };
  }
  const args = fields.arguments;
  const call: FormatCall = {
    id: stringOrUndefined(fields.call_id),
    name: fixedName(type as CallType) ?? stringOrUndefined(fields.name),
    invalidArguments: type === "function_call" && typeof args === "string" && !isParsableJson(args),
  };
  return { role: "call", type: type as CallType, call };
}

function partOf(reading: Reading): MessagePart {
  if (reading.role === "call") return { role: "assistant", calls: [reading.call] };
  if (reading.role === "output") return { role: "tool", toolCallId: reading.callId };
  return reading.role === "user" || reading.role === "system" ? { role: reading.role } : OTHER_PART;
}

/**
 * One message as the engine reads it: an item, or the items of one turn, and its part; `callIds`
 * maps each id told apart by its call type back to its `call_id` (one map for a repair).
 */
class Entry {
  constructor(
    readonly items: readonly unknown[],
    readonly readings: readonly Reading[],
    readonly part: MessagePart,
    readonly callIds: ReadonlyMap<string, string>,
    /** For a turn written with new call ids: the entry it was, and those ids (the engine's). */
    readonly from?: Entry,
    readonly ids: readonly string[] = [],
  ) {}
}

/**
 * The OpenAI Responses API's input items, as {@link repairResponsesInput} reads and writes them: a
 * worked {@link MessageFormat}, and a base for your own when your records wrap Responses items.
 * Alone, it reads one item at a time: parallel calls are separate turns (their outputs are moved
 * next to each call), and a hosted shell call's output an orphan. `repairResponsesInput` reads the
 * input whole: parallel calls as one turn, and calls of two types that share a `call_id` apart.
 *
 * @example
 * ```ts
 * const { messages } = repairInFormat(openAIResponsesFormat, input, options, { model: "gpt-5" });
 * ```
 */
export const openAIResponsesFormat: MessageFormat<unknown> = Object.freeze({
  name: "openai-responses",
  provider: "openai",
  partsOf: (message: unknown) => [entryOf(message).part],
  write: (items: readonly RepairedItem<unknown>[]) => write(items),
});

const NO_IDS: ReadonlyMap<string, string> = new Map();

/** A message given to `write` as an entry: itself, or one item read on its own. */
function entryOf(message: unknown): Entry {
  if (message instanceof Entry) return message;
  const reading = readItem(message);
  return new Entry([message], [reading], partOf(reading), NO_IDS);
}

function write(items: readonly RepairedItem<unknown>[]): WrittenMessage<unknown>[] {
  const entries = items.map((item) => ("message" in item ? entryOf(item.message) : undefined));
  const callIds = entries.find((entry) => entry !== undefined)?.callIds ?? NO_IDS;
  const callId = (id: string) => callIds.get(id) ?? id;
  /** The engine's id of each call met so far → its type: a placeholder comes after its call. */
  const types = new Map<string, CallType>();
  let taken: Set<string> | undefined;
  return items.map((item, index) => {
    const entry = entries[index];
    if (item.kind === "placeholder" || entry === undefined) {
      const { toolCallId, text } = (item as { placeholder: PlaceholderResult }).placeholder;
      // The item ids the input holds, so that no placeholder takes one of them.
      taken ??= new Set(entries.flatMap((e) => e?.items ?? []).map((i) => `${recordOf(i)?.id}`));
      const type = types.get(toolCallId) ?? "function_call";
      return { message: placeholderOf(type, callId(toolCallId), text, taken), items: [index] };
    }
    let position = 0;
    const written = entry.items.map((original, at) => {
      const reading = entry.readings[at] as Reading;
      if (reading.role === "output" && item.kind === "renamed_result") {
        return { ...recordOf(original), call_id: callId(item.toolCallId) };
      }
      if (reading.role !== "call") return original;
      const renamed = item.kind === "renamed_calls";
      const [id, name] = renamed ? [item.ids[position], item.names[position]] : [reading.call.id];
      position++;
      if (id === undefined) return original;
      types.set(id, reading.type);
      const fields = recordOf(original) ?? {};
      const renames = name !== undefined && !fixedName(reading.type) && fields.name !== name;
      if (fields.call_id === callId(id) && !renames) return original;
      return { ...fields, call_id: callId(id), ...(renames ? { name } : {}) };
    });
    const same = written.every((copy, at) => copy === entry.items[at]);
    if (same) return { message: item.message, items: [index] };
    const [from, given] = item.kind === "renamed_calls" ? [entry, item.ids] : [];
    const copy = new Entry(written, entry.readings, entry.part, entry.callIds, from, given);
    return { message: item.message instanceof Entry ? copy : written[0], items: [index] };
  });
}

/** What a placeholder holds beside its `type` and `call_id`, by the type of its call. */
const PLACEHOLDER_FIELDS: Readonly<Record<CallType, (text: string) => object>> = {
  function_call: (output) => ({ output }),
  custom_tool_call: (output) => ({ output }),
  // The API takes nothing but a screenshot here: the model sees a blank one.
  computer_call: () => ({ output: { type: "computer_screenshot", image_url: BLANK_SCREENSHOT } }),
  local_shell_call: (output) => ({ output }),
  shell_call: (stderr) => ({
    output: [{ stdout: "", stderr, outcome: { type: "exit", exit_code: 1 } }],
  }),
  apply_patch_call: (output) => ({ status: "failed", output }),
  // No tool found: the output has no room for text.
  tool_search_call: () => ({ execution: "client", status: "completed", tools: [] }),
};

function placeholderOf(type: CallType, call_id: string, text: string, taken: Set<string>) {
  const item = { type: CALLS[type].output, call_id, ...PLACEHOLDER_FIELDS[type](text) };
  if (type !== "local_shell_call") return item as ResponsesPlaceholderItem;
  // Its SDK type asks for an item `id` too: the call's, unless an item has it already.
  let id = call_id;
  for (let suffix = 1; taken.has(id); suffix++) id = `${call_id}_${suffix}`;
  taken.add(id);
  return { ...item, id } as ResponsesPlaceholderItem;
}

/**
 * The engine's messages for an input: an entry per item, but one for the consecutive calls of a
 * turn (and the model's items between them); an output whose call the input may not hold reads
 * as another item; a `call_id` that items of two call types share is told apart by type.
 */
function entriesOf(input: readonly unknown[], continues: boolean): Entry[] {
  const readings = Array.from(input, readItem);
  const called = new Set<string>();
  for (const r of readings) if (r.role === "call") called.add(`${r.type} ${r.call.id}`);
  const hosted = new Set<string | undefined>();
  let unseen = continues;
  /** Each `call_id` → the one call type its items have, or `null` when they have several. */
  const typeOfId = new Map<string, CallType | null>();
  /** The outputs that pass through: a hosted shell call's, and those whose call the API holds. */
  const kept = readings.map((reading): Reading | undefined => {
    if (reading.role === "reference") unseen = true;
    if (reading.role === "model") hosted.add(reading.hostedCallId);
    if (reading.role !== "call" && reading.role !== "output") return undefined;
    const id = reading.role === "call" ? reading.call.id : reading.callId;
    if (id === undefined) return undefined;
    const key = `${reading.type} ${id}`;
    if (reading.role === "output" && reading.type === "shell_call" && hosted.has(id)) return MODEL;
    if (reading.role === "output" && unseen && !called.has(key)) return OTHER;
    const known = typeOfId.get(id);
    typeOfId.set(id, known === undefined || known === reading.type ? reading.type : null);
    return undefined;
  });
  const callIds = new Map<string, string>();
  // An output without a `call_id` answers nothing: it is told apart from every call.
  const told = (type: CallType, id: string | undefined, output = false) => {
    if ((id === undefined && !output) || (id !== undefined && typeOfId.get(id) !== null)) return id;
    callIds.set(`${id ?? ""} (${type})`, id ?? "");
    return `${id ?? ""} (${type})`;
  };
  const engineReadings = readings.map((r, index): Reading => {
    if (r.role === "call") return { ...r, call: { ...r.call, id: told(r.type, r.call.id) } };
    if (r.role !== "output") return r;
    return kept[index] ?? { ...r, callId: told(r.type, r.callId, true) };
  });
  const entries: Entry[] = [];
  for (let index = 0; index < input.length; ) {
    const reading = readings[index] as Reading;
    let end = index;
    for (let next = index + 1; reading.role === "call" && next < input.length; next++) {
      const role = (engineReadings[next] as Reading).role;
      if (role === "call") end = next;
      else if (role !== "model") break;
    }
    const turn = engineReadings.slice(index, end + 1);
    const calls = turn.flatMap((r) => (r.role === "call" ? [r.call] : []));
    const part =
      reading.role === "call" ? { role: "assistant" as const, calls } : partOf(turn[0] as Reading);
    entries.push(new Entry(input.slice(index, end + 1), turn, part, callIds));
    index = end + 1;
  }
  return entries;
}

/**
 * Repairs the `input` of an OpenAI Responses API request before it is sent: each call without an
 * output gets one right after its turn, of the type the call needs (with the placeholder text,
 * or for a computer call a blank screenshot, the only output it takes); misplaced outputs are
 * moved back, orphans (and outputs without a `call_id`) dropped, calls without one, or with one
 * another call of their turn has, given one, as the options say. Same engine, policy, logging and telemetry as the
 * `createAgent` middleware; `window` counts items, a turn's calls as one. Items that needed
 * nothing come back as the same objects; the input array itself when nothing needed repair.
 *
 * Only the calls the application runs are answered (the module's list); built-in tools, MCP,
 * reasoning, messages and item references pass through. Items take no extra fields, so
 * `markSynthetic` marks nothing here; `repairs` lists every placeholder by `outputIndex`.
 *
 * @param options - the shared options, validated once per options object (keep one)
 * @param context - `threadId`, `model`, `tools`, `locale`, and `continuesStoredResponse`
 * @throws {ToolCallResilienceOptionsError} when an option is invalid
 *
 * @example
 * ```ts
 * import OpenAI from "openai";
 * import { repairResponsesInput } from "tool-call-resilience/formats";
 *
 * const { messages: input } = repairResponsesInput(items, { logger: false }, { model: "gpt-5" });
 * await new OpenAI().responses.create({ model: "gpt-5", input, tools });
 * ```
 */
export function repairResponsesInput<M>(
  items: readonly M[],
  options?: ToolCallRepairOptions,
  context?: ResponsesRepairContext,
): FormatRepairResult<M | ResponsesPlaceholderItem> {
  type Result = FormatRepairResult<M | ResponsesPlaceholderItem>;
  let entries: Entry[];
  try {
    entries = entriesOf(items, context?.continuesStoredResponse === true);
  } catch {
    // An item that cannot be read: the format reads each item again, and fails open on it.
    return repairInFormat(openAIResponsesFormat, items, options, context) as Result;
  }
  const repaired = repairInFormat(openAIResponsesFormat, entries, options, context);
  if (repaired.messages === entries) return { messages: items as M[], repairs: repaired.repairs };
  try {
    return itemsOf(entries, repaired) as Result;
  } catch {
    return { messages: items as M[], repairs: [] };
  }
}

/** The repaired entries as items, and the repairs with item indices and the calls' own ids. */
function itemsOf(entries: readonly Entry[], { messages, repairs }: FormatRepairResult<unknown>) {
  const starts = startsOf(entries);
  const outStarts = startsOf(messages);
  const given = new Map<Entry, readonly string[]>();
  for (const m of messages) if (m instanceof Entry && m.from) given.set(m.from, m.ids);
  const callIds = entries[0]?.callIds ?? NO_IDS;
  return {
    messages: messages.flatMap((message) => (message instanceof Entry ? message.items : [message])),
    repairs: repairs.map(({ ...repair }: Mutable<ToolCallRepair>) => {
      const { callIndex, resultIndex, outputIndex, toolCallId } = repair;
      const entry = callIndex === undefined ? undefined : entries[callIndex];
      const offset = entry === undefined ? 0 : callOffset(entry, toolCallId, given.get(entry));
      repair.toolCallId = callIds.get(toolCallId) ?? toolCallId;
      if (callIndex !== undefined) repair.callIndex = (starts[callIndex] as number) + offset;
      if (resultIndex !== undefined) repair.resultIndex = starts[resultIndex];
      const output = outputIndex === undefined ? undefined : messages[outputIndex];
      const inTurn = output instanceof Entry && output.items.length > 1 ? offset : 0;
      if (outputIndex !== undefined)
        repair.outputIndex = (outStarts[outputIndex] as number) + inTurn;
      return repair as ToolCallRepair;
    }),
  };
}

/** The index of each message's first item. */
function startsOf(messages: readonly unknown[]): number[] {
  const starts = [0];
  for (const m of messages)
    starts.push((starts.at(-1) as number) + (m instanceof Entry ? m.items.length : 1));
  return starts;
}

/** Where a call stands among its turn's items: found by its id, or by the id it was given. */
function callOffset(entry: Entry, toolCallId: string, given: readonly string[] = []): number {
  const calls = entry.readings.flatMap((r, at) => (r.role === "call" ? [at] : []));
  const found = entry.readings.findIndex((r) => r.role === "call" && r.call.id === toolCallId);
  return found >= 0 ? found : (calls[Math.max(given.indexOf(toolCallId), 0)] ?? 0);
}
