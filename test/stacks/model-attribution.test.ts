/**
 * A dangling call is charged to the model that made it, the same model its `tool_calls` count
 * went to: the model its AI message names (`response_metadata.model_name`, Anthropic's `model`),
 * else the model of the request it is seen in, named the way requests name it. The real clients
 * run against the strict local server, which names, in each answer, a dated snapshot of the model
 * it was asked for, as the providers do; a model that is down is a `ChatOpenAI` pointed at a port
 * nobody listens on.
 *
 * The ground truth: the model that answered a turn issued its calls; the calls of an aborted turn
 * dangle; a dangling call is one call however many requests (attempts, fallbacks) it is seen in.
 */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { MemorySaver } from "@langchain/langgraph";
import { ChatOpenAI } from "@langchain/openai";
import {
  type AgentMiddleware,
  createAgent,
  modelFallbackMiddleware,
  modelRetryMiddleware,
} from "langchain";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { danglingToolCallMiddleware } from "../../src/index.js";
import {
  ATTR_GEN_AI_CONVERSATION_ID,
  ATTR_GEN_AI_PROVIDER_NAME,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_TOOL_NAME,
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
import { chatAnthropicOn, chatOpenAIOn } from "../helpers/provider-clients.js";
import {
  type StrictProviderServer,
  startStrictProviderServer,
} from "../helpers/strict-provider-server.js";
import { metricsHarness } from "../helpers/telemetry.js";

const FLIGHTS = { id: "toolu_flights", name: "search", args: { query: "flights" } };
const HOTELS = { id: "toolu_hotels", name: "search", args: { query: "hotels" } };
const SEARCH_CALLS = [FLIGHTS, HOTELS];
const PRIMARY = { [ATTR_GEN_AI_PROVIDER_NAME]: "openai", [ATTR_GEN_AI_REQUEST_MODEL]: "gpt-4.1" };
/** The backup of the test where no request names it: no other test of this file uses it. */
const HAIKU = "claude-haiku-4-5";
const BACKUP = {
  [ATTR_GEN_AI_PROVIDER_NAME]: "anthropic",
  [ATTR_GEN_AI_REQUEST_MODEL]: "claude-sonnet-4-5",
};

let server: StrictProviderServer;
beforeAll(async () => {
  server = await startStrictProviderServer();
});
afterAll(async () => {
  await server.close();
});

/** `ChatOpenAI` on `gpt-4.1` whose every request fails to connect: a primary that is down. */
function primaryThatIsDown(): ChatOpenAI {
  return new ChatOpenAI({
    model: "gpt-4.1",
    apiKey: "test-key",
    maxRetries: 0,
    configuration: { baseURL: "http://127.0.0.1:1/v1" },
  });
}

/**
 * Two turns of one thread on an agent with these middleware around ours: turn 1, the backup
 * calls `search` twice and the run is aborted while it runs, so both calls dangle; turn 2 is
 * answered with text (by whichever model answers).
 */
async function outageThread(options: {
  readonly model: BaseChatModel;
  readonly around: (ours: AgentMiddleware) => AgentMiddleware[];
  readonly threadId: string;
}) {
  const harness = metricsHarness();
  const search = stallingTool("search");
  const ours = danglingToolCallMiddleware({ logger: false, meterProvider: harness.meterProvider });
  const agent = createAgent({
    model: options.model,
    tools: [search.tool],
    checkpointer: new MemorySaver(),
    middleware: options.around(ours),
  });
  server.script("anthropic", { calls: SEARCH_CALLS });
  await abortMidTool(agent, search.nextStart(), options.threadId, humanTurn("h1", "Plan a trip."));
  server.script("anthropic", { text: "The searches did not come back; shall I retry?" });
  await agent.invoke({ messages: [humanTurn("h2", "Well?")] }, onThread(options.threadId));
  return harness;
}

describe("model fallback during an outage", () => {
  it("charges the backup's calls and their dangling to the backup, fallback outside ours", async () => {
    const harness = await outageThread({
      model: primaryThatIsDown(),
      around: (ours) => [modelFallbackMiddleware(chatAnthropicOn(server)), ours],
      threadId: "fallback-outside",
    });
    // Ground truth: the backup issued both calls, and both dangle; the primary issued nothing.
    expect(await harness.sum(METRIC_TOOL_CALLS, BACKUP)).toBe(2);
    expect(await harness.sum(METRIC_DANGLING_TOOL_CALLS, BACKUP)).toBe(2);
    expect(await harness.sum(METRIC_TOOL_CALLS, PRIMARY)).toBe(0);
    expect(await harness.sum(METRIC_DANGLING_TOOL_CALLS, PRIMARY)).toBe(0);
    expect(
      await harness.sum(METRIC_THREAD_RECENT_DANGLING_TOOL_CALLS, {
        [ATTR_GEN_AI_CONVERSATION_ID]: "fallback-outside",
        [ATTR_GEN_AI_REQUEST_MODEL]: "claude-sonnet-4-5",
      }),
    ).toBe(2);
    // Ours sees each turn twice, once per model tried: model calls go to the request's model.
    expect(await harness.sum(METRIC_MODEL_CALLS, PRIMARY)).toBe(2);
    expect(await harness.sum(METRIC_MODEL_CALLS, BACKUP)).toBe(2);
    // Turn 2 repairs both calls in each of its two requests.
    expect(await harness.sum(METRIC_REPAIRS)).toBe(4);
  });

  it("charges them to the backup too with fallback inside ours, by the name its answers give", async () => {
    const harness = await outageThread({
      model: primaryThatIsDown(),
      around: (ours) => [ours, modelFallbackMiddleware(chatAnthropicOn(server, { model: HAIKU }))],
      threadId: "fallback-inside",
    });
    // Ours is handed the primary's request only, so no request names the backup: its calls are
    // charged to the model its answers name, as they name it (a dated snapshot).
    const backup = {
      [ATTR_GEN_AI_PROVIDER_NAME]: "anthropic",
      [ATTR_GEN_AI_REQUEST_MODEL]: `${HAIKU}-20250929`,
    };
    expect(await harness.sum(METRIC_TOOL_CALLS, backup)).toBe(2);
    expect(await harness.sum(METRIC_DANGLING_TOOL_CALLS, backup)).toBe(2);
    expect(await harness.sum(METRIC_TOOL_CALLS, PRIMARY)).toBe(0);
    expect(await harness.sum(METRIC_DANGLING_TOOL_CALLS, PRIMARY)).toBe(0);
    // That is the model of its model calls.
    expect(await harness.sum(METRIC_MODEL_CALLS, PRIMARY)).toBe(2);
    expect(await harness.sum(METRIC_MODEL_CALLS)).toBe(2);
    expect(await harness.sum(METRIC_REPAIRS)).toBe(2);
  });
});

describe("model retry", () => {
  it("counts a dangling call once across the attempts that see it, and each attempt's repairs", async () => {
    const harness = metricsHarness();
    const search = stallingTool("search");
    const model = Object.assign(
      scriptedModel(
        aiToolCall("ai_1", FLIGHTS),
        new Error("overloaded"),
        aiAnswer("ai_2", "The search did not come back."),
      ),
      { model: "fake-gpt" },
    );
    const agent = createAgent({
      model,
      tools: [search.tool],
      checkpointer: new MemorySaver(),
      middleware: [
        modelRetryMiddleware({ maxRetries: 1, initialDelayMs: 0, jitter: false }),
        danglingToolCallMiddleware({ logger: false, meterProvider: harness.meterProvider }),
      ],
    });
    await abortMidTool(agent, search.nextStart(), "retried", humanTurn("h1", "Flights?"));
    await agent.invoke({ messages: [humanTurn("h2", "Well?")] }, onThread("retried"));

    const fake = { [ATTR_GEN_AI_REQUEST_MODEL]: "fake-gpt" };
    // Ground truth: one call issued, one dangling; turn 2 takes two attempts, each repaired: a
    // placeholder for the call, and (the fake model's wire being any) a reply before h2.
    expect(await harness.sum(METRIC_TOOL_CALLS, fake)).toBe(1);
    expect(await harness.sum(METRIC_DANGLING_TOOL_CALLS, fake)).toBe(1);
    expect(await harness.sum(METRIC_MODEL_CALLS, fake)).toBe(3);
    expect(
      await harness.sum(METRIC_REPAIRS, {
        [ATTR_REPAIR_KIND]: REPAIR_KIND_VALUE_PLACEHOLDER_INSERTED,
      }),
    ).toBe(2);
    expect(
      await harness.sum(METRIC_REPAIRS, { [ATTR_REPAIR_KIND]: REPAIR_KIND_VALUE_TURN_INSERTED }),
    ).toBe(2);
    expect(await harness.sum(METRIC_REPAIRS)).toBe(4);
  });
});

describe("a thread that changes models", () => {
  /** Turn 1 on `first` (aborted while its two calls run), turn 2 on `second`, one thread. */
  async function changeModels(first: BaseChatModel, second: BaseChatModel, threadId: string) {
    const harness = metricsHarness();
    const search = stallingTool("search");
    const checkpointer = new MemorySaver();
    const agentOn = (model: BaseChatModel) =>
      createAgent({
        model,
        tools: [search.tool],
        checkpointer,
        middleware: [
          danglingToolCallMiddleware({ logger: false, meterProvider: harness.meterProvider }),
        ],
      });
    await abortMidTool(agentOn(first), search.nextStart(), threadId, humanTurn("h1", "Trip?"));
    await agentOn(second).invoke({ messages: [humanTurn("h2", "Well?")] }, onThread(threadId));
    return harness;
  }

  /**
   * Each client's converter writes the model's name where its own answers keep it: Chat
   * Completions and the Responses API in `response_metadata.model_name`, ChatAnthropic (v0 and
   * v1 output) in `response_metadata.model`.
   */
  const FIRST_CLIENTS = [
    {
      client: "ChatOpenAI on Chat Completions",
      first: () => chatOpenAIOn(server),
      served: "openai",
      second: () => chatAnthropicOn(server),
      made: PRIMARY,
      found: BACKUP,
    },
    {
      client: "ChatOpenAI on the Responses API",
      first: () => chatOpenAIOn(server, { useResponsesApi: true }),
      served: "responses",
      second: () => chatAnthropicOn(server),
      made: PRIMARY,
      found: BACKUP,
    },
    {
      client: "ChatAnthropic with v0 output",
      first: () => chatAnthropicOn(server),
      served: "anthropic",
      second: () => chatOpenAIOn(server),
      made: BACKUP,
      found: PRIMARY,
    },
    {
      client: "ChatAnthropic with v1 output",
      first: () => chatAnthropicOn(server, { outputVersion: "v1" }),
      served: "anthropic",
      second: () => chatOpenAIOn(server),
      made: BACKUP,
      found: PRIMARY,
    },
  ] as const;

  for (const { client, first, served, second, made, found } of FIRST_CLIENTS) {
    it(`charges a dangling call to the model its message names, not the one that finds it (${client})`, async () => {
      server.script(served, {
        calls: SEARCH_CALLS.map((call) => ({ ...call, id: `call_${call.args.query}` })),
      });
      server.script(served === "anthropic" ? "openai" : "anthropic", {
        text: "Those searches never came back.",
      });
      const harness = await changeModels(first(), second(), `changed, ${client}`);
      expect(await harness.sum(METRIC_TOOL_CALLS, made)).toBe(2);
      expect(await harness.sum(METRIC_DANGLING_TOOL_CALLS, made)).toBe(2);
      expect(await harness.sum(METRIC_DANGLING_TOOL_CALLS, found)).toBe(0);
      expect(await harness.sum(METRIC_MODEL_CALLS, made)).toBe(1);
      expect(await harness.sum(METRIC_MODEL_CALLS, found)).toBe(1);
    });
  }

  it("charges it to the model of the request when its message names no model", async () => {
    const first = Object.assign(scriptedModel(aiToolCall("ai_1", ...SEARCH_CALLS)), {
      model: "fake-first",
    });
    const second = Object.assign(scriptedModel(aiAnswer("ai_2", "Nothing came back.")), {
      model: "fake-second",
    });
    const harness = await changeModels(first, second, "unnamed");
    // The fake model's messages carry no model name: the rule falls back to the request.
    expect(
      await harness.sum(METRIC_TOOL_CALLS, { [ATTR_GEN_AI_REQUEST_MODEL]: "fake-first" }),
    ).toBe(2);
    expect(
      await harness.sum(METRIC_DANGLING_TOOL_CALLS, { [ATTR_GEN_AI_REQUEST_MODEL]: "fake-second" }),
    ).toBe(2);
    expect(
      await harness.sum(METRIC_DANGLING_TOOL_CALLS, { [ATTR_GEN_AI_TOOL_NAME]: "search" }),
    ).toBe(2);
  });
});
