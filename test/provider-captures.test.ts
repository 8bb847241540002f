/**
 * The providers' own LangChain chat models beyond OpenAI and Anthropic, with only the network call
 * replaced (`helpers/provider-captures.ts`): what each model's converter sends for a clean thread,
 * for a thread left with a dangling call, and for a result followed directly by a human message
 * (the shape a placeholder leaves), held to each provider's rules (`helpers/provider-rules.ts`).
 */
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { createAgent, tool } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { readmeThread } from "./helpers/history.js";
import {
  CAPTURED_ANSWER,
  CAPTURED_PROVIDERS,
  type CapturedProvider,
  capturingModel,
  violationsOf,
} from "./helpers/provider-captures.js";
import {
  converseViolations,
  type GeminiContent,
  mistralViolations,
} from "./helpers/provider-rules.js";

type Body = Record<string, unknown>;

function listOf(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

const geminiRules = (body: Body) => violationsOf("google-genai", body);

const TOOL_RESULT = "x is 42";

/** A thread whose lookup call was answered, then answered on, then continued by the user. */
function cleanThread(): BaseMessage[] {
  return [
    new HumanMessage("Look x up."),
    new AIMessage({
      content: "",
      tool_calls: [{ id: "call_1", name: "lookup", args: { q: "x" } }],
    }),
    new ToolMessage({ content: TOOL_RESULT, tool_call_id: "call_1", name: "lookup" }),
    new AIMessage("x is 42."),
    new HumanMessage("Thanks. And y?"),
  ];
}

const DANGLING_CALL = { id: "call_deploy_1", name: "deploy", args: { service: "billing" } };

/** The dangling thread with a result for the call, right before the user's next message. */
function answeredThenHuman(): BaseMessage[] {
  const [human, call, next] = readmeThread();
  const result = new ToolMessage({
    content: "The deploy was interrupted before it returned.",
    tool_call_id: DANGLING_CALL.id,
    name: DANGLING_CALL.name,
    status: "error",
  });
  return [human, call, result, next] as BaseMessage[];
}

/** The one request the provider's model sent for this history. */
async function sentFor(provider: CapturedProvider, messages: BaseMessage[]): Promise<Body> {
  const { model, requests } = capturingModel(provider);
  const answer = await model.invoke(messages);
  expect(answer.content).toBe(CAPTURED_ANSWER);
  expect(requests).toHaveLength(1);
  return requests[0] as Body;
}

describe("a clean thread through each provider's own chat model", () => {
  it.each(CAPTURED_PROVIDERS)(
    "%s: sends the tool result, and its rules accept the request",
    async (provider) => {
      const body = await sentFor(provider, cleanThread());
      expect(JSON.stringify(body)).toContain(TOOL_RESULT);
      expect(violationsOf(provider, body)).toEqual([]);
    },
  );

  it("mistral: rewrites call_1 into a 9-character id, the same in the call and its result", async () => {
    const messages = listOf((await sentFor("mistral", cleanThread())).messages) as Body[];
    const id = (listOf(messages[1]?.toolCalls)[0] as Body).id;
    expect(id).toMatch(/^[a-zA-Z0-9]{9}$/);
    expect(messages[2]).toMatchObject({ role: "tool", toolCallId: id });
  });
});

describe("createAgent with a tool, on each captured model", () => {
  const lookup = tool(async () => TOOL_RESULT, {
    name: "lookup",
    description: "Looks a thing up.",
    schema: z.object({ q: z.string() }),
  });

  it.each(CAPTURED_PROVIDERS)(
    "%s: the bound model's one call is captured, and the run ends on its answer",
    async (provider) => {
      const { model, requests } = capturingModel(provider);
      const agent = createAgent({ model, tools: [lookup] });
      const { messages } = await agent.invoke({ messages: [new HumanMessage("Look x up.")] });
      expect(messages.at(-1)?.content).toBe(CAPTURED_ANSWER);
      expect(requests).toHaveLength(1);
      expect(JSON.stringify(requests[0])).toContain('"lookup"');
    },
  );
});

describe("a dangling call, sent unrepaired", () => {
  it("bedrock: the toolUse goes out with the user's text after it, which Converse refuses", async () => {
    const body = await sentFor("bedrock", readmeThread());
    expect(body.messages).toEqual([
      { role: "user", content: [{ text: "Deploy billing, please." }] },
      {
        role: "assistant",
        content: [
          {
            toolUse: { toolUseId: "call_deploy_1", name: "deploy", input: { service: "billing" } },
          },
        ],
      },
      { role: "user", content: [{ text: "Never mind. What happened?" }] },
    ]);
    expect(converseViolations(listOf(body.messages))).toEqual([
      {
        message:
          "Expected toolResult blocks at messages.2.content for the following Ids: call_deploy_1",
        param: "messages.2.content",
      },
    ]);
  });

  it("mistral: the converter drops the unanswered call with its empty AI message, so the rules pass and the model never sees the call", async () => {
    const body = await sentFor("mistral", readmeThread());
    expect(body.messages).toEqual([
      { role: "user", content: "Deploy billing, please." },
      { role: "user", content: "Never mind. What happened?" },
    ]);
    expect(mistralViolations(listOf(body.messages))).toEqual([]);
  });

  it("google-genai: the functionCall turn is followed by the user's text, which Gemini refuses", async () => {
    const body = await sentFor("google-genai", readmeThread());
    expect(body.contents).toEqual([
      { role: "user", parts: [{ text: "Deploy billing, please." }] },
      {
        role: "model",
        parts: [{ functionCall: { name: "deploy", args: { service: "billing" } } }],
      },
      { role: "user", parts: [{ text: "Never mind. What happened?" }] },
    ]);
    expect(geminiRules(body)).toEqual([
      {
        message:
          "Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.",
        param: "contents[1]",
      },
    ]);
  });
});

describe("a result followed directly by a human message (the shape a placeholder leaves)", () => {
  it("bedrock: the toolResult and the text go out as two user messages in a row, which Converse refuses", async () => {
    const body = await sentFor("bedrock", answeredThenHuman());
    expect(listOf(body.messages).map((message) => (message as Body).role)).toEqual([
      "user",
      "assistant",
      "user",
      "user",
    ]);
    expect(converseViolations(listOf(body.messages))).toEqual([
      {
        message:
          "A conversation must alternate between user and assistant roles. Make sure the conversation alternates between user and assistant roles and try again.",
        param: "messages.3",
      },
    ]);
  });

  it("mistral: the tool message is followed by the user message, which Mistral refuses", async () => {
    const body = await sentFor("mistral", answeredThenHuman());
    expect(mistralViolations(listOf(body.messages))).toEqual([
      { message: "Unexpected role 'user' after role 'tool'", param: "messages[3].role" },
    ]);
  });

  it("google-genai: the functionResponse and the text are two user turns, which the rules accept; the error status becomes response.error", async () => {
    const body = await sentFor("google-genai", answeredThenHuman());
    expect(listOf(body.contents)[2]).toEqual({
      role: "user",
      parts: [
        {
          functionResponse: {
            name: "deploy",
            response: { error: { details: "The deploy was interrupted before it returned." } },
          },
        },
      ],
    });
    expect(geminiRules(body)).toEqual([]);
  });
});

describe("a parallel turn's results through the Gemini converters", () => {
  function parallelThread(names: boolean): BaseMessage[] {
    return [
      new HumanMessage("Look x up and deploy billing."),
      new AIMessage({
        content: "",
        tool_calls: [
          { id: "call_a", name: "lookup", args: { q: "x" } },
          { id: "call_b", name: "deploy", args: { service: "billing" } },
        ],
      }),
      new ToolMessage({
        content: "x is 42",
        tool_call_id: "call_a",
        ...(names && { name: "lookup" }),
      }),
      new ToolMessage({
        content: "deployed",
        tool_call_id: "call_b",
        ...(names && { name: "deploy" }),
      }),
      new AIMessage("Both done."),
      new HumanMessage("Thanks."),
    ];
  }

  it("google-genai: each result is a turn of its own, so the call turn is followed by one response, which Gemini refuses", async () => {
    const body = await sentFor("google-genai", parallelThread(true));
    expect(listOf(body.contents).map((content) => (content as Body).role)).toEqual([
      "user",
      "model",
      "user",
      "user",
      "model",
      "user",
    ]);
    expect(geminiRules(body).map((violation) => violation.param)).toEqual([
      "contents[1]",
      "contents[3]",
    ]);
  });

  it("vertex: the results share one function turn, each named after the message before it (the call turn's first call, then the previous ToolMessage's name, else its tool_call_id)", async () => {
    const named = await sentFor("vertex", parallelThread(true));
    const unnamed = await sentFor("vertex", parallelThread(false));
    const namesOf = (body: Body) =>
      listOf((listOf(body.contents)[2] as GeminiContent).parts).map(
        (part) => ((part as Body).functionResponse as Body).name,
      );
    expect(namesOf(named)).toEqual(["lookup", "lookup"]);
    expect(namesOf(unnamed)).toEqual(["lookup", "call_b"]);
    expect(geminiRules(named).map((violation) => violation.param)).toEqual([
      "contents[2].parts[1].function_response.name",
    ]);
  });
});
