/**
 * Telemetry of the middleware inside a real `createAgent`: the agent's name, `persist`, and a
 * thread that moves to another process (two agents sharing one checkpointer, each with its own
 * memory of what it counted).
 */

import { HumanMessage } from "@langchain/core/messages";
import { MemorySaver } from "@langchain/langgraph";
import { type AgentMiddleware, createAgent, createMiddleware } from "langchain";
import { describe, expect, it } from "vitest";
import { danglingToolCallMiddleware } from "../src/index.js";
import {
  ATTR_GEN_AI_AGENT_NAME,
  ATTR_OUTCOME,
  ATTR_REPAIR_KIND,
  METRIC_DANGLING_TOOL_CALLS,
  METRIC_MODEL_CALLS,
  METRIC_REPAIRS,
  METRIC_THREAD_RECENT_DANGLING_TOOL_CALLS,
  SPAN_REPAIR_TOOL_CALLS,
} from "../src/telemetry/semconv.js";
import {
  abortMidTool,
  aiAnswer,
  aiToolCall,
  humanTurn,
  onThread,
  scriptedModel,
  stallingSearchTool,
} from "./helpers/agent.js";
import { metricsHarness, tracingHarness } from "./helpers/telemetry.js";

const SEARCH_CALL = { id: "call_search", name: "search", args: { query: "weather" } };

/** An agent over a model that calls search once, then answers each later turn with text. */
function brokenThreadAgent(options: {
  readonly persist?: boolean;
  readonly after?: readonly AgentMiddleware[];
  readonly checkpointer?: MemorySaver;
  readonly turns?: number;
  readonly countOnceMemory?: number;
}) {
  const metrics = metricsHarness();
  const tracing = tracingHarness();
  const answers = Array.from({ length: options.turns ?? 3 }, (_, turn) =>
    aiAnswer(`answer_${turn}`, `answer ${turn}`),
  );
  const model = Object.assign(scriptedModel(aiToolCall("ai_call", SEARCH_CALL), ...answers), {
    model: "fake-gpt",
  });
  const { tool, started } = stallingSearchTool();
  const agent = createAgent({
    model,
    tools: [tool],
    checkpointer: options.checkpointer ?? new MemorySaver(),
    middleware: [
      danglingToolCallMiddleware({
        logger: false,
        persist: options.persist ?? false,
        countOnceMemory: options.countOnceMemory,
        meterProvider: metrics.meterProvider,
        tracerProvider: tracing.tracerProvider,
      }),
      ...(options.after ?? []),
    ],
  });
  return { agent, metrics, tracing, started };
}

describe("telemetry in createAgent", () => {
  it("records the name given to createAgent as gen_ai.agent.name", async () => {
    const metrics = metricsHarness();
    const agent = createAgent({
      name: "support_agent",
      model: scriptedModel(aiAnswer("answer", "hello")),
      tools: [],
      middleware: [
        danglingToolCallMiddleware({ logger: false, meterProvider: metrics.meterProvider }),
      ],
    });
    await agent.invoke({ messages: [humanTurn("h1", "hi")] });
    const points = await metrics.points(METRIC_MODEL_CALLS);
    expect(points.map((point) => point.attributes[ATTR_GEN_AI_AGENT_NAME])).toEqual([
      "support_agent",
    ]);
  });

  it("without persist, repairs each later call and counts the dangling call once", async () => {
    const { agent, metrics, tracing, started } = brokenThreadAgent({});
    await abortMidTool(agent, started, "thread-a", humanTurn("h1", "search the weather"));
    for (const turn of [2, 3]) {
      await agent.invoke({ messages: [humanTurn(`h${turn}`, "and now?")] }, onThread("thread-a"));
    }
    expect(await metrics.sum(METRIC_MODEL_CALLS, { [ATTR_OUTCOME]: "clean" })).toBe(1);
    expect(await metrics.sum(METRIC_MODEL_CALLS, { [ATTR_OUTCOME]: "repaired" })).toBe(2);
    expect(await metrics.sum(METRIC_REPAIRS, { [ATTR_REPAIR_KIND]: "placeholder_inserted" })).toBe(
      2,
    );
    expect(await metrics.sum(METRIC_DANGLING_TOOL_CALLS)).toBe(1);
    expect(await metrics.sum(METRIC_THREAD_RECENT_DANGLING_TOOL_CALLS)).toBe(1);
    expect(tracing.spans(SPAN_REPAIR_TOOL_CALLS)).toHaveLength(2);
  });

  it("with persist, repairs once, counts once, and later calls are clean", async () => {
    const { agent, metrics, tracing, started } = brokenThreadAgent({ persist: true });
    await abortMidTool(agent, started, "thread-p", humanTurn("h1", "search the weather"));
    for (const turn of [2, 3]) {
      await agent.invoke({ messages: [humanTurn(`h${turn}`, "and now?")] }, onThread("thread-p"));
    }
    expect(await metrics.sum(METRIC_MODEL_CALLS, { [ATTR_OUTCOME]: "clean" })).toBe(2);
    expect(await metrics.sum(METRIC_MODEL_CALLS, { [ATTR_OUTCOME]: "repaired" })).toBe(1);
    // The one repaired call: the placeholder, and the reply turn before h2.
    expect(await metrics.sum(METRIC_REPAIRS, { [ATTR_REPAIR_KIND]: "placeholder_inserted" })).toBe(
      1,
    );
    expect(await metrics.sum(METRIC_REPAIRS, { [ATTR_REPAIR_KIND]: "turn_inserted" })).toBe(1);
    expect(await metrics.sum(METRIC_REPAIRS)).toBe(2);
    expect(await metrics.sum(METRIC_DANGLING_TOOL_CALLS)).toBe(1);
    const spans = tracing.spans(SPAN_REPAIR_TOOL_CALLS);
    expect(spans).toHaveLength(1);
    expect(spans[0]?.attributes["gen_ai.request.model"]).toBe("fake-gpt");
  });

  it("with persist, counts the repair when a later middleware rewrites the last message", async () => {
    // A beforeModel hook after this one that replaces the last message under the same id.
    const annotate = createMiddleware({
      name: "Annotate",
      beforeModel: (state) => {
        const last = state.messages.at(-1);
        if (!HumanMessage.isInstance(last) || String(last.content).endsWith("(annotated)")) {
          return undefined;
        }
        return {
          messages: [new HumanMessage({ id: last.id, content: `${last.content} (annotated)` })],
        };
      },
    });
    const { agent, metrics, started } = brokenThreadAgent({ persist: true, after: [annotate] });
    await abortMidTool(agent, started, "thread-r", humanTurn("h1", "search the weather"));
    for (const turn of [2, 3]) {
      await agent.invoke({ messages: [humanTurn(`h${turn}`, "and now?")] }, onThread("thread-r"));
    }
    expect(await metrics.sum(METRIC_MODEL_CALLS, { [ATTR_OUTCOME]: "repaired" })).toBe(1);
    expect(await metrics.sum(METRIC_DANGLING_TOOL_CALLS)).toBe(1);
    expect(await metrics.sum(METRIC_REPAIRS, { [ATTR_REPAIR_KIND]: "placeholder_inserted" })).toBe(
      1,
    );
    expect(await metrics.sum(METRIC_REPAIRS, { [ATTR_REPAIR_KIND]: "turn_inserted" })).toBe(1);
    expect(await metrics.sum(METRIC_REPAIRS)).toBe(2);
  });

  describe("a thread that moves to another process", () => {
    /** The first process breaks the thread and goes on once; the second goes on from the store. */
    async function moveThread(persist: boolean) {
      const checkpointer = new MemorySaver();
      const first = brokenThreadAgent({ persist, checkpointer, turns: 1, countOnceMemory: 100 });
      await abortMidTool(first.agent, first.started, "moving", humanTurn("h1", "search"));
      await first.agent.invoke({ messages: [humanTurn("h2", "and?")] }, onThread("moving"));
      const second = brokenThreadAgent({ persist, checkpointer, turns: 2, countOnceMemory: 100 });
      for (const turn of [3, 4]) {
        await second.agent.invoke(
          { messages: [humanTurn(`h${turn}`, "still there?")] },
          onThread("moving"),
        );
      }
      return {
        dangling: [
          await first.metrics.sum(METRIC_DANGLING_TOOL_CALLS),
          await second.metrics.sum(METRIC_DANGLING_TOOL_CALLS),
        ],
        repairs: [
          await first.metrics.sum(METRIC_REPAIRS),
          await second.metrics.sum(METRIC_REPAIRS),
        ],
        turns: [
          await first.metrics.sum(METRIC_REPAIRS, { [ATTR_REPAIR_KIND]: "turn_inserted" }),
          await second.metrics.sum(METRIC_REPAIRS, { [ATTR_REPAIR_KIND]: "turn_inserted" }),
        ],
      };
    }

    it("is not counted again by the next process without persist: the first answered over it", async () => {
      // The next process's memory has never seen the call, but the first process's answer to h2
      // follows it in the history: that model call carried it, and counted it. It is still
      // repaired on each of the next process's model calls: its placeholder, and the reply turn
      // before h2.
      expect(await moveThread(false)).toEqual({ dangling: [1, 0], repairs: [2, 4], turns: [1, 2] });
    });

    it("is counted once anywhere with persist, as the repair is in the checkpoint", async () => {
      expect((await moveThread(true)).dangling).toEqual([1, 0]);
    });
  });
});
