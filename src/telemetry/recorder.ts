/**
 * Turns what the middleware saw on one model call into metrics and a span, through
 * `@opentelemetry/api` only. Every call into OpenTelemetry is guarded: a meter, tracer or exporter
 * that throws is reported to `onFailure` and never reaches the model call. What is recorded lives
 * beside it: the call's metrics (`call-metrics.ts`), the span (`repair-span.ts`), the response's
 * tool calls (`response-calls.ts`); this module decides when, with which labels, on which
 * provider.
 */

import {
  type Context,
  context,
  createNoopMeter,
  metrics,
  ProxyTracerProvider,
  type Tracer,
  type TracerProvider,
  trace,
} from "@opentelemetry/api";
import { PACKAGE_VERSION } from "../version.js";
import { whenAgentNamed } from "./agent-naming.js";
import type { HistoryPlace } from "./call-identity.js";
import { type CallLabels, callLabelsOf, chargedTo, type ObservedModelCall } from "./call-labels.js";
import {
  type MetricsTarget,
  recordInspectionMetrics,
  recordModelCallMetric,
} from "./call-metrics.js";
import { mappedThreadId } from "./conversation-id.js";
import { CountOnceMemory, sharedCountOnceMemory } from "./count-once.js";
import type { Inspection } from "./inspection.js";
import { createInstruments } from "./instruments.js";
import type { ModelIdentity } from "./model-identity.js";
import { recordRepairSpan } from "./repair-span.js";
import { countResponseToolCalls } from "./response-calls.js";
import { INSTRUMENTATION_SCOPE_NAME, OUTCOME_VALUE_CLEAN } from "./semconv.js";
import type { TelemetryPart, TelemetrySettings } from "./settings.js";
import { sharedThreadActivity } from "./thread-activity.js";

/** What records a model call, as {@link RepairTelemetry.lookUp} found it at the call's start. */
export interface Recording {
  readonly metrics: MetricsTarget | undefined;
  readonly tracing: boolean;
}

/** What {@link RepairTelemetry.recordModelCall} recorded, and what is left to record. */
export interface RecordedModelCall {
  /** Whether metrics are recorded: the response's tool calls are then to be counted. */
  readonly metered: boolean;
  /**
   * Records the model call and its spans once the call has ended, with the agent's name read
   * from its answer (`undefined` when the call failed); absent when they are recorded already.
   */
  readonly finish?: (response: unknown) => void;
}

const METERED_NOW: RecordedModelCall = Object.freeze({ metered: true });
const RECORDED_NOW: RecordedModelCall = Object.freeze({ metered: false });

/** What {@link RepairTelemetry.lookUp} finds when no meter provider and no tracer records. */
const NOT_RECORDING: Recording = Object.freeze({ metrics: undefined, tracing: false });

const NOOP_METER = createNoopMeter();
/** What a global tracer provider delegates to while no SDK is registered. */
const NOOP_TRACER_PROVIDER = new ProxyTracerProvider().getDelegate();

/** False only for the API's global provider while nothing is registered behind it. */
function isTracing(provider: TracerProvider): boolean {
  return (
    !(provider instanceof ProxyTracerProvider) || provider.getDelegate() !== NOOP_TRACER_PROVIDER
  );
}

/**
 * Records the metrics and spans of the middleware.
 *
 * @example
 * ```ts
 * const telemetry = new RepairTelemetry(settings);
 * telemetry.recordModelCall(call, [inspection]);
 * telemetry.recordResponse(call, aiMessage);
 * ```
 */
export class RepairTelemetry {
  readonly #settings: TelemetrySettings;
  #metrics: MetricsTarget | undefined;
  #tracer: { readonly provider: TracerProvider; readonly tracer: Tracer } | undefined;
  /** The last call labelled, and its labels. */
  #labelled: { readonly call: ObservedModelCall; readonly labels: CallLabels } | undefined;
  /** The last model call recorded: its model and tools label repairs that had none. */
  #lastCall: ObservedModelCall | undefined;
  /** The last thread id mapped by `threadIdAttribute`, and what it became (none if it failed). */
  #conversation: { readonly threadId: string; readonly id: string | undefined } | undefined;
  /** {@link #conversationIdOf} for each part, made once: they are passed on every recorded call. */
  readonly #conversationForMetrics = (threadId: string) =>
    this.#conversationIdOf(threadId, "metrics");
  readonly #conversationForTracing = (threadId: string) =>
    this.#conversationIdOf(threadId, "tracing");
  /** {@link #labelsOf}, made once: it is passed on every response counted. */
  readonly #labelsOfCall = (call: ObservedModelCall): CallLabels => this.#labelsOf(call);
  /** {@link chargedTo} with these settings, made once. */
  readonly #chargedTo = (labels: CallLabels, message: unknown): ModelIdentity =>
    chargedTo(this.#settings, labels, message);

  constructor(settings: TelemetrySettings) {
    this.#settings = settings;
  }

  /**
   * What would record a model call now: the meter provider's instruments (absent for the no-op
   * provider) and whether a tracer provider has one to delegate to. Looked up once per model
   * call, since the global providers are looked up through the API's registry each time. Never
   * throws: a failing meter lookup is reported and nothing is metered; a failing tracer lookup
   * counts as tracing, so that the failure is met again, and reported, where a span would be made.
   */
  lookUp(): Recording {
    let metrics: MetricsTarget | undefined;
    let tracing = true;
    try {
      metrics = this.#metricsTarget();
    } catch (error) {
      this.#settings.onFailure(error, "metrics");
    }
    try {
      tracing = this.#isTracing();
    } catch {
      // Left true: recording the span reports the failure.
    }
    // Nothing is built when nothing records: this runs before every model call.
    if (metrics?.instruments === undefined && !tracing) return NOT_RECORDING;
    return { metrics, tracing };
  }

  #isTracing(): boolean {
    return isTracing(this.#settings.tracerProvider ?? trace.getTracerProvider());
  }

  /**
   * Records a model call: its outcome, the duration of each inspection, the repairs, each dangling
   * call once, and a span for each inspection that repaired or failed (or every one, with
   * `traceAllCalls`). `metered` is `false` with the no-op meter provider (no SDK), so the caller
   * need not even wait for the response to count its tool calls.
   *
   * The model call and its spans carry the agent's name. For a call of a nested agent (a
   * sub-agent run from a tool or a node, whose run's metadata may name the agent that invoked
   * it) that name is read from the answer, which `createAgent` names after its agent once the
   * call has ended: they are then recorded by `finish(response)`, which the caller must call when
   * the call has ended (with `undefined` when it failed).
   */
  recordModelCall(
    recording: Recording,
    call: ObservedModelCall,
    inspections: readonly Inspection[],
  ): RecordedModelCall {
    this.#lastCall = call;
    const labels = this.#labelsIfRecorded(recording, call);
    const metered = this.#recordInspections(recording, call, inspections, labels);
    if (!this.#namesAgentAfterCall(call)) {
      this.#recordCall(recording, call, inspections, labels);
      return metered ? METERED_NOW : RECORDED_NOW;
    }
    const parent = context.active();
    const record = (agent: string | undefined) => {
      try {
        const agentLabels =
          labels === undefined || agent === undefined ? labels : { ...labels, agent };
        this.#recordCall(recording, call, inspections, agentLabels, parent);
      } catch (error) {
        // Nothing may escape a callback of the event loop: it would end the process.
        this.#settings.onFailure(error, "metrics");
      }
    };
    return {
      metered,
      // A failed call has no answer to name: it is recorded at once.
      finish: (response) =>
        response === undefined ? record(undefined) : whenAgentNamed(response, record),
    };
  }

  /**
   * Records inspections whose model call never came: a repair that `persist` wrote to the thread,
   * after which another middleware ended the run before the model. Everything
   * {@link recordModelCall} records but the model call, labelled with the model and tools of the
   * last model call this telemetry recorded (none yet: `unknown`, and every tool `_OTHER`), unless
   * the AI message names its model.
   */
  recordWithoutModelCall(
    recording: Recording,
    place: HistoryPlace,
    inspections: readonly Inspection[],
  ): void {
    const last = this.#lastCall;
    const call: ObservedModelCall = {
      model: last?.model,
      tools: last?.tools,
      identity: last?.identity,
      threadId: place.threadId,
      namespace: place.namespace,
    };
    const labels = this.#labelsIfRecorded(recording, call);
    this.#recordInspections(recording, call, inspections, labels);
    this.#recordSpans(recording, call, inspections, labels, context.active());
  }

  /** Counts the tool calls of a model response: the denominator of the dangling rate. */
  recordResponse(call: ObservedModelCall, response: unknown): void {
    try {
      const target = this.#metricsTarget();
      if (target?.instruments === undefined) return;
      countResponseToolCalls(
        target.instruments,
        response,
        call.target ?? "any",
        call,
        this.#labelsOfCall,
        this.#chargedTo,
      );
    } catch (error) {
      this.#settings.onFailure(error, "metrics");
    }
  }

  /**
   * Whether the agent of a call is named only by its answer: a nested agent's, unless the
   * `agentName` option names it.
   */
  #namesAgentAfterCall(call: ObservedModelCall): boolean {
    return this.#settings.agentName === undefined && call.namespace !== undefined;
  }

  /** The call's labels when something records them; computing them never throws. */
  #labelsIfRecorded(recording: Recording, call: ObservedModelCall): CallLabels | undefined {
    if (recording.metrics?.instruments === undefined && !recording.tracing) return undefined;
    try {
      return this.#labelsOf(call);
    } catch (error) {
      this.#settings.onFailure(error, "metrics");
      return undefined;
    }
  }

  /** The metrics of the inspections (all but the model call); whether metrics are recorded. */
  #recordInspections(
    recording: Recording,
    call: ObservedModelCall,
    inspections: readonly Inspection[],
    labels: CallLabels | undefined,
  ): boolean {
    const target = recording.metrics;
    if (target?.instruments === undefined) return false;
    if (labels === undefined) return true;
    try {
      recordInspectionMetrics(
        target,
        target.instruments,
        this.#settings,
        call,
        inspections,
        labels,
        this.#conversationForMetrics,
      );
    } catch (error) {
      this.#settings.onFailure(error, "metrics");
    }
    return true;
  }

  /** The model call itself, and the spans of its inspections: what carries the agent's name. */
  #recordCall(
    recording: Recording,
    call: ObservedModelCall,
    inspections: readonly Inspection[],
    labels: CallLabels | undefined,
    parent: Context = context.active(),
  ): void {
    if (labels === undefined) return;
    const instruments = recording.metrics?.instruments;
    if (instruments !== undefined) {
      try {
        recordModelCallMetric(instruments, labels, inspections);
      } catch (error) {
        this.#settings.onFailure(error, "metrics");
      }
    }
    this.#recordSpans(recording, call, inspections, labels, parent);
  }

  #recordSpans(
    recording: Recording,
    call: ObservedModelCall,
    inspections: readonly Inspection[],
    labels: CallLabels | undefined,
    parent: Context,
  ): void {
    // Without a tracer behind the global one, a span would be a no-op built for nothing.
    if (!recording.tracing || labels === undefined) return;
    for (const inspection of inspections) {
      const traced = inspection.outcome !== OUTCOME_VALUE_CLEAN || this.#settings.traceAllCalls;
      if (!traced) continue;
      try {
        recordRepairSpan(
          this.#currentTracer(),
          inspection,
          labels,
          parent,
          call.threadId,
          this.#conversationForTracing,
        );
      } catch (error) {
        this.#settings.onFailure(error, "tracing");
      }
    }
  }

  /**
   * What a thread id becomes as `gen_ai.conversation.id`, by the `threadIdAttribute` option (see
   * `conversation-id.ts`). A mapping that throws, or gives no text, is reported and gives no
   * attribute at all: the raw id is never recorded in its place. The last thread's answer is
   * kept, since a call's metric and span ask in turn.
   */
  #conversationIdOf(threadId: string, part: TelemetryPart): string | undefined {
    if (this.#conversation?.threadId === threadId) return this.#conversation.id;
    let id: string | undefined;
    try {
      id = mappedThreadId(this.#settings.threadIdAttribute, threadId);
    } catch (error) {
      this.#settings.onFailure(error, part);
    }
    this.#conversation = { threadId, id };
    return id;
  }

  /**
   * The labels of a call, computed once per call (the metrics, the span and the response share
   * them) and only when something records them.
   */
  #labelsOf(call: ObservedModelCall): CallLabels {
    if (this.#labelled?.call === call) return this.#labelled.labels;
    const labels = callLabelsOf(this.#settings, call);
    this.#labelled = { call, labels };
    return labels;
  }

  /** The instruments of the current meter provider; rebuilt when the global provider changes. */
  #metricsTarget(): MetricsTarget | undefined {
    const provider = this.#settings.meterProvider ?? metrics.getMeterProvider();
    if (this.#metrics?.provider === provider) return this.#metrics;
    const meter = provider.getMeter(INSTRUMENTATION_SCOPE_NAME, PACKAGE_VERSION);
    const size = this.#settings.countOnceMemory;
    const threadActivity = sharedThreadActivity(provider);
    threadActivity.configure(this.#settings.threadWindow, this.#settings.threadSeriesLimit);
    this.#metrics = {
      provider,
      instruments: meter === NOOP_METER ? undefined : createInstruments(meter),
      memory: size === undefined ? sharedCountOnceMemory(provider) : new CountOnceMemory(size),
      threadActivity,
    };
    return this.#metrics;
  }

  #currentTracer(): Tracer {
    const provider = this.#settings.tracerProvider ?? trace.getTracerProvider();
    if (this.#tracer?.provider !== provider) {
      this.#tracer = {
        provider,
        tracer: provider.getTracer(INSTRUMENTATION_SCOPE_NAME, PACKAGE_VERSION),
      };
    }
    return this.#tracer.tracer;
  }
}
