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
 * of calls, each with its position in every channel that carries it (`wire-channels.ts`), so that a
 * repair can write a changed id or name to all of them ({@link withWireChanges},
 * `wire-changes.ts`). A {@link RepairTarget} says which client the repair is for (`wire-targets.ts`);
 * `"any"` asks for a history every one of them sends alike; which calls each client sends is
 * `wire-clients.ts`'s answer. This module runs on the repair path and on the clean path only for
 * messages the clean path's fast loop cannot vouch for (content blocks, raw calls, output items).
 * Which turns a wire wants around the calls and their results (Bedrock Converse, Mistral) is
 * `wire-turns.ts`'s answer.
 *
 * This file is the one door to those modules: the engine, the options and the public surface
 * import the wire from here.
 */

export { type CallChange, withWireChanges } from "./wire-changes.js";
export {
  hasInvalidArguments,
  hasInvalidListedArguments,
  readWire,
  type WireCall,
  type WireView,
} from "./wire-channels.js";
export { isUnsynced, lacksName, sentCalls } from "./wire-clients.js";
export {
  answerKindOf,
  type CallKind,
  COMPUTER_TOOL_NAME,
  REPAIR_TARGETS,
  type RepairTarget,
  resultKindOf,
} from "./wire-targets.js";
export {
  isSystemTurn,
  isUserTurn,
  NO_TURN_ORDER,
  type TurnOrder,
  turnOrderOf,
} from "./wire-turns.js";
