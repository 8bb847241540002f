/**
 * Placeholder texts: templates with `{tool_name}` and `{tool_call_id}`, reason maps, functions,
 * and the localized catalog behind them.
 */
import { catalogText, DEFAULT_LOCALE, type PlaceholderReason } from "./locales.js";

/** What a placeholder function is told about the call it stands in for. */
export interface PlaceholderContext {
  /** The tool's name, or `"unknown"` when the call has none. */
  readonly toolName: string;
  /** The id of the call the placeholder answers. */
  readonly toolCallId: string;
  /** Why the call has no result. */
  readonly reason: PlaceholderReason;
  /** The BCP 47 tag in force for this request (`"en"` when none was given). */
  readonly locale: string;
  /** The built-in catalog text for this reason and locale, to wrap or fall back on. */
  readonly defaultText: string;
}

/** Returns the text of a placeholder tool message. */
export type PlaceholderFunction = (context: PlaceholderContext) => string;

/**
 * The variables a placeholder template may use.
 *
 * @example
 * ```ts
 * TEMPLATE_VARIABLES.map((name) => `{${name}}`); // ["{tool_name}", "{tool_call_id}"]
 * ```
 */
export const TEMPLATE_VARIABLES = Object.freeze(["tool_name", "tool_call_id"] as const);

const TEMPLATE_TOKEN = /\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** The `{name}` tokens of a template that are not {@link TEMPLATE_VARIABLES}. */
export function unknownTemplateVariables(template: string): string[] {
  const unknown: string[] = [];
  for (const match of template.matchAll(TEMPLATE_TOKEN)) {
    const name = match[1] as string;
    if (!(TEMPLATE_VARIABLES as readonly string[]).includes(name)) unknown.push(`{${name}}`);
  }
  return unknown;
}

// Fills `{tool_name}` and `{tool_call_id}` in one pass: text that comes from a substitution is
// never scanned again, so a tool named `"{tool_call_id}"` stays as it is.
function renderTemplate(
  template: string,
  values: { readonly toolName: string; readonly toolCallId: string },
): string {
  return template.replace(TEMPLATE_TOKEN, (token, name: string) => {
    if (name === "tool_name") return values.toolName;
    if (name === "tool_call_id") return values.toolCallId;
    return token;
  });
}

/** The normalized `placeholder` option: a function, or one optional template per reason. */
export type PlaceholderSource =
  | { readonly kind: "function"; readonly render: PlaceholderFunction }
  | { readonly kind: "templates"; readonly templates: Partial<Record<PlaceholderReason, string>> };

/** What came of asking for a placeholder's text. */
export interface PlaceholderText {
  readonly text: string;
  /** Set when a placeholder function threw or returned no text, and the catalog text was used. */
  readonly error?: unknown;
}

/**
 * The text of one placeholder. A function that throws or returns anything but a non-empty string
 * never breaks the repair: the catalog text stands in, and the error is handed back.
 */
export function placeholderText(
  source: PlaceholderSource,
  call: {
    readonly toolName: string;
    readonly toolCallId: string;
    readonly reason: PlaceholderReason;
  },
  locale: string | undefined,
): PlaceholderText {
  const defaultText = catalogText(call.reason, locale);
  if (source.kind === "templates") {
    const template = source.templates[call.reason];
    return { text: template === undefined ? defaultText : renderTemplate(template, call) };
  }
  try {
    const text = source.render({ ...call, locale: locale ?? DEFAULT_LOCALE, defaultText });
    if (typeof text === "string" && text !== "") return { text };
    return {
      text: defaultText,
      error: new TypeError(
        `placeholder function returned ${text === "" ? "an empty string" : typeof text}, not text`,
      ),
    };
  } catch (error) {
    return { text: defaultText, error };
  }
}
