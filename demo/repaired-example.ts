/**
 * One repaired request of the run, shown as the model saw it: the few messages around the repair,
 * one line each, in the style of the README's first example. Taken from what a fake model really
 * received, the middleware's repair applied, never written by hand.
 */
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { syntheticReasonOf } from "tool-call-resilience";
import type { ModelRequestSeen } from "./fleet.js";

/** A repaired request, cut down to the messages around its first placeholder. */
export interface RepairedExample {
  /** The model that received it. */
  readonly model: string;
  /** Its thread. */
  readonly thread: string;
  /** One line per message, as {@link excerptLines} writes them. */
  readonly lines: readonly string[];
}

/** Longest content a line shows; longer contents are cut, with `…`. */
const MAX_CONTENT = 72;

function cut(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length <= MAX_CONTENT ? flat : `${flat.slice(0, MAX_CONTENT - 1)}…`;
}

function lineOf(message: BaseMessage): string {
  if (HumanMessage.isInstance(message)) return `human  ${cut(message.text)}`;
  if (ToolMessage.isInstance(message)) {
    return `tool   answers ${message.tool_call_id}: ${cut(message.text)}`;
  }
  if (AIMessage.isInstance(message)) {
    const calls = message.tool_calls ?? [];
    if (calls.length === 0) return `ai     ${cut(message.text)}`;
    return `ai     calls ${calls.map((call) => `${call.name}(${call.id ?? "?"})`).join(", ")}`;
  }
  return `${message.getType().padEnd(6)} ${cut(message.text)}`;
}

/**
 * The lines of a request around its first placeholder (a message the library inserted): the user
 * message of the turn whose calls dangled, the AI message that issued them, its results and
 * placeholders, and what follows up to the next user message. Messages of the turn between its
 * user message and that AI message are told as one `…` line. `undefined` when the library
 * inserted nothing.
 *
 * @example
 * excerptLines(request.messages);
 * // ["human  Deploy billing, please.", "ai     calls deploy(call_deploy_1)",
 * //  "tool   answers call_deploy_1: [Tool call was interrupted and did not return a result.]",
 * //  "human  Never mind. What happened?"]
 */
export function excerptLines(messages: readonly BaseMessage[]): string[] | undefined {
  const placeholderAt = messages.findIndex((message) => syntheticReasonOf(message) !== undefined);
  if (placeholderAt === -1) return undefined;
  const before = (from: number, found: (message: BaseMessage | undefined) => boolean) => {
    let at = from - 1;
    while (at >= 0 && !found(messages[at])) at -= 1;
    return at;
  };
  const aiAt = before(placeholderAt, (message) => AIMessage.isInstance(message));
  const humanAt = aiAt < 0 ? -1 : before(aiAt, (message) => HumanMessage.isInstance(message));
  const nextHumanAt = messages.findIndex(
    (message, at) => at > placeholderAt && HumanMessage.isInstance(message),
  );
  const lines: string[] = [];
  const human = messages[humanAt];
  if (human !== undefined) {
    lines.push(lineOf(human));
    const skipped = aiAt - humanAt - 1;
    if (skipped > 0) {
      lines.push(`…      ${skipped} earlier message${skipped === 1 ? "" : "s"} of the turn`);
    }
  }
  const last = nextHumanAt === -1 ? messages.length : nextHumanAt + 1;
  for (const message of messages.slice(aiAt < 0 ? placeholderAt : aiAt, last)) {
    lines.push(lineOf(message));
  }
  return lines;
}

/**
 * The example a request makes, or `undefined` when it holds no placeholder.
 *
 * @example
 * let example: RepairedExample | undefined;
 * const onModelRequest = (request: ModelRequestSeen) => {
 *   example ??= repairedExample(request);
 * };
 */
export function repairedExample(request: ModelRequestSeen): RepairedExample | undefined {
  const lines = excerptLines(request.messages);
  return lines === undefined ? undefined : { model: request.model, thread: request.thread, lines };
}

/** The example as the demo prints it: a heading line, then the excerpt. */
export function formatRepairedExample(example: RepairedExample | undefined): string {
  if (example === undefined) {
    return "No model call was repaired in this run, so there is no repaired request to show.";
  }
  return [
    `The run's first repaired request, as ${example.model} saw it on ${example.thread}:`,
    ...example.lines,
  ].join("\n");
}
