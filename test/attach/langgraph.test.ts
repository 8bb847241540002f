/**
 * withToolCallRepair in the LangGraph stacks people run without createAgent: a StateGraph of
 * their own with a ToolNode, and the prebuilt createReactAgent. The model is the real ChatOpenAI
 * client, pointed at the strict local server, and every thread dangles for real: its first run is
 * aborted while the tool runs, then the user writes again.
 */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { type BaseMessage, HumanMessage } from "@langchain/core/messages";
import { END, MemorySaver, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { createReactAgent, ToolNode, toolsCondition } from "@langchain/langgraph/prebuilt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withToolCallRepair } from "../../src/index.js";
import {
  METRIC_DANGLING_TOOL_CALLS,
  METRIC_THREAD_RECENT_DANGLING_TOOL_CALLS,
} from "../../src/telemetry/semconv.js";
import { abortMidTool, onThread, stallingSearchTool } from "../helpers/agent.js";
import { chatOpenAIOn } from "../helpers/provider-clients.js";
import { openAIViolations } from "../helpers/provider-rules.js";
import {
  COMPLETION_TEXT,
  SEARCH_PROMPT,
  type StrictProviderServer,
  startStrictProviderServer,
} from "../helpers/strict-provider-server.js";
import { metricsHarness } from "../helpers/telemetry.js";

const DANGLING_TEXT =
  "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'";

let server: StrictProviderServer;
beforeAll(async () => {
  server = await startStrictProviderServer();
});
afterAll(async () => {
  await server.close();
});

const chatOpenAI = () => chatOpenAIOn(server);

interface Graph {
  invoke(input: { messages: BaseMessage[] }, config: object): Promise<{ messages: BaseMessage[] }>;
}

/** A graph of one's own: the model node and a ToolNode, looping until the model answers. */
function customGraph(model: BaseChatModel, tools: ReturnType<typeof stallingSearchTool>["tool"][]) {
  const bound = model.bindTools?.(tools);
  if (bound === undefined) throw new Error("the model cannot bind tools");
  return new StateGraph(MessagesAnnotation)
    .addNode("agent", async (state) => ({ messages: [await bound.invoke(state.messages)] }))
    .addNode("tools", new ToolNode(tools))
    .addEdge(START, "agent")
    .addConditionalEdges("agent", toolsCondition, ["tools", END])
    .addEdge("tools", "agent")
    .compile({ checkpointer: new MemorySaver() });
}

function reactAgent(model: BaseChatModel, tools: ReturnType<typeof stallingSearchTool>["tool"][]) {
  return createReactAgent({ llm: model, tools, checkpointSaver: new MemorySaver() });
}

/** Runs the first turn until its tool runs, then aborts: the thread keeps a dangling call. */
async function leaveDangling(graph: Graph, started: Promise<void>, threadId: string) {
  const message = new HumanMessage(`${SEARCH_PROMPT}cats`);
  expect(await abortMidTool(graph, started, threadId, message)).toMatchObject({
    name: "AbortError",
  });
}

const stacks = {
  "a StateGraph with a ToolNode": customGraph,
  "createReactAgent from @langchain/langgraph/prebuilt": reactAgent,
} as const;

describe.each(Object.entries(stacks))("in %s", (_name, build) => {
  it("a dangling thread gets OpenAI's 400 without the wrapper", async () => {
    const { tool, started } = stallingSearchTool();
    const graph = build(chatOpenAI(), [tool]) as unknown as Graph;
    await leaveDangling(graph, started, "bare");
    await expect(
      graph.invoke({ messages: [new HumanMessage("Any news?")] }, onThread("bare")),
    ).rejects.toThrow(DANGLING_TEXT);
  });

  it("and an answer with it, the placeholder right after the call in the body", async () => {
    const { tool, started } = stallingSearchTool();
    const model = withToolCallRepair(chatOpenAI(), { logger: false });
    const graph = build(model, [tool]) as unknown as Graph;
    await leaveDangling(graph, started, "wrapped");
    const sentBefore = server.received.length;
    const result = await graph.invoke(
      { messages: [new HumanMessage("Any news?")] },
      onThread("wrapped"),
    );
    expect(result.messages.at(-1)?.content).toBe(COMPLETION_TEXT);
    const [request] = server.received.slice(sentBefore);
    expect(request?.status).toBe(200);
    const sent = request?.body.messages ?? [];
    expect(openAIViolations(sent)).toEqual([]);
    expect(sent.map((message) => (message as { role: string }).role)).toEqual([
      "user",
      "assistant",
      "tool",
      "user",
    ]);
    // The synthetic marker stays on our side of the wire.
    expect(request?.raw).not.toContain("synthetic");
  });

  it("records the dangling call under the graph's thread, which the node never passes on", async () => {
    const harness = metricsHarness();
    const { tool, started } = stallingSearchTool();
    const model = withToolCallRepair(chatOpenAI(), {
      logger: false,
      meterProvider: harness.meterProvider,
    });
    const graph = build(model, [tool]) as unknown as Graph;
    await leaveDangling(graph, started, "counted");
    await graph.invoke({ messages: [new HumanMessage("Any news?")] }, onThread("counted"));
    expect(
      await harness.sum(METRIC_THREAD_RECENT_DANGLING_TOOL_CALLS, {
        "gen_ai.conversation.id": "counted",
        "gen_ai.request.model": "gpt-4.1",
      }),
    ).toBe(1);
    // The tools the stack bound are the labels, not _OTHER.
    expect(await harness.sum(METRIC_DANGLING_TOOL_CALLS, { "gen_ai.tool.name": "search" })).toBe(1);
    await harness.shutdown();
  });
});
