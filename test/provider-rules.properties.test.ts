/**
 * Whatever a history looks like, the request the model receives after the repair is one every
 * provider accepts: random broken histories of real LangChain messages, repaired with the default
 * policy, run through the OpenAI and Anthropic clients' converters and Gemini's turn rules.
 */
import type { BaseMessage } from "@langchain/core/messages";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { repairToolCalls } from "../src/index.js";
import { assignedLookingHistoryArb, brokenHistoryArb } from "./helpers/arbitraries.js";
import { providerViolations } from "./helpers/provider-payloads.js";

// 10,000 runs in CI (`.ci/run` sets FC_NUM_RUNS); fewer in a plain `npm test`.
const RUNS = { numRuns: Number(process.env.FC_NUM_RUNS ?? 1_000) } as const;

/** The messages of a history a client can send: junk entries are no messages at all. */
function sendable(messages: readonly unknown[]): BaseMessage[] {
  return messages.filter(
    (message): message is BaseMessage =>
      message !== null && typeof message === "object" && "type" in message,
  );
}

type Fields = Record<string, unknown>;

/**
 * Whether an AI message makes calls that only one provider's client sends: calls only in the raw
 * OpenAI-shaped `additional_kwargs.tool_calls` (an older OpenAI integration's shape), which the
 * OpenAI client sends and the Anthropic client does not; or Anthropic `tool_use` content blocks
 * for calls not in `tool_calls` (ChatAnthropic's shape for a call whose input was cut off), which
 * the Anthropic client sends and the OpenAI client does not. The engine answers the calls either
 * client sends, so a history of one provider's shape sent to the other gets a result for a call
 * that client leaves out: see RELIABILITY.md.
 */
function callsOnlyIn(message: unknown, shape: "openai-raw" | "anthropic-blocks"): boolean {
  const fields = message as Fields | null;
  if (fields?.type !== "ai") return false;
  const listed = (Array.isArray(fields.tool_calls) ? fields.tool_calls : []) as Fields[];
  if (shape === "openai-raw") {
    const raw = (fields.additional_kwargs as Fields | undefined)?.tool_calls;
    return listed.length === 0 && Array.isArray(raw) && raw.length > 0;
  }
  const blocks = (Array.isArray(fields.content) ? fields.content : []) as Fields[];
  return blocks.some(
    (block) => block?.type === "tool_use" && !listed.some((call) => call.id === block.id),
  );
}

/** Whether an AI message has a `tool_use` block without an id: no result can name its call. */
function hasToolUseWithoutId(message: unknown): boolean {
  const fields = message as Fields | null;
  const blocks = (
    fields?.type === "ai" && Array.isArray(fields.content) ? fields.content : []
  ) as Fields[];
  return blocks.some((block) => block?.type === "tool_use" && !block.id);
}

/**
 * Whether an AI message makes one id twice. The engine answers such an id once, which OpenAI
 * accepts; Gemini counts calls, not ids, and wants a response for each.
 */
function makesAnIdTwice(message: unknown): boolean {
  const fields = message as Fields | null;
  if (fields?.type !== "ai" || !Array.isArray(fields.tool_calls)) return false;
  const ids = (fields.tool_calls as Fields[]).map((call) => call?.id);
  return new Set(ids).size < ids.length;
}

const historyArb = fc.oneof(brokenHistoryArb, assignedLookingHistoryArb);
const without = (...gaps: ((message: unknown) => boolean)[]) =>
  historyArb.filter((history) => !history.some((message) => gaps.some((gap) => gap(message))));
const openAIRaw = (message: unknown) => callsOnlyIn(message, "openai-raw");
const anthropicBlocks = (message: unknown) => callsOnlyIn(message, "anthropic-blocks");

describe("repaired histories", () => {
  it("pass OpenAI's tool-calling rules (histories without Anthropic-only calls: a known gap)", () => {
    fc.assert(
      fc.property(without(anthropicBlocks), (history) => {
        const { messages } = repairToolCalls(history);
        expect(providerViolations(sendable(messages)).openai).toEqual([]);
      }),
      RUNS,
    );
  });

  it("pass Anthropic's tool-calling rules (histories without OpenAI-only calls or tool_use blocks without ids: known gaps)", () => {
    fc.assert(
      fc.property(without(openAIRaw, hasToolUseWithoutId), (history) => {
        const { messages } = repairToolCalls(history);
        expect(providerViolations(sendable(messages)).anthropic).toEqual([]);
      }),
      RUNS,
    );
  });

  it("pass Gemini's turn rules (histories without calls only one client sends or ids made twice in one message: known gaps)", () => {
    fc.assert(
      fc.property(without(openAIRaw, anthropicBlocks, makesAnIdTwice), (history) => {
        const { messages } = repairToolCalls(history);
        expect(providerViolations(sendable(messages)).gemini).toEqual([]);
      }),
      RUNS,
    );
  });
});
