/**
 * The promise, through the real clients: a thread left with a dangling tool call gets the
 * provider's 400 without the middleware and an answer with it. `ChatOpenAI` and `ChatAnthropic`
 * serialize the request themselves and send it to a strict local server that applies each
 * provider's tool-calling rules and answers with the provider's own error text.
 */
import { ChatAnthropic } from "@langchain/anthropic";
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { ChatOpenAI } from "@langchain/openai";
import { createAgent, tool } from "langchain";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { danglingToolCallMiddleware, PLACEHOLDER_CATALOG } from "../src/index.js";
import { anthropicViolations, openAIViolations } from "./helpers/provider-rules.js";
import {
  COMPLETION_TEXT,
  type StrictProviderServer,
  startStrictProviderServer,
} from "./helpers/strict-provider-server.js";

let server: StrictProviderServer;
beforeAll(async () => {
  server = await startStrictProviderServer();
});
afterAll(async () => {
  await server?.close();
});

const deploy = tool(async () => "deployed", {
  name: "deploy",
  description: "Deploys a service.",
  schema: z.object({ service: z.string() }),
});

/** A thread whose deploy call was stopped before its result, then continued by the user. */
function danglingThread(): BaseMessage[] {
  return [
    new HumanMessage("Deploy billing, please."),
    new AIMessage({
      content: "",
      tool_calls: [{ id: "call_deploy_1", name: "deploy", args: { service: "billing" } }],
    }),
    new HumanMessage("Never mind. What happened?"),
  ];
}

/** A thread with a result separated from its call and a result that answers nothing. */
function misplacedThread(): BaseMessage[] {
  return [
    new HumanMessage("Deploy billing, please."),
    new AIMessage({
      content: "",
      tool_calls: [{ id: "call_deploy_1", name: "deploy", args: { service: "billing" } }],
    }),
    new HumanMessage("Still there?"),
    new ToolMessage({ content: "deployed", tool_call_id: "call_deploy_1", name: "deploy" }),
    new ToolMessage({ content: "late", tool_call_id: "call_gone", name: "deploy" }),
  ];
}

const clients = {
  openai: {
    model: () =>
      new ChatOpenAI({
        model: "gpt-4.1",
        apiKey: "test-key",
        maxRetries: 0,
        configuration: { baseURL: server.openAIBaseURL },
      }),
    refusal:
      "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: call_deploy_1",
    violations: openAIViolations,
  },
  anthropic: {
    model: () =>
      new ChatAnthropic({
        model: "claude-sonnet-4-5",
        apiKey: "test-key",
        maxRetries: 0,
        anthropicApiUrl: server.anthropicApiUrl,
      }),
    refusal:
      "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: call_deploy_1. Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
    violations: anthropicViolations,
  },
} as const;

function lastRequest(provider: keyof typeof clients) {
  const request = server.received.filter((entry) => entry.provider === provider).at(-1);
  if (request === undefined) throw new Error(`the ${provider} client sent nothing`);
  return request;
}

describe.each(Object.keys(clients) as (keyof typeof clients)[])("%s client", (provider) => {
  const client = clients[provider];

  it("gets the provider's 400 for a dangling call without the middleware", async () => {
    const agent = createAgent({ model: client.model(), tools: [deploy] });
    await expect(agent.invoke({ messages: danglingThread() })).rejects.toThrow(client.refusal);
    expect(lastRequest(provider).status).toBe(400);
  });

  it("gets an answer with the middleware, the placeholder right after the call", async () => {
    const agent = createAgent({
      model: client.model(),
      tools: [deploy],
      middleware: [danglingToolCallMiddleware({ logger: false })],
    });
    const state = await agent.invoke({ messages: danglingThread() });
    expect(state.messages.at(-1)?.text).toBe(COMPLETION_TEXT);
    const request = lastRequest(provider);
    expect(request.status).toBe(200);
    expect(client.violations(request.body.messages ?? [])).toEqual([]);
    expect(request.raw).toContain(PLACEHOLDER_CATALOG.en.interrupted);
  });

  it("sends no trace of the synthetic marker over the wire", async () => {
    const agent = createAgent({
      model: client.model(),
      tools: [deploy],
      middleware: [danglingToolCallMiddleware({ logger: false, markSynthetic: true })],
    });
    await agent.invoke({ messages: danglingThread() });
    const { raw } = lastRequest(provider);
    expect(raw).toContain("call_deploy_1");
    expect(raw).not.toContain("synthetic");
  });

  it("gets an answer for a misplaced result and an orphan result with the middleware", async () => {
    const without = createAgent({ model: client.model(), tools: [deploy] });
    await expect(without.invoke({ messages: misplacedThread() })).rejects.toThrow();
    const agent = createAgent({
      model: client.model(),
      tools: [deploy],
      middleware: [danglingToolCallMiddleware({ logger: false })],
    });
    const state = await agent.invoke({ messages: misplacedThread() });
    expect(state.messages.at(-1)?.text).toBe(COMPLETION_TEXT);
    const { raw, body } = lastRequest(provider);
    expect(client.violations(body.messages ?? [])).toEqual([]);
    expect(raw).toContain("deployed");
    expect(raw).not.toContain("call_gone");
  });
});
