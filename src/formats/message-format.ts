/**
 * The one adapter interface over the engine for histories in a provider's native message format.
 * A {@link MessageFormat} says how to read a native message (its role, the calls it makes, the
 * results it carries) and how to write messages back (a placeholder, a copy with new ids, results
 * grouped the way the format groups them); `format.ts` runs the engine through it. Types only.
 */
import type { PlaceholderReason } from "../core/locales.js";
import type { ToolCallRepair } from "../core/repair-log.js";

/** A tool call as the engine needs to see it. */
export interface FormatCall {
  /** The call's id; `undefined` (or `""`) when it has none, and the engine assigns one. */
  readonly id: string | undefined;
  readonly name: string | undefined;
  /** Set when the call's arguments could not be parsed (a cut-off stream). */
  readonly invalidArguments?: boolean;
}

/** What one part of a native message is, as far as tool calling goes. */
export type MessagePart =
  | { readonly role: "assistant"; readonly calls: readonly FormatCall[] }
  | { readonly role: "tool"; readonly toolCallId: string | undefined; readonly toolName?: string }
  | { readonly role: "user" | "system" | "other" };

/** A placeholder result to write in the format, for a call that has none. */
export interface PlaceholderResult {
  readonly toolCallId: string;
  readonly toolName: string;
  /** The placeholder's text, from the policy (template, function or locale catalog). */
  readonly text: string;
  readonly reason: PlaceholderReason;
  /** Whether the policy asks to mark it as inserted (`markSynthetic`). */
  readonly synthetic: boolean;
}

/** One item of the repaired history, handed to {@link MessageFormat.write} in order. */
export type RepairedItem<M> =
  /** A native message whose parts all came through unchanged and in order. */
  | { readonly kind: "message"; readonly message: M }
  /** One part of a native message, unchanged, whose message was split or changed around it. */
  | { readonly kind: "part"; readonly message: M; readonly part: number }
  /**
   * An assistant part whose calls get new ids or names, in call order (`ids[k]` and `names[k]`
   * for its k-th call; a call that had a name keeps it).
   */
  | {
      readonly kind: "renamed_calls";
      readonly message: M;
      readonly part: number;
      readonly ids: readonly string[];
      readonly names: readonly string[];
    }
  /** A result part that answers its call under a new id. */
  | {
      readonly kind: "renamed_result";
      readonly message: M;
      readonly part: number;
      readonly toolCallId: string;
    }
  /** A placeholder for a call without a result. */
  | { readonly kind: "placeholder"; readonly placeholder: PlaceholderResult };

/** A message written by {@link MessageFormat.write}, and the items it holds. */
export interface WrittenMessage<M> {
  readonly message: M;
  /** Indices, in the sequence given to `write`, of the items this message holds. */
  readonly items: readonly number[];
}

/**
 * How one native message format is read and written. Implement it to repair histories of a
 * format this library does not ship, with {@link repairInFormat}.
 *
 * @example A format of `{ from, calls?, answers? }` messages, one result per message
 * ```ts
 * const myFormat: MessageFormat<MyMessage> = {
 *   name: "my-format",
 *   provider: undefined,
 *   partsOf: (m) => [
 *     m.calls ? { role: "assistant", calls: m.calls.map((c) => ({ id: c.id, name: c.tool })) }
 *     : m.answers ? { role: "tool", toolCallId: m.answers }
 *     : { role: "user" },
 *   ],
 *   write: (items) => items.map((item, index) => ({ message: toMyMessage(item), items: [index] })),
 * };
 * const { messages } = repairInFormat(myFormat, history);
 * ```
 */
export interface MessageFormat<M> {
  /** The format's name, used in log lines and errors. */
  readonly name: string;
  /** The `gen_ai.provider.name` recorded for it, unless the options give one. */
  readonly provider: string | undefined;
  /** The parts of one native message, in order: one for most messages. Must not throw on junk. */
  partsOf(message: M): readonly MessagePart[];
  /** The native messages for the repaired sequence, each with the items it holds. */
  write(items: readonly RepairedItem<M>[]): WrittenMessage<M>[];
}

/** Per-call settings of a native-format repair, for the telemetry and the placeholder texts. */
export interface FormatRepairContext {
  /** The conversation's id: recorded as `gen_ai.conversation.id`, and counts each call once. */
  readonly threadId?: string;
  /** The model the history is sent to, recorded as `gen_ai.request.model`. */
  readonly model?: string;
  /**
   * The provider the history is sent to, recorded as `gen_ai.provider.name`, ahead of the
   * format's own (for formats that any provider may receive, like the AI SDK's prompt).
   */
  readonly provider?: string;
  /** The tools offered with the request (names or tool definitions), for the per-tool labels. */
  readonly tools?: readonly unknown[];
  /** BCP 47 tag of this call's placeholder texts, overriding the options' `locale`. */
  readonly locale?: string;
}

/** What a native-format repair returns: messages in the same format, and the repairs made. */
export interface FormatRepairResult<M> {
  /** The input array itself when nothing needed repair; otherwise a new array. */
  readonly messages: M[];
  /**
   * Every change made. Its indices are native message indices: `callIndex` and `resultIndex` in
   * the input, `outputIndex` in `messages`.
   */
  readonly repairs: readonly ToolCallRepair[];
}
