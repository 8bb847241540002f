/**
 * `createAgent({ model: withToolCallRepair(m), middleware: [danglingToolCallMiddleware()] })`:
 * both attachments would repair and count every model call. The middleware calls the model behind
 * the wrapper instead, so each call is counted once, and it says once which attachment to drop.
 */
import { MemorySaver } from "@langchain/langgraph";
import { createAgent } from "langchain";
import { describe, expect, it } from "vitest";
import { danglingToolCallMiddleware, withToolCallRepair } from "../../src/index.js";
import { DOUBLE_ATTACHMENT_WARNING } from "../../src/middleware.js";
import {
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_OUTCOME,
  ATTR_REPAIR_KIND,
  METRIC_DANGLING_TOOL_CALLS,
  METRIC_MODEL_CALLS,
  METRIC_REPAIRS,
  METRIC_TOOL_CALLS,
  OUTCOME_VALUE_CLEAN,
  OUTCOME_VALUE_REPAIRED,
  REPAIR_KIND_VALUE_PLACEHOLDER_INSERTED,
  REPAIR_KIND_VALUE_TURN_INSERTED,
} from "../../src/telemetry/semconv.js";
import {
  abortMidTool,
  aiAnswer,
  aiToolCall,
  humanTurn,
  onThread,
  receivedBy,
  scriptedModel,
  stallingTool,
} from "../helpers/agent.js";
import { metricsHarness } from "../helpers/telemetry.js";

const CALL = { id: "call_1", name: "search", args: { query: "flights" } };
/** The warning as the logger gets it: the constant's text after the library's prefix. */
const ATTACHMENT_LINE = `[tool-call-resilience] ${DOUBLE_ATTACHMENT_WARNING}`;

describe("a model wrapped with withToolCallRepair in an agent with the middleware", () => {
  it("is repaired and counted once per model call, with one warning naming what to drop", async () => {
    const harness = metricsHarness();
    const warnings: string[] = [];
    const logger = { warn: (message: string) => void warnings.push(message) };
    const fake = Object.assign(
      scriptedModel(
        aiToolCall("ai_1", CALL),
        aiAnswer("ai_2", "No results came."),
        aiAnswer("ai_3", "Hello."),
      ),
      { model: "fake-gpt" },
    );
    const search = stallingTool("search");
    const wrapped = withToolCallRepair(fake, { logger, meterProvider: harness.meterProvider });
    const agent = createAgent({
      model: wrapped,
      tools: [search.tool],
      checkpointer: new MemorySaver(),
      middleware: [danglingToolCallMiddleware({ logger, meterProvider: harness.meterProvider })],
    });

    await abortMidTool(agent, search.nextStart(), "double", humanTurn("h1", "Flights?"));
    await agent.invoke({ messages: [humanTurn("h2", "Well?")] }, onThread("double"));

    // Ground truth: two model calls (one per turn), one tool call, which dangles.
    expect(await harness.sum(METRIC_MODEL_CALLS)).toBe(2);
    expect(await harness.sum(METRIC_MODEL_CALLS, { [ATTR_OUTCOME]: OUTCOME_VALUE_CLEAN })).toBe(1);
    expect(await harness.sum(METRIC_MODEL_CALLS, { [ATTR_OUTCOME]: OUTCOME_VALUE_REPAIRED })).toBe(
      1,
    );
    const searchOnModel = {
      [ATTR_GEN_AI_REQUEST_MODEL]: "fake-gpt",
      [ATTR_GEN_AI_TOOL_NAME]: "search",
    };
    expect(await harness.sum(METRIC_MODEL_CALLS, { [ATTR_GEN_AI_REQUEST_MODEL]: "fake-gpt" })).toBe(
      2,
    );
    expect(await harness.sum(METRIC_TOOL_CALLS, searchOnModel)).toBe(1);
    expect(await harness.sum(METRIC_TOOL_CALLS)).toBe(1);
    expect(await harness.sum(METRIC_DANGLING_TOOL_CALLS, searchOnModel)).toBe(1);
    expect(await harness.sum(METRIC_DANGLING_TOOL_CALLS)).toBe(1);
    // The repair, counted once: ai_1's placeholder, and the synthetic reply between it and h2.
    expect(await harness.sum(METRIC_REPAIRS)).toBe(2);
    expect(
      await harness.sum(METRIC_REPAIRS, {
        [ATTR_REPAIR_KIND]: REPAIR_KIND_VALUE_PLACEHOLDER_INSERTED,
      }),
    ).toBe(1);
    expect(
      await harness.sum(METRIC_REPAIRS, { [ATTR_REPAIR_KIND]: REPAIR_KIND_VALUE_TURN_INSERTED }),
    ).toBe(1);
    // The model still got the repaired history, once repaired: one placeholder after ai_1, then
    // one synthetic reply before h2.
    const sent = receivedBy(fake, 1);
    expect(sent.map((message) => message.type)).toEqual(["human", "ai", "tool", "ai", "human"]);
    expect(sent.filter((message) => message.type === "tool")).toHaveLength(1);
    // One warning about the attachment, however many calls, beside the repair's own warning.
    expect(warnings.filter((warning) => warning === ATTACHMENT_LINE)).toHaveLength(1);
    // And no more for an agent built again around the same wrapped model (per request, say).
    const rebuilt = createAgent({
      model: wrapped,
      tools: [search.tool],
      middleware: [danglingToolCallMiddleware({ logger, meterProvider: harness.meterProvider })],
    });
    await rebuilt.invoke({ messages: [humanTurn("h3", "Hi")] });
    expect(warnings.filter((warning) => warning === ATTACHMENT_LINE)).toHaveLength(1);
    expect(DOUBLE_ATTACHMENT_WARNING).toMatch(/Drop withToolCallRepair/);
  });
});
