/**
 * What makes a dangling call one call, for the count-once memory: the history it lives in (the
 * thread and the checkpoint namespace), the AI message that made it (its id, or its position), and
 * its id. Providers and self-hosted servers reuse short ids such as `call_0`, and sub-graphs and
 * agents may share one `thread_id`, so neither the call id nor the thread alone tells calls apart.
 */
import { MessageKind, messageKindOf } from "../core/messages.js";

/** Where a model call's history lives: its LangGraph thread and checkpoint namespace, if any. */
export interface HistoryPlace {
  readonly threadId: string | undefined;
  /** The namespace of the graph whose state holds the history (see {@link historyNamespaceOf}). */
  readonly namespace?: string | undefined;
  /**
   * The run of that graph, which tells apart sub-agents run at once from one node (see
   * {@link graphRunOf}); what pairs a repair with the model call of the same run.
   */
  readonly run?: string | undefined;
}

/**
 * The namespace of the graph whose state holds a run's history, from the checkpoint namespace of
 * the task that runs (LangGraph's `checkpoint_ns`): the task's own segment dropped (a hook and the
 * model call of one agent run in different tasks, on one history) and the task ids dropped, as
 * LangGraph does for stored state (`tools:3f2a…|model_request:9c1e…` → `tools`), so it is the same
 * on every step. `undefined` for the root graph, and for anything but a string.
 *
 * @example
 * ```ts
 * historyNamespaceOf("model_request:9c1e"); // undefined: the root graph's history
 * historyNamespaceOf("tools:3f2a|model_request:9c1e"); // "tools": a sub-agent's
 * ```
 */
export function historyNamespaceOf(checkpointNamespace: unknown): string | undefined {
  // The root graph's tasks, almost every call: one segment, the task's own.
  if (typeof checkpointNamespace !== "string" || !checkpointNamespace.includes("|")) {
    return undefined;
  }
  const segments = checkpointNamespace.split("|").filter((part) => !/^\d+$/.test(part));
  segments.pop();
  return segments.length === 0
    ? undefined
    : segments.map((segment) => segment.split(":")[0]).join("|");
}

/**
 * The run of the graph whose state holds a task's history: the task's checkpoint namespace without
 * its own segment, task ids kept (`tools:3f2a|model_request:9c1e` → `tools:3f2a`), so that two
 * sub-agents run at once from one tools node, in one namespace, are two runs. `undefined` for the
 * root graph, and for anything but a string.
 *
 * @example
 * ```ts
 * graphRunOf("tools:3f2a|DanglingToolCallMiddleware.before_model:77aa"); // "tools:3f2a"
 * ```
 */
export function graphRunOf(checkpointNamespace: unknown): string | undefined {
  if (typeof checkpointNamespace !== "string") return undefined;
  const last = checkpointNamespace.lastIndexOf("|");
  return last <= 0 ? undefined : checkpointNamespace.slice(0, last);
}

/**
 * The count-once key of a dangling call: its history, its AI message (the message's id, else its
 * position and what it calls) and its id. `undefined` when nothing tells it apart from a call of
 * another conversation: with neither a thread nor an id of its AI message, a position and a call
 * repeat across conversations of the same shape, so such a call is counted at every sighting (a
 * count can then only be higher than the truth, never lower).
 *
 * @param message - the AI message that made the call, as the inspected history holds it
 * @param messageIndex - its position in that history
 * @example
 * ```ts
 * danglingCallKey({ threadId: "t1" }, aiMessage, 3, "call_0"); // one key per thread, message and call
 * ```
 */
export function danglingCallKey(
  place: HistoryPlace,
  message: unknown,
  messageIndex: number | undefined,
  toolCallId: string,
): string | undefined {
  const messageId = messageIdOf(message);
  if (messageId === undefined && place.threadId === undefined) return undefined;
  const made =
    messageId !== undefined
      ? `id:${messageId}`
      : `at:${messageIndex ?? ""}:${callsFingerprintOf(message)}`;
  return `${place.threadId ?? ""}\u0000${place.namespace ?? ""}\u0000${made}\u0000${toolCallId}`;
}

/** AI message → the fingerprint of its calls: read once per message, however often it is seen. */
const fingerprints = new WeakMap<object, string>();

/**
 * What an AI message without an id calls (the calls' ids, names and arguments), as a short
 * fingerprint: with its position, it tells apart two messages that make calls of one id at one
 * place of a history that was trimmed or rewritten in between. Computed once per message, and
 * short whatever the message holds, since a key of the count-once memory is kept for long.
 */
function callsFingerprintOf(message: unknown): string {
  if (message === null || typeof message !== "object") return "";
  let fingerprint = fingerprints.get(message);
  if (fingerprint === undefined) {
    let calls = "";
    try {
      const fields = message as {
        tool_calls?: unknown;
        additional_kwargs?: { tool_calls?: unknown };
      };
      calls = JSON.stringify(fields.tool_calls ?? fields.additional_kwargs?.tool_calls) ?? "";
    } catch {
      // Unreadable calls: the position alone tells the message apart.
    }
    fingerprint = fnv1a(calls);
    fingerprints.set(message, fingerprint);
  }
  return fingerprint;
}

/** The 32-bit FNV-1a hash of a text, in base 36: a short fingerprint, not a secure one. */
function fnv1a(text: string): string {
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index++) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0).toString(36);
}

/** A message's own id (LangChain instances and plain objects), or `undefined`; never throws. */
function messageIdOf(message: unknown): string | undefined {
  if (message === null || typeof message !== "object") return undefined;
  try {
    const id = (message as { id?: unknown }).id;
    return typeof id === "string" && id !== "" ? id : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether a model call has already been made over a dangling call: a later AI message of the same
 * agent follows the AI message that made it (`history[callIndex]`) in its history. A model answer
 * is appended to a history only by a model call over that history, which carried the call
 * unanswered (a strict provider refuses such a history unrepaired), so it was counted there, in
 * whichever process made it. A process that sees the call for the first time (after a restart,
 * on another replica) then remembers it without counting it again.
 *
 * "Of the same agent": `createAgent` names each answer after its agent, and only its model node
 * does; so an AI message under another name (a sub-agent's answer copied into a supervisor's
 * history) or under none (the message `modelCallLimitMiddleware` or `toolCallLimitMiddleware`
 * writes when it ends a run without a model call) proves nothing and is passed over. Outside
 * `createAgent` neither message has a name, and any later AI message counts. `false` when the
 * history cannot be read, so that a call is counted rather than lost.
 *
 * @example
 * ```ts
 * // [human, ai(call_1), human, ai("fine"), human]: answered over call_1 already
 * answeredByLaterModelCall(history, 1); // true
 * answeredByLaterModelCall(history, 3); // false: the latest AI message
 * ```
 */
export function answeredByLaterModelCall(
  history: readonly unknown[] | undefined,
  callIndex: number | undefined,
): boolean {
  if (history === undefined || callIndex === undefined) return false;
  try {
    const agent = nameOf(history[callIndex]);
    for (let index = callIndex + 1; index < history.length; index++) {
      const message = history[index];
      if (messageKindOf(message) === MessageKind.Ai && nameOf(message) === agent) return true;
    }
  } catch {
    // An entry that throws when read: count the call.
  }
  return false;
}

/** A message's `name` (the agent `createAgent` names its answers after), or `undefined`. */
function nameOf(message: unknown): string | undefined {
  if (message === null || typeof message !== "object") return undefined;
  const name = (message as { name?: unknown }).name;
  return typeof name === "string" && name !== "" ? name : undefined;
}
