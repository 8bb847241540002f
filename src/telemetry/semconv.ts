/**
 * Every telemetry name the library emits: the meter and tracer, the instruments, the span, its
 * event, attribute keys and their enumerated values. Dashboards, alert rules, the README tables and
 * users' own queries depend on these names; change one only as a breaking change.
 *
 * The `gen_ai.*` and `error.type` keys are copied from the OpenTelemetry semantic conventions (the
 * GenAI ones are still incubating there) so that nothing is imported from the incubating entry point
 * at run time. A test checks each copy against the published package.
 */

import type { PlaceholderReason } from "../core/locales.js";
import type { RepairKind } from "../core/repair-kinds.js";

/** Name of the meter and the tracer. */
export const INSTRUMENTATION_SCOPE_NAME = "tool-call-resilience" as const;

// --- Metrics ---------------------------------------------------------------------------------

/**
 * Counter `{call}`: every model call the middleware sees, by provider, model, agent and outcome.
 * Prometheus: `tool_call_resilience_model_calls_total`.
 */
export const METRIC_MODEL_CALLS = "tool_call_resilience.model_calls" as const;

/**
 * Counter `{call}`: each tool call in a model response, once, when the model issues it; the
 * denominator of the dangling rate. Prometheus: `tool_call_resilience_tool_calls_total`.
 */
export const METRIC_TOOL_CALLS = "tool_call_resilience.tool_calls" as const;

/**
 * Counter `{call}`: each tool call left without a result, once, the first time it is seen.
 * Prometheus: `tool_call_resilience_dangling_tool_calls_total`.
 */
export const METRIC_DANGLING_TOOL_CALLS = "tool_call_resilience.dangling_tool_calls" as const;

/**
 * Counter `{repair}`: every repair applied to a request, again on each call while a thread is not
 * persisted. Prometheus: `tool_call_resilience_repairs_total`.
 */
export const METRIC_REPAIRS = "tool_call_resilience.repairs" as const;

/**
 * Gauge `{call}`: per thread (and model), the dangling calls a process counted over the last
 * `threadWindow` (15 minutes by default), counted once as {@link METRIC_DANGLING_TOOL_CALLS}
 * counts them, reported only for the threads that had one in that window, at most
 * `threadSeriesLimit` of them (the most first). Not an instrument: the setup entry point's
 * `threadMetricsProducer` reports it. Prometheus:
 * `tool_call_resilience_thread_recent_dangling_tool_calls`.
 */
export const METRIC_THREAD_RECENT_DANGLING_TOOL_CALLS =
  "tool_call_resilience.thread.recent_dangling_tool_calls" as const;

/**
 * Histogram `s`: how long each inspection of a request took, repair included. Prometheus:
 * `tool_call_resilience_repair_duration_bucket`, `_sum` and `_count`.
 */
export const METRIC_REPAIR_DURATION = "tool_call_resilience.repair.duration" as const;

/** Unit of the call counters (UCUM annotation). */
export const UNIT_CALL = "{call}" as const;
/** Unit of the repair counter (UCUM annotation). */
export const UNIT_REPAIR = "{repair}" as const;
/** Unit of the duration histogram. */
export const UNIT_SECONDS = "s" as const;

/**
 * Bucket boundaries of {@link METRIC_REPAIR_DURATION}, in seconds: 1 µs to 100 ms. An inspection
 * of a clean history takes microseconds; the top buckets catch histories of many thousands of
 * messages.
 */
export const REPAIR_DURATION_BUCKETS: readonly number[] = Object.freeze([
  0.000001, 0.0000025, 0.000005, 0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025,
  0.005, 0.01, 0.025, 0.05, 0.1,
]);

// --- Spans and events ------------------------------------------------------------------------

/** Span `INTERNAL`: one repair of a request (or every inspection, with `traceAllCalls`). */
export const SPAN_REPAIR_TOOL_CALLS = "repair_tool_calls" as const;

/** Span event: one per repair, with the tool, call id, kind, reason and message index. */
export const EVENT_REPAIR = "tool_call_resilience.repair" as const;

// --- Attributes copied from the semantic conventions -----------------------------------------

/** The model provider, as a well-known `gen_ai.provider.name` value where one applies. */
export const ATTR_GEN_AI_PROVIDER_NAME = "gen_ai.provider.name" as const;
/** The model name of the request. */
export const ATTR_GEN_AI_REQUEST_MODEL = "gen_ai.request.model" as const;
/** The agent's name. */
export const ATTR_GEN_AI_AGENT_NAME = "gen_ai.agent.name" as const;
/** The conversation: the LangGraph thread id. */
export const ATTR_GEN_AI_CONVERSATION_ID = "gen_ai.conversation.id" as const;
/** The tool's name; {@link GEN_AI_TOOL_NAME_VALUE_OTHER} on metrics when the request does not offer it. */
export const ATTR_GEN_AI_TOOL_NAME = "gen_ai.tool.name" as const;
/** The tool call's id. */
export const ATTR_GEN_AI_TOOL_CALL_ID = "gen_ai.tool.call.id" as const;
/** The class of error a fail-open span records, such as `TypeError`. */
export const ATTR_ERROR_TYPE = "error.type" as const;
/**
 * Marks an overflow series: the SDK's, when an instrument passes its cardinality limit between two
 * collections. Written by the SDK specification; Prometheus: `otel_metric_overflow="true"`.
 */
export const ATTR_METRIC_OVERFLOW = "otel.metric.overflow" as const;

// --- Attributes of this library ---------------------------------------------------------------

/** What became of a model call: {@link OUTCOME_VALUE_CLEAN}, `_REPAIRED` or `_FAILED_OPEN`. */
export const ATTR_OUTCOME = "tool_call_resilience.outcome" as const;
/** Why a call dangles: {@link REASON_VALUE_INTERRUPTED} or {@link REASON_VALUE_INVALID_ARGUMENTS}. */
export const ATTR_REASON = "tool_call_resilience.reason" as const;
/** What a repair did: one of the `REPAIR_KIND_VALUE_*` values. */
export const ATTR_REPAIR_KIND = "tool_call_resilience.repair.kind" as const;
/** Span: how many messages the request held. */
export const ATTR_MESSAGE_COUNT = "tool_call_resilience.message.count" as const;
/** Span: how many calls in the request were left without a result. */
export const ATTR_DANGLING_COUNT = "tool_call_resilience.dangling.count" as const;
/** Span: how many repairs were applied. */
export const ATTR_REPAIR_COUNT = "tool_call_resilience.repair.count" as const;
/** Span: the ids of the calls repaired (string array). */
export const ATTR_TOOL_CALL_IDS = "tool_call_resilience.tool_call.ids" as const;
/** Span: the names of the tools whose calls were repaired (string array, each name once). */
export const ATTR_TOOL_NAMES = "tool_call_resilience.tool.names" as const;
/** Span event: the index, in the repaired messages, of the message the repair concerns. */
export const ATTR_MESSAGE_INDEX = "tool_call_resilience.message.index" as const;

// --- Attribute values -------------------------------------------------------------------------

/** Outcome: the request needed no repair. */
export const OUTCOME_VALUE_CLEAN = "clean" as const;
/** Outcome: the request was repaired before the model saw it. */
export const OUTCOME_VALUE_REPAIRED = "repaired" as const;
/** Outcome: the repair itself failed, and the original request was passed on. */
export const OUTCOME_VALUE_FAILED_OPEN = "failed_open" as const;

/** Reason: the call's run stopped before its result was written. */
export const REASON_VALUE_INTERRUPTED = "interrupted" as const satisfies PlaceholderReason;
/** Reason: the call's arguments could not be parsed, so the tool never ran. */
export const REASON_VALUE_INVALID_ARGUMENTS =
  "invalid_arguments" as const satisfies PlaceholderReason;

// The repair kinds, each recorded under its own name: the keys of the engine's `REPAIR_KINDS`.

/** Repair kind: a placeholder result was inserted for a dangling call. */
export const REPAIR_KIND_VALUE_PLACEHOLDER_INSERTED =
  "placeholder_inserted" as const satisfies RepairKind;
/** Repair kind: a result separated from its call was moved back. */
export const REPAIR_KIND_VALUE_RESULT_MOVED = "result_moved" as const satisfies RepairKind;
/** Repair kind: a result answering no call was dropped. */
export const REPAIR_KIND_VALUE_ORPHAN_DROPPED = "orphan_dropped" as const satisfies RepairKind;
/** Repair kind: a call without an id, or with an id another call of its message has, was given one. */
export const REPAIR_KIND_VALUE_ID_ASSIGNED = "id_assigned" as const satisfies RepairKind;
/** Repair kind: a call whose name was missing or empty where a client reads it was given one. */
export const REPAIR_KIND_VALUE_NAME_ASSIGNED = "name_assigned" as const satisfies RepairKind;
/**
 * Repair kind: a call only some providers' clients send (a raw OpenAI-shaped call, an Anthropic
 * `tool_use` block, a v1 `tool_call` block, a Responses output item) was written where the other
 * clients read calls, so that every client sends it (target `"any"`).
 */
export const REPAIR_KIND_VALUE_CALL_LISTED = "call_listed" as const satisfies RepairKind;
/**
 * Repair kind: a short synthetic turn was written where a provider's order of turns needs one (an
 * assistant turn between tool results and a user message, or a user turn first).
 */
export const REPAIR_KIND_VALUE_TURN_INSERTED = "turn_inserted" as const satisfies RepairKind;

/**
 * Every repair kind's metric value, by kind. Its type holds each kind of the engine's table to the
 * `REPAIR_KIND_VALUE_*` constant above that is that kind, so a new kind does not go unnamed here.
 *
 * @example
 * ```ts
 * counter.add(1, { [ATTR_REPAIR_KIND]: REPAIR_KIND_VALUES[repair.kind] });
 * ```
 */
export const REPAIR_KIND_VALUES = Object.freeze({
  placeholder_inserted: REPAIR_KIND_VALUE_PLACEHOLDER_INSERTED,
  result_moved: REPAIR_KIND_VALUE_RESULT_MOVED,
  orphan_dropped: REPAIR_KIND_VALUE_ORPHAN_DROPPED,
  id_assigned: REPAIR_KIND_VALUE_ID_ASSIGNED,
  name_assigned: REPAIR_KIND_VALUE_NAME_ASSIGNED,
  call_listed: REPAIR_KIND_VALUE_CALL_LISTED,
  turn_inserted: REPAIR_KIND_VALUE_TURN_INSERTED,
} as const) satisfies { readonly [Kind in RepairKind]: Kind };

/**
 * Tool name recorded on metrics for a tool the request does not offer: a model can invent any
 * name, and each would otherwise become a new series.
 */
export const GEN_AI_TOOL_NAME_VALUE_OTHER = "_OTHER" as const;

/** Provider recorded when the model's provider could not be found. */
export const GEN_AI_PROVIDER_NAME_VALUE_UNKNOWN = "unknown" as const;
/** Model recorded when the model's name could not be found. */
export const GEN_AI_REQUEST_MODEL_VALUE_UNKNOWN = "unknown" as const;
/** Agent recorded when the run names no agent. */
export const GEN_AI_AGENT_NAME_VALUE_UNKNOWN = "unknown" as const;

/**
 * `error.type` of a failure that is not an `Error`, so has no class to name: the semantic
 * conventions' fallback value, copied from them.
 */
export const ERROR_TYPE_VALUE_OTHER = "_OTHER" as const;

// Well-known `gen_ai.provider.name` values, copied from the semantic conventions.
/** Provider: `anthropic`. */
export const GEN_AI_PROVIDER_NAME_VALUE_ANTHROPIC = "anthropic" as const;
/** Provider: `aws.bedrock`. */
export const GEN_AI_PROVIDER_NAME_VALUE_AWS_BEDROCK = "aws.bedrock" as const;
/** Provider: `azure.ai.inference`. */
export const GEN_AI_PROVIDER_NAME_VALUE_AZURE_AI_INFERENCE = "azure.ai.inference" as const;
/** Provider: `azure.ai.openai`. */
export const GEN_AI_PROVIDER_NAME_VALUE_AZURE_AI_OPENAI = "azure.ai.openai" as const;
/** Provider: `cohere`. */
export const GEN_AI_PROVIDER_NAME_VALUE_COHERE = "cohere" as const;
/** Provider: `deepseek`. */
export const GEN_AI_PROVIDER_NAME_VALUE_DEEPSEEK = "deepseek" as const;
/** Provider: `gcp.gemini`. */
export const GEN_AI_PROVIDER_NAME_VALUE_GCP_GEMINI = "gcp.gemini" as const;
/** Provider: `gcp.gen_ai`. */
export const GEN_AI_PROVIDER_NAME_VALUE_GCP_GEN_AI = "gcp.gen_ai" as const;
/** Provider: `gcp.vertex_ai`. */
export const GEN_AI_PROVIDER_NAME_VALUE_GCP_VERTEX_AI = "gcp.vertex_ai" as const;
/** Provider: `groq`. */
export const GEN_AI_PROVIDER_NAME_VALUE_GROQ = "groq" as const;
/** Provider: `ibm.watsonx.ai`. */
export const GEN_AI_PROVIDER_NAME_VALUE_IBM_WATSONX_AI = "ibm.watsonx.ai" as const;
/** Provider: `mistral_ai`. */
export const GEN_AI_PROVIDER_NAME_VALUE_MISTRAL_AI = "mistral_ai" as const;
/** Provider: `openai`. */
export const GEN_AI_PROVIDER_NAME_VALUE_OPENAI = "openai" as const;
/** Provider: `perplexity`. */
export const GEN_AI_PROVIDER_NAME_VALUE_PERPLEXITY = "perplexity" as const;
/** Provider: `x_ai`. */
export const GEN_AI_PROVIDER_NAME_VALUE_X_AI = "x_ai" as const;

/**
 * Every well-known `gen_ai.provider.name` value above, by its name in the semantic conventions
 * (`unknown`, this library's own, is not one of them).
 *
 * @example
 * ```ts
 * Object.values(GEN_AI_PROVIDER_NAME_VALUES).includes("openai"); // true
 * ```
 */
export const GEN_AI_PROVIDER_NAME_VALUES = Object.freeze({
  ANTHROPIC: GEN_AI_PROVIDER_NAME_VALUE_ANTHROPIC,
  AWS_BEDROCK: GEN_AI_PROVIDER_NAME_VALUE_AWS_BEDROCK,
  AZURE_AI_INFERENCE: GEN_AI_PROVIDER_NAME_VALUE_AZURE_AI_INFERENCE,
  AZURE_AI_OPENAI: GEN_AI_PROVIDER_NAME_VALUE_AZURE_AI_OPENAI,
  COHERE: GEN_AI_PROVIDER_NAME_VALUE_COHERE,
  DEEPSEEK: GEN_AI_PROVIDER_NAME_VALUE_DEEPSEEK,
  GCP_GEMINI: GEN_AI_PROVIDER_NAME_VALUE_GCP_GEMINI,
  GCP_GEN_AI: GEN_AI_PROVIDER_NAME_VALUE_GCP_GEN_AI,
  GCP_VERTEX_AI: GEN_AI_PROVIDER_NAME_VALUE_GCP_VERTEX_AI,
  GROQ: GEN_AI_PROVIDER_NAME_VALUE_GROQ,
  IBM_WATSONX_AI: GEN_AI_PROVIDER_NAME_VALUE_IBM_WATSONX_AI,
  MISTRAL_AI: GEN_AI_PROVIDER_NAME_VALUE_MISTRAL_AI,
  OPENAI: GEN_AI_PROVIDER_NAME_VALUE_OPENAI,
  PERPLEXITY: GEN_AI_PROVIDER_NAME_VALUE_PERPLEXITY,
  X_AI: GEN_AI_PROVIDER_NAME_VALUE_X_AI,
} as const);
