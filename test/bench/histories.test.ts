/**
 * The benchmark's workloads are what their names say: the timings compare contenders on these
 * histories, so a history with the wrong shape would make every figure wrong.
 */
import { describe, expect, it } from "vitest";
import { answeringHandler, peerHook, readHistory, requestFor } from "../../bench/contenders.js";
import { buildHistory, SHAPES } from "../../bench/histories.js";
import { repairToolCalls } from "../../src/index.js";

describe("benchmark histories", () => {
  for (const shape of SHAPES) {
    for (const size of [10, 100, 1_000]) {
      it(`${shape} has exactly ${size} messages and as many dangling calls as it claims`, () => {
        const workload = buildHistory(size, shape);
        expect(workload.messages).toHaveLength(size);
        const { messages, repairs } = repairToolCalls(workload.messages);
        expect(repairs.filter((repair) => repair.kind === "placeholder_inserted")).toHaveLength(
          workload.dangling,
        );
        // And as many synthetic replies as it claims, before the user's "stop" after a turn's
        // unanswered calls; nothing else is broken.
        expect(repairs.filter((repair) => repair.kind === "turn_inserted")).toHaveLength(
          workload.turns,
        );
        expect(
          repairs.every(
            (repair) => repair.kind === "placeholder_inserted" || repair.kind === "turn_inserted",
          ),
        ).toBe(true);
        expect(messages).toHaveLength(size + workload.dangling + workload.turns);
        // A repair for the OpenAI client writes the placeholders alone.
        const forOpenAI = repairToolCalls(workload.messages, { target: "openai-completions" });
        expect(forOpenAI.repairs.map((repair) => repair.kind)).toEqual(
          Array.from({ length: workload.dangling }, () => "placeholder_inserted"),
        );
      });
    }
  }

  it("leaves no call unanswered in the clean shapes, and one in the one-dangling shapes", () => {
    expect(buildHistory(1_000, "clean")).toMatchObject({ dangling: 0, turns: 0 });
    expect(buildHistory(1_000, "parallel")).toMatchObject({ dangling: 0, turns: 0 });
    expect(buildHistory(1_000, "one-dangling")).toMatchObject({ dangling: 1, turns: 1 });
    expect(buildHistory(1_000, "parallel-one-dangling")).toMatchObject({ dangling: 1, turns: 1 });
    const tenPercent = buildHistory(1_000, "ten-percent-dangling");
    expect(tenPercent.dangling).toBe(Math.floor(tenPercent.calls / 10));
    // One call per turn: each dangling call is a turn the user's stop follows.
    expect(tenPercent.turns).toBe(tenPercent.dangling);
  });

  it("puts the one dangling call near the end, where a user's stop leaves it", () => {
    const { repairs } = repairToolCalls(buildHistory(10_000, "one-dangling").messages);
    expect(repairs[0]?.callIndex).toBeGreaterThan(9_990);
  });

  it("gives the peer the same job: it also answers every dangling call once", async () => {
    for (const shape of SHAPES) {
      const workload = buildHistory(100, shape);
      const { handler, lastReceived } = answeringHandler();
      await peerHook()(requestFor(workload.messages), handler);
      expect(lastReceived()).toHaveLength(workload.messages.length + workload.dangling);
    }
  });
});

describe("the floor loop", () => {
  it("reads each call id and each answered id", () => {
    const { messages } = buildHistory(8, "clean");
    // Two turns: each call id ("call_0_0", "call_1_0") is read twice, once on each side.
    expect(readHistory(messages)).toBe(4 * "call_0_0".length);
  });
});
