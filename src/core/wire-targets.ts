/**
 * The clients a repair can be for, and how the Responses API types a call and its answer: which
 * output item answers which call, and which markers on a tool message pick that output's type.
 */

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

/** The clients `"any"` stands for: a history is sent alike when each of them sends it alike. */
export const CLIENTS: readonly Exclude<RepairTarget, "any">[] = [
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

/** The output item types of the Responses API that are calls the client must answer, by kind. */
export const CALL_ITEM_KINDS: Readonly<Record<string, CallKind>> = {
  function_call: "function",
  custom_tool_call: "custom",
  computer_call: "computer",
};

/**
 * The name a computer call, which has none on the wire, is known and labelled by on every path:
 * LangChain gives it this name (its computer tool's), and the Responses and Agents SDK adapters
 * list a computer tool offered by its type alone (`computer`, `computer_use_preview`) under it.
 */
export const COMPUTER_TOOL_NAME = "computer_use";

/**
 * The kind of call a tool message answers, by the markers ChatOpenAI's Responses client reads on
 * it to pick its output type: `additional_kwargs.type` for a computer call's output,
 * `additional_kwargs.customTool` for a custom tool's.
 */
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
