/**
 * The OpenAI Agents SDK: a conversation whose items the application keeps itself, left with a
 * refund call waiting for an approval that never came. The user writes again; without the filter
 * the model call is refused, with `toolCallRepairInputFilter` the call gets a placeholder result
 * and the model answers.
 *
 * The model here is a stand-in that refuses what the OpenAI API refuses (a call without its
 * result), so the example needs no network and no key; with a real model, pass the same filter.
 *
 * Run it: `npx tsx examples/openai-agents.ts`
 */
import {
  Agent,
  type AgentInputItem,
  type Model,
  type ModelRequest,
  type ModelResponse,
  Runner,
  setTracingDisabled,
  tool,
  Usage,
} from "@openai/agents";
import { toolCallRepairInputFilter } from "tool-call-resilience/openai-agents";
import { z } from "zod";

setTracingDisabled(true);

/** What the model received on its last call. */
let received: AgentInputItem[] = [];

/** A stand-in for the API: it refuses an unanswered call; it asks for a refund, then answers. */
const model: Model = {
  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    received = typeof request.input === "string" ? [] : request.input;
    const answered = new Set<string>();
    for (const item of received) {
      if (item.type === "function_call_result") answered.add(item.callId);
    }
    for (const item of received) {
      if (item.type === "function_call" && !answered.has(item.callId)) {
        throw new Error(`400 No tool output found for function call ${item.callId}.`);
      }
    }
    const output: ModelResponse["output"] =
      received.length === 1
        ? [
            {
              type: "function_call",
              callId: "call_1",
              name: "refund",
              arguments: '{"order":"42"}',
              status: "completed",
            },
          ]
        : [
            {
              type: "message",
              role: "assistant",
              status: "completed",
              content: [
                {
                  type: "output_text",
                  text: "The refund never went through. Your balance is $12.",
                },
              ],
            },
          ];
    return { output, usage: new Usage() };
  },
  getStreamedResponse: () => {
    throw new Error("not streamed in this example");
  },
};

const refund = tool({
  name: "refund",
  description: "Refunds an order.",
  parameters: z.object({ order: z.string() }),
  needsApproval: true,
  execute: async ({ order }) => `refunded order ${order}`,
});
const agent = new Agent({
  name: "support",
  instructions: "Help the customer.",
  model,
  tools: [refund],
});

// The application keeps each run's items; the approval is still pending when the user moves on.
const first = await new Runner().run(agent, "Refund order 42");
const stored: AgentInputItem[] = [
  { role: "user", content: "Refund order 42" },
  ...first.newItems
    .filter((item) => item.type === "tool_call_item")
    .map((item) => item.rawItem as AgentInputItem),
];
console.log(`Pending approvals: ${first.interruptions.length}`);
const next: AgentInputItem[] = [
  ...stored,
  { role: "user", content: "Never mind. What is my balance?" },
];

try {
  await new Runner().run(agent, next);
} catch (error) {
  console.log(`Without the filter: refused: ${(error as Error).message}`);
}

// One filter for the runner; the thread comes from the run's context.
const runner = new Runner({
  callModelInputFilter: toolCallRepairInputFilter({
    logger: false,
    threadId: ({ context }) => (context as { threadId?: string } | undefined)?.threadId,
  }),
});
const result = await runner.run(agent, next, { context: { threadId: "customer-42" } });
console.log(`With the filter: answered: ${result.finalOutput}`);
const placeholder = received.find((item) => item.type === "function_call_result");
console.log(
  `  in place of the refund's result, the model received: ${JSON.stringify(placeholder)}`,
);
