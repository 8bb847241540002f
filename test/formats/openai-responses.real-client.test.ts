/**
 * `repairResponsesInput` in front of the real `openai` client's `responses.create`, against the
 * strict local stand-in for the API: the dangling call the API refuses, and the repaired input it
 * answers, as it went over the wire.
 */
import OpenAI from "openai";
import type { ResponseInputItem } from "openai/resources/responses/responses";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repairResponsesInput } from "../../src/formats/index.js";
import {
  COMPLETION_TEXT,
  type StrictProviderServer,
  startStrictProviderServer,
} from "../helpers/strict-provider-server.js";

let server: StrictProviderServer;
beforeAll(async () => {
  server = await startStrictProviderServer();
});
afterAll(async () => {
  await server.close();
});

const tools: OpenAI.Responses.Tool[] = [
  {
    type: "function",
    name: "search",
    parameters: { type: "object", properties: { query: { type: "string" } } },
    strict: false,
  },
];

// The user stopped the run while `search` ran: call_1 never got its output.
const input: ResponseInputItem[] = [
  { role: "user", content: "Find flights to Lisbon" },
  {
    type: "function_call",
    id: "fc_1",
    call_id: "call_1",
    name: "search",
    arguments: '{"query":"LIS"}',
  },
  { role: "user", content: "Actually, Porto instead" },
];

describe("repairResponsesInput before openai.responses.create", () => {
  it("turns the API's 400 for a dangling function call into an answer", async () => {
    const openai = new OpenAI({ baseURL: server.openAIBaseURL, apiKey: "test", maxRetries: 0 });

    const refused = openai.responses.create({ model: "gpt-5", input, tools });
    await expect(refused).rejects.toThrow(OpenAI.BadRequestError);
    await expect(refused).rejects.toThrow("No tool output found for function call call_1.");

    const { messages, repairs } = repairResponsesInput(
      input,
      { logger: false },
      { model: "gpt-5" },
    );
    const response = await openai.responses.create({ model: "gpt-5", input: messages, tools });
    expect(response.output_text).toBe(COMPLETION_TEXT);
    expect(repairs.map((repair) => repair.kind)).toEqual(["placeholder_inserted"]);

    const [first, second] = server.received.filter((request) => request.provider === "responses");
    expect(first?.status).toBe(400);
    expect(second?.status).toBe(200);
    expect(second?.body.input).toEqual([
      input[0],
      input[1],
      {
        type: "function_call_output",
        call_id: "call_1",
        output: "[Tool call was interrupted and did not return a result.]",
      },
      input[2],
    ]);
  });
});
