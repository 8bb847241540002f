/**
 * The labels of a model call: the provider, model and agent its metrics and spans carry, the
 * tools its request offers, and the model each tool call is charged to.
 */

import type { RepairTarget } from "../core/wire.js";
import type { HistoryPlace } from "./call-identity.js";
import { chargedModelOf, type ModelIdentity } from "./model-identity.js";
import { offeredToolNames } from "./offered-tools.js";
import { GEN_AI_AGENT_NAME_VALUE_UNKNOWN, GEN_AI_TOOL_NAME_VALUE_OTHER } from "./semconv.js";
import type { TelemetrySettings } from "./settings.js";

/** What the telemetry reads from a model request. */
export interface ObservedModelCall extends HistoryPlace {
  readonly model: unknown;
  readonly tools: readonly unknown[] | undefined;
  /** The provider and model to record when there is no model object to read them from. */
  readonly identity?: Partial<ModelIdentity>;
  /**
   * The client the request was repaired for: the response's calls are counted as that client
   * would send them on, the way its dangling calls are found.
   */
  readonly target?: RepairTarget;
}

/** The labels of one model call, computed once and only when something is recorded. */
export interface CallLabels {
  readonly provider: string;
  readonly model: string;
  readonly agent: string;
  readonly offeredTools: ReadonlySet<string>;
}

/**
 * The labels of a call: the options' `providerName`, `modelName` and `agentName` first, then
 * what the call names, then what its chat model and the current run say; `unknown` for an agent
 * nothing names.
 *
 * @example
 * ```ts
 * callLabelsOf(settings, { model: chatModel, tools: request.tools }).provider; // "openai"
 * ```
 */
export function callLabelsOf(settings: TelemetrySettings, call: ObservedModelCall): CallLabels {
  const provider = settings.providerName ?? call.identity?.provider;
  const model = settings.modelName ?? call.identity?.model;
  const identity: ModelIdentity =
    provider !== undefined && model !== undefined
      ? { provider, model }
      : settings.modelIdentityOf(call.model);
  return {
    provider: provider ?? identity.provider,
    model: model ?? identity.model,
    agent:
      settings.agentName ?? settings.agentNameOfCurrentRun() ?? GEN_AI_AGENT_NAME_VALUE_UNKNOWN,
    offeredTools: offeredToolNames(call.tools),
  };
}

/**
 * The model and provider a tool call of this AI message is charged to (see
 * {@link chargedModelOf}); the options' `providerName` and `modelName` win over the message.
 *
 * @example
 * ```ts
 * chargedTo(settings, labels, aiMessageOfAnotherModel).model; // that message's model
 * ```
 */
export function chargedTo(
  settings: TelemetrySettings,
  labels: CallLabels,
  message: unknown,
): ModelIdentity {
  if (settings.providerName !== undefined && settings.modelName !== undefined) return labels;
  const charged = chargedModelOf(message, labels, settings.inferProvider);
  return {
    provider: settings.providerName ?? charged.provider,
    model: settings.modelName ?? charged.model,
  };
}

/**
 * The tool name a metric records: the tool's, or `_OTHER` when the request does not offer it.
 *
 * @example
 * ```ts
 * metricToolName(labels, "search"); // "search" when the request offers it, else "_OTHER"
 * ```
 */
export function metricToolName(labels: CallLabels, name: string | undefined): string {
  return name !== undefined && labels.offeredTools.has(name) ? name : GEN_AI_TOOL_NAME_VALUE_OTHER;
}
