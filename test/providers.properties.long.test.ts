/**
 * Random broken histories of LangChain messages, repaired for every wire (`"any"`), then sent
 * through each provider's own chat model with only the network call replaced, beside the same
 * history unrepaired: every converter takes the repaired history where it took the unrepaired one;
 * the repaired request breaks none of the rules of tool calling (Converse's results right after
 * their calls, Mistral's counts and its reply before a user message, Gemini's counts, Chat
 * Completions' pairing), and no other rule (Converse's alternation and user-first, Gemini's names)
 * that the unrepaired request kept. Where a converter breaks a history whatever it is given
 * (Gemini's parallel results, see `providers.repaired.test.ts`), only the first is held.
 */
import { AIMessage, type BaseMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { repairToolCalls } from "../src/index.js";
import { brokenHistoryArb } from "./helpers/arbitraries.js";
import {
  CAPTURED_PROVIDERS,
  type CapturedProvider,
  capturingModel,
  violationsOf,
} from "./helpers/provider-captures.js";
import type { Violation } from "./helpers/provider-rules.js";

// 10,000 runs in CI (`.ci/run` sets FC_NUM_RUNS); fewer in a plain `npm test`.
const RUNS = { numRuns: Number(process.env.FC_NUM_RUNS ?? 200) } as const;
/** Room for the runs on a busy machine: a few milliseconds each, at least the usual 20 s. */
const TIMEOUT = { timeout: Math.max(20_000, RUNS.numRuns * 15) } as const;

/**
 * The messages of a history as these providers' own chat models write them: text content, calls
 * in `tool_calls` (content blocks of other providers' clients, such as Anthropic's `tool_use`, are
 * sent twice or refused by these converters, repaired or not); no junk entries; a system message
 * only first (Gemini's converters refuse one anywhere else).
 */
function sendable(history: readonly unknown[]): BaseMessage[] {
  const messages = history.filter(
    (message, index): message is BaseMessage =>
      message !== null &&
      typeof message === "object" &&
      "type" in message &&
      typeof (message as BaseMessage).content === "string" &&
      (index === 0 || !SystemMessage.isInstance(message)),
  );
  return messages.map((message) => namedAfterCall(message, messages));
}

/**
 * A result named as `ToolNode` names it, after the call it answers (by id, or for a result
 * without one, the first call without one of the AI message before it): Gemini holds a response
 * to its call's name, and a name the application got wrong is not the repair's to mend.
 */
function namedAfterCall(message: BaseMessage, history: readonly BaseMessage[]): BaseMessage {
  if (!ToolMessage.isInstance(message)) return message;
  const id = message.tool_call_id || undefined;
  let name: string | undefined;
  for (const entry of history.slice(0, history.indexOf(message))) {
    if (!AIMessage.isInstance(entry)) continue;
    for (const call of callsOf(entry)) {
      if (id === undefined ? call.id === undefined : call.id === id) name = call.name ?? name;
    }
  }
  if (name === undefined || name === message.name) return message;
  return new ToolMessage({ ...message, content: message.content, name });
}

/** Every call of an AI message, in whichever channel it stands: listed, invalid or raw. */
function callsOf(message: AIMessage): { id?: string; name?: string }[] {
  const raw = (message.additional_kwargs?.tool_calls ?? []) as {
    id?: string;
    function?: { name?: string };
  }[];
  return [
    ...(message.tool_calls ?? []),
    ...(message.invalid_tool_calls ?? []),
    ...raw.map((call) => ({ id: call?.id, name: call?.function?.name })),
  ].map((call) => ({ id: call?.id || undefined, name: call?.name || undefined }));
}

/** The calls' names of each AI message that makes two or more calls at once. */
function parallelTurns(messages: readonly BaseMessage[]): string[][] {
  return messages
    .filter((message) => AIMessage.isInstance(message) && (message.tool_calls?.length ?? 0) > 1)
    .map((message) => ((message as AIMessage).tool_calls ?? []).map((call) => call.name));
}

/** Whether the provider's own converter breaks this history whatever the repair sends. */
function brokenByConverter(provider: CapturedProvider, messages: readonly BaseMessage[]): boolean {
  if (provider === "google-genai") return parallelTurns(messages).length > 0;
  if (provider === "vertex")
    return parallelTurns(messages).some((names) => new Set(names).size > 1);
  return false;
}

/**
 * The rules of pairing and order around tool calls, which a repaired request never breaks: a
 * call without its results, results without their call, counts that differ, a user message
 * right after results.
 */
const TOOL_CALL_RULES =
  /toolResult|toolUse|number of function|function calls and responses|role 'tool'|'tool_calls'|tool_call_id/;

/** A rule, with the positions and names of one request taken out. */
function ruleOf(violation: Violation): string {
  return violation.message
    .replace(/^[\w.[\]]+: /, "")
    .replace(/\d+/g, "N")
    .split(/[:"]/)[0] as string;
}

/** Gemini's rule that a response carries its call's name, as {@link ruleOf} gives it. */
const GEMINI_NAME_RULE = "the name ";

type Sent = { readonly body: Record<string, unknown> } | { readonly error: string };

describe.each(CAPTURED_PROVIDERS)("%s, on repaired random histories", (provider) => {
  const { model, requests } = capturingModel(provider);
  const send = async (messages: BaseMessage[]): Promise<Sent> => {
    try {
      await model.invoke(messages);
      return { body: requests.at(-1) as Record<string, unknown> };
    } catch (error) {
      return { error: String(error) };
    }
  };

  it(
    "takes what it took unrepaired, and breaks no rule the unrepaired request kept",
    TIMEOUT,
    async () => {
      await fc.assert(
        fc.asyncProperty(brokenHistoryArb, async (history) => {
          const unrepaired = sendable(history);
          const repaired = repairToolCalls(unrepaired).messages as BaseMessage[];
          if (repaired.length === 0) return;
          const before = await send(unrepaired);
          const after = await send(repaired);
          if ("error" in after) {
            // The converter refuses something of the application's, repaired or not.
            expect(after.error).toBe("error" in before ? before.error : "no error");
            return;
          }
          if (brokenByConverter(provider, repaired)) return;
          const found = violationsOf(provider, after.body);
          expect(found.filter((violation) => TOOL_CALL_RULES.test(violation.message))).toEqual([]);
          if ("error" in before) return;
          const kept = new Set(violationsOf(provider, before.body).map(ruleOf));
          // Gemini's names: these histories name calls and results at random, and a result that
          // the repair moves to its call, or a call it lists, then meets a name that was never
          // its own. The names the repair writes are held in providers.repaired.test.ts.
          kept.add(GEMINI_NAME_RULE);
          expect(found.map(ruleOf).filter((rule) => !kept.has(rule))).toEqual([]);
        }),
        RUNS,
      );
    },
  );
});
