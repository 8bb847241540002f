/**
 * How the engine makes the tool messages it writes (placeholders, and results read out of human
 * messages): through a factory, so that the engine itself depends on no message library. The
 * LangChain attachments make `ToolMessage`s; the native-format adapters make plain objects of the
 * same shape, which they translate back to their format.
 */

/** The fields of a tool message the engine writes: LangChain's `ToolMessage` fields. */
export interface ToolMessageFields {
  readonly content: string | readonly unknown[];
  readonly tool_call_id: string;
  readonly name?: string;
  readonly status?: "success" | "error";
  readonly additional_kwargs?: Record<string, unknown>;
  readonly response_metadata?: Record<string, unknown>;
}

/** The fields of a synthetic turn the engine writes: its text, and the synthetic marker or none. */
export interface TurnMessageFields {
  readonly content: string;
  readonly response_metadata: Record<string, unknown>;
}

/**
 * Makes a tool message from its fields. Called with an object literal that has the same keys, in
 * the same order, every time, and should keep it that way (see the engine's `createPlaceholder`).
 *
 * A factory with `turn` also makes the short synthetic turns some wires' order of turns needs:
 * an AI message (`"ai"`) or a human message (`"human"`). Without it the engine writes none, as for
 * the native formats, whose wires have no such rule. Its `className` is for the log line.
 */
export type ToolMessageFactory<R = unknown> = ((fields: ToolMessageFields) => R) & {
  readonly turn?: (role: "ai" | "human", fields: TurnMessageFields) => R;
  /**
   * The class of the tool messages it makes, which the log line names its placeholders by
   * (`"ToolMessage"`); without it they are told as tool results, as the formats write them.
   */
  readonly className?: string;
};

/** A tool message as a plain object: its fields and `type: "tool"`, the way the engine reads one. */
export type PlainToolMessage = ToolMessageFields & { readonly type: "tool" };

/**
 * Makes a tool message as a plain object, for histories that are not LangChain messages.
 *
 * @example
 * ```ts
 * plainToolMessage({ content: "42", tool_call_id: "call_1" }); // { type: "tool", content: "42", tool_call_id: "call_1" }
 * ```
 */
export const plainToolMessage: ToolMessageFactory<PlainToolMessage> = (fields) => ({
  type: "tool",
  ...fields,
});
