/**
 * Native message formats: histories kept in the shape a provider's own SDK takes, repaired before
 * they are sent, with the same engine, policy and telemetry as the LangChain attachments.
 *
 * - OpenAI Chat Completions `messages` (the `openai` SDK), with `repairOpenAIChatMessages`;
 * - Anthropic Messages `messages` (the `@anthropic-ai/sdk`), with `repairAnthropicMessages`;
 * - the Vercel AI SDK's `ModelMessage`s, with `repairModelMessages`, here sent through the AI
 *   SDK's own `generateText` to a mock model: refused before the repair, answered after it.
 *
 * They come from `tool-call-resilience/formats`, which loads no LangChain: an application on
 * these SDKs needs only `@opentelemetry/api` beside this package.
 *
 * Run it: `npx tsx examples/native-formats.ts`
 */
import { generateText, type ModelMessage } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import {
  repairAnthropicMessages,
  repairModelMessages,
  repairOpenAIChatMessages,
} from "tool-call-resilience/formats";

// One options object, validated once, reused for every call.
const options = { logger: false } as const;

// OpenAI: the user pressed stop while `search` ran; no tool message answers call_1.
const openAIHistory = [
  { role: "user", content: "Find flights to Lisbon" },
  {
    role: "assistant",
    content: null,
    tool_calls: [
      { id: "call_1", type: "function", function: { name: "search", arguments: '{"to":"LIS"}' } },
    ],
  },
  { role: "user", content: "Actually, Porto instead" },
];
const openAI = repairOpenAIChatMessages(openAIHistory, options, { model: "gpt-4.1" });
console.log("OpenAI Chat Completions, repaired:");
for (const message of openAI.messages) console.log(`  ${JSON.stringify(message)}`);

// Anthropic: two tool_use blocks, one tool_result; the other call's result was lost.
const anthropicHistory = [
  { role: "user", content: "Weather in Lisbon and Porto?" },
  {
    role: "assistant",
    content: [
      { type: "tool_use", id: "toolu_1", name: "weather", input: { city: "Lisbon" } },
      { type: "tool_use", id: "toolu_2", name: "weather", input: { city: "Porto" } },
    ],
  },
  {
    role: "user",
    content: [
      { type: "tool_result", tool_use_id: "toolu_1", content: "21°C, sunny" },
      { type: "text", text: "And tomorrow?" },
    ],
  },
];
const anthropic = repairAnthropicMessages(anthropicHistory, options);
console.log("\nAnthropic Messages, repaired (the user message right after the calls):");
console.log(`  ${JSON.stringify(anthropic.messages[2])}`);

// The AI SDK: a tool-call with no tool-result. generateText refuses it before any model call.
const history: ModelMessage[] = [
  { role: "user", content: "Book the 9:40 to Porto" },
  {
    role: "assistant",
    content: [
      { type: "tool-call", toolCallId: "tc_1", toolName: "book", input: { train: "9:40" } },
    ],
  },
  { role: "user", content: "Did it work?" },
];
const model = new MockLanguageModelV3({
  doGenerate: async () => ({
    content: [{ type: "text", text: "The booking was interrupted; shall I try again?" }],
    finishReason: { unified: "stop", raw: "stop" },
    usage: {
      inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
      outputTokens: { total: 9, text: 9, reasoning: undefined },
    },
    warnings: [],
  }),
});
try {
  await generateText({ model, messages: history });
} catch (error) {
  console.log(`\nAI SDK, as it was: ${(error as Error).name}: ${(error as Error).message}`);
}
const { messages } = repairModelMessages(history, options, { threadId: "booking-42" });
const { text } = await generateText({ model, messages });
console.log(`AI SDK, repaired: the model answered "${text}"`);
console.log(`  placeholder: ${JSON.stringify(messages[2])}`);
