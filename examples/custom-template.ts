/**
 * Custom placeholder text: a template, a map per reason, and a function.
 *
 * The engine `repairToolCalls` is pure, so it can be tried on a history without an agent; the
 * middleware takes the very same `placeholder` option.
 *
 * Run it: `npx tsx examples/custom-template.ts`
 */
import { AIMessage, HumanMessage, type ToolMessage } from "@langchain/core/messages";
import { createRepairPolicy, repairToolCalls } from "tool-call-resilience";

const history = [
  new HumanMessage("What's the weather in Lyon, and the time in Osaka?"),
  // As ChatAnthropic keeps a turn whose second call's input was cut off mid-stream: both calls
  // are tool_use blocks the provider receives, and the broken one is also an invalid call.
  new AIMessage({
    content: [
      { type: "tool_use", id: "call_weather", name: "get_weather", input: { city: "Lyon" } },
      { type: "tool_use", id: "call_time", name: "get_time", input: {} },
    ],
    tool_calls: [{ id: "call_weather", name: "get_weather", args: { city: "Lyon" } }],
    invalid_tool_calls: [
      { id: "call_time", name: "get_time", args: '{"city": "Osa', error: "Unexpected end of JSON" },
    ],
  }),
  new HumanMessage("Hello?"),
];

function placeholders(policy: ReturnType<typeof createRepairPolicy>): string[] {
  return repairToolCalls(history, policy)
    .messages.filter((message): message is ToolMessage => (message as ToolMessage).type === "tool")
    .map((message) => `${message.tool_call_id}: ${String(message.content)}`);
}

// 1. One template for every reason, with {tool_name} and {tool_call_id}.
const template = createRepairPolicy({
  placeholder:
    "[{tool_name} did not answer (call {tool_call_id}); tell the user and do not retry.]",
});

// 2. A template per reason; a reason left out keeps the built-in text.
const perReason = createRepairPolicy({
  placeholder: {
    invalid_arguments: "[{tool_name} was not run: its arguments were cut off. Ask again.]",
  },
});

// 3. A function of the whole context, which can wrap the localized default text.
const fromFunction = createRepairPolicy({
  locale: "fr",
  placeholder: ({ toolName, reason, defaultText }) =>
    reason === "interrupted" ? `${defaultText} (outil : ${toolName})` : defaultText,
});

for (const [name, policy] of Object.entries({ template, perReason, fromFunction })) {
  console.log(`${name}:`);
  for (const line of placeholders(policy)) console.log(`  ${line}`);
}
