/**
 * Localized placeholder text, chosen per request from the agent's runtime context.
 *
 * Each user talks to the agent in their own language; the placeholder the model sees after a lost
 * tool result is written in that language too, from the built-in catalog.
 *
 * Run it: `npx tsx examples/localized.ts`
 */
import { AIMessage, HumanMessage, type ToolMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { createAgent, tool } from "langchain";
import { danglingToolCallMiddleware } from "tool-call-resilience";
import { z } from "zod";

const search = tool(async ({ query }) => `results for ${query}`, {
  name: "search",
  description: "Searches the web.",
  schema: z.object({ query: z.string() }),
});

const users = [
  { locale: "ja-JP", question: "続けてください" },
  { locale: "zh-Hant-TW", question: "請繼續" },
  { locale: "pt-BR", question: "Pode continuar?" },
  { locale: "sw-KE", question: "Endelea" }, // not in the catalog: English
];

for (const { locale, question } of users) {
  const model = fakeModel().respond(new AIMessage("OK"));
  const agent = createAgent({
    model,
    tools: [search],
    contextSchema: z.object({ locale: z.string() }),
    middleware: [
      danglingToolCallMiddleware({
        logger: false,
        locale: (request) => (request.runtime?.context as { locale?: string } | undefined)?.locale,
      }),
    ],
  });
  // A history whose search call lost its result (say, the server restarted mid-tool).
  const history = [
    new HumanMessage("Find the opening hours."),
    new AIMessage({
      content: "",
      tool_calls: [{ id: "call_1", name: "search", args: { query: "hours" } }],
    }),
    new HumanMessage(question),
  ];
  await agent.invoke({ messages: history }, { context: { locale } });
  const placeholder = model.calls[0]?.messages.find(
    (message): message is ToolMessage => message.type === "tool",
  );
  console.log(`${locale.padEnd(11)} ${String(placeholder?.content)}`);
}
