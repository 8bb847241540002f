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
 * What these items share with the Agents SDK's is `openai-tool-items.ts`'s.
 *
 * Why one file: reading the items into the engine's turns, writing its repair back as items and
 * giving the repairs the items' indices are one format, all three about the same `Entry`.
 */
import { logFailedOpen } from "../attach/logging.js";
import type { ToolCallRepairOptions } from "../attach/options.js";
import { recordFailedOpen } from "../attach/repairer.js";
import { refuseHistoryHolder } from "../core/errors.js";
import type { Mutable, ToolCallRepair } from "../core/repair-log.js";
import { formatRequestOf, prepareInFormat, repairerOf } from "./format.js";
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
import {
  ClientCalls,
  EngineCallIds,
  namelessCallName,
  RESPONSES_ITEMS,
  type ResponsesPlaceholderItem,
  responsesPlaceholder,
  runsOnClient,
  type ToolCallType,
  turnRanges,
  withToolNames,
} from "./openai-tool-items.js";
import { isParsableJson, recordOf, stringOrUndefined } from "./read.js";

/** Items of the model's own output, which may stand between the calls of one turn. */
const MODEL_ITEMS: ReadonlySet<string> = new Set(
  `reasoning web_search_call file_search_call code_interpreter_call image_generation_call mcp_call
  mcp_list_tools mcp_approval_request tool_search_call tool_search_output program program_output
  compaction`.split(/\s+/),
);

const FORMAT_NAME = "openai-responses";

export type { ResponsesPlaceholderItem } from "./openai-tool-items.js";

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

/**
 * What one item is to the repair. An output's `answersClient` is whether it answers a call the
 * application runs: by its own `execution` as read alone, by its call once the input is read.
 */
type Reading =
  | { readonly role: "call"; readonly type: ToolCallType; readonly call: FormatCall }
  | {
      readonly role: "output";
      readonly type: ToolCallType;
      readonly callId: string | undefined;
      readonly answersClient: boolean;
    }
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
  const kind = RESPONSES_ITEMS.kinds.get(type);
  if (kind === undefined) return MODEL_ITEMS.has(type) ? MODEL : OTHER;
  const answersClient = runsOnClient(kind.type, fields.execution);
  if (kind.role === "output") {
    // A local shell output's `id` may be its call's `call_id` (see `responsesPlaceholder`).
    const key = fields.call_id ?? (kind.type === "local_shell_call" ? fields.id : undefined);
    return { role: "output", type: kind.type, callId: stringOrUndefined(key), answersClient };
  }
  if (!answersClient) return MODEL;
  const args = fields.arguments;
  const call: FormatCall = {
    id: stringOrUndefined(fields.call_id),
    name: namelessCallName(kind.type) ?? stringOrUndefined(fields.name),
    invalidArguments: type === "function_call" && typeof args === "string" && !isParsableJson(args),
  };
  return { role: "call", type: kind.type, call };
}

function partOf(reading: Reading): MessagePart {
  if (reading.role === "call") return { role: "assistant", calls: [reading.call] };
  if (reading.role === "output" && reading.answersClient) {
    return { role: "tool", toolCallId: reading.callId };
  }
  return reading.role === "user" || reading.role === "system" ? { role: reading.role } : OTHER_PART;
}

/**
 * One message as the engine reads it: an item, or the items of one turn, and its part; `ids`
 * tells the calls of two types that share a `call_id` apart, and back (one for a repair).
 */
class Entry {
  constructor(
    readonly items: readonly unknown[],
    readonly readings: readonly Reading[],
    readonly part: MessagePart,
    readonly ids: EngineCallIds,
    /** The input index of each of its items (empty for an entry that is not the input's). */
    readonly at: readonly number[] = [],
    /** For a turn written with new call ids: the entry it was, and those ids (the engine's). */
    readonly from?: Entry,
    readonly given: readonly string[] = [],
  ) {}
}

/**
 * The OpenAI Responses API's input items, as {@link repairResponsesInput} reads and writes them: a
 * worked {@link MessageFormat}, and a base for your own when your records wrap Responses items.
 * Alone, it reads one item at a time: parallel calls are separate turns (their outputs are moved
 * next to each call), a hosted shell call's output an orphan, and a tool search output that does
 * not say `execution: "client"` the API's. `repairResponsesInput` reads the input whole: parallel
 * calls as one turn, outputs by their calls, and calls of two types that share a `call_id` apart.
 *
 * @example
 * ```ts
 * const { messages } = repairInFormat(openAIResponsesFormat, input, options, { model: "gpt-5" });
 * ```
 */
export const openAIResponsesFormat: MessageFormat<unknown> = Object.freeze({
  name: FORMAT_NAME,
  provider: "openai",
  partsOf: (message: unknown) => [entryOf(message).part],
  write: (items: readonly RepairedItem<unknown>[]) => write(items),
});

const NO_IDS = new EngineCallIds([]);

/** A message given to `write` as an entry: itself, or one item read on its own. */
function entryOf(message: unknown): Entry {
  if (message instanceof Entry) return message;
  const reading = readItem(message);
  return new Entry([message], [reading], partOf(reading), NO_IDS);
}

function write(items: readonly RepairedItem<unknown>[]): WrittenMessage<unknown>[] {
  const entries = items.map((item) => ("message" in item ? entryOf(item.message) : undefined));
  const ids = entries.find((entry) => entry !== undefined)?.ids ?? NO_IDS;
  const callId = (id: string) => ids.nativeId(id);
  /** The engine's id of each call met so far → its type: a placeholder comes after its call. */
  const types = new Map<string, ToolCallType>();
  let taken: Set<string> | undefined;
  return items.map((item, index) => {
    const entry = entries[index];
    if (item.kind === "placeholder" || entry === undefined) {
      const { toolCallId, text } = (item as { placeholder: PlaceholderResult }).placeholder;
      // The item ids the input holds, so that no placeholder takes one of them.
      taken ??= new Set(entries.flatMap((e) => e?.items ?? []).map((i) => `${recordOf(i)?.id}`));
      const type = types.get(toolCallId) ?? "function_call";
      return {
        message: responsesPlaceholder(type, callId(toolCallId), text, taken),
        items: [index],
      };
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
      const renames = name !== undefined && !namelessCallName(reading.type) && fields.name !== name;
      if (fields.call_id === callId(id) && !renames) return original;
      return { ...fields, call_id: callId(id), ...(renames ? { name } : {}) };
    });
    const same = written.every((copy, at) => copy === entry.items[at]);
    if (same) return { message: item.message, items: [index] };
    const [from, given] = item.kind === "renamed_calls" ? [entry, item.ids] : [];
    const copy = new Entry(written, entry.readings, entry.part, entry.ids, entry.at, from, given);
    return { message: item.message instanceof Entry ? copy : written[0], items: [index] };
  });
}

/**
 * The engine's messages for an input: an entry per item, but one for a turn (see `turnRanges`).
 * An output answers a call of its own type, whatever its own `execution` says; one whose call the
 * input may not hold reads as another item; a `call_id` that two call types share is told apart.
 *
 * An output that answers no call of the input and stands between two calls is read after their
 * turn when `dropsOrphans` says the repair drops it (given the number of entries then): the two
 * calls are one turn once it is gone, and are repaired as that turn.
 */
function entriesOf(
  input: readonly unknown[],
  continues: boolean,
  dropsOrphans: (entries: number) => boolean,
): Entry[] {
  const read = Array.from(input, readItem);
  const calls = new ClientCalls();
  for (const r of read) if (r.role === "call") calls.add(r.type, r.call.id);
  const hosted = new Set<string | undefined>();
  let unseen = continues;
  const readings = read.map((r): Reading => {
    if (r.role === "reference") unseen = true;
    if (r.role === "model") hosted.add(r.hostedCallId);
    if (r.role !== "output") return r;
    // A server tool search's output, and a hosted shell call's, are the API's; an output whose
    // call the API may hold passes through.
    if (!calls.answers(r.type, r.callId, r.answersClient)) return MODEL;
    const answering = r.answersClient ? r : { ...r, answersClient: true };
    if (r.callId === undefined) return answering;
    if (r.type === "shell_call" && hosted.has(r.callId)) return MODEL;
    return unseen && !calls.has(r.type, r.callId) ? OTHER : answering;
  });
  const ids = new EngineCallIds(
    readings.flatMap((r) => {
      if (r.role === "call") return [{ type: r.type, id: r.call.id }];
      return r.role === "output" ? [{ type: r.type, id: r.callId }] : [];
    }),
  );
  const engineReadings = readings.map((r): Reading => {
    if (r.role === "call")
      return { ...r, call: { ...r.call, id: ids.engineId(r.type, r.call.id) } };
    // An output without a `call_id` answers nothing: it is told apart from every call.
    return r.role === "output" ? { ...r, callId: ids.engineId(r.type, r.callId, true) } : r;
  });
  // Outputs whose call the input does not hold: the orphans the repair may drop.
  const orphans = new Set(
    readings.flatMap((r, index) =>
      r.role === "output" && r.answersClient && !calls.has(r.type, r.callId) ? [index] : [],
    ),
  );
  const entryAt = (at: readonly number[]) => {
    const turn = at.map((index) => engineReadings[index] as Reading);
    const first = turn[0] as Reading;
    const turnCalls = turn.flatMap((r) => (r.role === "call" ? [r.call] : []));
    const part =
      first.role === "call" ? { role: "assistant" as const, calls: turnCalls } : partOf(first);
    return new Entry(
      at.map((index) => input[index]),
      turn,
      part,
      ids,
      at,
    );
  };
  const entries = (orphansInTurns: boolean) => {
    const places = engineReadings.map((r, index) => {
      if (r.role === "call") return "call";
      return r.role === "model" || (orphansInTurns && orphans.has(index)) ? "between" : "other";
    });
    return turnRanges(places).flatMap(([start, end]) => {
      const at = Array.from({ length: end - start }, (_, offset) => start + offset);
      // Only a turn read with `orphansInTurns` holds orphans: they are read after it.
      const inTurn = end - start > 1 ? at.filter((index) => orphans.has(index)) : [];
      if (inTurn.length === 0) return [entryAt(at)];
      const turn = at.filter((index) => !orphans.has(index));
      return [entryAt(turn), ...inTurn.map((index) => entryAt([index]))];
    });
  };
  const plain = entries(false);
  if (orphans.size === 0) return plain;
  const joined = entries(true);
  return joined.length < plain.length && dropsOrphans(joined.length) ? joined : plain;
}

/**
 * Repairs the `input` of an OpenAI Responses API request before it is sent: each call without an
 * output gets one right after its turn, of the type the call needs (with the placeholder text,
 * or for a computer call a blank screenshot, the only output it takes); misplaced outputs are
 * moved back, orphans (and outputs without a `call_id`) dropped, calls without one, or with one
 * another call of their turn has, given one, as the options say. Same engine, policy, logging
 * and telemetry as the `createAgent` middleware. `window` counts the input's entries as the
 * engine reads them: one per item, but one per turn, a turn being consecutive calls with the
 * reasoning, messages and other items of the model's own that stand between them. Where the
 * whole input is in the window and orphans are dropped, an orphan output between two calls does
 * not part them: they are repaired as the one turn they are once it is gone. Items that needed
 * nothing come back as the same objects; the input array itself when nothing needed repair.
 *
 * Only the calls the application runs are answered (the module's list); built-in tools, MCP,
 * reasoning, messages and item references pass through. An output answers a call of its own
 * type: a tool search output answers a client tool search call with its `call_id`, whether or not
 * it says `execution: "client"`. Items take no extra fields, so `markSynthetic` marks nothing
 * here; `repairs` lists every placeholder by `outputIndex`. Tools offered by their `type` alone
 * (`computer_use_preview`, `shell`, …) are labelled as their calls are named (`computer_use`, …).
 *
 * Fail-open: an input it cannot read is logged, counted as `failed_open`, and comes back as it
 * is; a failure writing the repair back is logged, and the input comes back as it is (the call is
 * counted once, as the engine found it).
 *
 * @param options - the shared options, validated once per options object (keep one)
 * @param context - `threadId`, `model`, `tools`, `locale`, and `continuesStoredResponse`
 * @throws {ToolCallResilienceOptionsError} when an option is invalid, or `items` is the object
 *   that holds the input (a request's parameters) rather than its items
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
  refuseHistoryHolder(items, "input", FORMAT_NAME, "the input item array (params.input)");
  const repairer = repairerOf(FORMAT_NAME, options);
  const settings: ResponsesRepairContext = { ...context, tools: withToolNames(context?.tools) };
  const unchanged: Result = { messages: items as M[], repairs: [] };
  const { orphans, window } = repairer.policy;
  const dropsOrphans = (count: number) =>
    orphans === "drop" && (window === undefined || window >= count);
  let entries: Entry[];
  try {
    entries = entriesOf(items, settings.continuesStoredResponse === true, dropsOrphans);
  } catch (error) {
    const readable = Array.isArray(items) ? items : [];
    recordFailedOpen(repairer, formatRequestOf(openAIResponsesFormat, readable, settings), error);
    return unchanged;
  }
  const { repaired } = prepareInFormat(openAIResponsesFormat, entries, options, settings, repairer);
  if (repaired.messages === entries) return { messages: items as M[], repairs: repaired.repairs };
  try {
    return itemsOf(entries, repaired) as Result;
  } catch (error) {
    logFailedOpen(repairer, "messages", error);
    return unchanged;
  }
}

/** The repaired entries as items, and the repairs with item indices and the calls' own ids. */
function itemsOf(entries: readonly Entry[], { messages, repairs }: FormatRepairResult<unknown>) {
  const outStarts = startsOf(messages);
  const given = new Map<Entry, readonly string[]>();
  for (const m of messages) if (m instanceof Entry && m.from) given.set(m.from, m.given);
  const ids = entries[0]?.ids ?? NO_IDS;
  return {
    messages: messages.flatMap((message) => (message instanceof Entry ? message.items : [message])),
    repairs: repairs.map(({ ...repair }: Mutable<ToolCallRepair>) => {
      const { callIndex, resultIndex, outputIndex, toolCallId } = repair;
      const entry = callIndex === undefined ? undefined : entries[callIndex];
      const offset = entry === undefined ? 0 : callOffset(entry, toolCallId, given.get(entry));
      repair.toolCallId = ids.nativeId(toolCallId);
      if (entry !== undefined) repair.callIndex = entry.at[offset];
      if (resultIndex !== undefined) repair.resultIndex = entries[resultIndex]?.at[0];
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
