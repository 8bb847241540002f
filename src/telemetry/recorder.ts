/**
 * Turns what the middleware saw on one model call into metrics and a span, through
 * `@opentelemetry/api` only. Every call into OpenTelemetry is guarded: a meter, tracer or exporter
 * that throws is reported to `onFailure` and never reaches the model call.
 */

import {
  type Attributes,
  type Context,
  context,
  createNoopMeter,
  type MeterProvider,
  metrics,
  ProxyTracerProvider,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  type TracerProvider,
  trace,
} from "@opentelemetry/api";
import { MessageKind, messageKindOf } from "../core/messages.js";
import type { ToolCallRepair } from "../core/repair.js";
import { type RepairTarget, readWire, sentCalls } from "../core/wire.js";
import { PACKAGE_VERSION } from "../version.js";
import { answeredByLaterModelCall, danglingCallKey, type HistoryPlace } from "./call-identity.js";
import { CountOnceMemory, sharedCountOnceMemory } from "./count-once.js";
import { createInstruments, type RepairInstruments } from "./instruments.js";
import { chargedModelOf, type ModelIdentity, type ProviderInference } from "./model-identity.js";
import { offeredToolNames } from "./offered-tools.js";
import {
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
  ATTR_OUTCOME,
  ATTR_REASON,
  ATTR_REPAIR_COUNT,
  ATTR_REPAIR_KIND,
  ATTR_TOOL_CALL_IDS,
  ATTR_TOOL_NAMES,
  EVENT_REPAIR,
  INSTRUMENTATION_SCOPE_NAME,
  OUTCOME_VALUE_CLEAN,
  OUTCOME_VALUE_FAILED_OPEN,
  OUTCOME_VALUE_REPAIRED,
  REASON_VALUE_INTERRUPTED,
  SPAN_REPAIR_TOOL_CALLS,
  TOOL_NAME_VALUE_OTHER,
  VALUE_UNKNOWN,
} from "./semconv.js";
import { sharedThreadActivity, type ThreadActivity } from "./thread-activity.js";

/** What became of one inspection of a request, or of a model call. */
export type Outcome =
  | typeof OUTCOME_VALUE_CLEAN
  | typeof OUTCOME_VALUE_REPAIRED
  | typeof OUTCOME_VALUE_FAILED_OPEN;

/**
 * One run of the engine over a request's messages, timed with `performance.now()` (both times 0
 * when nothing was recording as it ran).
 */
export interface Inspection {
  readonly outcome: Outcome;
  readonly repairs: readonly ToolCallRepair[];
  readonly messageCount: number;
  /**
   * The messages inspected, which the repairs' `callIndex` points into: a dangling call is told
   * apart, and charged to its model, by the AI message that made it.
   */
  readonly history?: readonly unknown[];
  readonly startedAt: number;
  readonly endedAt: number;
  /** Why the engine failed, on `failed_open`. */
  readonly error?: unknown;
}

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

/** Which part of the telemetry failed. */
export type TelemetryPart = "metrics" | "tracing";

/**
 * What a thread id becomes where it is recorded (the per-thread metric's and the span's
 * `gen_ai.conversation.id`): `"raw"` as it is, `"sha256"` its hex SHA-256, or what a function
 * makes of it.
 */
export type ThreadIdAttribute = "raw" | "sha256" | ((threadId: string) => string);

/** How the telemetry is set up; validated options of the middleware. */
export interface TelemetrySettings {
  readonly meterProvider?: MeterProvider;
  readonly tracerProvider?: TracerProvider;
  readonly threadMetrics: boolean;
  /** Series the per-thread metric reports at most, per meter provider. */
  readonly threadSeriesLimit: number;
  /** Seconds a counted dangling call stays in the per-thread metric. */
  readonly threadWindow: number;
  /** What a thread id becomes on the per-thread metric and the span. */
  readonly threadIdAttribute: ThreadIdAttribute;
  readonly traceAllCalls: boolean;
  /** Own memory of this size; `undefined` shares the default one of the meter provider. */
  readonly countOnceMemory?: number;
  readonly providerName?: string;
  readonly modelName?: string;
  readonly agentName?: string;
  /** The name of the agent whose run is current, when `agentName` gives none. */
  readonly agentNameOfCurrentRun: () => string | undefined;
  /** The provider and model of a request's chat model, when the request names none. */
  readonly modelIdentityOf: (chatModel: unknown) => ModelIdentity;
  /** A provider guessed from a model name, for messages made by another model. */
  readonly inferProvider: ProviderInference;
  readonly onFailure: (error: unknown, part: TelemetryPart) => void;
}

/** The instruments of one meter provider, and the memories shared with it. */
export interface MetricsTarget {
  readonly provider: MeterProvider;
  /** `undefined` when the provider is the no-op one: nothing is recorded, nothing is computed. */
  readonly instruments: RepairInstruments | undefined;
  readonly memory: CountOnceMemory;
  /** The recent dangling calls per thread, which the per-thread metric's producer reads. */
  readonly threadActivity: ThreadActivity;
}

/** The labels of one model call, computed once and only when something is recorded. */
interface CallLabels {
  readonly provider: string;
  readonly model: string;
  readonly agent: string;
  readonly offeredTools: ReadonlySet<string>;
}

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
      this.#recordMetrics(target, call, inspections, labels);
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
        // Attributes written out in full each time: spreading a shared part into them measured
        // as the costliest line of a recorded call.
        instruments.modelCalls.add(1, {
          [ATTR_GEN_AI_PROVIDER_NAME]: labels.provider,
          [ATTR_GEN_AI_REQUEST_MODEL]: labels.model,
          [ATTR_GEN_AI_AGENT_NAME]: labels.agent,
          [ATTR_OUTCOME]: outcomeOfCall(inspections),
        });
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
        this.#recordSpan(call, inspection, labels, parent);
      } catch (error) {
        this.#settings.onFailure(error, "tracing");
      }
    }
  }

  /** Counts the tool calls of a model response: the denominator of the dangling rate. */
  recordResponse(call: ObservedModelCall, response: unknown): void {
    try {
      const target = this.#metricsTarget();
      if (target?.instruments === undefined) return;
      for (const message of aiMessagesOf(response)) {
        const view = readWire(message);
        if (view === undefined) continue;
        const labels = this.#labelsOf(call);
        const charged = this.#chargedTo(labels, message);
        for (const sent of sentCalls(view, call.target ?? "any", message)) {
          target.instruments.toolCalls.add(1, {
            [ATTR_GEN_AI_PROVIDER_NAME]: charged.provider,
            [ATTR_GEN_AI_REQUEST_MODEL]: charged.model,
            [ATTR_GEN_AI_TOOL_NAME]: metricToolName(labels, sent.name),
          });
        }
      }
    } catch (error) {
      this.#settings.onFailure(error, "metrics");
    }
  }

  #recordMetrics(
    target: MetricsTarget,
    call: ObservedModelCall,
    inspections: readonly Inspection[],
    labels: CallLabels,
  ): void {
    const instruments = target.instruments as RepairInstruments;
    for (const inspection of inspections) {
      instruments.repairDuration.record(
        (inspection.endedAt - inspection.startedAt) / 1000,
        OUTCOME_ATTRIBUTES[inspection.outcome],
      );
      for (const repair of inspection.repairs) {
        instruments.repairs.add(1, {
          [ATTR_GEN_AI_PROVIDER_NAME]: labels.provider,
          [ATTR_GEN_AI_REQUEST_MODEL]: labels.model,
          [ATTR_REPAIR_KIND]: repair.kind,
        });
        if (repair.kind !== "placeholder_inserted") continue;
        const madeBy =
          repair.callIndex === undefined ? undefined : inspection.history?.[repair.callIndex];
        const key = danglingCallKey(call, madeBy, repair.callIndex, repair.toolCallId);
        if (key !== undefined && !target.memory.firstSighting(key)) continue;
        // First seen here, but a model call was made over it already (in this process before its
        // memory forgot it, or in another one): that call counted it.
        if (answeredByLaterModelCall(inspection.history, repair.callIndex)) continue;
        const charged = this.#chargedTo(labels, madeBy);
        instruments.danglingToolCalls.add(1, {
          [ATTR_GEN_AI_PROVIDER_NAME]: charged.provider,
          [ATTR_GEN_AI_REQUEST_MODEL]: charged.model,
          [ATTR_GEN_AI_TOOL_NAME]: metricToolName(labels, repair.toolName),
          [ATTR_REASON]: repair.reason ?? REASON_VALUE_INTERRUPTED,
        });
        if (this.#settings.threadMetrics && call.threadId !== undefined) {
          const conversation = this.#conversationIdOf(call.threadId, "metrics");
          if (conversation !== undefined) target.threadActivity.record(conversation, charged.model);
        }
      }
    }
  }

  #recordSpan(
    call: ObservedModelCall,
    inspection: Inspection,
    labels: CallLabels,
    parent: Context,
  ): void {
    const tracer = this.#currentTracer();
    const span = tracer.startSpan(
      SPAN_REPAIR_TOOL_CALLS,
      { kind: SpanKind.INTERNAL, startTime: epochMillis(inspection.startedAt) },
      parent,
    );
    try {
      if (span.isRecording()) {
        const conversation =
          call.threadId === undefined
            ? undefined
            : this.#conversationIdOf(call.threadId, "tracing");
        describeSpan(span, conversation, inspection, labels);
      }
    } finally {
      span.end(epochMillis(inspection.endedAt));
    }
  }

  /**
   * What a thread id becomes as `gen_ai.conversation.id`, by the `threadIdAttribute` option: the
   * same on the metric and the span, so that a thread on a dashboard leads to its traces. A mapping
   * that throws, or gives no text, is reported and gives no attribute at all: the raw id is never
   * recorded in its place. The last thread's answer is kept, since a call's metric and span ask in
   * turn.
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
   * The model and provider a tool call of this AI message is charged to (see
   * {@link chargedModelOf}); the options' `providerName` and `modelName` win over the message.
   */
  #chargedTo(labels: CallLabels, message: unknown): ModelIdentity {
    const settings = this.#settings;
    if (settings.providerName !== undefined && settings.modelName !== undefined) return labels;
    const charged = chargedModelOf(message, labels, this.#settings.inferProvider);
    return {
      provider: settings.providerName ?? charged.provider,
      model: settings.modelName ?? charged.model,
    };
  }

  /**
   * The labels of a call, computed once per call (the metrics, the span and the response share
   * them) and only when something records them.
   */
  #labelsOf(call: ObservedModelCall): CallLabels {
    if (this.#labelled?.call === call) return this.#labelled.labels;
    const labels = this.#computeLabels(call);
    this.#labelled = { call, labels };
    return labels;
  }

  #computeLabels(call: ObservedModelCall): CallLabels {
    const settings = this.#settings;
    const provider = settings.providerName ?? call.identity?.provider;
    const model = settings.modelName ?? call.identity?.model;
    const identity: ModelIdentity =
      provider !== undefined && model !== undefined
        ? { provider, model }
        : settings.modelIdentityOf(call.model);
    return {
      provider: provider ?? identity.provider,
      model: model ?? identity.model,
      agent: settings.agentName ?? settings.agentNameOfCurrentRun() ?? VALUE_UNKNOWN,
      offeredTools: offeredToolNames(call.tools),
    };
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

/** The duration's attributes for each outcome, built once: the SDK does not change them. */
const OUTCOME_ATTRIBUTES: Readonly<Record<Outcome, Attributes>> = Object.freeze({
  [OUTCOME_VALUE_CLEAN]: Object.freeze({ [ATTR_OUTCOME]: OUTCOME_VALUE_CLEAN }),
  [OUTCOME_VALUE_REPAIRED]: Object.freeze({ [ATTR_OUTCOME]: OUTCOME_VALUE_REPAIRED }),
  [OUTCOME_VALUE_FAILED_OPEN]: Object.freeze({ [ATTR_OUTCOME]: OUTCOME_VALUE_FAILED_OPEN }),
});

/** A model call's outcome: failed open if its last inspection failed, repaired if any repaired. */
function outcomeOfCall(inspections: readonly Inspection[]): Outcome {
  const last = inspections[inspections.length - 1];
  if (last?.outcome === OUTCOME_VALUE_FAILED_OPEN) return OUTCOME_VALUE_FAILED_OPEN;
  if (inspections.some((inspection) => inspection.outcome === OUTCOME_VALUE_REPAIRED)) {
    return OUTCOME_VALUE_REPAIRED;
  }
  return inspections.some((inspection) => inspection.outcome === OUTCOME_VALUE_FAILED_OPEN)
    ? OUTCOME_VALUE_FAILED_OPEN
    : OUTCOME_VALUE_CLEAN;
}

function describeSpan(
  span: Span,
  conversation: string | undefined,
  inspection: Inspection,
  labels: CallLabels,
): void {
  const { repairs } = inspection;
  const attributes: Attributes = {
    [ATTR_GEN_AI_PROVIDER_NAME]: labels.provider,
    [ATTR_GEN_AI_REQUEST_MODEL]: labels.model,
    [ATTR_GEN_AI_AGENT_NAME]: labels.agent,
    [ATTR_MESSAGE_COUNT]: inspection.messageCount,
    [ATTR_DANGLING_COUNT]: repairs.filter((repair) => repair.kind === "placeholder_inserted")
      .length,
    [ATTR_REPAIR_COUNT]: repairs.length,
    [ATTR_TOOL_CALL_IDS]: [...new Set(repairs.map((repair) => repair.toolCallId))],
    [ATTR_TOOL_NAMES]: [...new Set(repairs.map((repair) => repair.toolName))],
    [ATTR_OUTCOME]: inspection.outcome,
  };
  if (conversation !== undefined) attributes[ATTR_GEN_AI_CONVERSATION_ID] = conversation;
  span.setAttributes(attributes);
  for (const repair of repairs) {
    const event: Attributes = {
      [ATTR_GEN_AI_TOOL_NAME]: repair.toolName,
      [ATTR_GEN_AI_TOOL_CALL_ID]: repair.toolCallId,
      [ATTR_REPAIR_KIND]: repair.kind,
    };
    if (repair.reason !== undefined) event[ATTR_REASON] = repair.reason;
    const index = repair.outputIndex ?? repair.resultIndex ?? repair.callIndex;
    if (index !== undefined) event[ATTR_MESSAGE_INDEX] = index;
    span.addEvent(EVENT_REPAIR, event);
  }
  if (inspection.outcome === OUTCOME_VALUE_FAILED_OPEN) {
    span.setAttribute(ATTR_ERROR_TYPE, errorTypeOf(inspection.error));
    if (inspection.error instanceof Error) span.recordException(inspection.error);
    span.setStatus({ code: SpanStatusCode.ERROR, message: errorMessageOf(inspection.error) });
  }
}

/**
 * A thread id as `threadIdAttribute` maps it.
 *
 * @throws when the mapping function throws or gives anything but a non-empty string, or SHA-256
 *   cannot be computed here
 */
function mappedThreadId(mapping: ThreadIdAttribute, threadId: string): string {
  if (mapping === "raw") return threadId;
  if (mapping === "sha256") return sha256Hex(threadId);
  const id: unknown = mapping(threadId);
  if (typeof id !== "string" || id === "") {
    throw new TypeError(
      `threadIdAttribute returned ${typeof id === "string" ? "an empty string" : typeof id}, not a non-empty string; the thread is recorded without gen_ai.conversation.id`,
    );
  }
  return id;
}

/** What {@link sha256Hex} uses of `node:crypto`. */
interface NodeCrypto {
  createHash(algorithm: "sha256"): {
    update(text: string): { digest(encoding: "hex"): string };
  };
}

let nodeCrypto: NodeCrypto | undefined;

/**
 * The hex SHA-256 of a text, with Node's `crypto`, reached through `process.getBuiltinModule`
 * (on every Node.js the package supports) so that no entry point imports a Node built-in module.
 */
function sha256Hex(text: string): string {
  nodeCrypto ??= (
    globalThis.process as { getBuiltinModule?: (id: string) => unknown } | undefined
  )?.getBuiltinModule?.("node:crypto") as NodeCrypto | undefined;
  if (nodeCrypto === undefined) {
    throw new Error(
      'threadIdAttribute: "sha256" needs Node.js\'s crypto module, which this runtime lacks',
    );
  }
  return nodeCrypto.createHash("sha256").update(text).digest("hex");
}

/** The AI messages of what a model call returned: the message itself, or a command's update. */
function aiMessagesOf(response: unknown): readonly unknown[] {
  if (messageKindOf(response) === MessageKind.Ai) return [response];
  const update = (response as { update?: { messages?: unknown } } | null | undefined)?.update;
  const messages = update?.messages;
  return Array.isArray(messages)
    ? messages.filter((message) => messageKindOf(message) === MessageKind.Ai)
    : [];
}

/** The name a metric records: the tool's, or `_OTHER` when the request does not offer it. */
function metricToolName(labels: CallLabels, name: string | undefined): string {
  return name !== undefined && labels.offeredTools.has(name) ? name : TOOL_NAME_VALUE_OTHER;
}

/** What `createAgent` names the answers of an agent that was given no name. */
const UNNAMED_AGENT = "model";

/**
 * How long to wait, each time, for `createAgent` to name an answer: it does so once every
 * middleware around the call has returned it, which is the microtasks that follow unless one of
 * them awaits something (a log write, say). After the last wait, the answer is taken as unnamed.
 */
const NAMING_WAITS_MS = [1, 10, 100] as const;

/**
 * Calls `record` with the name of the agent that made an answer, once `createAgent` has named it
 * after its agent (`undefined` for an agent without a name, or an answer never named: one that
 * did not come from `createAgent`, or that it copied). Looks on the next turn of the event loop,
 * then after each of {@link NAMING_WAITS_MS}.
 */
function whenAgentNamed(response: unknown, record: (agent: string | undefined) => void): void {
  let waited = 0;
  const look = () => {
    const name = agentNameGiven(response);
    if (name !== undefined || waited === NAMING_WAITS_MS.length) {
      record(name === UNNAMED_AGENT ? undefined : name);
      return;
    }
    setTimeout(look, NAMING_WAITS_MS[waited++]);
  };
  nextTurn(look);
}

/** The name on the AI message of an answer (a message, a command, or a structured answer). */
function agentNameGiven(response: unknown): string | undefined {
  try {
    const messages = aiMessagesOf(response);
    const structured = (response as { messages?: unknown } | null)?.messages;
    const message =
      messages[0] ??
      (Array.isArray(structured)
        ? structured.find((entry) => messageKindOf(entry) === MessageKind.Ai)
        : undefined);
    const name = (message as { name?: unknown } | undefined)?.name;
    return typeof name === "string" && name !== "" ? name : undefined;
  } catch {
    return undefined;
  }
}

/** Runs `callback` on the next turn of the event loop: `setImmediate` where there is one. */
function nextTurn(callback: () => void): void {
  if (typeof setImmediate === "function") setImmediate(callback);
  else setTimeout(callback, 0);
}

function epochMillis(performanceMillis: number): number {
  return performance.timeOrigin + performanceMillis;
}

function errorTypeOf(error: unknown): string {
  if (error instanceof Error) return error.name || error.constructor.name || "Error";
  return "_OTHER";
}

function errorMessageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
