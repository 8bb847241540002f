/**
 * `persist: true` beside `humanInTheLoopMiddleware`: a rejected tool call sends the run back to
 * the model with `jumpTo: "model"`, past every `beforeModel` hook, while a call made beside it that
 * needed no approval stays in the AI message without a result. The stored thread must be repaired
 * in that same turn, as the model saw it, and the dangling call counted once.
 */
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { Command, MemorySaver } from "@langchain/langgraph";
import {
  type AgentMiddleware,
  createAgent,
  createMiddleware,
  humanInTheLoopMiddleware,
  tool,
} from "langchain";
import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { danglingToolCallMiddleware, type RepairLogger } from "../src/index.js";
import { MIDDLEWARE_NAME } from "../src/middleware.js";
import {
  ATTR_OUTCOME,
  ATTR_REPAIR_KIND,
  METRIC_DANGLING_TOOL_CALLS,
  METRIC_MODEL_CALLS,
  METRIC_REPAIRS,
} from "../src/telemetry/semconv.js";
import {
  aiAnswer,
  aiToolCall,
  humanTurn,
  onThread,
  receivedBy,
  scriptedModel,
  searchTool,
  storedMessages,
} from "./helpers/agent.js";
import { shapeOf } from "./helpers/history.js";
import { metricsHarness } from "./helpers/telemetry.js";

/** When set, the engine throws this instead of repairing. */
const engine = vi.hoisted(() => ({ fault: undefined as Error | undefined }));

vi.mock("../src/core/repair.js", async (importOriginal) => {
  const actual = await importOriginal<typeof import("../src/core/repair.js")>();
  return {
    ...actual,
    repairHistory: (...args: Parameters<typeof actual.repairHistory>) => {
      if (engine.fault !== undefined) throw engine.fault;
      return actual.repairHistory(...args);
    },
  };
});

afterEach(() => {
  engine.fault = undefined;
});

const SEARCH_CALL = { id: "call_search", name: "search", args: { query: "stale rows" } };
const DELETE_CALL = { id: "call_delete", name: "delete_records", args: { table: "users" } };
const REJECTION = "Not the users table.";
const PLACEHOLDER_TEXT = "[Tool call was interrupted and did not return a result.]";

const deleteRecordsTool = tool(async () => "deleted", {
  name: "delete_records",
  description: "Deletes records.",
  schema: z.object({ table: z.string() }),
});

/** The placeholder of the search call, as the model received it or the thread stored it. */
function searchPlaceholderIn(messages: readonly BaseMessage[]): ToolMessage | undefined {
  return messages.find(
    (message): message is ToolMessage =>
      ToolMessage.isInstance(message) && message.tool_call_id === SEARCH_CALL.id,
  );
}

/** Every tool call of the AI messages that no tool message answers. */
function unansweredCalls(messages: readonly BaseMessage[]): string[] {
  const answered = new Set(
    messages.filter(ToolMessage.isInstance).map((message) => message.tool_call_id),
  );
  return messages
    .flatMap((message) => (AIMessage.isInstance(message) ? (message.tool_calls ?? []) : []))
    .map((call) => call.id ?? "")
    .filter((id) => !answered.has(id));
}

/**
 * An agent whose model calls `search` (no approval needed) and `delete_records` (approval needed)
 * at once, then answers each later turn with text; `order` says which middleware is listed first.
 */
function reviewedAgent(
  order: "review first" | "repair first" = "review first",
  after: readonly AgentMiddleware[] = [],
) {
  const logger = {
    warn: vi.fn<RepairLogger["warn"]>(),
    error: vi.fn<NonNullable<RepairLogger["error"]>>(),
    debug: vi.fn<NonNullable<RepairLogger["debug"]>>(),
  };
  const metrics = metricsHarness();
  const model = scriptedModel(
    aiToolCall("a1", SEARCH_CALL, DELETE_CALL),
    aiAnswer("a2", "Understood, I won't delete anything."),
    aiAnswer("a3", "Anything else?"),
  );
  const review = humanInTheLoopMiddleware({ interruptOn: { delete_records: true } });
  const repair = danglingToolCallMiddleware({
    persist: true,
    logger,
    meterProvider: metrics.meterProvider,
  });
  const middleware: AgentMiddleware[] =
    order === "review first" ? [review, repair, ...after] : [repair, review, ...after];
  const agent = createAgent({
    model,
    tools: [searchTool(), deleteRecordsTool],
    checkpointer: new MemorySaver(),
    middleware,
  });
  return { agent, model, logger, metrics };
}

/** Runs the turn up to the review, then resumes it with the deletion rejected. */
async function rejectDeletion(agent: ReturnType<typeof reviewedAgent>["agent"], threadId: string) {
  const interrupted = await agent.invoke(
    { messages: [humanTurn("h1", "Find stale rows, then delete users.")] },
    onThread(threadId),
  );
  expect(interrupted).toHaveProperty("__interrupt__");
  return agent.invoke(
    new Command({ resume: { decisions: [{ type: "reject", message: REJECTION }] } }),
    onThread(threadId),
  );
}

describe("persist: true with a tool call rejected in human review", () => {
  it("stores the placeholder of the call that never ran in the same turn, as the model saw it", async () => {
    const { agent, model, logger } = reviewedAgent();

    await rejectDeletion(agent, "rejected");

    // The search call was approved by default and kept in the AI message, but the rejection sent
    // the run straight back to the model, so the search tool never ran.
    expect(model.callCount).toBe(2);
    const received = receivedBy(model, 1);
    expect(unansweredCalls(received)).toEqual([]);
    const seen = searchPlaceholderIn(received);
    expect(seen?.content).toBe(PLACEHOLDER_TEXT);

    const stored = await storedMessages(agent, "rejected");
    expect(unansweredCalls(stored)).toEqual([]);
    expect(shapeOf(stored)).toEqual([...shapeOf(received), "ai"]);
    const kept = searchPlaceholderIn(stored);
    expect(kept?.content).toBe(PLACEHOLDER_TEXT);
    expect(kept?.status).toBe("error");
    expect(kept?.name).toBe(SEARCH_CALL.name);
    expect(kept?.response_metadata).toEqual({ synthetic: true, synthetic_reason: "interrupted" });
    expect(stored.find((message) => message.id === "a2")?.content).toBe(
      "Understood, I won't delete anything.",
    );
    const rejection = stored.find(
      (message) => ToolMessage.isInstance(message) && message.tool_call_id === DELETE_CALL.id,
    );
    expect(rejection?.content).toBe(REJECTION);
    expect(logger.warn).toHaveBeenCalledTimes(1);
  });

  it("stores it also when the repair middleware is listed before the review", async () => {
    const { agent, model } = reviewedAgent("repair first");

    await rejectDeletion(agent, "rejected-after");

    const stored = await storedMessages(agent, "rejected-after");
    expect(unansweredCalls(stored)).toEqual([]);
    expect(shapeOf(stored)).toEqual([...shapeOf(receivedBy(model, 1)), "ai"]);
  });

  it("counts the dangling call once, and the next turn finds the thread clean", async () => {
    const { agent, model, logger, metrics } = reviewedAgent();

    await rejectDeletion(agent, "counted");
    await agent.invoke({ messages: [humanTurn("h2", "No, thanks.")] }, onThread("counted"));

    expect(model.callCount).toBe(3);
    expect(shapeOf(receivedBy(model, 2))).toEqual(
      shapeOf(await storedMessages(agent, "counted")).slice(0, -1),
    );
    expect(await metrics.sum(METRIC_DANGLING_TOOL_CALLS)).toBe(1);
    expect(await metrics.sum(METRIC_REPAIRS, { [ATTR_REPAIR_KIND]: "placeholder_inserted" })).toBe(
      1,
    );
    expect(await metrics.sum(METRIC_MODEL_CALLS, { [ATTR_OUTCOME]: "repaired" })).toBe(1);
    expect(await metrics.sum(METRIC_MODEL_CALLS, { [ATTR_OUTCOME]: "clean" })).toBe(2);
    expect(logger.warn).toHaveBeenCalledTimes(1);
    expect(logger.debug).not.toHaveBeenCalled();
  });

  it("writes nothing after a model call whose request needed no repair", async () => {
    const { agent } = reviewedAgent();

    await agent.invoke({ messages: [new HumanMessage("Hello")] }, onThread("approved"));
    await agent.invoke(
      new Command({ resume: { decisions: [{ type: "approve" }] } }),
      onThread("approved"),
    );

    const writes: unknown[] = [];
    for await (const snapshot of agent.graph.getStateHistory(onThread("approved"))) {
      for (const task of snapshot.tasks) {
        if (task.name === `${MIDDLEWARE_NAME}.after_model`) writes.push(task.result);
      }
    }
    // The hook ran after both model calls, and wrote nothing either time.
    expect(writes).toHaveLength(2);
    for (const written of writes) expect(written ?? {}).not.toHaveProperty("messages");
    const stored = await storedMessages(agent, "approved");
    expect(shapeOf(stored)).toEqual([
      "human",
      "ai(call_search,call_delete)",
      "tool(call_search)",
      "tool(call_delete)",
      "ai",
    ]);
  });

  it("finishes the run, and logs, when writing the repair fails", async () => {
    // Listed after the repair middleware, its wrapModelCall gets the repaired request: the engine
    // breaks once the model call after the review has been repaired.
    const breakEngine = createMiddleware({
      name: "BreakEngine",
      wrapModelCall: (request, handler) => {
        if (request.messages.some(ToolMessage.isInstance)) engine.fault = new Error("engine bug");
        return handler(request);
      },
    });
    const { agent, logger } = reviewedAgent("review first", [breakEngine]);

    const state = await rejectDeletion(agent, "failing");

    expect(state.messages.at(-1)?.content).toBe("Understood, I won't delete anything.");
    expect(logger.error).toHaveBeenCalledWith(
      expect.stringContaining("failed; passing the messages on unchanged"),
      expect.objectContaining({ error: engine.fault }),
    );
    // Left as the model node stored it, for the next beforeModel hook to repair.
    expect(unansweredCalls(await storedMessages(agent, "failing"))).toEqual([SEARCH_CALL.id]);
  });
});
