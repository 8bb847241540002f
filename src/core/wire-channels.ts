/**
 * Reads every channel that carries an AI message's calls (`tool_calls`, the raw
 * `additional_kwargs.tool_calls`, `tool_use` or v1 `tool_call` content blocks, Responses output
 * items) and matches their entries into one list of calls, each with its position in every channel
 * that carries it. Also what the channels say of a call's arguments.
 */

import { type Fields, fieldsOf, listOf } from "./fields.js";
import { isToolCallEntry } from "./messages.js";
import { CALL_ITEM_KINDS, type CallKind, COMPUTER_TOOL_NAME } from "./wire-targets.js";

/** One call of an AI message, matched across the channels that carry it. */
export interface WireCall {
  /** Its id, `undefined` when missing or empty in the channel it was first read from. */
  readonly id: string | undefined;
  /** The first non-empty name any of its channels gives it. */
  readonly name: string | undefined;
  readonly kind: CallKind;
  /** Its position in `tool_calls`, or -1. */
  readonly listed: number;
  /** Its position in the raw `additional_kwargs.tool_calls` when that list is sent (no `tool_calls`), or -1. */
  readonly raw: number;
  /** Its position in `content`: a `tool_use` block (v0) or a `tool_call` block (v1), or -1. */
  readonly block: number;
  /** Its position in `response_metadata.output`, or -1. */
  readonly item: number;
  /** The entry it was first read from. */
  readonly source: unknown;
}

/** Everything {@link readWire} found of an AI message's calls. */
export interface WireView {
  /** Every call some client sends, in the order first met: tool calls, raw, blocks, output items. */
  readonly calls: readonly WireCall[];
  /** Whether the message is in LangChain's v1 output format (`response_metadata.output_version`). */
  readonly v1: boolean;
  /** Whether `response_metadata.output` is what the Responses converter sends (v0, typed items). */
  readonly output: boolean;
  /** Whether `tool_calls` holds entries (else the raw list stands in for it). */
  readonly listedUsed: boolean;
}

type MutableCall = { -readonly [Key in keyof WireCall]: WireCall[Key] };

/** A call's id as a channel gives it: a non-empty string, else `undefined`. */
export function idOf(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

/** A tool's name as a channel gives it: a non-empty string, else `undefined`. */
export function nameOf(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

/**
 * An entry of `tool_calls` or of the raw list as a call: the engine counts any object there as a
 * call (arrays included, see `isToolCallEntry`), and the wire must count the same ones.
 */
function callEntryOf(entry: unknown): Fields | undefined {
  return isToolCallEntry(entry) ? (entry as Fields) : undefined;
}

/** Whether a message is in LangChain's v1 output format, whose content blocks are what is sent. */
function isV1Message(fields: Fields): boolean {
  return fieldsOf(fields.response_metadata)?.output_version === "v1";
}

/**
 * `response_metadata.output` when the Responses converter sends it instead of `tool_calls`: a v0
 * message whose output is a non-empty list of items that each have a string `type`.
 */
function sentOutputOf(fields: Fields): readonly unknown[] | undefined {
  const metadata = fieldsOf(fields.response_metadata);
  if (metadata === undefined || metadata.output_version === "v1") return undefined;
  const output = metadata.output;
  if (!Array.isArray(output) || output.length === 0) return undefined;
  for (let index = 0; index < output.length; index++) {
    if (typeof fieldsOf(output[index])?.type !== "string") return undefined;
  }
  return output;
}

/**
 * The name of a `tool_calls` entry: `name`, or `function.name` for the OpenAI shape a plain
 * history may use (which every client that reads such a history sends).
 */
export function listedNameOf(call: Fields): string | undefined {
  return nameOf(call.name) ?? nameOf(fieldsOf(call.function)?.name);
}

/** The call kind of a `tool_calls` entry, by the flags ChatOpenAI's Responses client sets. */
function listedKindOf(call: Fields, customIds: Fields | undefined): CallKind {
  if (call.isComputerTool === true) return "computer";
  if (call.isCustomTool === true) return "custom";
  const id = idOf(call.id);
  return id !== undefined && customIds !== undefined && id in customIds ? "custom" : "function";
}

/**
 * The index of the call in `calls` that this channel's entry is: the first with the same id that
 * the channel has not claimed yet (for an entry without an id, the first such call without one),
 * or -1 for a call not seen yet.
 */
function matchingCall(
  calls: readonly MutableCall[],
  id: string | undefined,
  claimed: (call: MutableCall) => boolean,
): number {
  for (let index = 0; index < calls.length; index++) {
    const call = calls[index] as MutableCall;
    if (call.id === id && !claimed(call)) return index;
  }
  return -1;
}

/**
 * Reads every channel of an AI message's calls. `undefined` for anything that is not a record;
 * calls that are not objects (junk in a list) are skipped, keeping the positions of the rest.
 *
 * @example
 * ```ts
 * const view = readWire(aiMessageFromTheResponsesApi);
 * view?.calls.map((call) => call.id); // ["call_ok", "call_bad"]: call_bad only in the output
 * ```
 */
export function readWire(message: unknown): WireView | undefined {
  const fields = fieldsOf(message);
  if (fields === undefined) return undefined;
  const calls: MutableCall[] = [];
  const listed = listOf(fields.tool_calls);
  const listedUsed = listed.length > 0;
  const kwargs = fieldsOf(fields.additional_kwargs);
  const customIds = fieldsOf(kwargs?.__openai_custom_tool_call_ids__);
  const v1 = isV1Message(fields);
  for (let position = 0; position < listed.length; position++) {
    const call = callEntryOf(listed[position]);
    if (call === undefined) continue;
    calls.push({
      id: idOf(call.id),
      name: listedNameOf(call),
      kind: v1 ? "function" : listedKindOf(call, customIds),
      listed: position,
      raw: -1,
      block: -1,
      item: -1,
      source: call,
    });
  }
  if (!listedUsed) {
    const raw = listOf(kwargs?.tool_calls);
    for (let position = 0; position < raw.length; position++) {
      const call = callEntryOf(raw[position]);
      if (call === undefined) continue;
      calls.push({
        id: idOf(call.id),
        name: nameOf(fieldsOf(call.function)?.name),
        kind: "function",
        listed: -1,
        raw: position,
        block: -1,
        item: -1,
        source: call,
      });
    }
  }
  const content = listOf(fields.content);
  const blockType = v1 ? "tool_call" : "tool_use";
  for (let position = 0; position < content.length; position++) {
    const block = fieldsOf(content[position]);
    if (block?.type !== blockType) continue;
    const id = idOf(block.id);
    const found = matchingCall(calls, id, (call) => call.block >= 0);
    if (found >= 0) {
      const call = calls[found] as MutableCall;
      call.block = position;
      call.name ??= nameOf(block.name);
      continue;
    }
    calls.push({
      id,
      name: nameOf(block.name),
      kind: "function",
      listed: -1,
      raw: -1,
      block: position,
      item: -1,
      source: block,
    });
  }
  // The Responses client always writes content blocks; a message with text content is read by
  // its tool_calls, as the clean path reads it.
  const sentOutput = Array.isArray(fields.content) ? sentOutputOf(fields) : undefined;
  const output = listOf(sentOutput);
  for (let position = 0; position < output.length; position++) {
    const item = output[position] as Fields;
    const kind = CALL_ITEM_KINDS[item.type as string];
    if (kind === undefined) continue;
    const id = idOf(item.call_id);
    const found = matchingCall(calls, id, (call) => call.item >= 0);
    const name = kind === "computer" ? COMPUTER_TOOL_NAME : nameOf(item.name);
    if (found >= 0) {
      const call = calls[found] as MutableCall;
      call.item = position;
      call.kind = kind;
      call.name ??= name;
      continue;
    }
    calls.push({
      id,
      name,
      kind,
      listed: -1,
      raw: -1,
      block: -1,
      item: position,
      source: item,
    });
  }
  return { calls, v1, output: sentOutput !== undefined, listedUsed };
}

/**
 * Whether a call could not run because of its arguments: LangChain listed its id in
 * `invalid_tool_calls`, or the arguments of an OpenAI-shaped call (raw, or an output item) do not
 * parse.
 */
export function hasInvalidArguments(message: unknown, call: WireCall): boolean {
  const fields = fieldsOf(message);
  if (fields === undefined) return false;
  if (hasInvalidListedArguments(fields, call.source as Fields, call.id)) return true;
  if (call.raw >= 0) {
    const raw = listOf(fieldsOf(fields.additional_kwargs)?.tool_calls)[call.raw];
    if (!parses(fieldsOf(fieldsOf(raw)?.function)?.arguments)) return true;
  }
  if (call.item >= 0 && call.kind === "function") {
    const item = listOf(fieldsOf(fields.response_metadata)?.output)[call.item];
    if (!parses(fieldsOf(item)?.arguments)) return true;
  }
  return false;
}

/**
 * {@link hasInvalidArguments} read from a `tool_calls` entry alone (or whichever entry `call` is),
 * which is all there is for a message whose calls stand there alone: its id in
 * `invalid_tool_calls`, or OpenAI-shaped arguments that do not parse.
 */
export function hasInvalidListedArguments(
  message: unknown,
  call: Fields | undefined,
  id: string | undefined,
): boolean {
  const invalid = fieldsOf(message)?.invalid_tool_calls;
  if (id !== undefined && Array.isArray(invalid) && invalid.length > 0) {
    for (const entry of invalid) if (idOf(fieldsOf(entry)?.id) === id) return true;
  }
  return !parses(fieldsOf(call?.function)?.arguments);
}

/** Whether arguments given as text parse as JSON; anything not text is taken as parsed. */
function parses(text: unknown): boolean {
  if (typeof text !== "string") return true;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
