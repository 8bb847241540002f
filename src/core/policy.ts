/**
 * The repair policy: the options a user sets, validated once into a frozen {@link RepairPolicy}
 * that the engine trusts.
 */
import { z } from "zod/v4";
import { notOneOf, optionsError } from "./errors.js";
import { isWellFormedLocale, PLACEHOLDER_REASONS, type PlaceholderReason } from "./locales.js";
import {
  type PlaceholderFunction,
  type PlaceholderSource,
  TEMPLATE_VARIABLES,
  unknownTemplateVariables,
} from "./placeholder.js";
import { REPAIR_TARGETS, type RepairTarget } from "./wire.js";

/** A validated, frozen repair policy. Build it once with {@link createRepairPolicy}. */
export interface RepairPolicy {
  readonly placeholder: PlaceholderSource;
  readonly locale: string | undefined;
  readonly window: number | undefined;
  readonly markSynthetic: boolean;
  readonly orphans: OrphanPolicy;
  readonly misplaced: MisplacedPolicy;
  readonly target: RepairTarget;
}

const REPAIR_POLICY = Symbol("tool-call-resilience.RepairPolicy");

const templateSchema = z.string().superRefine((template, context) => {
  if (template.trim() === "") {
    context.addIssue({ code: "custom", message: "a template must have some text" });
    return;
  }
  const unknown = unknownTemplateVariables(template);
  if (unknown.length > 0) {
    context.addIssue({
      code: "custom",
      message: `unknown template variable ${unknown.join(", ")}; use ${TEMPLATE_VARIABLES.map((name) => `{${name}}`).join(" or ")}`,
    });
  }
});

const reasonSchema = z.enum(PLACEHOLDER_REASONS as [PlaceholderReason, ...PlaceholderReason[]]);

/** A well-formed BCP 47 tag; shared with the middleware, which also takes a resolver. */
export const localeTagSchema = z.string().refine(isWellFormedLocale, {
  error: 'expected a BCP 47 language tag such as "en" or "zh-TW"',
});

/**
 * An option that takes one string of a set, refused in the words every such option uses
 * (`expected one of "drop", "keep"; got "delete"`).
 *
 * @example
 * ```ts
 * const orphans = enumSchema(["drop", "keep"]);
 * ```
 */
export function enumSchema<const Values extends readonly [string, ...string[]]>(values: Values) {
  return z.enum(values, { error: (issue) => notOneOf(values, issue.input) });
}

/**
 * The engine's options, each defined once: its validation, its TSDoc (which editors show through
 * {@link RepairOptions}) and its `describe` text (which the README's options table repeats). The
 * attachments spread it into their own shape and widen `locale` and `target`.
 */
export const repairOptionsShape = {
  /**
   * The text of placeholder tool messages: a template using `{tool_name}` and `{tool_call_id}`
   * for every reason, a map from reason to template (reasons left out use the catalog), or a
   * function of a {@link PlaceholderContext}.
   * @default the built-in catalog text for the locale
   * @example
   * ```ts
   * { placeholder: "[{tool_name} was stopped before it answered.]" }
   * ```
   */
  placeholder: z
    .union(
      [
        templateSchema,
        z.partialRecord(reasonSchema, templateSchema),
        z.custom<PlaceholderFunction>((value) => typeof value === "function"),
      ],
      { error: "expected a template string, a map from reason to template, or a function" },
    )
    .optional()
    .describe(
      "A template, which may use `{tool_name}` and `{tool_call_id}` (an unknown `{variable}` is rejected); a map of templates per reason; or a function of `{ toolName, toolCallId, reason, locale, defaultText }`, whose errors and empty answers fall back to the catalog text.",
    ),
  /**
   * BCP 47 tag of the catalog text to use, for example `"ja"` or `"zh-Hant-TW"`. Unknown tags
   * fall back to English.
   * @default "en"
   */
  locale: localeTagSchema
    .optional()
    .describe(
      'BCP 47 tag of the catalog text, for example `"ja"` or `"zh-Hant-TW"`. Unknown tags fall back to English; a malformed tag is rejected.',
    ),
  /**
   * Repair only calls in the last `window` messages; everything before passes through untouched
   * and costs nothing.
   * @default the whole history
   */
  window: z
    .number({ error: "expected a whole number of messages, at least 1" })
    .int({ error: "expected a whole number of messages (a safe integer), at least 1" })
    .min(1, { error: "expected a whole number of messages, at least 1" })
    .optional()
    .describe(
      "Repair only calls in the last `window` messages; the rest is not even read, so a clean request costs O(window). Orphans are dropped only when the window covers the whole history, since a result's call may lie before it.",
    ),
  /**
   * Mark inserted messages with `response_metadata.synthetic = true` and their reason.
   * @default true
   */
  markSynthetic: z
    .boolean()
    .default(true)
    .describe(
      "Inserted messages carry `response_metadata: { synthetic: true, synthetic_reason }`, which LangChain's converters never send to the provider.",
    ),
  /**
   * `"drop"` removes tool results that answer no earlier call from the request; `"keep"` leaves them.
   * @default "drop"
   */
  orphans: enumSchema(["drop", "keep"])
    .default("drop")
    .describe("A tool result that answers no earlier call is dropped from the request, or kept."),
  /**
   * `"regroup"` moves a result separated from its call into the group right after the call;
   * `"keep"` leaves it where it is.
   * @default "regroup"
   */
  misplaced: enumSchema(["regroup", "keep"])
    .default("regroup")
    .describe(
      "A result separated from its call by another message is moved into the group right after its call, or left where it is.",
    ),
  /**
   * The client whose converter the repaired history is for: `"openai-completions"` (ChatOpenAI on
   * Chat Completions), `"openai-responses"` (ChatOpenAI on the Responses API), `"anthropic"`
   * (ChatAnthropic), or `"any"`, a history every one of them sends alike, in an order of turns
   * every provider's wire accepts (Bedrock Converse and Mistral included). The attachments read
   * it from the request's model; see the README's "Which client a repair is for".
   * @default "any"
   * @example
   * ```ts
   * repairToolCalls(history, { target: "openai-responses" });
   * ```
   */
  target: enumSchema(REPAIR_TARGETS)
    .default("any")
    .describe(
      'The client whose converter the repaired history is for: `"openai-completions"`, `"openai-responses"`, `"anthropic"`, or `"any"`, a history every one of them sends alike.',
    ),
};

/** The engine's options, as {@link createRepairPolicy} validates them. */
const repairOptionsSchema: z.ZodObject<typeof repairOptionsShape, z.core.$strict> =
  z.strictObject(repairOptionsShape);

/**
 * Options of the repair engine. Every field is optional; the defaults suit most agents. The type
 * is what {@link repairOptionsShape} accepts, so the schema is its only definition.
 */
export type RepairOptions = z.input<typeof repairOptionsSchema>;

/** The engine's options after validation, defaults filled in. */
export type ParsedRepairOptions = z.output<typeof repairOptionsSchema>;

/** What to do with a tool result that answers no earlier call. */
export type OrphanPolicy = ParsedRepairOptions["orphans"];
/** What to do with a tool result separated from its call by another message. */
export type MisplacedPolicy = ParsedRepairOptions["misplaced"];

/** Builds a policy from parsed options; the options have been validated already. */
export function policyFrom(options: ParsedRepairOptions): RepairPolicy {
  const { placeholder } = options;
  const source: PlaceholderSource =
    typeof placeholder === "function"
      ? { kind: "function", render: placeholder }
      : {
          kind: "templates",
          templates: Object.freeze(
            typeof placeholder === "string"
              ? { interrupted: placeholder, invalid_arguments: placeholder }
              : { ...placeholder },
          ),
        };
  const policy: RepairPolicy = {
    placeholder: Object.freeze(source),
    locale: options.locale,
    window: options.window,
    markSynthetic: options.markSynthetic,
    orphans: options.orphans,
    misplaced: options.misplaced,
    target: options.target,
  };
  Object.defineProperty(policy, REPAIR_POLICY, { value: true });
  return Object.freeze(policy);
}

/**
 * Validates repair options once and returns a frozen policy for {@link repairToolCalls}.
 *
 * @param options - the engine's options ({@link RepairOptions}); each is documented on
 *   {@link repairOptionsShape}
 * @throws {ToolCallResilienceOptionsError} when an option is missing its shape; the message names
 *   each bad option and what it expected.
 *
 * @example Build once, repair many times
 * ```ts
 * import { createRepairPolicy, repairToolCalls } from "tool-call-resilience";
 *
 * const policy = createRepairPolicy({ locale: "fr", window: 200 });
 * const { messages, repairs } = repairToolCalls(history, policy);
 * ```
 */
export function createRepairPolicy(options: RepairOptions = {}): RepairPolicy {
  const parsed = repairOptionsSchema.safeParse(options);
  if (!parsed.success) throw optionsError(parsed.error, "repair");
  return policyFrom(parsed.data);
}

/**
 * The same policy with another window, for adapters whose messages hold several entries each.
 * Not part of the public surface.
 */
export function withWindow(policy: RepairPolicy, window: number | undefined): RepairPolicy {
  if (policy.window === window) return policy;
  const copy: RepairPolicy = { ...policy, window };
  Object.defineProperty(copy, REPAIR_POLICY, { value: true });
  return Object.freeze(copy);
}

/**
 * Whether a value is a policy made by {@link createRepairPolicy} (and so needs no validation).
 *
 * @example
 * ```ts
 * isRepairPolicy(createRepairPolicy()); // true
 * isRepairPolicy({ window: 10 }); // false: plain options
 * ```
 */
export function isRepairPolicy(value: unknown): value is RepairPolicy {
  return typeof value === "object" && value !== null && REPAIR_POLICY in value;
}

/** The policy with every default. */
export const DEFAULT_REPAIR_POLICY: RepairPolicy = createRepairPolicy();
