/**
 * The calls of an AI message as each LangChain client puts them on the wire. A client's converter,
 * not `tool_calls`, decides what the provider receives, and the converters read different fields:
 *
 * - ChatOpenAI, Chat Completions: `tool_calls`, else the raw `additional_kwargs.tool_calls`.
 * - ChatOpenAI, Responses API: a message with `response_metadata.output_version: "v1"` sends its
 *   `tool_call` content blocks; otherwise `response_metadata.output` as it is, when it holds typed
 *   items (`function_call`, `custom_tool_call`, `computer_call`, and server-side items that need
 *   no answer); otherwise `tool_calls` or the raw list, typed by their flags.
 * - ChatAnthropic: a v1 message sends its `tool_call` content blocks; otherwise its `tool_use`
 *   content blocks, then the calls of `tool_calls` no block has (never the raw list).
 *
 * {@link readWire} reads every one of those channels once and matches their entries into one list
 * of calls, each with its position in every channel that carries it, so that a repair can write a
 * changed id or name to all of them ({@link withWireChanges}). A {@link RepairTarget} says which
 * client the repair is for; `"any"` asks for a history every one of them sends alike. This module
 * runs on the repair path and on the clean path only for messages the clean path's fast loop
 * cannot vouch for (content blocks, raw calls, output items).
 */

type Fields = Record<string, unknown>;

/**
 * The client a repair is for: `"any"` makes every supported client send the same calls and
 * answers; the others repair for what that client's converter sends.
 */
export const REPAIR_TARGETS = [
  "any",
  "openai-completions",
  "openai-responses",
  "anthropic",
] as const;
/** One of {@link REPAIR_TARGETS}. */
export type RepairTarget = (typeof REPAIR_TARGETS)[number];

/** The clients `"any"` stands for. */
const CLIENTS: readonly Exclude<RepairTarget, "any">[] = [
  "openai-completions",
  "openai-responses",
  "anthropic",
];

/**
 * How the Responses API receives a call, and so which output must answer it: a `function_call`
 * by a `function_call_output`, a `custom_tool_call` by a `custom_tool_call_output`, a
 * `computer_call` by a `computer_call_output`. Every other client receives each as a function call.
 */
export type CallKind = "function" | "custom" | "computer";

/** The output item types of the Responses API that are calls the client must answer. */
const CALL_ITEM_KINDS: Readonly<Record<string, CallKind>> = {
  function_call: "function",
  custom_tool_call: "custom",
  computer_call: "computer",
};

/** The name LangChain gives a computer call, which has none on the wire. */
export const COMPUTER_TOOL_NAME = "computer_use";

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

interface MutableCall {
  id: string | undefined;
  name: string | undefined;
  kind: CallKind;
  listed: number;
  raw: number;
  block: number;
  item: number;
  source: unknown;
}

const NONE: readonly unknown[] = Object.freeze([]);

function fieldsOf(value: unknown): Fields | undefined {
  return value !== null && typeof value === "object" ? (value as Fields) : undefined;
}

function listOf(value: unknown): readonly unknown[] {
  return Array.isArray(value) ? value : NONE;
}

function idOf(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

function nameOf(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
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
function listedNameOf(call: Fields): string | undefined {
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
 * Reads every channel of an AI message's calls. `undefined` for anything that is not an object;
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
    const call = fieldsOf(listed[position]);
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
      const call = fieldsOf(raw[position]);
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
  const output = Array.isArray(fields.content) ? (sentOutputOf(fields) ?? NONE) : NONE;
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
  return { calls, v1, output: output !== NONE, listedUsed };
}

/**
 * Whether this client's converter sends the call.
 *
 * @param serverIds - ids of Anthropic `server_tool_use` blocks: a `tool_calls` entry with one of
 *   them is never appended by ChatAnthropic
 */
function isSentBy(
  view: WireView,
  call: WireCall,
  target: RepairTarget,
  serverIds?: ReadonlySet<string>,
): boolean {
  switch (target) {
    case "openai-completions":
      return view.listedUsed ? call.listed >= 0 : call.raw >= 0;
    case "openai-responses":
      if (view.v1) return call.block >= 0;
      if (view.output) return call.item >= 0;
      return view.listedUsed ? call.listed >= 0 : call.raw >= 0;
    case "anthropic":
      if (call.block >= 0) return true;
      if (view.v1) return false;
      return call.listed >= 0 && (call.id === undefined || !serverIds?.has(call.id));
    case "any":
      for (const client of CLIENTS) if (isSentBy(view, call, client, serverIds)) return true;
      return false;
  }
}

/** The ids of an AI message's Anthropic `server_tool_use` blocks; empty for most messages. */
function serverToolUseIdsOf(message: unknown): ReadonlySet<string> {
  const content = listOf(fieldsOf(message)?.content);
  let ids: Set<string> | undefined;
  for (const block of content) {
    const fields = fieldsOf(block);
    if (fields?.type !== "server_tool_use" && fields?.type !== "input_json_delta") continue;
    const id = idOf(fields.id);
    if (id === undefined) continue;
    ids ??= new Set();
    ids.add(id);
  }
  return ids ?? NO_IDS;
}

const NO_IDS: ReadonlySet<string> = new Set();

/**
 * The calls of `view` that this client sends, in the order it sends them (for `"any"`, in the
 * order they were read: `tool_calls` first).
 */
export function sentCalls(
  view: WireView,
  target: RepairTarget,
  message: unknown,
): readonly WireCall[] {
  const serverIds = serverToolUseIdsOf(message);
  const sent = view.calls.filter((call) => isSentBy(view, call, target, serverIds));
  if (target === "any" || sent.length < 2) return sent;
  const order = (call: WireCall) => sendingOrder(view, call, target);
  return sent.sort((a, b) => order(a) - order(b));
}

/** Where a client sends the call among the others: its position in the channel it reads. */
function sendingOrder(view: WireView, call: WireCall, target: RepairTarget): number {
  const listedOrRaw = view.listedUsed ? call.listed : call.raw;
  if (target === "openai-completions") return listedOrRaw;
  if (view.v1) return call.block;
  if (target === "openai-responses") return view.output ? call.item : listedOrRaw;
  // ChatAnthropic sends the content's tool_use blocks, then the calls of tool_calls they lack.
  return call.block >= 0 ? call.block : 1_000_000 + call.listed;
}

/**
 * Whether some client would not send this call: a client that every other client's call must
 * reach once `"any"` repairs the message.
 */
export function isUnsynced(view: WireView, call: WireCall, message: unknown): boolean {
  const serverIds = serverToolUseIdsOf(message);
  for (const client of CLIENTS) if (!isSentBy(view, call, client, serverIds)) return true;
  return false;
}

/**
 * Whether a channel that this client reads for the call has no name for it (the wire would carry
 * an empty function or tool name, which providers refuse). A computer call has no name on the
 * Responses wire, and needs none.
 */
export function lacksName(
  message: unknown,
  view: WireView,
  call: WireCall,
  target: RepairTarget,
): boolean {
  const fields = fieldsOf(message) as Fields;
  const reads = (channel: "listed" | "raw" | "block" | "item"): boolean => {
    if (target === "any") return true;
    if (target === "openai-completions") return channel === (view.listedUsed ? "listed" : "raw");
    if (target === "openai-responses") {
      if (view.v1) return channel === "block";
      if (view.output) return channel === "item";
      return channel === (view.listedUsed ? "listed" : "raw");
    }
    return channel === "block" || (!view.v1 && channel === "listed" && call.block < 0);
  };
  if (call.listed >= 0 && reads("listed")) {
    const listed = fieldsOf(listOf(fields.tool_calls)[call.listed]);
    if (listed === undefined || listedNameOf(listed) === undefined) return true;
  }
  if (call.raw >= 0 && reads("raw")) {
    const raw = listOf(fieldsOf(fields.additional_kwargs)?.tool_calls)[call.raw];
    if (nameOf(fieldsOf(fieldsOf(raw)?.function)?.name) === undefined) return true;
  }
  if (call.block >= 0 && reads("block")) {
    if (nameOf(fieldsOf(listOf(fields.content)[call.block])?.name) === undefined) return true;
  }
  if (call.item >= 0 && call.kind !== "computer" && reads("item")) {
    const output = listOf(fieldsOf(fields.response_metadata)?.output);
    if (nameOf(fieldsOf(output[call.item])?.name) === undefined) return true;
  }
  return false;
}

/**
 * Whether a call could not run because of its arguments: LangChain listed its id in
 * `invalid_tool_calls`, or the arguments of an OpenAI-shaped call (raw, or an output item) do not
 * parse.
 */
export function hasInvalidArguments(message: unknown, call: WireCall): boolean {
  const fields = fieldsOf(message);
  if (fields === undefined) return false;
  if (hasInvalidListedArguments(fields, fieldsOf(call.source), call.id)) return true;
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

/** The markers ChatOpenAI's Responses client reads on a tool message to pick its output type. */
export function resultKindOf(message: unknown): CallKind {
  const kwargs = (message as { additional_kwargs?: Record<string, unknown> } | null)
    ?.additional_kwargs;
  if (kwargs === null || typeof kwargs !== "object") return "function";
  if (kwargs.type === "computer_call_output") return "computer";
  return kwargs.customTool ? "custom" : "function";
}

/**
 * The output type a call must be answered with on this client's wire: the Responses API wants a
 * custom tool call or a computer call answered by an output of its own type; the other clients
 * send any answer as a plain result (`undefined`: any result will do).
 */
export function answerKindOf(kind: CallKind, target: RepairTarget): CallKind | undefined {
  return target === "openai-completions" || target === "anthropic" ? undefined : kind;
}

/** What a repair changes of one call: a new id, a name where a channel has none. */
export interface CallChange {
  readonly id?: string;
  readonly name?: string;
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
      const parsed: unknown = JSON.parse(given);
      return fieldsOf(parsed) !== undefined && !Array.isArray(parsed) ? (parsed as Fields) : {};
    } catch {
      return {};
    }
  }
  return fieldsOf(given) !== undefined && !Array.isArray(given) ? (given as Fields) : {};
}

/** A call as a `tool_calls` entry, with the flags the Responses client types it by. */
function asListedCall(call: WireCall, id: string | undefined, name: string): Fields {
  const source = fieldsOf(call.source) as Fields;
  const entry: Fields = { id, name, args: argumentsOf(source, call.kind), type: "tool_call" };
  if (call.kind === "custom") entry.isCustomTool = true;
  if (call.kind === "computer") entry.isComputerTool = true;
  return entry;
}

/** A call as a v1 `tool_call` content block. */
function asBlock(call: WireCall, id: string | undefined, name: string): Fields {
  const source = fieldsOf(call.source) as Fields;
  return { type: "tool_call", id, name, args: argumentsOf(source, call.kind) };
}

/** A call as a Responses output item of its kind. */
function asItem(call: WireCall, id: string | undefined, name: string): Fields {
  const args = argumentsOf(fieldsOf(call.source) as Fields, call.kind);
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

/** What {@link withWireChanges} wrote. */
export interface WrittenChanges {
  /** The copy of the message, or the message itself when nothing changed. */
  readonly message: unknown;
  /** The calls written into a channel that lacked them, by index in `view.calls`. */
  readonly listed: readonly number[];
}

/**
 * A copy of an AI message with the given changes written to every channel that carries each call
 * (`tool_calls`, the raw list, content blocks, output items), and, with `sync`, every call that
 * some client sends written into each channel another client reads, so that all of them send the
 * same calls. The message itself when nothing changes. The original is never touched.
 *
 * @param changes - by index in `view.calls`
 * @param sync - the calls to write where they are missing, by index in `view.calls`
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
  const toList = sync.filter((index) => (view.calls[index] as WireCall).listed < 0);
  if (listedChanges.size > 0 || toList.length > 0) {
    const calls: unknown[] = listed.map((entry, position) => {
      const change = listedChanges.get(position);
      return change === undefined ? entry : { ...fieldsOf(entry), ...change };
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
        const raw = fieldsOf(entry) ?? {};
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
