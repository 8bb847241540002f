/**
 * A call is one call by the AI message that made it, the history it lives in, and its id; never
 * by its id alone. Providers and self-hosted servers reuse short ids such as `call_0`, and agents
 * invoked from a tool share their parent's `thread_id`.
 *
 * The ground truth is worked out from the scripts: every call of an aborted turn dangles, each is
 * one dangling call however often its id was used before, and without `persist` every later model
 * call of the thread repairs every dangling call the thread holds again.
 */
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { MemorySaver, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { createAgent } from "langchain";
import { describe, expect, it } from "vitest";
import { danglingToolCallMiddleware, withToolCallRepair } from "../../src/index.js";
import {
  ATTR_GEN_AI_AGENT_NAME,
  ATTR_GEN_AI_CONVERSATION_ID,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_OUTCOME,
  ATTR_REPAIR_KIND,
  METRIC_DANGLING_TOOL_CALLS,
  METRIC_MODEL_CALLS,
  METRIC_REPAIRS,
  METRIC_THREAD_RECENT_DANGLING_TOOL_CALLS,
  METRIC_TOOL_CALLS,
  REPAIR_KIND_VALUE_PLACEHOLDER_INSERTED,
  REPAIR_KIND_VALUE_TURN_INSERTED,
} from "../../src/telemetry/semconv.js";
import {
  abortMidTool,
  aiAnswer,
  aiToolCall,
  humanTurn,
  onThread,
  scriptedModel,
  stallingTool,
} from "../helpers/agent.js";
import { metricsHarness } from "../helpers/telemetry.js";

const THREAD = "reused-ids";
const MODEL = "fake-gpt";
/** The series of the thread's model, and of `search` on it. */
const ON_MODEL = { [ATTR_GEN_AI_REQUEST_MODEL]: MODEL };
const SEARCH_ON_MODEL = { ...ON_MODEL, [ATTR_GEN_AI_TOOL_NAME]: "search" };
const CALL_0 = { id: "call_0", name: "search", args: { query: "weather" } };
const PLACEHOLDERS = { [ATTR_REPAIR_KIND]: REPAIR_KIND_VALUE_PLACEHOLDER_INSERTED };
const REPLIES = { [ATTR_REPAIR_KIND]: REPAIR_KIND_VALUE_TURN_INSERTED };

/**
 * One thread whose model names its call `call_0` on every turn: turns 1 and 2 are aborted while
 * `search` runs, so `ai_1`'s and `ai_2`'s `call_0` both dangle; turn 3 is answered with text.
 */
async function reusedIdThread(persist: boolean) {
  const harness = metricsHarness();
  const search = stallingTool("search");
  const agent = createAgent({
    name: "forecaster",
    model: Object.assign(
      scriptedModel(
        aiToolCall("ai_1", CALL_0),
        aiToolCall("ai_2", CALL_0),
        aiAnswer("ai_3", "Sorry, the search keeps failing."),
      ),
      { model: MODEL },
    ),
    tools: [search.tool],
    checkpointer: new MemorySaver(),
    middleware: [
      danglingToolCallMiddleware({ persist, logger: false, meterProvider: harness.meterProvider }),
    ],
  });
  await abortMidTool(agent, search.nextStart(), THREAD, humanTurn("h1", "Weather?"));
  await abortMidTool(agent, search.nextStart(), THREAD, humanTurn("h2", "Weather, again?"));
  await agent.invoke({ messages: [humanTurn("h3", "Well?")] }, onThread(THREAD));
  return harness;
}

describe("a call id reused on one thread", () => {
  it("is two dangling calls when it dangles on two turns (without persist)", async () => {
    const harness = await reusedIdThread(false);
    // Ground truth: the model issued call_0 twice (ai_1, ai_2), and both dangle.
    expect(await harness.sum(METRIC_TOOL_CALLS, SEARCH_ON_MODEL)).toBe(2);
    expect(await harness.sum(METRIC_DANGLING_TOOL_CALLS, SEARCH_ON_MODEL)).toBe(2);
    expect(await harness.sum(METRIC_DANGLING_TOOL_CALLS)).toBe(2);
    expect(
      await harness.sum(METRIC_THREAD_RECENT_DANGLING_TOOL_CALLS, {
        ...ON_MODEL,
        [ATTR_GEN_AI_CONVERSATION_ID]: THREAD,
      }),
    ).toBe(2);
    // Turn 2's call repairs ai_1's call_0; turn 3's repairs both: 1 + 2 placeholders, each
    // followed by a synthetic reply before the user's next message (the fake model's wire is any).
    expect(await harness.sum(METRIC_REPAIRS, { ...ON_MODEL, ...PLACEHOLDERS })).toBe(3);
    expect(await harness.sum(METRIC_REPAIRS, { ...ON_MODEL, ...REPLIES })).toBe(3);
    expect(await harness.sum(METRIC_REPAIRS, ON_MODEL)).toBe(6);
    // Three model calls, one per turn: turn 1 clean, turns 2 and 3 repaired.
    const forecaster = { ...ON_MODEL, [ATTR_GEN_AI_AGENT_NAME]: "forecaster" };
    expect(await harness.sum(METRIC_MODEL_CALLS, { ...forecaster, [ATTR_OUTCOME]: "clean" })).toBe(
      1,
    );
    expect(
      await harness.sum(METRIC_MODEL_CALLS, { ...forecaster, [ATTR_OUTCOME]: "repaired" }),
    ).toBe(2);
  });

  it("is two dangling calls with persist, each counted by the turn that wrote its repair", async () => {
    const harness = await reusedIdThread(true);
    expect(await harness.sum(METRIC_TOOL_CALLS, SEARCH_ON_MODEL)).toBe(2);
    expect(await harness.sum(METRIC_DANGLING_TOOL_CALLS, SEARCH_ON_MODEL)).toBe(2);
    expect(await harness.sum(METRIC_DANGLING_TOOL_CALLS)).toBe(2);
    expect(
      await harness.sum(METRIC_THREAD_RECENT_DANGLING_TOOL_CALLS, {
        [ATTR_GEN_AI_CONVERSATION_ID]: THREAD,
      }),
    ).toBe(2);
    // Turn 2 writes ai_1's placeholder and the reply after it, turn 3 ai_2's: each repair is
    // made once.
    expect(await harness.sum(METRIC_REPAIRS, PLACEHOLDERS)).toBe(2);
    expect(await harness.sum(METRIC_REPAIRS, REPLIES)).toBe(2);
    expect(await harness.sum(METRIC_REPAIRS)).toBe(4);
  });
});

describe("sub-graphs that share a thread id", () => {
  it("count the dangling call_0 of each one's history", async () => {
    const harness = metricsHarness();
    const model = withToolCallRepair(
      scriptedModel(aiAnswer("research_answer", "found"), aiAnswer("write_answer", "written")),
      { logger: false, meterProvider: harness.meterProvider },
    );
    // Each sub-graph builds a history of its own, as plain messages without ids, and calls the
    // model on it: its call_0 dangles. The two AI messages stand at the same position with the
    // same call id, on the same thread: only the namespace of the graph tells them apart.
    const subGraph = (topic: string) =>
      new StateGraph(MessagesAnnotation)
        .addNode("agent", async () => ({
          messages: [
            await model.invoke([
              new HumanMessage(`Look into ${topic}.`),
              new AIMessage({ content: "", tool_calls: [{ ...CALL_0, args: { query: topic } }] }),
              new HumanMessage("Go on."),
            ]),
          ],
        }))
        .addEdge(START, "agent")
        .compile();
    const parent = new StateGraph(MessagesAnnotation)
      .addNode("research", subGraph("flights"))
      .addNode("write", subGraph("hotels"))
      .addEdge(START, "research")
      .addEdge("research", "write")
      .compile({ checkpointer: new MemorySaver() });

    await parent.invoke({ messages: [humanTurn("h1", "Plan a trip.")] }, onThread(THREAD));

    // Ground truth: two histories, each with one AI message whose call_0 has no result, and a
    // user message after it: a placeholder and a synthetic reply each.
    expect(await harness.sum(METRIC_DANGLING_TOOL_CALLS)).toBe(2);
    expect(
      await harness.sum(METRIC_THREAD_RECENT_DANGLING_TOOL_CALLS, {
        [ATTR_GEN_AI_CONVERSATION_ID]: THREAD,
      }),
    ).toBe(2);
    expect(await harness.sum(METRIC_REPAIRS, PLACEHOLDERS)).toBe(2);
    expect(await harness.sum(METRIC_REPAIRS, REPLIES)).toBe(2);
    expect(await harness.sum(METRIC_REPAIRS)).toBe(4);
  });
});
