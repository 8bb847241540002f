/**
 * tool-call-resilience: keeps tool-calling agents talking after their tool-call protocol breaks.
 *
 * This file is the whole public surface, with `tool-call-resilience/formats` (the native-format
 * adapters alone, which load no LangChain; exported here too) and `tool-call-resilience/setup`
 * for applications that want OpenTelemetry started for them. Message readers, the engine's internal matching and the
 * telemetry recorder are deliberately not exported: they are free to change. Every telemetry name
 * is exported, for queries and tests of your own.
 *
 * @example
 * ```ts
 * import { createAgent } from "langchain";
 * import { danglingToolCallMiddleware } from "tool-call-resilience";
 *
 * const agent = createAgent({ model, tools, middleware: [danglingToolCallMiddleware()] });
 * ```
 */

export { withToolCallRepair } from "./attach/chat-model.js";
export { modelIdentityOf } from "./attach/langchain.js";
export type { ToolCallRepairOptions } from "./attach/options.js";
export { repairTargetOf } from "./attach/target.js";
export type { OptionsProblem } from "./core/errors.js";
export {
  isOptionsError,
  isToolCallResilienceError,
  ToolCallResilienceError,
  ToolCallResilienceOptionsError,
} from "./core/errors.js";
export type { CatalogLocale, PlaceholderReason, PlaceholderTexts } from "./core/locales.js";
export {
  catalogText,
  DEFAULT_LOCALE,
  isWellFormedLocale,
  PLACEHOLDER_CATALOG,
  PLACEHOLDER_REASONS,
  resolveCatalogLocale,
} from "./core/locales.js";
export type { PlaceholderContext, PlaceholderFunction } from "./core/placeholder.js";
export { renderTemplate, TEMPLATE_VARIABLES } from "./core/placeholder.js";
export type { MisplacedPolicy, OrphanPolicy, RepairOptions, RepairPolicy } from "./core/policy.js";
export { createRepairPolicy, isRepairPolicy } from "./core/policy.js";
export type { RepairContext, RepairKind, ToolCallRepair } from "./core/repair.js";
export {
  ASSIGNED_ID_PREFIX,
  BLANK_SCREENSHOT,
  SYNTHETIC_MARKER,
  SYNTHETIC_REASON_KEY,
  syntheticReasonOf,
  UNKNOWN_TOOL_NAME,
} from "./core/repair.js";
export type { RepairResult } from "./core/repair-langchain.js";
export { repairToolCalls } from "./core/repair-langchain.js";
export type { RepairCounts } from "./core/summary.js";
export { countRepairs, describeRepairs } from "./core/summary.js";
export type { CallKind, RepairTarget } from "./core/wire.js";
export { REPAIR_TARGETS } from "./core/wire.js";
// The native-format adapters: the whole of `tool-call-resilience/formats`, the same bindings.
export * from "./formats/index.js";
export type {
  DanglingToolCallMiddlewareOptions,
  LocaleRequest,
  LocaleResolver,
  RepairLogger,
} from "./middleware.js";
export {
  DOUBLE_ATTACHMENT_WARNING,
  danglingToolCallMiddleware,
  MIDDLEWARE_NAME,
} from "./middleware.js";
export { DEFAULT_COUNT_ONCE_MEMORY } from "./telemetry/count-once.js";
export type { ModelIdentity } from "./telemetry/model-identity.js";
export { genAiProviderName } from "./telemetry/model-identity.js";
export {
  ATTR_DANGLING_COUNT,
  ATTR_ERROR_TYPE,
  ATTR_GEN_AI_AGENT_NAME,
  ATTR_GEN_AI_CONVERSATION_ID,
  ATTR_GEN_AI_PROVIDER_NAME,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_TOOL_CALL_ID,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_MESSAGE_COUNT,
  ATTR_MESSAGE_INDEX,
  ATTR_METRIC_OVERFLOW,
  ATTR_OUTCOME,
  ATTR_REASON,
  ATTR_REPAIR_COUNT,
  ATTR_REPAIR_KIND,
  ATTR_TOOL_CALL_IDS,
  ATTR_TOOL_NAMES,
  EVENT_REPAIR,
  GEN_AI_PROVIDER_NAME_VALUES,
  INSTRUMENTATION_SCOPE_NAME,
  METRIC_DANGLING_TOOL_CALLS,
  METRIC_MODEL_CALLS,
  METRIC_REPAIR_DURATION,
  METRIC_REPAIRS,
  METRIC_THREAD_RECENT_DANGLING_TOOL_CALLS,
  METRIC_TOOL_CALLS,
  OUTCOME_VALUE_CLEAN,
  OUTCOME_VALUE_FAILED_OPEN,
  OUTCOME_VALUE_REPAIRED,
  REASON_VALUE_INTERRUPTED,
  REASON_VALUE_INVALID_ARGUMENTS,
  REPAIR_DURATION_BUCKETS,
  REPAIR_KIND_VALUE_CALL_LISTED,
  REPAIR_KIND_VALUE_ID_ASSIGNED,
  REPAIR_KIND_VALUE_NAME_ASSIGNED,
  REPAIR_KIND_VALUE_ORPHAN_DROPPED,
  REPAIR_KIND_VALUE_PLACEHOLDER_INSERTED,
  REPAIR_KIND_VALUE_RESULT_MOVED,
  SPAN_REPAIR_TOOL_CALLS,
  TOOL_NAME_VALUE_OTHER,
  UNIT_CALL,
  UNIT_REPAIR,
  UNIT_SECONDS,
  VALUE_UNKNOWN,
} from "./telemetry/semconv.js";
export { PACKAGE_VERSION } from "./version.js";
