/**
 * Builders for integration tests against a real `createAgent`: a fake model with a queue of
 * answers, tools that break a run the way production runs break (an abort mid-tool, an interrupt
 * left unanswered), and readers for what the model received and what the thread stored.
 */
import { AIMessage, type BaseMessage, HumanMessage } from "@langchain/core/messages";
import { type FakeBuiltModel, fakeModel } from "@langchain/core/testing";
import { Command, interrupt, MemorySaver } from "@langchain/langgraph";
import { type AgentMiddleware, createAgent, humanInTheLoopMiddleware, tool } from "langchain";
import { z } from "zod";

/** What a tool-calling AI message answer looks like, as the tests queue it. */
export interface QueuedCall {
  readonly id: string;
  readonly name: string;
  readonly args: Record<string, unknown>;
}

/**
 * An AI message that makes tool calls, with an explicit message id. `respondWithTools` would give
 * the message the model-call index as id, so two runs on one thread would overwrite each other.
 */
export function aiToolCall(messageId: string, ...calls: QueuedCall[]): AIMessage {
  return new AIMessage({
    id: messageId,
    content: "",
    tool_calls: calls.map((call) => ({ ...call, type: "tool_call" as const })),
  });
}

/** A final AI answer with an explicit message id. */
export function aiAnswer(messageId: string, text: string): AIMessage {
  return new AIMessage({ id: messageId, content: text });
}

/** A human message with an explicit id, so stored ids can be compared across invokes. */
export function humanTurn(messageId: string, text: string): HumanMessage {
  return new HumanMessage({ id: messageId, content: text });
}

/** A fake model that gives these answers (an `Error` is thrown), in order. */
export function scriptedModel(...answers: (BaseMessage | Error)[]): FakeBuiltModel {
  const model = fakeModel();
  for (const answer of answers) model.respond(answer);
  return model;
}

/** What the model received on its `index`-th call (0-based); fails the test if there was none. */
export function receivedBy(model: FakeBuiltModel, index: number): BaseMessage[] {
  const call = model.calls[index];
  if (call === undefined) {
    throw new Error(`the model was called ${model.callCount} time(s); no call #${index}`);
  }
  return call.messages;
}

/** The invoke config of a thread. */
export function onThread(threadId: string) {
  return { configurable: { thread_id: threadId } };
}

/** A `search` tool that answers at once. */
export function searchTool() {
  return tool(async ({ query }) => `results for ${query}`, {
    name: "search",
    description: "Searches the web.",
    schema: z.object({ query: z.string() }),
  });
}

/**
 * A tool that stalls until its run is aborted (or 2 s pass), each time it runs. `nextStart()`
 * resolves as soon as the tool next runs, so a test can abort at a known point instead of after a
 * guessed delay.
 */
export function stallingTool(name: string) {
  let waiting: (() => void) | undefined;
  let nextStart = new Promise<void>((resolve) => {
    waiting = resolve;
  });
  const stalling = tool(
    async ({ query }, config) => {
      waiting?.();
      nextStart = new Promise<void>((resolve) => {
        waiting = resolve;
      });
      await new Promise<void>((resolve, reject) => {
        const signal = config.signal;
        const timer = setTimeout(resolve, 2_000);
        const onAbort = () => {
          clearTimeout(timer);
          reject(signal?.reason ?? new Error("aborted"));
        };
        if (signal?.aborted) onAbort();
        else signal?.addEventListener("abort", onAbort, { once: true });
      });
      return `results for ${query}`;
    },
    {
      name,
      description: `${name}, slowly.`,
      schema: z.object({ query: z.string() }),
    },
  );
  return { tool: stalling, nextStart: () => nextStart };
}

/** A `search` tool that stalls until its run is aborted; `started` resolves when it first runs. */
export function stallingSearchTool() {
  const { tool: stalling, nextStart } = stallingTool("search");
  return { tool: stalling, started: nextStart() };
}

/** An `ask_user` tool that interrupts the graph to ask a human. */
export function askUserTool() {
  return tool(async ({ question }) => String(interrupt({ question })), {
    name: "ask_user",
    description: "Asks the user a question.",
    schema: z.object({ question: z.string() }),
  });
}

/** An agent over a scripted fake model, with a `MemorySaver` so threads persist. */
export function agentWith(options: {
  readonly model: FakeBuiltModel;
  readonly tools: Parameters<typeof createAgent>[0]["tools"];
  readonly middleware?: readonly AgentMiddleware[];
}) {
  return createAgent({
    model: options.model,
    tools: options.tools ?? [],
    checkpointer: new MemorySaver(),
    middleware: options.middleware ?? [],
  });
}

/** The smallest surface of an agent these helpers need. */
export interface ThreadedAgent {
  invoke(input: { messages: BaseMessage[] }, config: object): Promise<unknown>;
  readonly graph: {
    getState(config: { configurable: { thread_id: string } }): Promise<{
      values: unknown;
    }>;
  };
}

/** The messages stored on a thread. */
export async function storedMessages(agent: ThreadedAgent, threadId: string) {
  const { values } = await agent.graph.getState(onThread(threadId));
  return (values as { messages?: BaseMessage[] }).messages ?? [];
}

/**
 * Starts a run on the thread, aborts it while the stalling tool runs, and returns the error the
 * run ended with. The thread is left as `[human, ai(tool_calls)]`: every call of that AI message
 * dangles, even one whose tool finished before the abort, since the tools step failed as a whole
 * (its finished results may show as pending writes until the next run drops them).
 */
export async function abortMidTool(
  agent: Pick<ThreadedAgent, "invoke">,
  started: Promise<void>,
  threadId: string,
  message: BaseMessage,
): Promise<unknown> {
  const controller = new AbortController();
  const run = agent.invoke(
    { messages: [message] },
    { ...onThread(threadId), signal: controller.signal },
  );
  const outcome = run.then(
    () => undefined,
    (error: unknown) => error,
  );
  await Promise.race([started, outcome]);
  controller.abort();
  return outcome;
}

/** Tools for an approval flow: both need a human's approval before they run. */
const sendEmailTool = tool(async () => "sent", {
  name: "send_email",
  description: "Sends an email.",
  schema: z.object({ to: z.string() }),
});
const deleteRecordsTool = tool(async () => "deleted", {
  name: "delete_records",
  description: "Deletes records.",
  schema: z.object({ table: z.string() }),
});

/** The parallel calls a model makes in the approval flow: the email, then the deletion. */
export const APPROVAL_CALLS: readonly QueuedCall[] = [
  { id: "c_email", name: "send_email", args: { to: "ops" } },
  { id: "c_delete", name: "delete_records", args: { table: "users" } },
];

/** What the human says when rejecting the deletion. */
export const REJECTION_MESSAGE = "Not the users table.";

/**
 * The approval flow of `humanInTheLoopMiddleware` on parallel calls: the model (which must make
 * {@link APPROVAL_CALLS}) calls both tools, the middleware interrupts, and the human approves the
 * email and rejects the deletion. The middleware then sets `tool_calls` to the rejected call
 * alone and goes back to the model, while the call blocks or output items a client sends still
 * hold both. Returns the state after the resumed run (its model call may throw).
 */
export async function approveEmailRejectDeletion(options: {
  readonly model: Parameters<typeof createAgent>[0]["model"];
  readonly middleware: readonly AgentMiddleware[];
  readonly threadId: string;
}) {
  const agent = createAgent({
    model: options.model,
    tools: [sendEmailTool, deleteRecordsTool],
    checkpointer: new MemorySaver(),
    middleware: [
      humanInTheLoopMiddleware({ interruptOn: { send_email: true, delete_records: true } }),
      ...options.middleware,
    ],
  });
  const thread = onThread(options.threadId);
  await agent.invoke({ messages: [new HumanMessage("Email ops, then delete users.")] }, thread);
  return agent.invoke(
    new Command({
      resume: {
        decisions: [{ type: "approve" }, { type: "reject", message: REJECTION_MESSAGE }],
      },
    }),
    thread,
  );
}
