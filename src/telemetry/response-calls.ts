/**
 * Counts the tool calls of a model response, as the client the request was repaired for will send
 * them on: the denominator of the dangling rate.
 */

import { MessageKind, messageKindOf } from "../core/messages.js";
import { type RepairTarget, readWire, sentCalls } from "../core/wire.js";
import { type CallLabels, metricToolName } from "./call-labels.js";
import type { RepairInstruments } from "./instruments.js";
import type { ModelIdentity } from "./model-identity.js";
import {
  ATTR_GEN_AI_PROVIDER_NAME,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_TOOL_NAME,
} from "./semconv.js";

/**
 * The AI messages of what a model call returned: the message itself, or a command's update.
 *
 * @example
 * ```ts
 * aiMessagesOf(new Command({ update: { messages: [aiMessage, toolMessage] } })); // [aiMessage]
 * ```
 */
export function aiMessagesOf(response: unknown): readonly unknown[] {
  if (messageKindOf(response) === MessageKind.Ai) return [response];
  const update = (response as { update?: { messages?: unknown } } | null | undefined)?.update;
  const messages = update?.messages;
  return Array.isArray(messages)
    ? messages.filter((message) => messageKindOf(message) === MessageKind.Ai)
    : [];
}

/**
 * Adds each tool call of a response's AI messages to the tool-call counter, charged to the model
 * that made its message.
 *
 * @param call - the model call the response answers
 * @param labelsOf - the labels of `call`, asked for only once a response holds an AI message (a
 *   function made once, so that counting a response allocates nothing for it)
 * @param chargedTo - the model a message's calls are charged to
 *
 * @example
 * ```ts
 * countResponseToolCalls(instruments, aiMessage, "any", call, labelsOf, (l, m) => l);
 * ```
 */
export function countResponseToolCalls<Call>(
  instruments: RepairInstruments,
  response: unknown,
  target: RepairTarget,
  call: Call,
  labelsOf: (call: Call) => CallLabels,
  chargedTo: (labels: CallLabels, message: unknown) => ModelIdentity,
): void {
  for (const message of aiMessagesOf(response)) {
    const view = readWire(message);
    if (view === undefined) continue;
    const labels = labelsOf(call);
    const charged = chargedTo(labels, message);
    for (const sent of sentCalls(view, target, message)) {
      instruments.toolCalls.add(1, {
        [ATTR_GEN_AI_PROVIDER_NAME]: charged.provider,
        [ATTR_GEN_AI_REQUEST_MODEL]: charged.model,
        [ATTR_GEN_AI_TOOL_NAME]: metricToolName(labels, sent.name),
      });
    }
  }
}
