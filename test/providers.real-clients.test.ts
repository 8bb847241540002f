/**
 * The promise, through the real clients: a thread left with a dangling tool call gets the
 * provider's 400 without the middleware and an answer with it. `ChatOpenAI` (Chat Completions and
 * the Responses API) and `ChatAnthropic` (v0 and v1 output) serialize the request themselves and
 * send it to a strict local server that applies each provider's tool-calling rules and answers
 * with the provider's own error text.
 */
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { MemorySaver } from "@langchain/langgraph";
import { createAgent, tool } from "langchain";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { repairTargetOf } from "../src/attach/target.js";
import { PLACEHOLDER_CATALOG } from "../src/core/locales.js";
import { danglingToolCallMiddleware, withToolCallRepair } from "../src/index.js";
import {
  APPROVAL_CALLS,
  abortMidTool,
  approveEmailRejectDeletion,
  onThread,
  REJECTION_MESSAGE,
  stallingSearchTool,
} from "./helpers/agent.js";
import {
  approvedAndRejected,
  functionCall,
  responsesAIMessage,
} from "./helpers/client-messages.js";
import { readmeThread } from "./helpers/history.js";
import { chatAnthropicOn, chatOpenAIOn } from "./helpers/provider-clients.js";
import {
  anthropicViolations,
  openAIViolations,
  responsesViolations,
} from "./helpers/provider-rules.js";
import {
  COMPLETION_TEXT,
  type ReceivedRequest,
  SEARCH_PROMPT,
  type ServedApi,
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

const chatOpenAI = (fields: { useResponsesApi?: boolean } = {}) => chatOpenAIOn(server, fields);
const chatAnthropic = (fields: { outputVersion?: "v0" | "v1" } = {}) =>
  chatAnthropicOn(server, fields);

/** What each API's body sends as the conversation. */
function sentOf(request: ReceivedRequest): unknown[] {
  return (request.provider === "responses" ? request.body.input : request.body.messages) ?? [];
}

const clients = {
  openai: {
    model: () => chatOpenAI(),
    refusal:
      "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: call_deploy_1",
    violations: openAIViolations,
  },
  responses: {
    model: () => chatOpenAI({ useResponsesApi: true }),
    refusal: "No tool output found for function call call_deploy_1.",
    violations: responsesViolations,
  },
  anthropic: {
    model: () => chatAnthropic(),
    refusal:
      "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: call_deploy_1. Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
    violations: anthropicViolations,
  },
} as const;

function lastRequest(provider: ServedApi) {
  const request = server.received.filter((entry) => entry.provider === provider).at(-1);
  if (request === undefined) throw new Error(`the ${provider} client sent nothing`);
  return request;
}

describe.each(Object.keys(clients) as (keyof typeof clients)[])("%s client", (provider) => {
  const client = clients[provider];

  it("gets the provider's 400 for a dangling call without the middleware", async () => {
    const agent = createAgent({ model: client.model(), tools: [deploy] });
    await expect(agent.invoke({ messages: readmeThread() })).rejects.toThrow(client.refusal);
    expect(lastRequest(provider).status).toBe(400);
  });

  it("gets an answer with the middleware, the placeholder right after the call", async () => {
    const agent = createAgent({
      model: client.model(),
      tools: [deploy],
      middleware: [danglingToolCallMiddleware({ logger: false })],
    });
    const state = await agent.invoke({ messages: readmeThread() });
    expect(state.messages.at(-1)?.text).toBe(COMPLETION_TEXT);
    const request = lastRequest(provider);
    expect(request.status).toBe(200);
    expect(client.violations(sentOf(request))).toEqual([]);
    expect(request.raw).toContain(PLACEHOLDER_CATALOG.en.interrupted);
  });

  it("sends no trace of the synthetic marker over the wire", async () => {
    const agent = createAgent({
      model: client.model(),
      tools: [deploy],
      middleware: [danglingToolCallMiddleware({ logger: false, markSynthetic: true })],
    });
    await agent.invoke({ messages: readmeThread() });
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
    const request = lastRequest(provider);
    const { raw } = request;
    expect(client.violations(sentOf(request))).toEqual([]);
    expect(raw).toContain("deployed");
    expect(raw).not.toContain("call_gone");
  });
});

const approvalClients = {
  "the Responses client (ChatOpenAI, useResponsesApi)": {
    api: "responses",
    model: () => chatOpenAI({ useResponsesApi: true }),
    refusal: "No tool output found for function call c_email.",
  },
  "ChatAnthropic with outputVersion v1": {
    api: "anthropic",
    model: () => chatAnthropic({ outputVersion: "v1" }),
    refusal: "`tool_use` ids were found without `tool_result` blocks immediately after: c_email",
  },
} as const;

describe.each(Object.entries(approvalClients))(
  "approve one parallel call, reject the other: %s",
  (_name, client) => {
    async function approveAndReject(middleware: ReturnType<typeof danglingToolCallMiddleware>[]) {
      server.script(client.api, { calls: APPROVAL_CALLS });
      return approveEmailRejectDeletion({
        model: client.model(),
        middleware,
        threadId: `approval-${client.api}-${middleware.length}`,
      });
    }

    it("gets the provider's 400 naming the approved call without the middleware", async () => {
      await expect(approveAndReject([])).rejects.toThrow(client.refusal);
      expect(lastRequest(client.api).status).toBe(400);
    });

    it("gets an answer with it: the dropped call answered once, the rejection kept", async () => {
      const state = await approveAndReject([danglingToolCallMiddleware({ logger: false })]);
      expect(state.messages.at(-1)?.text).toBe(COMPLETION_TEXT);
      const request = lastRequest(client.api);
      expect(request.status).toBe(200);
      expect(request.raw).toContain(REJECTION_MESSAGE);
      expect(request.raw).toContain(PLACEHOLDER_CATALOG.en.interrupted);
    });
  },
);

describe("createAgent with the real ChatOpenAI on the Responses API, a run aborted while its tool runs", () => {
  async function abortedThenContinued(middleware: ReturnType<typeof danglingToolCallMiddleware>[]) {
    const { tool: search, started } = stallingSearchTool();
    const agent = createAgent({
      model: chatOpenAI({ useResponsesApi: true }),
      tools: [search],
      checkpointer: new MemorySaver(),
      middleware,
    });
    const thread = `aborted-${middleware.length}`;
    const message = new HumanMessage(`${SEARCH_PROMPT}cats`);
    expect(await abortMidTool(agent, started, thread, message)).toMatchObject({
      name: "AbortError",
    });
    return agent.invoke({ messages: [new HumanMessage("Any news?")] }, onThread(thread));
  }

  it("reads the target from the model: the Responses API", () => {
    expect(repairTargetOf(chatOpenAI({ useResponsesApi: true }))).toBe("openai-responses");
    expect(repairTargetOf(chatOpenAI())).toBe("openai-completions");
    expect(repairTargetOf(chatAnthropic({ outputVersion: "v1" }))).toBe("anthropic");
  });

  it("gets the Responses API's 400 without the middleware", async () => {
    await expect(abortedThenContinued([])).rejects.toThrow(
      "No tool output found for function call",
    );
    expect(lastRequest("responses").status).toBe(400);
  });

  it("and an answer with it, the placeholder right after the call in the input", async () => {
    const state = await abortedThenContinued([danglingToolCallMiddleware({ logger: false })]);
    expect(state.messages.at(-1)?.text).toBe(COMPLETION_TEXT);
    const request = lastRequest("responses");
    expect(request.status).toBe(200);
    const types = sentOf(request).map((item) => (item as { type?: string }).type);
    const call = types.indexOf("function_call");
    expect(types[call + 1]).toBe("function_call_output");
    expect(request.raw).toContain(PLACEHOLDER_CATALOG.en.interrupted);
    expect(request.raw).not.toContain("synthetic");
  });
});

describe("withToolCallRepair on the Responses client", () => {
  const calls = [
    functionCall("c_email", "send_email", '{"to":"ops"}'),
    functionCall("c_delete", "delete_records", '{"table":"users"}'),
  ];
  const history = () => [
    new HumanMessage("Email ops, then delete users."),
    ...approvedAndRejected(responsesAIMessage(calls), "c_delete"),
  ];

  it("sends the approved call unanswered without the wrapper, and gets the API's 400", async () => {
    await expect(chatOpenAI({ useResponsesApi: true }).invoke(history())).rejects.toThrow(
      "No tool output found for function call c_email.",
    );
  });

  it("repairs for the Responses API with it: the model's own client, read from the model", async () => {
    const model = withToolCallRepair(chatOpenAI({ useResponsesApi: true }), { logger: false });
    const answer = await model.invoke(history());
    expect(answer.text).toBe(COMPLETION_TEXT);
    const request = lastRequest("responses");
    expect(request.status).toBe(200);
    expect(responsesViolations(sentOf(request))).toEqual([]);
  });
});
