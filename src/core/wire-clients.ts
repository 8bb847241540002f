/**
 * Which of an AI message's calls each client sends, in which order, and whether what it sends
 * lacks a name: the converters read different channels (see `wire.ts`), so a call one client
 * sends may be missing, or nameless, on another's wire.
 */

import { type Fields, fieldsOf, listOf } from "./fields.js";
import { isToolCallEntry } from "./messages.js";
import { idOf, listedNameOf, nameOf, type WireCall, type WireView } from "./wire-channels.js";
import { CLIENTS, type RepairTarget } from "./wire-targets.js";

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

const NO_IDS: ReadonlySet<string> = new Set();

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
    const listed = listOf(fields.tool_calls)[call.listed];
    if (!isToolCallEntry(listed) || listedNameOf(listed as Fields) === undefined) return true;
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
