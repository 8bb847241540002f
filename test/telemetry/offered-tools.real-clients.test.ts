/**
 * The tool label through the real Gemini, Vertex AI and Bedrock clients: a dangling call to a tool
 * the request offers is counted under that tool's name, however the provider package binds its
 * tools. `withToolCallRepair(model).bindTools([search])` serializes and sends the request itself;
 * a canned transport answers in-process with the provider's own response shape: the global `fetch`
 * for the Google clients, the AWS SDK's `requestHandler` for Bedrock.
 */

import { Readable } from "node:stream";
import { ChatBedrockConverse } from "@langchain/aws";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, type BaseMessage, HumanMessage } from "@langchain/core/messages";
import { ChatGoogleGenerativeAI } from "@langchain/google-genai";
import { ChatVertexAI } from "@langchain/google-vertexai";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { TURN_CATALOG } from "../../src/core/locales.js";
import { withToolCallRepair } from "../../src/index.js";
import { METRIC_DANGLING_TOOL_CALLS } from "../../src/telemetry/semconv.js";
import { searchTool } from "../helpers/agent.js";
import { metricsHarness } from "../helpers/telemetry.js";

/** A thread whose `search` call was stopped before its result, then continued by the user. */
function danglingSearchThread(): BaseMessage[] {
  return [
    new HumanMessage("Find me a recipe for bread."),
    new AIMessage({
      content: "",
      tool_calls: [{ id: "call_1", name: "search", args: {} }],
    }),
    new HumanMessage("Never mind. What happened?"),
  ];
}

/** What every canned provider answers. */
const ANSWER_TEXT = "That search was stopped before it returned.";

/** The one point a dangling `search` call must leave: counted once, under its own name. */
const DANGLING_SEARCH_POINT = [
  { attributes: expect.objectContaining({ "gen_ai.tool.name": "search" }), value: 1 },
];

/**
 * Sends a dangling thread through the wrapped, bound model and returns the points of the
 * dangling-call counter.
 */
async function danglingPointsThrough(model: BaseChatModel) {
  const harness = metricsHarness();
  try {
    const repaired = withToolCallRepair(model, {
      logger: false,
      meterProvider: harness.meterProvider,
    });
    const answer = await repaired.bindTools?.([searchTool()]).invoke(danglingSearchThread());
    expect(answer?.content).toBe(ANSWER_TEXT);
    return await harness.points(METRIC_DANGLING_TOOL_CALLS);
  } finally {
    await harness.shutdown();
  }
}

/** A `generateContent` answer, the same for the Gemini API and Vertex AI. */
const GEMINI_ANSWER = {
  candidates: [
    {
      content: { role: "model", parts: [{ text: ANSWER_TEXT }] },
      finishReason: "STOP",
      index: 0,
    },
  ],
  usageMetadata: { promptTokenCount: 12, candidatesTokenCount: 9, totalTokenCount: 21 },
};

/** A `Converse` answer. */
const CONVERSE_ANSWER = {
  output: { message: { role: "assistant", content: [{ text: ANSWER_TEXT }] } },
  stopReason: "end_turn",
  usage: { inputTokens: 12, outputTokens: 9, totalTokens: 21 },
  metrics: { latencyMs: 1 },
};

interface ReceivedRequest {
  readonly url: string;
  readonly body: { readonly [field: string]: unknown };
}

/**
 * A `fetch` that answers every `generateContent` call with {@link GEMINI_ANSWER} and refuses any
 * other URL, so that nothing leaves the process.
 */
function cannedGeminiFetch(received: ReceivedRequest[]): typeof fetch {
  return async (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    if (!url.endsWith(":generateContent")) throw new Error(`unexpected request to ${url}`);
    received.push({ url, body: JSON.parse(String(init?.body)) });
    return Response.json(GEMINI_ANSWER);
  };
}

/** What the AWS SDK hands a request handler, as far as these tests read it. */
interface SignedRequest {
  readonly hostname: string;
  readonly path: string;
  readonly body: Uint8Array | string;
}

/** An AWS SDK request handler that answers every request with {@link CONVERSE_ANSWER}. */
function cannedConverseHandler(received: ReceivedRequest[]) {
  return {
    async handle(request: SignedRequest) {
      const body =
        typeof request.body === "string" ? request.body : new TextDecoder().decode(request.body);
      received.push({ url: `https://${request.hostname}${request.path}`, body: JSON.parse(body) });
      return {
        response: {
          statusCode: 200,
          headers: { "content-type": "application/json" },
          body: Readable.from([Buffer.from(JSON.stringify(CONVERSE_ANSWER))]),
        },
      };
    },
  };
}

describe("the tool label of a dangling call, through the real Google clients", () => {
  let received: ReceivedRequest[];
  beforeEach(() => {
    received = [];
    // Before the model is made: Vertex AI's client keeps the `fetch` it finds when it is built.
    vi.stubGlobal("fetch", cannedGeminiFetch(received));
  });
  afterEach(() => {
    vi.unstubAllGlobals();
  });

  it("ChatGoogleGenerativeAI, whose tools are one { functionDeclarations } entry: the call counts under `search`", async () => {
    const gemini = new ChatGoogleGenerativeAI({
      model: "gemini-2.5-flash",
      apiKey: "test-key",
      maxRetries: 0,
    });
    const points = await danglingPointsThrough(gemini);
    // The repaired thread reached the Gemini API: the call is answered, and the synthetic reply
    // written, before the user goes on.
    expect(received.map((request) => request.url)).toEqual([
      expect.stringContaining("/models/gemini-2.5-flash:generateContent"),
    ]);
    expect(received[0]?.body.contents).toMatchObject([
      { role: "user" },
      { role: "model", parts: [{ functionCall: { name: "search" } }] },
      { role: "user", parts: [{ functionResponse: { name: "search" } }] },
      { role: "model", parts: [{ text: TURN_CATALOG.en.reply }] },
      { role: "user" },
    ]);
    expect(points).toEqual(DANGLING_SEARCH_POINT);
  });

  it("ChatVertexAI, whose tools are one { functionDeclarations } entry: the call counts under `search`", async () => {
    const vertex = new ChatVertexAI({
      model: "gemini-2.5-flash",
      apiKey: "test-key",
      maxRetries: 0,
    });
    const points = await danglingPointsThrough(vertex);
    expect(received.map((request) => request.url)).toEqual([
      expect.stringContaining("/publishers/google/models/gemini-2.5-flash:generateContent"),
    ]);
    expect(received[0]?.body.contents).toContainEqual({
      role: "function",
      parts: [
        expect.objectContaining({ functionResponse: expect.objectContaining({ name: "search" }) }),
      ],
    });
    expect(points).toEqual(DANGLING_SEARCH_POINT);
  });
});

describe("the tool label of a dangling call, through the real Bedrock client", () => {
  it("ChatBedrockConverse, whose tools are { toolSpec: { name } }: the call counts under `search`", async () => {
    const received: ReceivedRequest[] = [];
    const bedrock = new ChatBedrockConverse({
      model: "anthropic.claude-3-5-sonnet-20240620-v1:0",
      region: "us-east-1",
      credentials: { accessKeyId: "test-key-id", secretAccessKey: "test-secret" },
      maxRetries: 0,
      clientOptions: { requestHandler: cannedConverseHandler(received) },
    });
    const points = await danglingPointsThrough(bedrock);
    // The repaired thread reached Converse: the tool use has its result, and an assistant turn
    // follows it, before the user goes on (Converse refuses two user turns in a row).
    expect(received.map((request) => request.url)).toEqual([
      expect.stringMatching(/\/model\/.+\/converse$/),
    ]);
    expect(received[0]?.body.messages).toMatchObject([
      { role: "user" },
      { role: "assistant", content: [{ toolUse: { toolUseId: "call_1", name: "search" } }] },
      { role: "user", content: [{ toolResult: { toolUseId: "call_1" } }] },
      { role: "assistant", content: [{ text: TURN_CATALOG.en.reply }] },
      { role: "user" },
    ]);
    expect(points).toEqual(DANGLING_SEARCH_POINT);
  });
});
