/**
 * The tool items of OpenAI's two item formats, which are the same calls spelled two ways: the
 * Responses API's input items (`openai-responses.ts`: `call_id`, `function_call_output`, snake
 * case) and the OpenAI Agents SDK's (`src/stacks/openai-agents-items.ts`: `callId`,
 * `function_call_result`, camel case). What both read and write is here, once: which item answers
 * each kind of call the application runs, the name of a nameless one and of the tool that offers
 * it, when a call is the application's to run and when an output answers one, the placeholder
 * each kind takes, how consecutive calls make one turn, and how a call id that items of two call
 * types share is told apart. How each format finds a call id, and where a shell runs, stay its own.
 */
import { BLANK_SCREENSHOT } from "../core/placeholder-message.js";
import { COMPUTER_TOOL_NAME } from "../core/wire-targets.js";
import { recordOf } from "./read.js";

/** The kinds of call the application runs, and the Responses API's output item for each. */
const RESPONSES_ANSWERS = {
  function_call: "function_call_output",
  custom_tool_call: "custom_tool_call_output",
  computer_call: "computer_call_output",
  local_shell_call: "local_shell_call_output",
  shell_call: "shell_call_output",
  apply_patch_call: "apply_patch_call_output",
  tool_search_call: "tool_search_output",
} as const;

/**
 * A kind of call the application runs, by its item type (the same in both formats).
 *
 * @example
 * ```ts
 * const kind: ToolCallType = "apply_patch_call";
 * ```
 */
export type ToolCallType = keyof typeof RESPONSES_ANSWERS;

/** What an item type is in a format: a call of a kind, or the output that answers one. */
interface ToolItemKind {
  readonly role: "call" | "output";
  readonly type: ToolCallType;
}

/**
 * How one format spells the tool items: the item type that answers each kind of call it has, and
 * the keys of the placeholder fields whose spelling differs.
 *
 * @example
 * ```ts
 * RESPONSES_ITEMS.kinds.get("function_call_output"); // { role: "output", type: "function_call" }
 * AGENT_ITEMS.answers.function_call; // "function_call_result"
 * ```
 */
export interface ToolItemSpelling {
  /** The item type that answers each kind of call the format has. */
  readonly answers: Readonly<Partial<Record<ToolCallType, string>>>;
  /** Each call and answer item type of the format, and what it is. */
  readonly kinds: ReadonlyMap<string, ToolItemKind>;
  /** The key of a shell outcome's exit code. */
  readonly exitCode: "exit_code" | "exitCode";
  /** The key of a screenshot's image. */
  readonly image: "image_url" | "data";
}

function spelling(
  answers: ToolItemSpelling["answers"],
  exitCode: ToolItemSpelling["exitCode"],
  image: ToolItemSpelling["image"],
): ToolItemSpelling {
  const kinds = new Map<string, ToolItemKind>();
  for (const [call, output] of Object.entries(answers) as [ToolCallType, string][]) {
    kinds.set(call, { role: "call", type: call });
    kinds.set(output, { role: "output", type: call });
  }
  return Object.freeze({ answers: Object.freeze(answers), kinds, exitCode, image });
}

/**
 * The Responses API's spelling: every kind of call, each answered by its `…_output` item.
 *
 * @example
 * ```ts
 * RESPONSES_ITEMS.answers.local_shell_call; // "local_shell_call_output"
 * ```
 */
export const RESPONSES_ITEMS: ToolItemSpelling = spelling(
  RESPONSES_ANSWERS,
  "exit_code",
  "image_url",
);

/**
 * The Agents SDK's spelling: no custom tool or local shell calls, and its own result items.
 *
 * @example
 * ```ts
 * AGENT_ITEMS.answers.computer_call; // "computer_call_result"
 * ```
 */
export const AGENT_ITEMS: ToolItemSpelling = spelling(
  {
    function_call: "function_call_result",
    computer_call: "computer_call_result",
    shell_call: "shell_call_output",
    apply_patch_call: "apply_patch_call_output",
    tool_search_call: "tool_search_output",
  },
  "exitCode",
  "data",
);

/** The calls without a name of their own, the name each is known by, and the tools that make them. */
const NAMELESS: Readonly<Partial<Record<ToolCallType, { name: string; tools: string[] }>>> = {
  // A computer tool is `computer` (the Agents SDK's, and the API's current one) or
  // `computer_use_preview`; LangChain names its computer calls `computer_use`, and so does this.
  computer_call: { name: COMPUTER_TOOL_NAME, tools: ["computer", "computer_use_preview"] },
  local_shell_call: { name: "local_shell", tools: ["local_shell"] },
  shell_call: { name: "shell", tools: ["shell"] },
  apply_patch_call: { name: "apply_patch", tools: ["apply_patch"] },
  tool_search_call: { name: "tool_search", tools: ["tool_search"] },
};

const NAME_OF_TOOL: ReadonlyMap<string, string> = new Map(
  Object.values(NAMELESS).flatMap(({ name, tools }) => tools.map((tool) => [tool, name] as const)),
);

/**
 * The name a call of a kind without names is known by (and labelled with); `undefined` for a
 * function or custom tool call, which names its tool.
 *
 * @example
 * ```ts
 * namelessCallName("computer_call"); // "computer_use"
 * namelessCallName("function_call"); // undefined
 * ```
 */
export function namelessCallName(type: ToolCallType): string | undefined {
  return NAMELESS[type]?.name;
}

/**
 * The name a tool offered by its `type` alone is listed under, so that its calls' label is found
 * among the offered tools rather than `_OTHER`: the name of the calls it makes. `undefined` for
 * any other type (a function tool has a name of its own).
 *
 * @example
 * ```ts
 * offeredNameOfTool("computer_use_preview"); // "computer_use", as its computer calls are named
 * offeredNameOfTool("function"); // undefined
 * ```
 */
export function offeredNameOfTool(toolType: unknown): string | undefined {
  return typeof toolType === "string" ? NAME_OF_TOOL.get(toolType) : undefined;
}

const namedLists = new WeakMap<object, readonly unknown[]>();

/**
 * An offered tools list, with a `{ name }` added for each tool offered by its `type` alone (the
 * Responses API's computer, shell, apply-patch and tool search tools), so that the telemetry finds
 * its calls' name among the offered tools. The same list when no tool needs one; each list is read
 * once; never throws.
 *
 * @example
 * ```ts
 * withToolNames([{ type: "computer_use_preview", display_width: 1024 }]);
 * // [{ type: "computer_use_preview", display_width: 1024 }, { name: "computer_use" }]
 * ```
 */
export function withToolNames(
  tools: readonly unknown[] | undefined,
): readonly unknown[] | undefined {
  try {
    if (!Array.isArray(tools)) return tools;
    let named = namedLists.get(tools);
    if (named === undefined) {
      const names = tools.flatMap((tool) => {
        const fields = recordOf(tool);
        const name = fields?.name === undefined ? offeredNameOfTool(fields?.type) : undefined;
        return name === undefined ? [] : [{ name }];
      });
      named = names.length === 0 ? tools : [...tools, ...names];
      namedLists.set(tools, named);
    }
    return named;
  } catch {
    return tools;
  }
}

/**
 * Whether a call is the application's to run by what the item says: every kind is, but a tool
 * search only with `execution: "client"` (the API runs the others). A shell's place is read by
 * each format. For an output, this is only what it says of itself: see {@link ClientCalls}.
 *
 * @example
 * ```ts
 * runsOnClient("tool_search_call", "server"); // false
 * runsOnClient("function_call", undefined); // true
 * ```
 */
export function runsOnClient(type: ToolCallType, execution: unknown): boolean {
  return type !== "tool_search_call" || execution === "client";
}

/**
 * The calls of an input that the application runs, by kind and call id. An output answers a call
 * the application runs when its call id is on such a call of its own kind here, whatever its own
 * `execution` says (an application's tool search output may leave it out); else as it says
 * itself.
 *
 * @example
 * ```ts
 * const calls = new ClientCalls();
 * calls.add("tool_search_call", "ts1");
 * calls.answers("tool_search_call", "ts1", false); // true: its call is the client's
 * ```
 */
export class ClientCalls {
  readonly #keys = new Set<string>();

  /** Notes a call the application runs, by its kind and id (none for a call without an id). */
  add(type: ToolCallType, id: string | undefined): void {
    if (id !== undefined) this.#keys.add(`${type}\u0000${id}`);
  }

  /** Whether a call of this kind has this id. */
  has(type: ToolCallType, id: string | undefined): boolean {
    return id !== undefined && this.#keys.has(`${type}\u0000${id}`);
  }

  /** Whether an output of this kind answers a call the application runs. */
  answers(type: ToolCallType, id: string | undefined, saysClient: boolean): boolean {
    return saysClient || this.has(type, id);
  }
}

/**
 * The fields of the placeholder that answers a call of this kind, besides its item type and call
 * id, in a format's spelling: the text where the item has room for it, else the answer that says
 * least. A shell output carries the text on stderr with exit code 1, a patch fails with it; a
 * computer call takes nothing but a screenshot, so the model sees a blank one; a tool search
 * output has no room for text, so it found no tools.
 *
 * @example
 * ```ts
 * placeholderFields(RESPONSES_ITEMS, "shell_call", "[interrupted]");
 * // { output: [{ stdout: "", stderr: "[interrupted]", outcome: { type: "exit", exit_code: 1 } }] }
 * ```
 */
export function placeholderFields(
  { exitCode, image }: ToolItemSpelling,
  type: ToolCallType,
  text: string,
): Record<string, unknown> {
  switch (type) {
    case "computer_call":
      return { output: { type: "computer_screenshot", [image]: BLANK_SCREENSHOT } };
    case "shell_call":
      return { output: [{ stdout: "", stderr: text, outcome: { type: "exit", [exitCode]: 1 } }] };
    case "apply_patch_call":
      return { status: "failed", output: text };
    case "tool_search_call":
      return { execution: "client", status: "completed", tools: [] };
    default:
      return { output: text };
  }
}

/**
 * A placeholder of the Responses API: the output item that answers a call of its type.
 *
 * @example
 * ```ts
 * const inserted: ResponsesPlaceholderItem = { type: "function_call_output", call_id: "c1", output: "[…]" };
 * ```
 */
export type ResponsesPlaceholderItem = { call_id: string } & (
  | { type: "function_call_output" | "custom_tool_call_output"; output: string }
  | { type: "computer_call_output"; output: { type: "computer_screenshot"; image_url: string } }
  | { type: "local_shell_call_output"; id: string; output: string }
  | { type: "shell_call_output"; output: { stdout: string; stderr: string; outcome: ShellExit }[] }
  | { type: "apply_patch_call_output"; status: "failed"; output: string }
  | { type: "tool_search_output"; execution: "client"; status: "completed"; tools: never[] }
);
type ShellExit = { type: "exit"; exit_code: number };

/**
 * The Responses API's placeholder for a call of this type. A local shell output carries an `id`
 * too: the SDK's `ResponseInputItem.LocalShellCallOutput` has no `call_id`, and requires an `id`
 * it describes as "the unique ID of the local shell tool call generated by the model", the words
 * it uses for a call's `call_id` (LangChain's local shell tool writes the call's `call_id` there);
 * the AI SDK writes `call_id`. The placeholder has both, the call's `call_id`, so that either
 * pairs it; its `id` gets a suffix only when an item of the input has that id already (`taken`),
 * since the API refuses two items with one id, and `call_id` pairs it then.
 *
 * @param taken - the item ids of the input and of the placeholders written so far
 * @example
 * ```ts
 * responsesPlaceholder("local_shell_call", "c1", "[interrupted]", new Set());
 * // { type: "local_shell_call_output", call_id: "c1", output: "[interrupted]", id: "c1" }
 * ```
 */
export function responsesPlaceholder(
  type: ToolCallType,
  call_id: string,
  text: string,
  taken: Set<string>,
): ResponsesPlaceholderItem {
  const item = {
    type: RESPONSES_ITEMS.answers[type],
    call_id,
    ...placeholderFields(RESPONSES_ITEMS, type, text),
  };
  if (type !== "local_shell_call") return item as ResponsesPlaceholderItem;
  let id = call_id;
  for (let suffix = 1; taken.has(id); suffix++) id = `${call_id}_${suffix}`;
  taken.add(id);
  return { ...item, id } as ResponsesPlaceholderItem;
}

/**
 * The turns of an input, as `[start, end)` item ranges: one item each, but one for the
 * consecutive calls of a turn and the items of the model's own between them (never those after
 * its last call). The engine reads two consecutive assistant messages as two turns, and parallel
 * calls are items of their own here.
 *
 * @param places - each item: a call, an item of the model's own that may stand `between` the
 *   calls of one turn (reasoning, a message, a tool the provider runs), or any `other`
 *
 * @example
 * ```ts
 * turnRanges(["other", "call", "between", "call", "other"]); // [[0, 1], [1, 4], [4, 5]]
 * ```
 */
export function turnRanges(places: readonly ("call" | "between" | "other")[]): [number, number][] {
  const ranges: [number, number][] = [];
  for (let start = 0; start < places.length; ) {
    let end = start;
    for (let next = start + 1; places[start] === "call" && next < places.length; next++) {
      if (places[next] === "call") end = next;
      else if (places[next] !== "between") break;
    }
    ranges.push([start, end + 1]);
    start = end + 1;
  }
  return ranges;
}

/**
 * The call ids of one input as the engine knows them. An item answers only a call of its own kind
 * (the API and the SDK pair them so), but the engine pairs by id alone: an id that items of two
 * kinds share is given each kind's own, `"<id> (<type>)"`, and each is written back as the id.
 *
 * @example
 * ```ts
 * const ids = new EngineCallIds([{ type: "function_call", id: "c1" }, { type: "shell_call", id: "c1" }]);
 * ids.engineId("shell_call", "c1"); // "c1 (shell_call)"
 * ids.nativeId("c1 (shell_call)"); // "c1"
 * ```
 */
export class EngineCallIds {
  readonly #shared: ReadonlySet<string>;
  readonly #native = new Map<string, string>();

  /** @param items - the calls and outputs the engine pairs, by kind and call id */
  constructor(items: Iterable<{ readonly type: ToolCallType; readonly id: string | undefined }>) {
    const typeOf = new Map<string, ToolCallType | null>();
    for (const { type, id } of items) {
      if (id === undefined) continue;
      const known = typeOf.get(id);
      typeOf.set(id, known === undefined || known === type ? type : null);
    }
    this.#shared = new Set([...typeOf].filter(([, type]) => type === null).map(([id]) => id));
  }

  /**
   * The id the engine knows a call or an output of this kind by.
   * @param apartIfNone - an output without an id is given one no call has: it answers nothing
   */
  engineId(type: ToolCallType, id: string | undefined, apartIfNone = false): string | undefined {
    if (id === undefined) return apartIfNone ? this.#apart(type, "") : undefined;
    return this.#shared.has(id) ? this.#apart(type, id) : id;
  }

  /** The call id to write for an id of the engine's (one it assigned is written as it is). */
  nativeId(engineId: string): string {
    return this.#native.get(engineId) ?? engineId;
  }

  #apart(type: ToolCallType, id: string): string {
    const engineId = `${id} (${type})`;
    this.#native.set(engineId, id);
    return engineId;
  }
}
