/**
 * The dangling counter counts what the wire would have carried unanswered: the calls of the
 * client the request goes through, as its converter sends them, and the tool calls counter counts
 * the calls of each answer the same way. The real ChatOpenAI (Chat Completions and the Responses
 * API) in createAgent against the strict local server, with an in-memory metric reader.
 */
import { HumanMessage } from "@langchain/core/messages";
import { createAgent } from "langchain";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { danglingToolCallMiddleware } from "../src/index.js";
import { METRIC_DANGLING_TOOL_CALLS, METRIC_TOOL_CALLS } from "../src/telemetry/semconv.js";
import { APPROVAL_CALLS, approveEmailRejectDeletion, searchTool } from "./helpers/agent.js";
import { chatOpenAIOn } from "./helpers/provider-clients.js";
import {
  COMPLETION_TEXT,
  type StrictProviderServer,
  startStrictProviderServer,
} from "./helpers/strict-provider-server.js";
import { metricsHarness } from "./helpers/telemetry.js";

let server: StrictProviderServer;
beforeAll(async () => {
  server = await startStrictProviderServer();
});
afterAll(async () => {
  await server.close();
});

let harness = metricsHarness();
afterEach(async () => {
  await harness.shutdown();
  harness = metricsHarness();
});

const apis = {
  "Chat Completions": { api: "openai", useResponsesApi: false },
  "the Responses API": { api: "responses", useResponsesApi: true },
} as const;

function middleware() {
  return danglingToolCallMiddleware({ logger: false, meterProvider: harness.meterProvider });
}

describe("a call whose arguments were cut off, next to one that ran", () => {
  // Chat Completions sends tool_calls, which leave the cut-off call out; the Responses client
  // sends the output items, which keep it.
  const expected = {
    "Chat Completions": { issued: 1, dangling: 0 },
    "the Responses API": { issued: 2, dangling: 1 },
  } as const;

  for (const [name, { api, useResponsesApi }] of Object.entries(apis)) {
    it(`${name}: counted as issued and as dangling as the client sends it`, async () => {
      server.script(api, {
        calls: [
          { id: "call_ok", name: "search", args: { query: "x" } },
          { id: "call_bad", name: "search", args: {}, rawArguments: '{"query":' },
        ],
      });
      const agent = createAgent({
        model: chatOpenAIOn(server, { useResponsesApi }),
        tools: [searchTool()],
        middleware: [middleware()],
      });
      const state = await agent.invoke({ messages: [new HumanMessage("Find x.")] });
      expect(state.messages.at(-1)?.text).toBe(COMPLETION_TEXT);
      const counts = expected[name as keyof typeof expected];
      expect(await harness.sum(METRIC_TOOL_CALLS, { "gen_ai.tool.name": "search" })).toBe(
        counts.issued,
      );
      expect(await harness.sum(METRIC_DANGLING_TOOL_CALLS)).toBe(counts.dangling);
      if (counts.dangling > 0) {
        expect(
          await harness.sum(METRIC_DANGLING_TOOL_CALLS, {
            "gen_ai.tool.name": "search",
            "tool_call_resilience.reason": "invalid_arguments",
          }),
        ).toBe(1);
      }
    });
  }
});

describe("approve one parallel call, reject the other", () => {
  // humanInTheLoopMiddleware drops the approved call from tool_calls; the Responses client still
  // sends it from the output items, Chat Completions does not.
  const expected = { "Chat Completions": 0, "the Responses API": 1 } as const;

  for (const [name, { api, useResponsesApi }] of Object.entries(apis)) {
    it(`${name}: the approved call counts as dangling only where the client sends it`, async () => {
      server.script(api, { calls: APPROVAL_CALLS });
      const state = await approveEmailRejectDeletion({
        model: chatOpenAIOn(server, { useResponsesApi }),
        middleware: [middleware()],
        threadId: `approval-${api}`,
      });
      expect(state.messages.at(-1)?.text).toBe(COMPLETION_TEXT);
      expect(await harness.sum(METRIC_TOOL_CALLS)).toBe(2);
      const dangling = expected[name as keyof typeof expected];
      expect(await harness.sum(METRIC_DANGLING_TOOL_CALLS)).toBe(dangling);
      expect(
        await harness.sum(METRIC_DANGLING_TOOL_CALLS, {
          "gen_ai.tool.name": "send_email",
          "tool_call_resilience.reason": "interrupted",
        }),
      ).toBe(dangling);
    });
  }
});
