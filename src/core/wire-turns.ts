/**
 * The order of turns each wire wants, beyond which result answers which call. Pairing alone is
 * not enough on every provider: a placeholder is a tool result, and what may follow a tool result,
 * or stand first, differs.
 *
 * - Bedrock Converse (`ChatBedrockConverse`): roles alternate ("A conversation must alternate
 *   between user and assistant roles. Make sure the conversation alternates between user and
 *   assistant roles and try again."), and the first message is a user message ("A conversation must
 *   start with a user message. Try again with a conversation that starts with a user message.").
 *   Its converter sends a tool message as a user message of `toolResult` blocks, merged only with
 *   the tool messages next to it, so results followed by a human message are two user messages.
 * - Mistral (`ChatMistralAI`): after tool messages, an assistant message before any user message
 *   ("Unexpected role 'user' after role 'tool'", code 3230).
 * - Gemini (`ChatGoogleGenerativeAI`, `ChatVertexAI`): the responses in the turn right after the
 *   calls, as many as there are calls ("Please ensure that the number of function response parts
 *   is equal to the number of function call parts of the function call turn."), each named after
 *   its call. Placeholders and names meet these; no turn need be written.
 * - OpenAI (both APIs) and Anthropic: nothing beyond the pairing (ChatAnthropic merges results
 *   and a following human message into one user message).
 *
 * A target that stands for every wire (`"any"`) follows the union of their rules.
 */
import { type Fields, fieldsOf } from "./fields.js";
import type { RepairTarget } from "./wire-targets.js";

/** The synthetic turns a target's wire needs the engine to write. */
export interface TurnOrder {
  /** An assistant turn between tool results and a user message right after them. */
  readonly replyAfterResults: boolean;
  /**
   * A user turn before an assistant message that the repair left first, or right after another
   * assistant message, by taking away what stood before it.
   */
  readonly userBeforeAssistant: boolean;
}

const FREE: TurnOrder = Object.freeze({ replyAfterResults: false, userBeforeAssistant: false });
const STRICT: TurnOrder = Object.freeze({ replyAfterResults: true, userBeforeAssistant: true });

/**
 * The order of turns a repair for this target keeps: the rules of Bedrock Converse and Mistral for
 * `"any"`, whose history every wire must accept; none for the OpenAI and Anthropic clients.
 */
export function turnOrderOf(target: RepairTarget): TurnOrder {
  return target === "any" ? STRICT : FREE;
}

/** The order of turns when the engine cannot write turns (its factory makes tool messages only). */
export const NO_TURN_ORDER: TurnOrder = FREE;

/**
 * Whether a message is a user turn on the wire: a human message, or a plain or generic message
 * whose role is the user's.
 */
export function isUserTurn(message: unknown): boolean {
  const fields: Fields | undefined = fieldsOf(message);
  if (fields === undefined) return false;
  const { type } = fields;
  if (type === "human") return true;
  if (typeof type === "string" && type !== "generic") return false;
  return fields.role === "user" || fields.role === "human";
}

/** Whether a message is a system message, which no wire counts as a turn. */
export function isSystemTurn(message: unknown): boolean {
  const fields: Fields | undefined = fieldsOf(message);
  if (fields === undefined) return false;
  const { type } = fields;
  if (type === "system") return true;
  if (typeof type === "string" && type !== "generic") return false;
  return fields.role === "system" || fields.role === "developer";
}
