/**
 * tool-call-resilience: keeps tool-calling agents talking after their tool-call protocol breaks.
 *
 * This entry holds what an application calls: the attachments (the `createAgent` middleware, the
 * chat-model wrapper, the native-format adapters), the engine and its policy, the types they take
 * and give, and the errors they throw with their guards. Held back, on purpose:
 * - the names the telemetry emits (metrics, attributes and their values, the span): in
 *   `tool-call-resilience/semconv`, for queries, dashboards and tests of your own; using the
 *   library never needs them;
 * - starting OpenTelemetry: `tool-call-resilience/setup`, which needs the optional
 *   `@opentelemetry/sdk-node`;
 * - the native-format adapters alone, without LangChain: `tool-call-resilience/formats`, whose
 *   bindings are re-exported here;
 * - everything else (the message readers, the wire rules, the placeholder catalog, the telemetry's
 *   recorder): internal, and free to change in any release.
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
export { danglingToolCallMiddleware } from "./middleware.js";
export { withToolCallRepair } from "./attach/chat-model.js";
export type {
  LocaleRequest,
  LocaleResolver,
  RepairLogger,
  ToolCallRepairOptions,
} from "./attach/options.js";

// --- Native message formats: the whole of `tool-call-resilience/formats`, the same bindings -----
export * from "./formats/index.js";

// --- The engine: repair a history, under a policy, for a client ---------------------------------
export type { RepairResult } from "./core/repair-langchain.js";
export { repairToolCalls } from "./core/repair-langchain.js";
export type { MisplacedPolicy, OrphanPolicy, RepairOptions, RepairPolicy } from "./core/policy.js";
export { createRepairPolicy } from "./core/policy.js";
export type { RepairTarget } from "./core/wire.js";
export type { SyntheticReason } from "./core/placeholder-message.js";
export { syntheticReasonOf } from "./core/placeholder-message.js";
