/**
 * The placeholder tool message: what it holds for each kind of call and client, the metadata that
 * marks it as inserted by this library, and the reading of that mark.
 */
import type { PlaceholderReason } from "./locales.js";
import type { RepairPolicy } from "./policy.js";
import type { ToolMessageFactory } from "./tool-message.js";
import type { CallKind } from "./wire.js";

/**
 * The screenshot a computer call's placeholder answers with: a transparent 1×1 PNG. The Responses
 * API takes nothing but an image as a `computer_call_output`, so the placeholder's text cannot
 * travel there; the model sees an empty screen and looks again.
 */
export const BLANK_SCREENSHOT =
  "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";

// The response metadata keys that mark a message this library inserted, and carry its reason.
const SYNTHETIC_MARKER = "synthetic";
const SYNTHETIC_REASON_KEY = "synthetic_reason";

/**
 * A placeholder tool message. For the Responses API, a custom tool call's placeholder carries the
 * marker ChatOpenAI sends as a `custom_tool_call_output` (`additional_kwargs.customTool`), and a
 * computer call's the one it sends as a `computer_call_output` (`additional_kwargs.type`), with a
 * blank screenshot, the only content such an output can have.
 *
 * Its fields are one object literal with every key, never an object that grows afterwards: V8
 * gives a grown object a hidden class of its own, drops it at the next full collection once no
 * placeholder holds it, and makes a new one. The code that reads placeholders (`make`, such as
 * ToolMessage's constructor, and ours) then meets a new class after every collection and ends up
 * on its slow, generic path (measured: a repaired 10-message call went from 0.55 to 0.8 µs for good).
 */
export function createPlaceholder(
  id: string,
  name: string,
  reason: PlaceholderReason,
  text: string,
  answerKind: CallKind,
  policy: RepairPolicy,
  make: ToolMessageFactory,
): unknown {
  return make({
    content: answerKind === "computer" ? BLANK_SCREENSHOT : text,
    tool_call_id: id,
    name,
    status: "error",
    additional_kwargs:
      answerKind === "custom"
        ? { customTool: true }
        : answerKind === "computer"
          ? { type: "computer_call_output" }
          : {},
    response_metadata: policy.markSynthetic ? syntheticMetadata(reason) : {},
  });
}

/** The metadata that marks a placeholder: a literal with both keys (see {@link createPlaceholder}). */
function syntheticMetadata(reason: PlaceholderReason): Record<string, unknown> {
  return { synthetic: true, synthetic_reason: reason } satisfies Record<
    typeof SYNTHETIC_MARKER | typeof SYNTHETIC_REASON_KEY,
    unknown
  >;
}

/**
 * The reason a synthetic turn carries (an AI or human message written for a wire's order of
 * turns, not a placeholder).
 */
export const TURN_ORDER_REASON = "turn_order";

/**
 * Why the library inserted a message: a placeholder's reason, or {@link TURN_ORDER_REASON} for a
 * synthetic turn.
 */
export type SyntheticReason = PlaceholderReason | typeof TURN_ORDER_REASON;

/** The metadata that marks a synthetic turn (see {@link syntheticMetadata}). */
export function syntheticTurnMetadata(): Record<string, unknown> {
  return { synthetic: true, synthetic_reason: TURN_ORDER_REASON } satisfies Record<
    typeof SYNTHETIC_MARKER | typeof SYNTHETIC_REASON_KEY,
    unknown
  >;
}

/**
 * Whether a message was inserted by this library (with `markSynthetic` on), and why: a
 * placeholder's reason, or `"turn_order"` for a synthetic turn.
 *
 * @example
 * ```ts
 * const { messages } = repairToolCalls(history);
 * const inserted = messages.filter((message) => syntheticReasonOf(message) !== undefined);
 * ```
 */
export function syntheticReasonOf(message: unknown): SyntheticReason | undefined {
  if (message === null || typeof message !== "object") return undefined;
  const metadata = (message as { response_metadata?: unknown }).response_metadata;
  if (metadata === null || typeof metadata !== "object") return undefined;
  const fields = metadata as Record<string, unknown>;
  if (fields[SYNTHETIC_MARKER] !== true) return undefined;
  const reason = fields[SYNTHETIC_REASON_KEY];
  if (reason === "invalid_arguments" || reason === TURN_ORDER_REASON) return reason;
  return "interrupted";
}
