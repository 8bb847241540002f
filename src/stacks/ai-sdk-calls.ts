/**
 * What the AI SDK middleware reads of one model call and records of it: the call's provider,
 * model, tools and thread; the answer's tool calls, from a generated result or a stream read to
 * its end; and the telemetry that records a `ModelMessage` repair with the model call that
 * follows it, so that the two make one model call. Nothing here loads the AI SDK: its shapes are
 * read leniently, and nothing of ours throws into the call.
 */
import type { FormatRepairContext } from "../formats/message-format.js";
import { listOf, recordOf, stringOrUndefined } from "../formats/read.js";
import type { HistoryPlace } from "../telemetry/call-identity.js";
import type { ObservedModelCall } from "../telemetry/call-labels.js";
import type { Inspection } from "../telemetry/inspection.js";
import { genAiProviderName } from "../telemetry/model-identity.js";
import { PendingInspections } from "../telemetry/pending-inspections.js";
import { type RecordedModelCall, type Recording, RepairTelemetry } from "../telemetry/recorder.js";
import { OUTCOME_VALUE_CLEAN } from "../telemetry/semconv.js";
import type { TelemetrySettings } from "../telemetry/settings.js";

/**
 * The `providerOptions` key under which a call names its thread:
 * `providerOptions: { toolCallResilience: { threadId } }`. Provider packages read only their own
 * key, so a provider ignores it; the AI Gateway's provider forwards every `providerOptions` key
 * to the gateway, this one too.
 *
 * @example
 * ```ts
 * await generateText({ model, messages, providerOptions: { [THREAD_ID_PROVIDER_OPTIONS_KEY]: { threadId } } });
 * ```
 */
export const THREAD_ID_PROVIDER_OPTIONS_KEY = "toolCallResilience";

/**
 * The request header that names a call's thread when its `providerOptions` do not (any case).
 * The header is sent on to the provider with the others, which ignores it.
 *
 * @example
 * ```ts
 * await generateText({ model, messages, headers: { [THREAD_ID_HEADER]: threadId } });
 * ```
 */
export const THREAD_ID_HEADER = "x-tool-call-resilience-thread-id";

/**
 * The provider an AI SDK provider id names (`model.provider`: `"openai.responses"`,
 * `"anthropic.messages"`): its first dot-separated segment, the provider package's name, but for
 * Vertex AI's `"google.vertex.chat"`, whose first segment names Google's other API.
 */
function providerIdOf(aiSdkId: string): string {
  const [first = "", second] = aiSdkId.toLowerCase().split(".");
  return first === "google" && second === "vertex" ? second : first;
}

/**
 * The `gen_ai.provider.name` of an AI SDK provider id: its provider (the id's first segment, or
 * `vertex` for `"google.vertex.…"`) mapped by the table the LangChain attachments use
 * (`genAiProviderName`): `"openai.chat"` → `"openai"`, `"google.generative-ai"` → `"gcp.gemini"`,
 * `"google.vertex.chat"` and `"vertex.anthropic.messages"` → `"gcp.vertex_ai"`,
 * `"bedrock.anthropic.messages"` → `"aws.bedrock"`; a provider the table does not know as it is
 * (`"gateway"`, `"togetherai"`); `undefined` for anything but a non-empty string.
 *
 * @example
 * ```ts
 * aiSdkProviderName("anthropic.messages"); // "anthropic"
 * ```
 */
export function aiSdkProviderName(providerId: unknown): string | undefined {
  if (typeof providerId !== "string" || providerId === "") return undefined;
  return genAiProviderName(providerIdOf(providerId));
}

/** The thread a call names: its `providerOptions`, else its header; none when unreadable. */
function threadIdOf(params: Readonly<Record<string, unknown>>): string | undefined {
  const options = recordOf(recordOf(params.providerOptions)?.[THREAD_ID_PROVIDER_OPTIONS_KEY]);
  const named = stringOrUndefined(options?.threadId);
  if (named !== undefined) return named;
  const headers = recordOf(params.headers);
  if (headers === undefined) return undefined;
  for (const name of Object.keys(headers)) {
    if (name.toLowerCase() === THREAD_ID_HEADER) return stringOrUndefined(headers[name]);
  }
  return undefined;
}

/**
 * What the telemetry records of one call: the thread its params name, the model's id, its
 * provider as a `gen_ai.provider.name`, the tools offered. Never throws: what cannot be read is
 * left out.
 *
 * @example
 * ```ts
 * callContextOf(params, { provider: "openai.responses", modelId: "gpt-4.1" });
 * // { threadId: undefined, model: "gpt-4.1", provider: "openai", tools: undefined }
 * ```
 */
export function callContextOf(params: unknown, model: unknown): FormatRepairContext {
  let threadId: string | undefined;
  let tools: readonly unknown[] | undefined;
  let modelId: string | undefined;
  let provider: string | undefined;
  try {
    const fields = recordOf(params);
    if (fields !== undefined) {
      threadId = threadIdOf(fields);
      tools = Array.isArray(fields.tools) ? fields.tools : undefined;
    }
  } catch {
    // Unreadable params name no thread and offer no tools.
  }
  try {
    const identity = recordOf(model);
    modelId = stringOrUndefined(identity?.modelId);
    provider = aiSdkProviderName(identity?.provider);
  } catch {
    // An unreadable model is recorded as unknown.
  }
  return { threadId, model: modelId, provider, tools };
}

/** An answer's calls as the telemetry counts them: an AI message of the calls the client runs. */
export interface AnswerMessage {
  readonly type: "ai";
  readonly tool_calls: readonly { readonly id: unknown; readonly name: unknown; args: object }[];
}

/**
 * The AI message of an answer's parts (a generated result's `content`, or a stream's parts): its
 * `tool-call` parts the client runs. The provider's own calls are left out, as they are of the
 * dangling calls: the provider answers them. Never throws on junk.
 *
 * @example
 * ```ts
 * answerMessageOf([{ type: "tool-call", toolCallId: "c1", toolName: "search", input: "{}" }]);
 * // { type: "ai", tool_calls: [{ id: "c1", name: "search", args: {} }] }
 * ```
 */
export function answerMessageOf(parts: readonly unknown[]): AnswerMessage {
  const calls: { id: unknown; name: unknown; args: object }[] = [];
  for (const part of listOf(parts)) {
    const fields = recordOf(part);
    if (fields?.type !== "tool-call" || fields.providerExecuted === true) continue;
    calls.push({ id: fields.toolCallId, name: fields.toolName, args: {} });
  }
  return { type: "ai", tool_calls: calls };
}

/** What to do once a streamed answer has ended. */
export interface StreamEnd {
  /** The stream was read to its end without an error part: its parts. */
  readonly answered: (parts: readonly unknown[]) => void;
  /** It failed, was cancelled, or carried an error part. */
  readonly failed: () => void;
}

/**
 * The stream, passed on chunk by chunk unchanged, with its `tool-call` and `error` parts kept to
 * tell `end` how it ended: read to its end, or failed (an upstream error, a part of type `error`)
 * or cancelled by its reader. `end`'s callbacks must not throw.
 *
 * @example
 * ```ts
 * return { ...result, stream: observedStream(result.stream, { answered, failed }) };
 * ```
 */
export function observedStream<T>(stream: ReadableStream<T>, end: StreamEnd): ReadableStream<T> {
  const kept: unknown[] = [];
  let failed = false;
  let ended = false;
  const finish = (answered: boolean) => {
    if (ended) return;
    ended = true;
    try {
      if (answered && !failed) end.answered(kept);
      else end.failed();
    } catch {
      // Counting the answer never changes the stream.
    }
  };
  // `cancel` (an upstream error, or the reader cancelling) is called by the runtimes that know it.
  const transformer = {
    transform(chunk: T, controller: TransformStreamDefaultController<T>) {
      controller.enqueue(chunk);
      try {
        const type = recordOf(chunk)?.type;
        if (type === "tool-call") kept.push(chunk);
        else if (type === "error") failed = true;
      } catch {
        // A part that cannot be read is passed on, and counts as nothing.
      }
    },
    flush: () => finish(true),
    cancel: () => finish(false),
  };
  return stream.pipeThrough(new TransformStream<T, T>(transformer));
}

function placeOf(call: HistoryPlace): HistoryPlace {
  return { threadId: call.threadId, namespace: call.namespace, run: call.run };
}

const NOT_METERED: RecordedModelCall = Object.freeze({ metered: false });

/**
 * The middleware's telemetry: every model call recorded with the inspections of a `ModelMessage`
 * repair made for it before (`repairMessages`), which wait per thread for the thread's next model
 * call, so that both make one model call; a repair whose model call does not come within 30 s is
 * recorded without one, as `persist` does.
 */
export class ModelCallTelemetry extends RepairTelemetry {
  /** The telemetry of repairs made before the model call: their inspections wait here. */
  readonly beforeModelCall: RepairTelemetry;
  readonly #waiting: PendingInspections;

  constructor(settings: TelemetrySettings) {
    super(settings);
    this.#waiting = new PendingInspections((place, inspections) => {
      try {
        this.recordWithoutModelCall(this.lookUp(), place, inspections);
      } catch {
        // The telemetry guards itself and reports its failures; nothing may escape a timer.
      }
    });
    this.beforeModelCall = new WaitingTelemetry(settings, this.#waiting);
  }

  override recordModelCall(
    recording: Recording,
    call: ObservedModelCall,
    inspections: readonly Inspection[],
  ): RecordedModelCall {
    const earlier = this.#waiting.take(placeOf(call));
    return super.recordModelCall(
      recording,
      call,
      earlier.length === 0 ? inspections : [...earlier, ...inspections],
    );
  }
}

/**
 * Records no model call: the inspections that repaired or failed wait for the thread's next one
 * (a clean one adds nothing to it, as a clean `persist` hook adds nothing).
 */
class WaitingTelemetry extends RepairTelemetry {
  readonly #waiting: PendingInspections;

  constructor(settings: TelemetrySettings, waiting: PendingInspections) {
    super(settings);
    this.#waiting = waiting;
  }

  override recordModelCall(
    _recording: Recording,
    call: ObservedModelCall,
    inspections: readonly Inspection[],
  ): RecordedModelCall {
    for (const inspection of inspections) {
      if (inspection.outcome !== OUTCOME_VALUE_CLEAN) this.#waiting.add(placeOf(call), inspection);
    }
    return NOT_METERED;
  }
}
