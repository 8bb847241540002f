/**
 * Whatever a native history looks like, the adapters' output is one the provider accepts: random
 * broken LangChain histories, sent unrepaired through the OpenAI and Anthropic clients' converters
 * (so each is a broken body in that provider's own format) and on to the AI SDK's `ModelMessage`,
 * then repaired by the adapter of the format.
 */
import type { BaseMessage } from "@langchain/core/messages";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  repairAnthropicMessages,
  repairModelMessages,
  repairOpenAIChatMessages,
} from "../src/index.js";
import { assignedLookingHistoryArb, brokenHistoryArb } from "./helpers/arbitraries.js";
import { aiSdkRefusal, modelMessagesOf } from "./helpers/native-formats.js";
import { anthropicMessagesOf, openAIMessagesOf } from "./helpers/provider-payloads.js";
import { anthropicViolations, openAIViolations } from "./helpers/provider-rules.js";

// 10,000 runs in CI (`.ci/run` sets FC_NUM_RUNS); fewer in a plain `npm test`.
const RUNS = { numRuns: Number(process.env.FC_NUM_RUNS ?? 1_000) } as const;
// The AI SDK's own check is asynchronous and slower: a tenth of the runs.
const ASYNC_RUNS = { numRuns: Math.max(100, Math.floor(RUNS.numRuns / 10)) } as const;

const quiet = { logger: false } as const;

function sendable(messages: readonly unknown[]): BaseMessage[] {
  return messages.filter(
    (message): message is BaseMessage =>
      message !== null && typeof message === "object" && "type" in message,
  );
}

/** The body a client builds, or none where the client refuses the history (calls without ids). */
function bodyOf(convert: (messages: BaseMessage[]) => unknown[]) {
  return (messages: BaseMessage[]): unknown[] | undefined => {
    try {
      return convert(messages);
    } catch {
      return undefined;
    }
  };
}

/** Takes the id of some calls and results away again: the native formats can hold those. */
function withoutSomeIds(history: unknown[], drop: readonly boolean[]): unknown[] {
  let at = 0;
  const strip = (value: Record<string, unknown>, key: string) => {
    const { [key]: _dropped, ...rest } = value;
    return drop[at++ % drop.length] ? rest : value;
  };
  return history.map((entry) => {
    const message = entry as Record<string, unknown>;
    if (Array.isArray(message.tool_calls)) {
      return { ...message, tool_calls: message.tool_calls.map((call) => strip(call, "id")) };
    }
    if (Array.isArray(message.content) && message.role === "assistant") {
      return {
        ...message,
        content: message.content.map((block: Record<string, unknown>) =>
          block.type === "tool_use" ? strip(block, "id") : block,
        ),
      };
    }
    return message;
  });
}

function holdsResults(message: unknown): boolean {
  const fields = message as { role?: unknown; content?: unknown };
  if (fields.role === "tool") return true;
  return (
    Array.isArray(fields.content) &&
    fields.content.some((block: { type?: unknown }) => block?.type === "tool_result")
  );
}

const historyArb = fc.oneof(brokenHistoryArb, assignedLookingHistoryArb).map(sendable);
const dropArb = fc.array(
  fc.integer({ min: 0, max: 7 }).map((n) => n === 0),
  { minLength: 1, maxLength: 8 },
);
const openAIArb = fc
  .tuple(historyArb.map(bodyOf(openAIMessagesOf)), dropArb)
  .filter((pair): pair is [unknown[], boolean[]] => pair[0] !== undefined)
  .map(([body, drop]) => withoutSomeIds(body, drop));
const anthropicArb = fc
  .tuple(historyArb.map(bodyOf(anthropicMessagesOf)), dropArb)
  .filter((pair): pair is [unknown[], boolean[]] => pair[0] !== undefined)
  .map(([body, drop]) => withoutSomeIds(body, drop));
const modelMessagesArb = openAIArb.map(modelMessagesOf);

describe("native histories, repaired by their adapter", () => {
  it("OpenAI Chat Completions: pass OpenAI's rules, once repaired for good, input untouched", () => {
    fc.assert(
      fc.property(openAIArb, (history) => {
        const before = structuredClone(history);
        const { messages } = repairOpenAIChatMessages(history, quiet);
        expect(openAIViolations(messages)).toEqual([]);
        expect(repairOpenAIChatMessages(messages, quiet).messages).toBe(messages);
        expect(history).toEqual(before);
      }),
      RUNS,
    );
  });

  it("Anthropic Messages: pass Anthropic's rules, once repaired for good, input untouched", () => {
    fc.assert(
      fc.property(anthropicArb, (history) => {
        const before = structuredClone(history);
        const { messages } = repairAnthropicMessages(history, quiet);
        expect(anthropicViolations(messages)).toEqual([]);
        expect(repairAnthropicMessages(messages, quiet).messages).toBe(messages);
        expect(history).toEqual(before);
      }),
      RUNS,
    );
  });

  it("AI SDK ModelMessage: accepted by the AI SDK itself, once repaired for good, input untouched", async () => {
    await fc.assert(
      fc.asyncProperty(modelMessagesArb, async (history) => {
        const before = structuredClone(history);
        const { messages } = repairModelMessages(history, quiet);
        // An empty prompt is refused whatever its tool calls; orphans alone repair to nothing.
        if (messages.length > 0) expect(await aiSdkRefusal(messages)).toBeUndefined();
        expect(repairModelMessages(messages, quiet).messages).toBe(messages);
        expect(history).toEqual(before);
      }),
      ASYNC_RUNS,
    );
  });

  it("messages other than results are passed on as the same objects, in their order", () => {
    fc.assert(
      fc.property(openAIArb, anthropicArb, (openAI, anthropic) => {
        for (const [input, result] of [
          [openAI, repairOpenAIChatMessages(openAI, quiet)],
          [anthropic, repairAnthropicMessages(anthropic, quiet)],
        ] as const) {
          const moved = new Set(
            result.repairs.flatMap((repair) =>
              repair.kind === "result_moved" ? [repair.resultIndex] : [],
            ),
          );
          const kept = new Set<unknown>(result.messages);
          // Results are written in call order within their group, so only the others keep theirs.
          const untouched = input.filter(
            (message, index) => kept.has(message) && !moved.has(index) && !holdsResults(message),
          );
          const inOutput = result.messages.filter((message) => untouched.includes(message));
          expect(inOutput).toEqual(untouched);
        }
      }),
      RUNS,
    );
  });
});
