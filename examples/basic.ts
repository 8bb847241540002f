/**
 * Basic: a thread whose tool call was left without a result, repaired before the next model call.
 *
 * The first run stops inside a tool (an `interrupt()` nobody answers, as when a user walks away
 * from an approval prompt). The next message on the same thread would send the provider an AI
 * message whose tool call has no result, which OpenAI, Anthropic and Gemini all refuse. The
 * middleware inserts a placeholder tool message right after that AI message, so the model sees an
 * honest error and goes on. With a model that is neither ChatOpenAI nor ChatAnthropic (here a fake
 * one), it also writes a short synthetic AI reply between that placeholder and the user's new
 * message: Bedrock Converse and Mistral refuse a user message right after tool results.
 *
 * Run it: `npx tsx examples/basic.ts`
 */
import { AIMessage, type BaseMessage, HumanMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { interrupt, MemorySaver } from "@langchain/langgraph";
import { createAgent, tool } from "langchain";
import { danglingToolCallMiddleware } from "tool-call-resilience";
import { z } from "zod";

const deploy = tool(
  async ({ service }) => {
    const approved = interrupt({ question: `Deploy ${service}?` });
    return approved ? `${service} deployed` : "deployment cancelled";
  },
  {
    name: "deploy",
    description: "Deploys a service after a human approves it.",
    schema: z.object({ service: z.string() }),
  },
);

// A scripted model: first it calls the tool, then it answers in plain text.
const model = fakeModel()
  .respond(
    new AIMessage({
      id: "ai-1",
      content: "",
      tool_calls: [{ id: "call_deploy_1", name: "deploy", args: { service: "billing" } }],
    }),
  )
  .respond(new AIMessage({ id: "ai-2", content: "The deploy never finished; shall I retry?" }));

const agent = createAgent({
  model,
  tools: [deploy],
  checkpointer: new MemorySaver(),
  // The default logger is console.warn; this one keeps the example's output in one stream.
  middleware: [
    danglingToolCallMiddleware({
      logger: { warn: (message) => console.log(message) },
    }),
  ],
});

const config = { configurable: { thread_id: "example-basic" } };

function describe(message: BaseMessage): string {
  const type = message.type.padEnd(5);
  if (AIMessage.isInstance(message) && message.tool_calls?.length) {
    return `${type} calls ${message.tool_calls.map((call) => `${call.name}(${call.id})`).join(", ")}`;
  }
  const answered = "tool_call_id" in message ? ` answers ${String(message.tool_call_id)}:` : "";
  return `${type}${answered} ${String(message.content)}`;
}

await agent.invoke({ messages: [new HumanMessage("Deploy billing, please.")] }, config);
const stored = (await agent.graph.getState(config)).values.messages as BaseMessage[];
console.log("Stored thread after the interrupted run:");
for (const message of stored) console.log(`  ${describe(message)}`);

console.log("\nA new message on the same thread:");
const result = await agent.invoke(
  { messages: [new HumanMessage("Never mind. What happened?")] },
  config,
);
console.log("\nWhat the model received on the next call:");
for (const message of model.calls[1]?.messages ?? []) console.log(`  ${describe(message)}`);
console.log(`\nThe model answered: ${String(result.messages.at(-1)?.content)}`);
