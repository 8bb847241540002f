/**
 * tool-call-resilience: keeps tool-calling agents talking after their tool-call protocol breaks.
 *
 * This entry holds what an application builds with: the attachments (the `createAgent`
 * middleware, the chat-model wrapper, the native-format adapters), the engine and its policy, the
 * types they take and give, and the errors they throw. Held back, on purpose:
 * - the names the telemetry emits (metrics, attributes and their values, the span): in
 *   `tool-call-resilience/semconv`, for queries, dashboards and tests of your own; using the
 *   library never needs them;
 * - starting OpenTelemetry: `tool-call-resilience/setup`, which needs the optional
 *   `@opentelemetry/sdk-node`;
 * - the native-format adapters alone, without LangChain: `tool-call-resilience/formats`, whose
 *   bindings are re-exported here;
 * - the message readers, the engine's matching and the telemetry's recorder: internal, and free
 *   to change in any release.
 *
 * @example
 * ```ts
 * import { createAgent } from "langchain";
 * import { danglingToolCallMiddleware } from "tool-call-resilience";
 *
 * const agent = createAgent({ model, tools, middleware: [danglingToolCallMiddleware()] });
 * ```
 */

// biome-ignore-all assist/source/organizeImports: grouped by what an application looks for, not by path

// --- Attachments: the createAgent middleware and the chat-model wrapper -------------------------
export type { DanglingToolCallMiddlewareOptions } from "./middleware.js";
export {
  DOUBLE_ATTACHMENT_WARNING,
  danglingToolCallMiddleware,
  MIDDLEWARE_NAME,
} from "./middleware.js";
export { withToolCallRepair } from "./attach/chat-model.js";
export type {
  LocaleRequest,
  LocaleResolver,
  RepairLogger,
  ToolCallRepairOptions,
} from "./attach/options.js";
export { repairTargetOf } from "./attach/target.js";
export { modelIdentityOf } from "./attach/langchain.js";
export type { ModelIdentity } from "./telemetry/model-identity.js";
export { genAiProviderName } from "./telemetry/model-identity.js";
export { DEFAULT_COUNT_ONCE_MEMORY } from "./telemetry/count-once.js";

// --- Native message formats: the whole of `tool-call-resilience/formats`, the same bindings -----
export * from "./formats/index.js";

// --- The engine: repair a history, under a policy, for a client ---------------------------------
export type { RepairResult } from "./core/repair-langchain.js";
export { repairToolCalls } from "./core/repair-langchain.js";
export type { MisplacedPolicy, OrphanPolicy, RepairOptions, RepairPolicy } from "./core/policy.js";
export { createRepairPolicy, isRepairPolicy } from "./core/policy.js";
export type { CallKind, RepairTarget } from "./core/wire.js";
export { REPAIR_TARGETS } from "./core/wire.js";
export type { RepairKind } from "./core/repair-kinds.js";
export type { RepairContext, ToolCallRepair } from "./core/repair-log.js";
export { UNKNOWN_TOOL_NAME } from "./core/repair-log.js";
export { ASSIGNED_ID_PREFIX } from "./core/repair-calls.js";
export type { SyntheticReason } from "./core/placeholder-message.js";
export {
  BLANK_SCREENSHOT,
  SYNTHETIC_MARKER,
  SYNTHETIC_REASON_KEY,
  syntheticReasonOf,
  TURN_ORDER_REASON,
} from "./core/placeholder-message.js";
export type { RepairCounts } from "./core/summary.js";
export { countRepairs, describeRepairs } from "./core/summary.js";
export type { PlaceholderContext, PlaceholderFunction } from "./core/placeholder.js";
export { renderTemplate, TEMPLATE_VARIABLES } from "./core/placeholder.js";
export type {
  CatalogLocale,
  PlaceholderReason,
  PlaceholderTexts,
  SyntheticTurn,
} from "./core/locales.js";
export {
  catalogText,
  DEFAULT_LOCALE,
  isWellFormedLocale,
  PLACEHOLDER_CATALOG,
  PLACEHOLDER_REASONS,
  resolveCatalogLocale,
  TURN_CATALOG,
  turnText,
} from "./core/locales.js";

// --- Errors: thrown only for bad options, at construction; call time fails open ------------------
export type { OptionsProblem } from "./core/errors.js";
export {
  isOptionsError,
  isToolCallResilienceError,
  ToolCallResilienceError,
  ToolCallResilienceOptionsError,
} from "./core/errors.js";

export { PACKAGE_VERSION } from "./version.js";
