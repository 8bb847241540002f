/**
 * Waits for `createAgent` to name a model call's answer after its agent: the only place a nested
 * agent's name can be read, once the call has ended.
 */

import { MessageKind, messageKindOf } from "../core/messages.js";
import { aiMessagesOf } from "./response-calls.js";

/** What `createAgent` names the answers of an agent that was given no name. */
const UNNAMED_AGENT = "model";

/**
 * How long to wait, each time, for `createAgent` to name an answer: it does so once every
 * middleware around the call has returned it, which is the microtasks that follow unless one of
 * them awaits something (a log write, say). After the last wait, the answer is taken as unnamed.
 */
const NAMING_WAITS_MS = [1, 10, 100] as const;

/**
 * Calls `record` with the name of the agent that made an answer, once `createAgent` has named it
 * after its agent (`undefined` for an agent without a name, or an answer never named: one that
 * did not come from `createAgent`, or that it copied). Looks on the next turn of the event loop,
 * then after each of {@link NAMING_WAITS_MS}.
 *
 * @example
 * ```ts
 * whenAgentNamed(aiMessage, (agent) => recordCall(agent ?? "unknown"));
 * ```
 */
export function whenAgentNamed(
  response: unknown,
  record: (agent: string | undefined) => void,
): void {
  let waited = 0;
  const look = () => {
    const name = agentNameGiven(response);
    if (name !== undefined || waited === NAMING_WAITS_MS.length) {
      record(name === UNNAMED_AGENT ? undefined : name);
      return;
    }
    setTimeout(look, NAMING_WAITS_MS[waited++]);
  };
  nextTurn(look);
}

/** The name on the AI message of an answer (a message, a command, or a structured answer). */
function agentNameGiven(response: unknown): string | undefined {
  try {
    const messages = aiMessagesOf(response);
    const structured = (response as { messages?: unknown } | null)?.messages;
    const message =
      messages[0] ??
      (Array.isArray(structured)
        ? structured.find((entry) => messageKindOf(entry) === MessageKind.Ai)
        : undefined);
    const name = (message as { name?: unknown } | undefined)?.name;
    return typeof name === "string" && name !== "" ? name : undefined;
  } catch {
    return undefined;
  }
}

/** Runs `callback` on the next turn of the event loop: `setImmediate` where there is one. */
function nextTurn(callback: () => void): void {
  if (typeof setImmediate === "function") setImmediate(callback);
  else setTimeout(callback, 0);
}
