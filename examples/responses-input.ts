/**
 * The OpenAI Responses API: an `input` kept as the items the API returned and the outputs the
 * application added, repaired with `repairResponsesInput` before `openai.responses.create`.
 *
 * The run below was stopped while three parallel calls ran: `get_weather` answered for Lisbon,
 * not for Porto, and the computer call's screenshot never came. The API refuses such an input
 * with a 400; once repaired, Porto's call has a function_call_output (the placeholder text) and
 * the computer call a computer_call_output (a blank screenshot, the only output it takes), both
 * after the outputs of their turn.
 *
 * No network: the client is the real `openai` one, given a `fetch` that stands in for the API and
 * refuses, as it does, a call without an output.
 *
 * Run it: `npx tsx examples/responses-input.ts`
 */
import OpenAI from "openai";
import type { ResponseInputItem } from "openai/resources/responses/responses";
import { repairResponsesInput } from "tool-call-resilience/formats";

/** A stand-in for the Responses API: a 400 for a call without an output, else a short answer. */
const standIn: typeof fetch = async (_url, init) => {
  const { input } = JSON.parse(String(init?.body)) as { input: Record<string, string>[] };
  const answered = new Set(
    input.filter((item) => item.type?.endsWith("_output")).map((item) => item.call_id),
  );
  const dangling = input.find(
    (item) => item.type?.endsWith("_call") && !answered.has(item.call_id),
  );
  const json = (status: number, body: unknown) =>
    new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
  if (dangling !== undefined) {
    const message = `No tool output found for ${dangling.type?.replace("_", " ")} ${dangling.call_id}.`;
    return json(400, {
      error: { message, type: "invalid_request_error", param: "input", code: null },
    });
  }
  return json(200, {
    id: "resp_2",
    object: "response",
    created_at: 0,
    model: "gpt-5",
    status: "completed",
    output: [
      {
        type: "message",
        id: "msg_2",
        role: "assistant",
        status: "completed",
        content: [
          {
            type: "output_text",
            text: "Lisbon is sunny; Porto's forecast was cut off.",
            annotations: [],
          },
        ],
      },
    ],
  });
};

const openai = new OpenAI({ apiKey: "example", fetch: standIn, maxRetries: 0 });
const tools: OpenAI.Responses.Tool[] = [
  { type: "function", name: "get_weather", parameters: { type: "object" }, strict: false },
];

const input: ResponseInputItem[] = [
  { role: "user", content: "Weather in Lisbon and Porto, then open the booking page" },
  {
    type: "function_call",
    id: "fc_1",
    call_id: "call_lis",
    name: "get_weather",
    arguments: '{"city":"Lisbon"}',
  },
  {
    type: "function_call",
    id: "fc_2",
    call_id: "call_opo",
    name: "get_weather",
    arguments: '{"city":"Porto"}',
  },
  {
    type: "computer_call",
    id: "cu_1",
    call_id: "call_click",
    action: { type: "click", button: "left", x: 120, y: 40 },
    pending_safety_checks: [],
    status: "completed",
  },
  { type: "function_call_output", call_id: "call_lis", output: "21°C, sunny" },
  { role: "user", content: "Never mind the booking. Summarise the weather." },
];

try {
  await openai.responses.create({ model: "gpt-5", input, tools });
} catch (error) {
  console.log(`As it was: ${(error as Error).message}`);
}

// One options object, validated once, reused for every call.
const options = { logger: false } as const;
const repaired = repairResponsesInput(input, options, { model: "gpt-5", threadId: "trip-7" });
const response = await openai.responses.create({ model: "gpt-5", input: repaired.messages, tools });
console.log(`Repaired: the model answered "${response.output_text}"`);
for (const repair of repaired.repairs) {
  const item = repaired.messages[repair.outputIndex ?? -1];
  console.log(
    `  ${repair.kind} for ${repair.toolName} (${repair.toolCallId}), at ${repair.outputIndex}:`,
  );
  console.log(`    ${JSON.stringify(item).slice(0, 110)}`);
}
