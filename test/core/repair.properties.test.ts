/**
 * Property-based tests of the repair engine over random broken histories of real LangChain
 * messages. The readers below are written independently of src/core/messages.ts on purpose.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { TURN_CATALOG } from "../../src/core/locales.js";
import { createRepairPolicy } from "../../src/core/policy.js";
import { repairToolCalls, repairToolCallsCarefully } from "../../src/core/repair-langchain.js";
import type { ToolCallRepair } from "../../src/index.js";
import {
  assignedLookingHistoryArb,
  brokenHistoryArb,
  CALL_IDS,
  cleanHistoryArb,
  repairOptionsArb,
} from "../helpers/arbitraries.js";

// FC_NUM_RUNS=20000 for a longer hunt.
const RUNS = { numRuns: Number(process.env.FC_NUM_RUNS ?? 300) } as const;

// ---------------------------------------------------------------------------------------------
// Independent readers of histories.

type Fields = Record<string, unknown>;

function fieldsOf(value: unknown): Fields | undefined {
  return value !== null && typeof value === "object" ? (value as Fields) : undefined;
}

function listOf(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

function kindOf(message: unknown): "ai" | "tool" | "other" {
  const type = fieldsOf(message)?.type;
  if (type === "ai") return "ai";
  if (type === "tool") return "tool";
  return "other";
}

function nonEmptyString(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

interface Call {
  readonly id: string | undefined;
  readonly name: string | undefined;
  /** Whether a placeholder for it must give `invalid_arguments` as its reason. */
  readonly invalidArguments: boolean;
}

function parsesAsJson(text: unknown): boolean {
  if (typeof text !== "string") return true;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * The calls of an AI message as one provider's client or another sends them, each once: the
 * entries of `tool_calls`, or the raw ones when it is empty; then Anthropic `tool_use` content
 * blocks, each the first call with its id (or the first without one) that no block has matched
 * yet, or a call of its own. A call's name is the first non-empty one any of them gives it. A
 * call listed in `invalid_tool_calls`, or with raw arguments that do not parse, needs
 * `invalid_arguments`.
 */
function callsOf(message: unknown): Call[] {
  const fields = fieldsOf(message);
  if (fields === undefined || kindOf(message) !== "ai") return [];
  const invalidIds = listOf(fields.invalid_tool_calls).map((call) => fieldsOf(call)?.id);
  const parsed = listOf(fields.tool_calls);
  const calls: {
    id: string | undefined;
    name: string | undefined;
    invalidArguments: boolean;
    block: boolean;
  }[] = (
    parsed.length > 0
      ? parsed
          .filter((call) => fieldsOf(call) !== undefined)
          .map((call) => {
            const id = nonEmptyString(fieldsOf(call)?.id);
            return {
              id,
              name: nonEmptyString(fieldsOf(call)?.name),
              invalidArguments: id !== undefined && invalidIds.includes(id),
            };
          })
      : listOf(fieldsOf(fields.additional_kwargs)?.tool_calls)
          .filter((call) => fieldsOf(call) !== undefined)
          .map((call) => {
            const fn = fieldsOf(fieldsOf(call)?.function);
            const id = nonEmptyString(fieldsOf(call)?.id);
            return {
              id,
              name: nonEmptyString(fn?.name),
              invalidArguments:
                (id !== undefined && invalidIds.includes(id)) || !parsesAsJson(fn?.arguments),
            };
          })
  ).map((call) => ({ ...call, block: false }));
  const blocks = Array.isArray(fields.content) ? (fields.content as unknown[]) : [];
  for (const block of blocks) {
    const blockFields = fieldsOf(block);
    if (blockFields?.type !== "tool_use") continue;
    const id = nonEmptyString(blockFields.id);
    const same = calls.find((call) => call.id === id && !call.block);
    if (same !== undefined) {
      same.block = true;
      same.name ??= nonEmptyString(blockFields.name);
      continue;
    }
    calls.push({
      id,
      name: nonEmptyString(blockFields.name),
      invalidArguments: id !== undefined && invalidIds.includes(id),
      block: true,
    });
  }
  return calls.map(({ id, name, invalidArguments }) => ({ id, name, invalidArguments }));
}

/** Whether every channel of an AI message gives each call a name (what the wire needs). */
function everyChannelNamed(message: unknown): boolean {
  const fields = fieldsOf(message);
  const listed = listOf(fields?.tool_calls).filter((call) => fieldsOf(call) !== undefined);
  if (listed.some((call) => nonEmptyString(fieldsOf(call)?.name) === undefined)) return false;
  const raw = listed.length > 0 ? [] : listOf(fieldsOf(fields?.additional_kwargs)?.tool_calls);
  const rawNamed = raw.every(
    (call) =>
      fieldsOf(call) === undefined ||
      nonEmptyString(fieldsOf(fieldsOf(call)?.function)?.name) !== undefined,
  );
  const blocks = listOf(fields?.content).filter((block) => fieldsOf(block)?.type === "tool_use");
  return rawNamed && blocks.every((block) => nonEmptyString(fieldsOf(block)?.name) !== undefined);
}

/** The distinct ids an AI message calls, in order of first appearance. */
function callIdsOf(message: unknown): string[] {
  const ids: string[] = [];
  for (const call of callsOf(message)) {
    if (call.id !== undefined && !ids.includes(call.id)) ids.push(call.id);
  }
  return ids;
}

function answeredIdOf(message: unknown): string | undefined {
  return kindOf(message) === "tool" ? nonEmptyString(fieldsOf(message)?.tool_call_id) : undefined;
}

/** Indices of the tool messages directly after `index`. */
function groupAfter(messages: readonly unknown[], index: number): number[] {
  const group: number[] = [];
  for (let at = index + 1; at < messages.length && kindOf(messages[at]) === "tool"; at++) {
    group.push(at);
  }
  return group;
}

/** Index of the message whose group the message at `index` stands in, or -1. */
function groupOwnerOf(messages: readonly unknown[], index: number): number {
  let at = index - 1;
  while (at >= 0 && kindOf(messages[at]) === "tool") at--;
  return at >= 0 && kindOf(messages[at]) === "ai" ? at : -1;
}

function isSynthetic(message: unknown): boolean {
  return fieldsOf(fieldsOf(message)?.response_metadata)?.synthetic === true;
}

/** Whether a message is a user turn: a human message, or a generic or plain one with the user's role. */
function isUserMessage(message: unknown): boolean {
  const fields = fieldsOf(message);
  if (fields === undefined) return false;
  if (fields.type === "human") return true;
  if (fields.type !== undefined && fields.type !== "generic") return false;
  return fields.role === "user" || fields.role === "human";
}

/** Whether a message is a synthetic turn the engine wrote for the order of turns. */
function isSyntheticTurn(message: unknown): boolean {
  const metadata = fieldsOf(fieldsOf(message)?.response_metadata);
  return metadata?.synthetic === true && metadata.synthetic_reason === "turn_order";
}

/** Whether a message is a system message, which no wire counts as a turn. */
function isSystemMessage(message: unknown): boolean {
  const fields = fieldsOf(message);
  if (fields === undefined) return false;
  if (fields.type === "system") return true;
  if (fields.type !== undefined && fields.type !== "generic") return false;
  return fields.role === "system" || fields.role === "developer";
}

/**
 * The output indices of the synthetic turns a repair wrote, as its `turn_inserted` repairs report
 * them, each checked: a reply is an AI message without calls right after a tool message and right
 * before a user message; a gap is a human message right before an AI message, where it is the
 * first turn (an opening: nothing but system messages before it) or follows another AI message.
 * Every message marked as a synthetic turn is among them.
 */
function syntheticTurnsOf(messages: readonly unknown[], repairs: readonly ToolCallRepair[]) {
  const turns = new Set<number>();
  for (const repair of repairs) {
    if (repair.kind !== "turn_inserted") continue;
    const index = repair.outputIndex ?? -1;
    const turn = messages[index];
    expect(turns.has(index)).toBe(false);
    turns.add(index);
    expect(isSyntheticTurn(turn)).toBe(true);
    if (kindOf(turn) === "ai") {
      expect(callsOf(turn)).toEqual([]);
      expect(fieldsOf(turn)?.content).toBe(TURN_CATALOG.en.reply);
      expect(kindOf(messages[index - 1])).toBe("tool");
      expect(isUserMessage(messages[index + 1])).toBe(true);
    } else {
      expect(fieldsOf(turn)?.type).toBe("human");
      expect(fieldsOf(turn)?.content).toBe(TURN_CATALOG.en.gap);
      expect(kindOf(messages[index + 1])).toBe("ai");
      const before = messages.slice(0, index).filter((message) => !isSystemMessage(message));
      expect(before.length === 0 || kindOf(before.at(-1)) === "ai").toBe(true);
    }
  }
  const marked = messages.flatMap((message, index) => (isSyntheticTurn(message) ? [index] : []));
  expect(marked).toEqual([...turns].sort((a, b) => a - b));
  return turns;
}

/** A deep snapshot of everything a message holds (own enumerable properties, cloned). */
function snapshotOf(message: unknown): unknown {
  const fields = fieldsOf(message);
  return fields === undefined ? message : structuredClone({ ...fields });
}

/** The own property values of a message, to check that none of them was replaced. */
function shallowOf(message: unknown): unknown[] {
  const fields = fieldsOf(message);
  return fields === undefined ? [] : Object.values(fields);
}

/**
 * Whether an AI message needs a copy: a call without an id or a name, an id made twice, or a
 * call not listed in `tool_calls` (raw-only, or a `tool_use` block), which some clients would
 * not send.
 */
function needsCopy(message: unknown): boolean {
  const calls = callsOf(message);
  const ids = calls.map((call) => call.id);
  return (
    ids.includes(undefined) ||
    new Set(ids).size < ids.length ||
    !everyChannelNamed(message) ||
    calls.length > listOf(fieldsOf(message)?.tool_calls).filter((c) => fieldsOf(c)).length
  );
}

/**
 * The names a call without one may be given in the copy of its AI message in `output`: its
 * result's name, or `"unknown"` where that has none. The result is the tool message with its id in
 * the copy's group (a placeholder, named `"unknown"` then, when it has none); where the group has
 * none (`misplaced: "keep"` leaves a result where it stood), one of the real tool messages with its
 * id in `output`.
 */
function namesFromResult(
  output: readonly unknown[],
  copy: unknown,
  id: string | undefined,
): string[] {
  const answers = (message: unknown) => kindOf(message) === "tool" && answeredIdOf(message) === id;
  const nameOf = (result: unknown) =>
    isSynthetic(result) ? "unknown" : (nonEmptyString(fieldsOf(result)?.name) ?? "unknown");
  const inGroup = groupAfter(output, output.indexOf(copy))
    .map((at) => output[at])
    .find(answers);
  if (inGroup !== undefined) return [nameOf(inGroup)];
  return output.filter((message) => answers(message) && !isSynthetic(message)).map(nameOf);
}

/**
 * Whether `copy` is the engine's copy of `original` in `output`, made so that every call is listed
 * in `tool_calls` under an id of its own and with a name: the same calls in the same order, with
 * the same names (where none was given, its result's, see {@link namesFromResult}), the original ids
 * where they were missing or repeated replaced by `tcr_<message>_<position>` (or that with a
 * suffix), and the serialized fields (what checkpointers store) in step.
 */
function isListedCopy(
  copy: unknown,
  original: unknown,
  inputIndex: number,
  output: readonly unknown[],
): boolean {
  if (copy === original || kindOf(copy) !== "ai" || kindOf(original) !== "ai") return false;
  if (Object.getPrototypeOf(copy) !== Object.getPrototypeOf(original)) return false;
  if (!needsCopy(original)) return false;
  const before = callsOf(original);
  const after = callsOf(copy);
  const listed = listOf(fieldsOf(copy)?.tool_calls);
  const serialized = callsOf({ type: "ai", ...fieldsOf(fieldsOf(copy)?.lc_kwargs) });
  const afterIds = after.map((call) => call.id);
  return (
    before.length === after.length &&
    listed.length === after.length &&
    everyChannelNamed(copy) &&
    new Set(afterIds).size === afterIds.length &&
    serialized.length === after.length &&
    serialized.every((call, position) => call.id === after[position]?.id) &&
    before.every((call, position) => {
      const id = after[position]?.id ?? "";
      const repeated = before.slice(0, position).some((earlier) => earlier.id === call.id);
      const assigned = new RegExp(`^tcr_${inputIndex}_\\d+(_\\d+)?$`).test(id);
      return (
        (call.name === undefined
          ? namesFromResult(output, copy, id).includes(after[position]?.name ?? "")
          : after[position]?.name === call.name) &&
        (call.id === undefined || repeated ? assigned : id === call.id)
      );
    })
  );
}

/**
 * The input index of the result that `message`, a tool message not in the input, copies under a
 * new id: a second result for an id its AI message made twice answers the second call, whose id
 * was replaced. -1 when it is no such copy.
 */
function renamedResultOf(message: unknown, history: readonly unknown[]): number {
  const fields = fieldsOf(message);
  if (kindOf(message) !== "tool" || isSynthetic(message)) return -1;
  if (!String(fields?.tool_call_id).startsWith("tcr_")) return -1;
  return history.findIndex(
    (original) =>
      kindOf(original) === "tool" &&
      Object.getPrototypeOf(original) === Object.getPrototypeOf(message) &&
      fieldsOf(original)?.content === fields?.content &&
      answeredIdOf(original) !== fields?.tool_call_id,
  );
}

function windowStartOf(length: number, window: number | undefined): number {
  return window === undefined || window >= length ? 0 : length - window;
}

// ---------------------------------------------------------------------------------------------

describe("repairToolCalls properties", () => {
  it("answers every call of every AI message exactly once within the group right after it", () => {
    fc.assert(
      fc.property(brokenHistoryArb, (history) => {
        const { messages } = repairToolCalls(history);
        messages.forEach((message, index) => {
          if (kindOf(message) !== "ai") return;
          const calls = callsOf(message);
          expect(calls.every((call) => call.id !== undefined)).toBe(true);
          const group = groupAfter(messages, index).map((at) => answeredIdOf(messages[at]));
          for (const id of callIdsOf(message)) {
            expect(group.filter((answered) => answered === id)).toHaveLength(1);
          }
        });
      }),
      RUNS,
    );
  });

  it("leaves no tool message that fails to answer a call of its own group, nor one answering a call twice", () => {
    fc.assert(
      fc.property(brokenHistoryArb, (history) => {
        const { messages } = repairToolCalls(history, { orphans: "drop" });
        messages.forEach((message, index) => {
          if (kindOf(message) !== "tool") return;
          const owner = groupOwnerOf(messages, index);
          expect(owner).toBeGreaterThanOrEqual(0);
          const id = answeredIdOf(message);
          expect(id).toBeDefined();
          expect(callIdsOf(messages[owner])).toContain(id);
          const earlierInGroup = groupAfter(messages, owner)
            .filter((at) => at < index)
            .map((at) => answeredIdOf(messages[at]));
          expect(earlierInGroup).not.toContain(id);
        });
      }),
      RUNS,
    );
  });

  it("never mutates the input array nor any message in it", () => {
    fc.assert(
      fc.property(brokenHistoryArb, repairOptionsArb, (history, options) => {
        const elements = [...history];
        const snapshots = history.map(snapshotOf);
        const shallow = history.map(shallowOf);
        repairToolCalls(history, options);
        // The same elements, holding the same property values, holding the same data.
        expect(history).toHaveLength(elements.length);
        expect(history.findIndex((message, index) => message !== elements[index])).toBe(-1);
        const replaced = history.findIndex((message, index) => {
          const values = shallowOf(message);
          const before = shallow[index] ?? [];
          return (
            values.length !== before.length || values.some((value, at) => value !== before[at])
          );
        });
        expect(replaced).toBe(-1);
        expect(history.map(snapshotOf)).toEqual(snapshots);
      }),
      RUNS,
    );
  });

  it("is idempotent under every orphans × misplaced policy: a repaired history comes back as the same array with no repairs", () => {
    fc.assert(
      fc.property(brokenHistoryArb, repairOptionsArb, (history, options) => {
        const policy = createRepairPolicy(options);
        const once = repairToolCalls(history, policy);
        const twice = repairToolCalls(once.messages, policy);
        expect(twice.repairs).toEqual([]);
        expect(twice.messages).toBe(once.messages);
      }),
      RUNS,
    );
  });

  it("keeps the identity and order of every message it does not repair", () => {
    fc.assert(
      fc.property(brokenHistoryArb, repairOptionsArb, (history, options) => {
        const { messages, repairs } = repairToolCalls(history, options);
        // The synthetic turns (checked where they stand) are not the input's; the rest is.
        const turns = syntheticTurnsOf(messages, repairs);
        const inputIndex = new Map<unknown, number>();
        history.forEach((message, index) => {
          if (fieldsOf(message) !== undefined) inputIndex.set(message, index);
        });

        // Non-tool messages: same sequence, AI messages identical or their id-assigned copy.
        const inputOthers = history.flatMap((message, index) =>
          kindOf(message) === "tool" ? [] : [{ message, index }],
        );
        const outputOthers = messages.filter(
          (message, index) => kindOf(message) !== "tool" && !turns.has(index),
        );
        expect(outputOthers).toHaveLength(inputOthers.length);
        outputOthers.forEach((message, at) => {
          const original = inputOthers[at] as { message: unknown; index: number };
          if (message !== original.message) {
            expect(isListedCopy(message, original.message, original.index, messages)).toBe(true);
          }
        });

        // Tool messages: each input one at most once; new ones are placeholders; one that was
        // not reported as moved stays between the same non-tool neighbours.
        const moved = new Set(
          repairs.filter((repair) => repair.kind === "result_moved").map((r) => r.resultIndex),
        );
        const othersBefore = (list: readonly unknown[], index: number, skip = new Set<number>()) =>
          list.slice(0, index).filter((message, at) => kindOf(message) !== "tool" && !skip.has(at))
            .length;
        const seen = new Set<unknown>();
        messages.forEach((message, index) => {
          if (kindOf(message) !== "tool") return;
          let from = inputIndex.get(message);
          if (from === undefined && !isSynthetic(message)) {
            from = renamedResultOf(message, history);
            expect(from).toBeGreaterThanOrEqual(0);
          }
          if (from === undefined) return;
          const original = history[from];
          expect(seen.has(original)).toBe(false);
          seen.add(original);
          if (!moved.has(from)) {
            expect(othersBefore(messages, index, turns)).toBe(othersBefore(history, from));
          }
        });
      }),
      RUNS,
    );
  });

  it("returns a well-formed history as the same array with no repairs", () => {
    fc.assert(
      fc.property(
        cleanHistoryArb,
        fc.option(repairOptionsArb, { nil: undefined }),
        (history, options) => {
          const result = repairToolCalls(history, options);
          expect(result.repairs).toEqual([]);
          expect(result.messages).toBe(history);
        },
      ),
      RUNS,
    );
  });

  it("removes and reorders nothing when both orphans and misplaced results are kept", () => {
    fc.assert(
      fc.property(brokenHistoryArb, (history) => {
        const { messages, repairs } = repairToolCalls(history, {
          orphans: "keep",
          misplaced: "keep",
        });
        const turns = syntheticTurnsOf(messages, repairs);
        const inputSet = new Set(history.filter((message) => fieldsOf(message) !== undefined));
        const withoutPlaceholders = messages.filter(
          (message, index) =>
            !turns.has(index) &&
            (inputSet.has(message) || !(kindOf(message) === "tool" && isSynthetic(message))),
        );
        expect(withoutPlaceholders).toHaveLength(history.length);
        withoutPlaceholders.forEach((message, index) => {
          if (message === history[index]) return;
          if (kindOf(message) === "tool") expect(renamedResultOf(message, history)).toBe(index);
          else expect(isListedCopy(message, history[index], index, messages)).toBe(true);
        });
      }),
      RUNS,
    );
  });

  it("leaves no user message right after a tool message when repaired for every wire", () => {
    fc.assert(
      fc.property(brokenHistoryArb, (history) => {
        const { messages } = repairToolCalls(history);
        const afterResult = messages.findIndex(
          (message, index) => isUserMessage(message) && kindOf(messages[index - 1]) === "tool",
        );
        expect(afterResult).toBe(-1);
      }),
      RUNS,
    );
  });

  it("passes messages before the window through in place and keeps results of calls made before it", () => {
    let crossing = 0;
    fc.assert(
      fc.property(
        brokenHistoryArb,
        fc.nat({ max: 45 }),
        repairOptionsArb,
        (history, size, options) => {
          // Mostly a window shorter than the history; sometimes one that covers all of it.
          const window = 1 + (size % (history.length + 1));
          const { messages } = repairToolCalls(history, { ...options, window });
          const start = windowStartOf(history.length, window);
          for (let index = 0; index < start; index++) {
            expect(messages[index]).toBe(history[index]);
          }
          const callsBefore = new Set(history.slice(0, start).flatMap(callIdsOf));
          for (let index = start; index < history.length; index++) {
            const id = answeredIdOf(history[index]);
            if (id === undefined || !callsBefore.has(id)) continue;
            crossing++;
            const kept = messages.some(
              (message) =>
                message === history[index] || renamedResultOf(message, history) === index,
            );
            expect(kept).toBe(true);
          }
        },
      ),
      RUNS,
    );
    // Not vacuous: results answering a call before the window do come up.
    expect(crossing).toBeGreaterThan(RUNS.numRuns / 2);
  });

  it("gives every placeholder an error status, a call id of the AI message it follows, and that call's name", () => {
    fc.assert(
      fc.property(brokenHistoryArb, repairOptionsArb, (history, options) => {
        const { messages, repairs } = repairToolCalls(history, options);
        const inputSet = new Set(history);
        // A copied AI message's calls are its original's, position by position.
        const originals = new Map<unknown, unknown>();
        for (const repair of repairs) {
          if (!["id_assigned", "name_assigned", "call_listed"].includes(repair.kind)) continue;
          originals.set(messages[repair.outputIndex ?? -1], history[repair.callIndex ?? -1]);
        }
        let placeholders = 0;
        messages.forEach((message, index) => {
          if (inputSet.has(message) || kindOf(message) !== "tool") return;
          if (renamedResultOf(message, history) >= 0) return;
          placeholders++;
          const fields = fieldsOf(message) as Fields;
          expect(isSynthetic(message)).toBe(true);
          expect(fields.status).toBe("error");
          const owner = groupOwnerOf(messages, index);
          expect(owner).toBeGreaterThanOrEqual(0);
          const calls = callsOf(messages[owner]);
          const position = calls.findIndex((c) => c.id === fields.tool_call_id);
          expect(position).toBeGreaterThanOrEqual(0);
          const original = originals.get(messages[owner]) ?? messages[owner];
          const call = callsOf(original)[position];
          expect(fields.name).toBe(call?.name ?? "unknown");
          expect(fieldsOf(fields.response_metadata)?.synthetic_reason).toBe(
            call?.invalidArguments ? "invalid_arguments" : "interrupted",
          );
        });
        const inserted = repairs.filter((repair) => repair.kind === "placeholder_inserted");
        expect(inserted).toHaveLength(placeholders);
      }),
      RUNS,
    );
  });

  it("reports every repair at the output index of the message it concerns", () => {
    fc.assert(
      fc.property(brokenHistoryArb, repairOptionsArb, (history, options) => {
        const { messages, repairs } = repairToolCalls(history, options);
        syntheticTurnsOf(messages, repairs);
        for (const repair of repairs) {
          if (repair.kind === "orphan_dropped") {
            expect(messages).not.toContain(history[repair.resultIndex ?? -1]);
            expect(answeredIdOf(history[repair.resultIndex ?? -1]) ?? "").toBe(repair.toolCallId);
            continue;
          }
          const at = messages[repair.outputIndex ?? -1];
          if (repair.kind === "result_moved") {
            expect(at).toBe(history[repair.resultIndex ?? -1]);
            expect(answeredIdOf(at)).toBe(repair.toolCallId);
          } else if (repair.kind === "placeholder_inserted") {
            expect(isSynthetic(at)).toBe(true);
            expect(answeredIdOf(at)).toBe(repair.toolCallId);
          } else if (repair.kind === "turn_inserted") {
            // A reply names the tool message before it, and the AI message whose results it
            // follows; a gap, the message the repair took away from before the AI message after
            // it (an orphan dropped, a result moved).
            expect(isSyntheticTurn(at)).toBe(true);
            const outputIndex = repair.outputIndex ?? -1;
            if (kindOf(at) === "ai") {
              const before = fieldsOf(messages[outputIndex - 1]);
              expect(repair.toolCallId).toBe(before?.tool_call_id);
              expect(repair.toolName).toBe(nonEmptyString(before?.name) ?? "unknown");
              expect(repair.resultIndex).toBeUndefined();
              const ai = messages
                .slice(0, outputIndex)
                .filter((message) => kindOf(message) === "ai" && !isSyntheticTurn(message))
                .at(-1);
              if (repair.callIndex === undefined) {
                // None in the window: the engine reads nothing before it.
                const start = windowStartOf(history.length, options.window);
                const at = ai === undefined ? -1 : messages.indexOf(ai);
                expect(at).toBeLessThan(start);
              } else {
                const original = history[repair.callIndex];
                expect(
                  ai === original || isListedCopy(ai, original, repair.callIndex, messages),
                ).toBe(true);
              }
            } else {
              expect(repair.callIndex).toBeUndefined();
              const removed = repair.resultIndex ?? -1;
              expect(answeredIdOf(history[removed]) ?? "").toBe(repair.toolCallId);
              expect(repair.toolName).toBe(
                nonEmptyString(fieldsOf(history[removed])?.name) ?? "unknown",
              );
              const taken = repairs.filter(
                (other) =>
                  (other.kind === "orphan_dropped" || other.kind === "result_moved") &&
                  other.resultIndex === removed,
              );
              expect(taken).toHaveLength(1);
            }
          } else {
            expect(
              isListedCopy(at, history[repair.callIndex ?? -1], repair.callIndex ?? -1, messages),
            ).toBe(true);
            expect(callIdsOf(at)).toContain(repair.toolCallId);
          }
        }
      }),
      RUNS,
    );
  });

  // Fails against the current engine: an AI message whose calls are ["tcr_0_1", ""] has its id-less
  // second call given "tcr_0_1" too, so both get a placeholder with that id; a second repair then
  // drops one of them as an answer given twice. Histories holding ids the engine once assigned
  // (stored after an earlier repair) are where such ids come from.
  it("gives an id-less call an id that no other call of the same AI message has", () => {
    fc.assert(
      fc.property(assignedLookingHistoryArb, (history) => {
        const once = repairToolCalls(history);
        for (const repair of once.repairs) {
          if (repair.kind !== "id_assigned") continue;
          const ids = callsOf(history[repair.callIndex ?? -1]).map((call) => call.id);
          expect(ids).not.toContain(repair.toolCallId);
        }
        const twice = repairToolCalls(once.messages);
        expect(twice.repairs).toEqual([]);
      }),
      RUNS,
    );
  });

  it("generates histories that exercise every kind of repair", () => {
    const samples = fc.sample(brokenHistoryArb, { numRuns: 1000, seed: 42 });
    const rate = (predicate: (history: unknown[]) => boolean) =>
      samples.filter(predicate).length / samples.length;
    const repairsOf = (history: unknown[], kind: string) =>
      repairToolCalls(history).repairs.filter((repair) => repair.kind === kind);
    /** The kinds of the synthetic turns a repair writes: `ai` for a reply, `other` for a gap. */
    const turnsWritten = (history: unknown[]) => {
      const { messages, repairs } = repairToolCalls(history);
      return repairs
        .filter((repair) => repair.kind === "turn_inserted")
        .map((repair) => kindOf(messages[repair.outputIndex ?? -1]));
    };
    const rates = {
      placeholder: rate((history) => repairsOf(history, "placeholder_inserted").length > 0),
      moved: rate((history) => repairsOf(history, "result_moved").length > 0),
      movedFromAnotherGroup: rate((history) =>
        repairsOf(history, "result_moved").some(
          (repair) => groupOwnerOf(history, repair.resultIndex ?? -1) >= 0,
        ),
      ),
      movedFromAfterOther: rate((history) =>
        repairsOf(history, "result_moved").some(
          (repair) => groupOwnerOf(history, repair.resultIndex ?? -1) < 0,
        ),
      ),
      dropped: rate((history) => repairsOf(history, "orphan_dropped").length > 0),
      droppedDuplicate: rate((history) =>
        repairsOf(history, "orphan_dropped").some((repair) => {
          const index = repair.resultIndex ?? -1;
          const owner = groupOwnerOf(history, index);
          return (
            owner >= 0 &&
            groupAfter(history, owner).some(
              (at) => at < index && answeredIdOf(history[at]) === repair.toolCallId,
            )
          );
        }),
      ),
      assigned: rate((history) => repairsOf(history, "id_assigned").length > 0),
      clean: rate((history) => repairToolCalls(history).messages === history),
      junk: rate((history) => history.some((message) => fieldsOf(message) === undefined)),
      invalid: rate((history) =>
        history.some((message) => callsOf(message).some((call) => call.invalidArguments)),
      ),
      unsentInvalid: rate((history) =>
        history.some(
          (message) =>
            listOf(fieldsOf(message)?.invalid_tool_calls).length >
            callsOf(message).filter((call) => call.invalidArguments).length,
        ),
      ),
      raw: rate((history) =>
        history.some(
          (message) =>
            kindOf(message) === "ai" &&
            listOf(fieldsOf(message)?.tool_calls).length === 0 &&
            listOf(fieldsOf(fieldsOf(message)?.additional_kwargs)?.tool_calls).length > 0,
        ),
      ),
      duplicateIds: rate((history) =>
        history.some((message) => {
          const ids = callsOf(message).flatMap((call) => (call.id === undefined ? [] : [call.id]));
          return new Set(ids).size < ids.length;
        }),
      ),
      reusedIds: rate((history) =>
        CALL_IDS.some((id) => history.filter((m) => callIdsOf(m).includes(id)).length > 1),
      ),
      long: rate((history) => history.length >= 20),
      reply: rate((history) => turnsWritten(history).includes("ai")),
      gap: rate((history) => turnsWritten(history).includes("other")),
    };
    expect(rates.movedFromAnotherGroup).toBeGreaterThan(0.1);
    expect(rates.movedFromAfterOther).toBeGreaterThan(0.1);
    expect(rates.droppedDuplicate).toBeGreaterThan(0.1);
    expect(rates.placeholder).toBeGreaterThan(0.4);
    expect(rates.moved).toBeGreaterThan(0.2);
    expect(rates.dropped).toBeGreaterThan(0.2);
    expect(rates.assigned).toBeGreaterThan(0.15);
    expect(rates.clean).toBeGreaterThan(0.05);
    expect(rates.junk).toBeGreaterThan(0.1);
    expect(rates.invalid).toBeGreaterThan(0.1);
    expect(rates.unsentInvalid).toBeGreaterThan(0.05);
    expect(rates.raw).toBeGreaterThan(0.05);
    expect(rates.duplicateIds).toBeGreaterThan(0.1);
    expect(rates.reusedIds).toBeGreaterThan(0.3);
    expect(rates.long).toBeGreaterThan(0.1);
    expect(rates.reply).toBeGreaterThan(0.3);
    expect(rates.gap).toBeGreaterThan(0.15);
  });
});

describe("repairToolCalls' shortcuts", () => {
  /**
   * A clean history with some results taken out, and some of the AI answers written after results,
   * as a stop or a timeout leaves it (a user message may then follow a tool message).
   */
  const stoppedHistoryArb = fc
    .tuple(cleanHistoryArb, fc.array(fc.boolean(), { minLength: 60, maxLength: 60 }))
    .map(([history, keep]) =>
      history.filter((message, index) => {
        const answer =
          kindOf(message) === "ai" &&
          callsOf(message).length === 0 &&
          kindOf(history[index - 1]) === "tool";
        return (kindOf(message) !== "tool" && !answer) || keep[index % keep.length];
      }),
    );

  function expectSameRepair(history: unknown[], options: Parameters<typeof createRepairPolicy>[0]) {
    const policy = createRepairPolicy(options);
    const fast = repairToolCalls(history, policy);
    const careful = repairToolCallsCarefully(history, policy);
    expect(fast.repairs).toEqual(careful.repairs);
    expect(fast.messages).toHaveLength(careful.messages.length);
    const input = new Set(history);
    careful.messages.forEach((message, index) => {
      const other = fast.messages[index];
      if (input.has(message)) {
        expect(other).toBe(message);
        return;
      }
      const fields = (value: unknown) => {
        const { content, tool_call_id, name, status, response_metadata } = value as Fields;
        return { type: kindOf(value), content, tool_call_id, name, status, response_metadata };
      };
      expect(fields(other)).toEqual(fields(message));
    });
  }

  it("give the careful analysis' result when results are missing and nothing else is wrong", () => {
    fc.assert(
      fc.property(stoppedHistoryArb, repairOptionsArb, (history, options) => {
        expectSameRepair(history, options);
      }),
      RUNS,
    );
  });

  it("give the careful analysis' result on any broken history", () => {
    fc.assert(
      fc.property(brokenHistoryArb, repairOptionsArb, (history, options) => {
        expectSameRepair(history, options);
      }),
      RUNS,
    );
  });
});
