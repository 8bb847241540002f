/**
 * What the suite measures, each as a function of one history: the floor loop, our engine, our
 * middleware's `wrapModelCall`, and the peer's `wrapModelCall`, the last two driven directly with
 * the same request and the same handler, the way `createAgent` drives them.
 */
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import { createPatchToolCallsMiddleware } from "deepagents";
import {
  createRepairPolicy,
  type DanglingToolCallMiddlewareOptions,
  danglingToolCallMiddleware,
  repairToolCalls,
} from "tool-call-resilience";

/**
 * The floor: a plain loop that reads every message's type, each tool call's id and each tool
 * message's `tool_call_id`, and does nothing else. Nothing that inspects a history can read less.
 * The lengths are summed only so that the reads cannot be optimized away.
 */
export function readHistory(messages: readonly BaseMessage[]): number {
  let sum = 0;
  for (let index = 0; index < messages.length; index++) {
    const message = messages[index] as unknown as FloorMessage;
    const type = message.type;
    if (type === "ai") {
      const calls = message.tool_calls;
      for (let call = 0; call < calls.length; call++)
        sum += (calls[call] as { id: string }).id.length;
    } else if (type === "tool") {
      sum += message.tool_call_id.length;
    }
  }
  return sum;
}

/** What the floor assumes of every message: the bench's histories are all of this shape. */
interface FloorMessage {
  readonly type: string;
  readonly tool_calls: readonly { readonly id: string }[];
  readonly tool_call_id: string;
}

/** The part of a model request both middlewares read. */
export interface BenchRequest {
  readonly messages: readonly BaseMessage[];
  readonly model: unknown;
  readonly tools: readonly unknown[];
  readonly runtime: { readonly configurable: { readonly thread_id: string } };
  readonly state: { readonly messages: readonly BaseMessage[] };
  readonly systemMessage: undefined;
}

/** A `wrapModelCall` hook, as `createAgent` calls it. */
export type WrapModelCall = (
  request: BenchRequest,
  handler: (request: BenchRequest) => Promise<AIMessage>,
) => Promise<AIMessage> | AIMessage;

const RESPONSE = new AIMessage({ id: "answer", content: "Done." });

/** The model call both hooks wrap: answers at once, and keeps what it was sent for checking. */
export function answeringHandler() {
  let received: readonly BaseMessage[] = [];
  const handler = async (request: BenchRequest) => {
    received = request.messages;
    return RESPONSE;
  };
  return { handler, lastReceived: () => received };
}

/** A request on one thread, as `createAgent`'s model node builds it. */
export function requestFor(messages: readonly BaseMessage[]): BenchRequest {
  return {
    messages,
    model: { getName: () => "fake-model" },
    tools: [],
    runtime: { configurable: { thread_id: "bench-thread" } },
    state: { messages },
    systemMessage: undefined,
  };
}

function hookOf(middleware: { wrapModelCall?: unknown }): WrapModelCall {
  const hook = middleware.wrapModelCall;
  if (typeof hook !== "function") throw new Error("the middleware has no wrapModelCall hook");
  return hook as WrapModelCall;
}

/** Our middleware's hook, silent (a bench measures work, not console output). */
export function ourHook(
  options: Omit<DanglingToolCallMiddlewareOptions, "logger"> = {},
): WrapModelCall {
  return hookOf(danglingToolCallMiddleware({ logger: false, ...options }));
}

/** The peer's hook: deepagents' `createPatchToolCallsMiddleware()`. */
export function peerHook(): WrapModelCall {
  return hookOf(createPatchToolCallsMiddleware());
}

/** Our engine alone, with a policy validated once, as the middleware holds it. */
export function engine(window?: number): (messages: readonly BaseMessage[]) => number {
  const policy = createRepairPolicy(window === undefined ? {} : { window });
  return (messages) => repairToolCalls(messages, policy).messages.length;
}
