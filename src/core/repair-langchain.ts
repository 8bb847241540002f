/**
 * The engine for LangChain messages: the tool messages it writes are `ToolMessage`s. The one
 * module of the engine that imports LangChain, so that the native-format adapters, which run
 * without it, can share the rest.
 */
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { refuseHistoryHolder } from "./errors.js";
import type { RepairOptions, RepairPolicy } from "./policy.js";
import { repairHistory, repairHistoryCarefully } from "./repair.js";
import type { HistoryRepair, RepairContext } from "./repair-log.js";
import type { ToolMessageFactory, TurnMessageFields } from "./tool-message.js";

/**
 * What {@link repairToolCalls} returns: the history, with the `ToolMessage`s it made, and the
 * synthetic `AIMessage` or `HumanMessage` turns some wires' order of turns needs.
 */
export interface RepairResult<T = unknown>
  extends HistoryRepair<T | ToolMessage | AIMessage | HumanMessage> {}

/**
 * Makes a LangChain `ToolMessage`, and with `turn` a synthetic `AIMessage` or `HumanMessage`: what
 * the engine writes into a LangChain history.
 *
 * @example
 * ```ts
 * newToolMessage({ content: "42", tool_call_id: "call_1" }); // ToolMessage
 * ```
 */
export const newToolMessage: ToolMessageFactory<ToolMessage | AIMessage | HumanMessage> =
  Object.assign(
    (fields: Parameters<ToolMessageFactory>[0]) =>
      new ToolMessage(fields as ConstructorParameters<typeof ToolMessage>[0] & object),
    {
      // Every field given, so the constructors have nothing to fill in (measured: a third less).
      turn: (role: "ai" | "human", { content, response_metadata }: TurnMessageFields) =>
        role === "ai"
          ? new AIMessage({
              content,
              tool_calls: [],
              invalid_tool_calls: [],
              additional_kwargs: {},
              response_metadata,
            })
          : new HumanMessage({ content, additional_kwargs: {}, response_metadata }),
      className: "ToolMessage",
    },
  );

/**
 * Finds and repairs broken tool-call protocol in a chat history: calls without results get a
 * placeholder tool message in the group right after their AI message; results separated from their
 * call are moved back (`misplaced: "regroup"`); results that answer no call are dropped
 * (`orphans: "drop"`); calls without an id or a name get one.
 *
 * Which calls a message makes is read as the target client's converter sends them (the policy's
 * or the context's `target`): `tool_calls`, raw calls, content blocks, Responses API output items.
 *
 * Pure and synchronous: it never mutates the input or any message in it, and nothing in a history
 * can make it throw. When nothing needs repair it returns the very same array and allocates
 * nothing in proportion to the history.
 *
 * @param messages - the history: LangChain messages or plain objects of the same shape
 * @param policy - a policy from {@link createRepairPolicy}, or options to validate on the spot
 * @param context - per-call settings, such as the locale of this request
 * @throws {ToolCallResilienceOptionsError} only when `policy` is given as invalid options, the
 *   context names an unknown target, or `messages` is the object that holds the history (a
 *   graph's state) rather than the array (`state.messages`)
 *
 * @example A dangling call gets a placeholder right after its AI message
 * ```ts
 * import { AIMessage, HumanMessage } from "@langchain/core/messages";
 * import { repairToolCalls } from "tool-call-resilience";
 *
 * const { messages, repairs } = repairToolCalls([
 *   new AIMessage({ content: "", tool_calls: [{ id: "call_1", name: "search", args: {} }] }),
 *   new HumanMessage("Go on"),
 * ]);
 * // messages: [AIMessage, ToolMessage("[Tool call was interrupted and did not return a result.]"), HumanMessage]
 * // repairs: [{ kind: "placeholder_inserted", toolCallId: "call_1", toolName: "search", reason: "interrupted", ... }]
 * ```
 */
export function repairToolCalls<T>(
  messages: readonly T[],
  policy?: RepairPolicy | RepairOptions,
  context?: RepairContext,
): RepairResult<T> {
  refuseHistoryHolder(
    messages,
    "messages",
    "repairToolCalls",
    "the message array (state.messages)",
  );
  return repairHistory(messages, newToolMessage, policy, context);
}

/**
 * The engine without its shortcuts, for LangChain messages (see {@link repairHistoryCarefully}).
 * Not part of the public surface; the tests hold {@link repairToolCalls} to giving the same result.
 *
 * @example
 * ```ts
 * expect(repairToolCalls(history)).toEqual(repairToolCallsCarefully(history));
 * ```
 */
export function repairToolCallsCarefully<T>(
  messages: readonly T[],
  policy?: RepairPolicy | RepairOptions,
  context?: RepairContext,
): RepairResult<T> {
  return repairHistoryCarefully(messages, newToolMessage, policy, context);
}
