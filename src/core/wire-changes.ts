/**
 * Writes a repair's changes to an AI message's calls into every channel that carries them (new
 * ids, names where a channel has none) and, for `"any"`, writes each call into the channels that
 * lack it, in the shape that channel's client reads. The original message is never touched.
 */

import { type Fields, fieldsOf, listOf } from "./fields.js";
import type { WireCall, WireView } from "./wire-channels.js";
import type { CallKind } from "./wire-targets.js";

/** What a repair changes of one call: a new id, a name where a channel has none. */
export interface CallChange {
  readonly id?: string;
  readonly name?: string;
}

/** What {@link withWireChanges} wrote. */
export interface WrittenChanges {
  /** The copy of the message, or the message itself when nothing changed. */
  readonly message: unknown;
  /** The calls written into a channel that lacked them, by index in `view.calls`. */
  readonly listed: readonly number[];
}

/** The arguments of a call read from any channel, as an object (`{}` when they do not parse). */
function argumentsOf(call: Fields, kind: CallKind): Fields {
  if (kind === "custom" && call.input !== undefined && call.args === undefined) {
    return { input: call.input };
  }
  if (kind === "computer" && call.action !== undefined && call.args === undefined) {
    return { action: call.action };
  }
  const given =
    call.args !== undefined
      ? call.args
      : call.input !== undefined
        ? call.input
        : call.arguments !== undefined
          ? call.arguments
          : fieldsOf(call.function)?.arguments;
  if (typeof given === "string") {
    try {
      return fieldsOf(JSON.parse(given)) ?? {};
    } catch {
      return {};
    }
  }
  return fieldsOf(given) ?? {};
}

/** A call as a `tool_calls` entry, with the flags the Responses client types it by. */
function asListedCall(call: WireCall, id: string | undefined, name: string): Fields {
  const entry: Fields = {
    id,
    name,
    args: argumentsOf(call.source as Fields, call.kind),
    type: "tool_call",
  };
  if (call.kind === "custom") entry.isCustomTool = true;
  if (call.kind === "computer") entry.isComputerTool = true;
  return entry;
}

/** A call as a v1 `tool_call` content block. */
function asBlock(call: WireCall, id: string | undefined, name: string): Fields {
  return { type: "tool_call", id, name, args: argumentsOf(call.source as Fields, call.kind) };
}

/** A call as a Responses output item of its kind. */
function asItem(call: WireCall, id: string | undefined, name: string): Fields {
  const args = argumentsOf(call.source as Fields, call.kind);
  if (call.kind === "custom") {
    return { type: "custom_tool_call", call_id: id, name, input: args.input ?? "" };
  }
  if (call.kind === "computer") {
    return {
      type: "computer_call",
      call_id: id,
      action: args.action ?? {},
      pending_safety_checks: [],
      status: "completed",
    };
  }
  return {
    type: "function_call",
    call_id: id,
    name,
    arguments: JSON.stringify(args),
    status: "completed",
  };
}

/**
 * A copy of an AI message with the given changes written to every channel that carries each call
 * (`tool_calls`, the raw list, content blocks, output items), and, with `sync`, every call that
 * some client sends written into each channel another client reads, so that all of them send the
 * same calls. The message itself when nothing changes. The original is never touched.
 *
 * @param changes - by index in `view.calls`
 * @param sync - the calls to write where they are missing, by index in `view.calls`
 * @param copy - makes the copy of the message with the changed fields (`copyWith`)
 *
 * @example
 * ```ts
 * const view = readWire(ai);
 * const written = withWireChanges(ai, view, new Map([[0, { id: "tcr_0_0" }]]), [], copyWith);
 * ```
 */
export function withWireChanges(
  message: unknown,
  view: WireView,
  changes: ReadonlyMap<number, CallChange>,
  sync: readonly number[],
  copy: (fields: Fields, changed: Fields) => unknown,
): WrittenChanges {
  const fields = fieldsOf(message);
  if (fields === undefined || (changes.size === 0 && sync.length === 0)) {
    return { message, listed: [] };
  }
  const idOfCall = (index: number) => changes.get(index)?.id ?? (view.calls[index] as WireCall).id;
  const nameOfCall = (index: number) =>
    changes.get(index)?.name ?? (view.calls[index] as WireCall).name ?? "";
  const changed: Fields = {};
  const written = new Set<number>();

  // tool_calls: changed entries, then the calls it lacks.
  const listed = listOf(fields.tool_calls);
  const listedChanges = new Map<number, CallChange>();
  const rawChanges = new Map<number, CallChange>();
  const blockChanges = new Map<number, CallChange>();
  const itemChanges = new Map<number, CallChange>();
  for (const [index, change] of changes) {
    const call = view.calls[index] as WireCall;
    if (call.listed >= 0) listedChanges.set(call.listed, change);
    if (call.raw >= 0) rawChanges.set(call.raw, change);
    if (call.block >= 0) blockChanges.set(call.block, change);
    if (call.item >= 0) itemChanges.set(call.item, change);
  }
  // A changed entry is one the view read as a call: an object, copied as it is (an array too).
  const toList = sync.filter((index) => (view.calls[index] as WireCall).listed < 0);
  if (listedChanges.size > 0 || toList.length > 0) {
    const calls: unknown[] = listed.map((entry, position) => {
      const change = listedChanges.get(position);
      return change === undefined ? entry : { ...(entry as Fields), ...change };
    });
    for (const index of toList) {
      calls.push(asListedCall(view.calls[index] as WireCall, idOfCall(index), nameOfCall(index)));
      written.add(index);
    }
    changed.tool_calls = calls;
  }

  // The raw list, when it is the one sent (no tool_calls): ids and names where changed.
  if (rawChanges.size > 0) {
    const kwargs = fieldsOf(fields.additional_kwargs) ?? {};
    changed.additional_kwargs = {
      ...kwargs,
      tool_calls: listOf(kwargs.tool_calls).map((entry, position) => {
        const change = rawChanges.get(position);
        if (change === undefined) return entry;
        const raw = entry as Fields;
        const fn = fieldsOf(raw.function);
        return {
          ...raw,
          ...(change.id === undefined ? {} : { id: change.id }),
          ...(change.name === undefined || fn === undefined
            ? {}
            : { function: { ...fn, name: change.name } }),
        };
      }),
    };
  }

  // Content blocks (tool_use, or v1 tool_call, which a v1 message must carry for every call).
  const toBlock = view.v1 ? sync.filter((index) => (view.calls[index] as WireCall).block < 0) : [];
  if (blockChanges.size > 0 || toBlock.length > 0) {
    const content = listOf(fields.content).map((block, position) => {
      const change = blockChanges.get(position);
      return change === undefined ? block : { ...fieldsOf(block), ...change };
    });
    for (const index of toBlock) {
      content.push(asBlock(view.calls[index] as WireCall, idOfCall(index), nameOfCall(index)));
      written.add(index);
    }
    changed.content = content;
  }

  // Responses output items, when the converter sends them.
  const toItem = view.output
    ? sync.filter((index) => (view.calls[index] as WireCall).item < 0)
    : [];
  if (itemChanges.size > 0 || toItem.length > 0) {
    const metadata = fieldsOf(fields.response_metadata) ?? {};
    const output = listOf(metadata.output).map((item, position) => {
      const change = itemChanges.get(position);
      if (change === undefined) return item;
      const itemFields = fieldsOf(item) ?? {};
      return {
        ...itemFields,
        ...(change.id === undefined ? {} : { call_id: change.id }),
        ...(change.name === undefined || itemFields.type === "computer_call"
          ? {}
          : { name: change.name }),
      };
    });
    for (const index of toItem) {
      output.push(asItem(view.calls[index] as WireCall, idOfCall(index), nameOfCall(index)));
      written.add(index);
    }
    changed.response_metadata = { ...metadata, output };
  }

  if (Object.keys(changed).length === 0) return { message, listed: [] };
  return { message: copy(fields, changed), listed: [...written].sort((a, b) => a - b) };
}
