/**
 * Random broken histories of every client's shapes (Responses v0 output items, v1 content blocks,
 * ChatAnthropic's blocks, calls edited after the model answered, calls and results without ids,
 * Anthropic results in human messages, server-side tools, and plain LangChain messages, mixed in
 * one thread), repaired, then sent through every real converter and held to each provider's
 * rules. Repaired for every client at once (`"any"`), every body must pass; repaired for one
 * client, that client's body must. No real result is lost where its pairing is unambiguous.
 */
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type RepairTarget, repairToolCalls } from "../src/index.js";
import {
  ACCEPTED_BY_ALL,
  aiSdkViolation,
  anthropicMessagesOf,
  type Client,
  openAIMessagesOf,
  providerViolations,
  responsesInputOf,
} from "./helpers/provider-payloads.js";
import { wireHistoryArb } from "./helpers/wire-arbitraries.js";

// 10,000 runs in CI (`.ci/run` sets FC_NUM_RUNS); fewer in a plain `npm test`.
const RUNS = { numRuns: Number(process.env.FC_NUM_RUNS ?? 500) } as const;
/** Room for the runs on a busy machine: a few milliseconds each, at least the usual 20 s. */
const TIMEOUT = { timeout: Math.max(20_000, RUNS.numRuns * 8) } as const;

const CLIENTS: Record<Exclude<RepairTarget, "any">, Client> = {
  "openai-completions": "openai",
  "openai-responses": "responses",
  anthropic: "anthropic",
};

/** The messages of a history a client can send: junk entries are no messages at all. */
function sendable(messages: readonly unknown[]): BaseMessage[] {
  return messages.filter(
    (message): message is BaseMessage =>
      message !== null && typeof message === "object" && "type" in message,
  );
}

type Fields = Record<string, unknown>;

/**
 * The call ids a client's converter sends for one AI message alone. A converter that refuses a
 * message (a call without an id) sends nothing, but the calls it would have sent still count:
 * the ids of the channels that client reads, each as often as the channel that has it most.
 */
function sentIds(message: BaseMessage, client: Client): string[] {
  try {
    if (client === "openai") {
      const [converted] = openAIMessagesOf([message]) as Fields[];
      return ((converted?.tool_calls as Fields[] | undefined) ?? []).map((call) => String(call.id));
    }
    if (client === "responses") {
      return (responsesInputOf([message]) as Fields[])
        .filter((item) =>
          ["function_call", "custom_tool_call", "computer_call"].includes(String(item.type)),
        )
        .map((item) => String(item.call_id));
    }
    const [converted] = anthropicMessagesOf([message]) as Fields[];
    const content = Array.isArray(converted?.content) ? (converted.content as Fields[]) : [];
    return content.filter((block) => block.type === "tool_use").map((block) => String(block.id));
  } catch {
    return idsOfChannels(message as AIMessage, client);
  }
}

function idsOfChannels(message: AIMessage, client: Client): string[] {
  const content = Array.isArray(message.content) ? (message.content as Fields[]) : [];
  const listed = (message.tool_calls ?? []).map((call) => call.id);
  const raw = ((message.additional_kwargs?.tool_calls as Fields[] | undefined) ?? []).map(
    (call) => call.id,
  );
  const v1 = (message.response_metadata as Fields)?.output_version === "v1";
  const blocks = content
    .filter((block) => block.type === (v1 ? "tool_call" : "tool_use"))
    .map((block) => block.id);
  const channels: unknown[][] =
    client === "openai"
      ? [listed.length > 0 ? listed : raw]
      : client === "anthropic"
        ? v1
          ? [blocks]
          : [blocks, listed]
        : [];
  const most = new Map<string, number>();
  for (const ids of channels) {
    const counts = new Map<string, number>();
    for (const id of ids)
      if (typeof id === "string" && id !== "") counts.set(id, (counts.get(id) ?? 0) + 1);
    for (const [id, count] of counts) most.set(id, Math.max(most.get(id) ?? 0, count));
  }
  return [...most].flatMap(([id, count]) => Array<string>(count).fill(id));
}

/** A real result of the input: a tool message, or a `tool_result` block of a human message. */
interface RealResult {
  readonly id: string;
  readonly content: unknown;
}

function resultsOf(history: readonly BaseMessage[]): RealResult[] {
  return history.flatMap((message): RealResult[] => {
    if (ToolMessage.isInstance(message)) {
      return [{ id: message.tool_call_id ?? "", content: message.content }];
    }
    if (HumanMessage.isInstance(message) && Array.isArray(message.content)) {
      return (message.content as Fields[])
        .filter((block) => block.type === "tool_result")
        .map((block) => ({ id: String(block.tool_use_id ?? ""), content: block.content }));
    }
    return [];
  });
}

/**
 * The real results whose pairing is unambiguous for these clients: an id that the clients send
 * on exactly one call of the whole history (counted per message as the client that sends it
 * most often does) and that exactly one result carries; and results without an id right after a
 * plain AI message with as many calls without an id (junk entries between them end the group).
 */
function unambiguousResults(entries: readonly unknown[], clients: readonly Client[]): RealResult[] {
  const history = sendable(entries);
  const calls = new Map<string, number>();
  for (const message of history) {
    if (!AIMessage.isInstance(message)) continue;
    const counts = new Map<string, number>();
    for (const client of clients) {
      const perClient = new Map<string, number>();
      for (const id of sentIds(message, client)) perClient.set(id, (perClient.get(id) ?? 0) + 1);
      for (const [id, count] of perClient) counts.set(id, Math.max(counts.get(id) ?? 0, count));
    }
    for (const [id, count] of counts) calls.set(id, (calls.get(id) ?? 0) + count);
  }
  const results = resultsOf(history);
  const unique = results.filter(
    (result) =>
      result.id !== "" &&
      calls.get(result.id) === 1 &&
      results.filter((other) => other.id === result.id).length === 1,
  );
  const idless: RealResult[] = [];
  entries.forEach((message, index) => {
    if (!AIMessage.isInstance(message) || typeof message.content !== "string") return;
    const callsWithoutId = (message.tool_calls ?? []).filter((call) => !call.id).length;
    if (callsWithoutId === 0) return;
    const group: ToolMessage[] = [];
    for (let at = index + 1; at < entries.length && ToolMessage.isInstance(entries[at]); at++) {
      group.push(entries[at] as ToolMessage);
    }
    const withoutId = group.filter((result) => !result.tool_call_id);
    if (withoutId.length === callsWithoutId) {
      idless.push(...withoutId.map((result) => ({ id: "", content: result.content })));
    }
  });
  return [...unique, ...idless];
}

/** Whether the repaired history still carries this result's content as a result. */
function carries(messages: readonly BaseMessage[], result: RealResult): boolean {
  return resultsOf(messages).some(
    (kept) => (result.id === "" || kept.id === result.id) && kept.content === result.content,
  );
}

describe("random histories of every client's shapes, repaired", () => {
  it("for every client at once: every client's body passes its provider's rules", TIMEOUT, () => {
    fc.assert(
      fc.property(wireHistoryArb, (history) => {
        const { messages } = repairToolCalls(history);
        expect(providerViolations(sendable(messages))).toEqual(ACCEPTED_BY_ALL);
      }),
      RUNS,
    );
  });

  for (const [target, client] of Object.entries(CLIENTS)) {
    it(`for ${target}: the body that client sends passes its provider's rules`, TIMEOUT, () => {
      fc.assert(
        fc.property(wireHistoryArb, (history) => {
          const { messages } = repairToolCalls(history, { target: target as RepairTarget });
          expect(providerViolations(sendable(messages))[client]).toEqual([]);
        }),
        RUNS,
      );
    });
  }

  it(
    "for every client at once: the AI SDK accepts it, sent on as ModelMessages",
    TIMEOUT,
    async () => {
      await fc.assert(
        fc.asyncProperty(wireHistoryArb, async (history) => {
          const { messages } = repairToolCalls(history);
          // The AI SDK refuses an empty prompt, broken or not.
          fc.pre(sendable(messages).length > 0);
          expect(await aiSdkViolation(sendable(messages))).toBeUndefined();
        }),
        RUNS,
      );
    },
  );

  it("loses no real result whose pairing is unambiguous, for any target", TIMEOUT, () => {
    fc.assert(
      fc.property(
        wireHistoryArb,
        fc.constantFrom<RepairTarget>("any", ...(Object.keys(CLIENTS) as RepairTarget[])),
        (history, target) => {
          const clients = target === "any" ? Object.values(CLIENTS) : [CLIENTS[target]];
          const { messages } = repairToolCalls(history, { target });
          for (const result of unambiguousResults(history, clients)) {
            expect(carries(sendable(messages), result), JSON.stringify(result)).toBe(true);
          }
        },
      ),
      RUNS,
    );
  });

  it(
    "is idempotent for every target: a repaired history comes back as the same array",
    TIMEOUT,
    () => {
      fc.assert(
        fc.property(
          wireHistoryArb,
          fc.constantFrom<RepairTarget>("any", ...(Object.keys(CLIENTS) as RepairTarget[])),
          (history, target) => {
            const once = repairToolCalls(history, { target });
            const twice = repairToolCalls(once.messages, { target });
            expect(twice.repairs).toEqual([]);
            expect(twice.messages).toBe(once.messages);
          },
        ),
        RUNS,
      );
    },
  );

  it("never changes the input", TIMEOUT, () => {
    fc.assert(
      fc.property(wireHistoryArb, (history) => {
        const before = JSON.stringify(history);
        repairToolCalls(history);
        repairToolCalls(history, { target: "openai-responses" });
        repairToolCalls(history, { target: "anthropic" });
        expect(JSON.stringify(history)).toBe(before);
      }),
      RUNS,
    );
  });

  it("generates every shape, broken as the clients break it", TIMEOUT, () => {
    const samples = fc.sample(wireHistoryArb, { numRuns: 1000, seed: 7 }).map(sendable);
    const rate = (predicate: (history: BaseMessage[]) => boolean) =>
      samples.filter(predicate).length / samples.length;
    const some = (history: BaseMessage[], test: (message: BaseMessage) => boolean) =>
      history.some(test);
    const metadata = (message: BaseMessage) => message.response_metadata as Fields;
    const rates = {
      responsesV0: rate((h) => some(h, (m) => Array.isArray(metadata(m)?.output))),
      v1: rate((h) => some(h, (m) => metadata(m)?.output_version === "v1")),
      anthropic: rate((h) => some(h, (m) => metadata(m)?.model_provider === "anthropic")),
      edited: rate((h) =>
        some(
          h,
          (m) =>
            AIMessage.isInstance(m) &&
            sentIds(m, "responses").length + sentIds(m, "anthropic").length >
              2 * (m.tool_calls?.length ?? 0),
        ),
      ),
      idless: rate((h) => some(h, (m) => ToolMessage.isInstance(m) && !m.tool_call_id)),
      blocks: rate((h) => some(h, (m) => HumanMessage.isInstance(m) && Array.isArray(m.content))),
      server: rate((h) => some(h, (m) => JSON.stringify(m).includes("web_search"))),
      custom: rate((h) => some(h, (m) => JSON.stringify(m).includes("custom_tool_call"))),
      computer: rate((h) => some(h, (m) => JSON.stringify(m).includes("computer_call"))),
      invalidOutput: rate((h) =>
        some(
          h,
          (m) =>
            Array.isArray(metadata(m)?.output) && (m as AIMessage).invalid_tool_calls?.length !== 0,
        ),
      ),
      refusedAsIs: rate((h) =>
        Object.values(providerViolations(h)).some((list) => list.length > 0),
      ),
    };
    expect(rates.responsesV0).toBeGreaterThan(0.3);
    expect(rates.v1).toBeGreaterThan(0.3);
    expect(rates.anthropic).toBeGreaterThan(0.3);
    expect(rates.edited).toBeGreaterThan(0.05);
    expect(rates.idless).toBeGreaterThan(0.1);
    expect(rates.blocks).toBeGreaterThan(0.1);
    expect(rates.server).toBeGreaterThan(0.1);
    expect(rates.custom).toBeGreaterThan(0.05);
    expect(rates.computer).toBeGreaterThan(0.05);
    expect(rates.invalidOutput).toBeGreaterThan(0.05);
    expect(rates.refusedAsIs).toBeGreaterThan(0.8);
  });
});
