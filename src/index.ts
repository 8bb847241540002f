/**
 * tool-call-resilience: keeps tool-calling agents talking after their tool-call protocol breaks.
 *
 * This file is the whole public surface. Message readers and the engine's internal matching are
 * deliberately not exported: they are free to change.
 *
 * @example
 * ```ts
 * import { createAgent } from "langchain";
 * import { danglingToolCallMiddleware } from "tool-call-resilience";
 *
 * const agent = createAgent({ model, tools, middleware: [danglingToolCallMiddleware()] });
 * ```
 */
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
export type { RepairContext, RepairKind, RepairResult, ToolCallRepair } from "./core/repair.js";
export {
  ASSIGNED_ID_PREFIX,
  repairToolCalls,
  SYNTHETIC_MARKER,
  SYNTHETIC_REASON_KEY,
  syntheticReasonOf,
  UNKNOWN_TOOL_NAME,
} from "./core/repair.js";
export type { RepairCounts } from "./core/summary.js";
export { countRepairs, describeRepairs } from "./core/summary.js";
export type {
  DanglingToolCallMiddlewareOptions,
  LocaleRequest,
  LocaleResolver,
  RepairLogger,
} from "./middleware.js";
export { danglingToolCallMiddleware, MIDDLEWARE_NAME } from "./middleware.js";
