/**
 * The prebuilt `createReactAgent` of `@langchain/langgraph/prebuilt`, given a chat model wrapped
 * by `withToolCallRepair`: it binds the tools to the wrapper, and every model call it makes is
 * repaired first.
 *
 * The first run stops inside the tool (an `interrupt()` nobody answers). The user then writes
 * again on the same thread, and the model node would send the provider an AI message whose tool
 * call has no result. The wrapped model repairs its input first: a placeholder tool message right
 * after that AI message, then a short synthetic AI reply before the user's new message (a user
 * message right after tool results is refused by Bedrock Converse and Mistral; for ChatOpenAI and
 * ChatAnthropic, which accept it, no reply is written), and the model goes on.
 *
 * Run it: `npx tsx examples/react-agent.ts`
 */
import { AIMessage, type BaseMessage, HumanMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { tool } from "@langchain/core/tools";
import { interrupt, MemorySaver } from "@langchain/langgraph";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { withToolCallRepair } from "tool-call-resilience";
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
const scripted = fakeModel()
  .respond(
    new AIMessage({
      id: "ai-1",
      content: "",
      tool_calls: [{ id: "call_deploy_1", name: "deploy", args: { service: "billing" } }],
    }),
  )
  .respond(new AIMessage({ id: "ai-2", content: "The deploy never finished; shall I retry?" }));

// The one line this example is about. Use your own model here: new ChatOpenAI(...), and so on.
const model = withToolCallRepair(scripted, {
  logger: { warn: (message) => console.log(message) },
});

const graph = createReactAgent({ llm: model, tools: [deploy], checkpointSaver: new MemorySaver() });

const config = { configurable: { thread_id: "example-react-agent" } };

function describe(message: BaseMessage): string {
  const type = message.type.padEnd(5);
  if (AIMessage.isInstance(message) && message.tool_calls?.length) {
    return `${type} calls ${message.tool_calls.map((call) => `${call.name}(${call.id})`).join(", ")}`;
  }
  const answered = "tool_call_id" in message ? ` answers ${String(message.tool_call_id)}:` : "";
  return `${type}${answered} ${String(message.content)}`;
}

await graph.invoke({ messages: [new HumanMessage("Deploy billing, please.")] }, config);
const stored = (await graph.getState(config)).values.messages as BaseMessage[];
console.log("Stored thread after the interrupted run:");
for (const message of stored) console.log(`  ${describe(message)}`);

console.log("\nA new message on the same thread:");
const result = await graph.invoke(
  { messages: [new HumanMessage("Never mind. What happened?")] },
  config,
);
console.log("\nWhat the model received on the next call:");
for (const message of scripted.calls[1]?.messages ?? []) console.log(`  ${describe(message)}`);
console.log(`\nThe model answered: ${String(result.messages.at(-1)?.content)}`);
