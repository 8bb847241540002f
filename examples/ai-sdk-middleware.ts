/**
 * The AI SDK middleware: `toolCallRepairMiddleware` in `wrapLanguageModel`, in front of a model
 * that refuses a broken tool-call history the way OpenAI does.
 *
 * - A history cut to its last messages keeps a tool result whose call was cut off. The AI SDK
 *   sends it as it is, and the model refuses it; through the middleware, the orphan result is
 *   dropped from the prompt and the model answers.
 * - A history whose tool call never got a result: `generateText` itself refuses it
 *   (`MissingToolResultsError`) before any middleware runs, so it is repaired first with the
 *   middleware's `repairMessages`, which records that repair with the model call it is sent with.
 *
 * The model here is a local stand-in (`MockLanguageModelV3` from `ai/test`), so nothing goes over
 * the network; with `openai("gpt-4.1")` or `anthropic("claude-sonnet-4-5")` it is the same code.
 *
 * Run it: `npx tsx examples/ai-sdk-middleware.ts`
 */
import { generateText, type ModelMessage, wrapLanguageModel } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import {
  THREAD_ID_PROVIDER_OPTIONS_KEY,
  toolCallRepairMiddleware,
} from "tool-call-resilience/ai-sdk";

type PromptMessage = { role: string; content: unknown };
type PromptPart = { type?: string; toolCallId?: string; output?: { value?: unknown } };

/** The ids of a prompt message's parts of one type. */
function idsOf(message: PromptMessage, type: string): string[] {
  const parts = Array.isArray(message.content) ? (message.content as PromptPart[]) : [];
  return parts.filter((part) => part.type === type).map((part) => String(part.toolCallId));
}

/** OpenAI's rule: each tool result answers a call of the assistant message right before it. */
function refusalOf(prompt: readonly PromptMessage[]): string | undefined {
  let open = new Set<string>();
  for (const message of prompt) {
    for (const id of message.role === "tool" ? idsOf(message, "tool-result") : []) {
      if (!open.delete(id))
        return `No tool call found for function call output with call_id ${id}.`;
    }
    if (message.role === "tool") continue;
    if (open.size > 0) return `No tool output found for function call ${[...open].join(", ")}.`;
    open = new Set(idsOf(message, "tool-call"));
  }
  return undefined;
}

/** What the last call sent to the model, one line per message. */
let received: string[] = [];

const strictModel = new MockLanguageModelV3({
  provider: "openai.responses",
  modelId: "gpt-4.1",
  doGenerate: async ({ prompt }) => {
    received = prompt.map((message) => `${message.role}: ${JSON.stringify(message.content)}`);
    const refusal = refusalOf(prompt);
    if (refusal !== undefined) throw new Error(`400 Bad Request: ${refusal}`);
    return {
      content: [{ type: "text", text: "Lisbon is sunny today." }],
      finishReason: { unified: "stop", raw: "stop" },
      usage: {
        inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
        outputTokens: { total: 5, text: 5, reasoning: undefined },
      },
      warnings: [],
    };
  },
});

// One middleware, its options validated once; its warnings go to stdout for this example.
const repair = toolCallRepairMiddleware({ logger: { warn: (message) => console.log(message) } });
const model = wrapLanguageModel({ model: strictModel, middleware: repair });

// 1. The history was cut to its last three messages: the weather call went, its result stayed.
const trimmed: ModelMessage[] = [
  {
    role: "tool",
    content: [
      {
        type: "tool-result",
        toolCallId: "call_weather",
        toolName: "weather",
        output: { type: "text", value: "21°C, sunny" },
      },
    ],
  },
  { role: "assistant", content: "It is 21°C and sunny in Lisbon." },
  { role: "user", content: "And today?" },
];
try {
  await generateText({ model: strictModel, messages: trimmed });
} catch (error) {
  console.log(`Without the middleware: ${(error as Error).message}`);
}
const trimmedAnswer = await generateText({ model, messages: trimmed });
console.log(`With the middleware, the model answered: ${trimmedAnswer.text}`);
console.log("What the model received:");
for (const line of received) console.log(`  ${line}`);

// 2. The user pressed stop while the weather tool ran: its call has no result.
const interrupted: ModelMessage[] = [
  { role: "user", content: "Weather in Lisbon?" },
  {
    role: "assistant",
    content: [
      { type: "tool-call", toolCallId: "call_1", toolName: "weather", input: { city: "Lisbon" } },
    ],
  },
  { role: "user", content: "Never mind, just guess." },
];
try {
  await generateText({ model, messages: interrupted });
} catch (error) {
  console.log(`\nThe AI SDK's own check, before any middleware: ${(error as Error).name}`);
}
const threadId = "weather-42";
const { messages } = repair.repairMessages(interrupted, { threadId });
const answer = await generateText({
  model,
  messages,
  // The same thread on the call: the repair above and this call are recorded as one model call.
  providerOptions: { [THREAD_ID_PROVIDER_OPTIONS_KEY]: { threadId } },
});
console.log(`Repaired with repairMessages, the model answered: ${answer.text}`);
console.log("What the model received:");
for (const line of received) console.log(`  ${line}`);
