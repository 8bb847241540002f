/**
 * What an attachment reads of a model request: the client it goes through, the thread and graph
 * whose history it carries, and what the telemetry records of it. Every read is guarded: a
 * runtime that cannot be read gives nothing, never an error in the model call.
 */
import type { RepairTarget } from "../core/wire.js";
import { graphRunOf, type HistoryPlace, historyNamespaceOf } from "../telemetry/call-identity.js";
import type { ObservedModelCall } from "../telemetry/call-labels.js";
import type { ModelIdentity } from "../telemetry/model-identity.js";
import type { LocaleRequest } from "./options.js";
import { repairTargetOf } from "./target.js";

/** What an attachment reads of a model request. */
export type ModelRequestLike = LocaleRequest & {
  readonly model: unknown;
  readonly tools?: readonly unknown[];
  /** The provider and model to record, when there is no model object to read them from. */
  readonly identity?: Partial<ModelIdentity>;
  /** This call's locale tag, ahead of the options' tag or resolver. */
  readonly localeTag?: string | undefined;
};

/** The target of one request: the options' `target`, or with `"auto"` the one its model goes through. */
export function targetOfRequest(
  target: RepairTarget | "auto",
  request: { readonly model?: unknown; readonly tools?: readonly unknown[] },
): RepairTarget {
  // Not kept between calls: asking costs tens of nanoseconds, and a model made by initChatModel
  // may hold another model on the next call.
  return target === "auto" ? repairTargetOf(request.model, request.tools) : target;
}

/** The request's thread id; none when the runtime holds none, or cannot be read. */
function threadIdOf(request: Pick<LocaleRequest, "runtime">): string | undefined {
  try {
    const threadId = request.runtime?.configurable?.thread_id;
    return typeof threadId === "string" ? threadId : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The history a request (or a hook) works on: its thread, the namespace of the graph whose state
 * holds it (sub-agents and sub-graphs may share a thread id; see {@link historyNamespaceOf}), and
 * that graph's run (sub-agents run at once from one node share a namespace; see
 * {@link graphRunOf}). Each part is absent when the runtime holds none or cannot be read.
 */
export function historyPlaceOf(request: Pick<LocaleRequest, "runtime">): HistoryPlace {
  let checkpointNamespace: unknown;
  try {
    checkpointNamespace = request.runtime?.configurable?.checkpoint_ns;
  } catch {
    // An unreadable runtime: the root graph, as far as we can tell.
  }
  return {
    threadId: threadIdOf(request),
    namespace: historyNamespaceOf(checkpointNamespace),
    run: graphRunOf(checkpointNamespace),
  };
}

/** What the telemetry needs of a model request. */
export function observedCall(request: ModelRequestLike, target?: RepairTarget): ObservedModelCall {
  return {
    ...historyPlaceOf(request),
    model: request.model,
    tools: request.tools,
    identity: request.identity,
    target,
  };
}
