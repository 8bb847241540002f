/**
 * The names of the tools a model request offers, read from whatever its tools list holds: the
 * LangChain tools `createAgent` passes, or the provider definitions a chat model's `bindTools`
 * stores. A tool call whose name is not among them is labelled `_OTHER`, which keeps the
 * cardinality of `gen_ai.tool.name` bounded by what requests offer.
 *
 * The shapes, by where the name is:
 * - `name`: LangChain tools, Anthropic (`{ name, input_schema }`), OpenAI Responses
 *   (`{ type: "function", name }`, `{ type: "custom", name }`);
 * - `function.name`: OpenAI Chat Completions, and so Mistral, Ollama and Groq, which bind it too;
 * - `custom.name`: OpenAI Chat Completions custom tools (`{ type: "custom", custom: { name } }`);
 * - `toolSpec.name`: Bedrock Converse;
 * - `functionDeclarations[].name`: Gemini and Vertex AI, one entry for many tools; the snake_case
 *   `function_declarations` when a raw Gemini tool is bound, which `ChatGoogleGenerativeAI` keeps
 *   as it is.
 */

import { fieldsOf } from "../core/fields.js";

/** The one answer for a request that offers no tools, shared so that nothing is allocated. */
const NO_TOOLS: ReadonlySet<string> = new Set();

/** Tools list → its names: a list is read once, however many calls and metrics read it. */
const namesByToolsList = new WeakMap<readonly unknown[], ReadonlySet<string>>();

/** The fields under which a provider's definition of one tool holds its name. */
const SINGLE_TOOL_FIELDS = ["function", "custom", "toolSpec"] as const;

/** The fields under which one Gemini tool lists the declarations of many functions. */
const DECLARATION_LIST_FIELDS = ["functionDeclarations", "function_declarations"] as const;

/**
 * The names of the tools a request offers, in every shape that LangChain's provider packages bind
 * (see the module's comment). Never throws: junk entries, and entries whose fields cannot be read,
 * offer no name. The answer is computed once per tools list and shared: the same list gives the
 * same set, and no tools give one shared empty set.
 *
 * @param tools - the request's tools: `request.tools`, or the `tools` call option of a bound model
 * @returns the non-empty names, which callers must not modify
 *
 * @example
 * ```ts
 * offeredToolNames([{ functionDeclarations: [{ name: "search" }, { name: "fetch_page" }] }]);
 * // Set { "search", "fetch_page" }
 * offeredToolNames([{ toolSpec: { name: "search" } }]); // Set { "search" }
 * offeredToolNames(undefined); // Set {}
 * ```
 */
export function offeredToolNames(tools: readonly unknown[] | undefined): ReadonlySet<string> {
  if (!isNonEmptyList(tools)) return NO_TOOLS;
  let names = namesByToolsList.get(tools);
  if (names === undefined) {
    names = namesIn(tools);
    namesByToolsList.set(tools, names);
  }
  return names;
}

function isNonEmptyList(tools: unknown): tools is readonly unknown[] {
  try {
    return Array.isArray(tools) && tools.length > 0;
  } catch {
    // A revoked proxy, or a proxy whose `length` throws: it offers nothing.
    return false;
  }
}

function namesIn(tools: readonly unknown[]): ReadonlySet<string> {
  const names = new Set<string>();
  try {
    for (let index = 0; index < tools.length; index++) addNamesOfTool(tools[index], names);
  } catch {
    // The list itself became unreadable: keep the names read so far.
  }
  return names.size === 0 ? NO_TOOLS : names;
}

/** Adds the names one entry of a tools list offers; an entry that throws offers what it gave. */
function addNamesOfTool(tool: unknown, names: Set<string>): void {
  try {
    const fields = fieldsOf(tool);
    if (fields === undefined) return;
    addName(fields.name, names);
    for (const field of SINGLE_TOOL_FIELDS) addName(fieldsOf(fields[field])?.name, names);
    for (const field of DECLARATION_LIST_FIELDS) addDeclaredNames(fields[field], names);
  } catch {
    // A getter or proxy trap threw: this entry offers no more names.
  }
}

function addDeclaredNames(declarations: unknown, names: Set<string>): void {
  if (!Array.isArray(declarations)) return;
  for (const declaration of declarations) addName(fieldsOf(declaration)?.name, names);
}

function addName(name: unknown, names: Set<string>): void {
  if (typeof name === "string" && name !== "") names.add(name);
}
