/** The targets' verdicts, from measurements made up for the purpose: no timing in tests. */
import { describe, expect, it } from "vitest";
import type { Shape } from "../../bench/histories.js";
import { percentile } from "../../bench/measure.js";
import {
  type Comparison,
  evaluateTargets,
  type Measurements,
  type WorkloadComparison,
} from "../../bench/targets.js";

function comparison(ratio: number): Comparison {
  return { subject: "s", baseline: "b", subjectNs: ratio * 100, baselineNs: 100, ratio };
}

function workload(shape: Shape, size: number, ratio: number): WorkloadComparison {
  return { ...comparison(ratio), shape, size };
}

function measurements(overrides: Partial<Measurements> = {}): Measurements {
  return {
    engineVsFloor: [
      workload("clean", 100, 3),
      workload("clean", 1_000, 1.5),
      workload("parallel", 10_000, 1.2),
    ],
    middlewareVsPeer: [workload("clean", 10, 0.9), workload("one-dangling", 10_000, 0.02)],
    window: comparison(1.1),
    agentStep: comparison(1.03),
    bytesPerCall: [
      {
        contender: "engine",
        bySize: new Map([
          [100, 40],
          [100_000, 42],
        ]),
      },
    ],
    ...overrides,
  };
}

function verdict(measured: Measurements, starting: string) {
  const found = evaluateTargets(measured).find((entry) => entry.target.startsWith(starting));
  if (found === undefined) throw new Error(`no target starting with ${starting}`);
  return found;
}

describe("performance targets", () => {
  it("all pass when every measurement is within its bound", () => {
    expect(evaluateTargets(measurements()).every((entry) => entry.pass)).toBe(true);
  });

  it("hold clean histories to 2x the floor from 1,000 messages on, not below", () => {
    expect(verdict(measurements(), "Clean").pass).toBe(true);
    const slow = measurements({ engineVsFloor: [workload("parallel", 1_000, 2.1)] });
    expect(verdict(slow, "Clean")).toMatchObject({
      pass: false,
      measured: "at worst 2.10x the floor (parallel, 1,000 messages)",
    });
  });

  it("want one dangling call in 10,000 messages at least 20x faster than the peer", () => {
    const close = measurements({ middlewareVsPeer: [workload("one-dangling", 10_000, 1 / 19)] });
    expect(verdict(close, "One dangling")).toMatchObject({ pass: false, measured: "19.0x faster" });
  });

  it("fail when the middleware is slower than the peer on any workload", () => {
    const slower = measurements({
      middlewareVsPeer: [workload("one-dangling", 10_000, 0.01), workload("one-dangling", 10, 2)],
    });
    expect(verdict(slower, "Never slower")).toMatchObject({
      pass: false,
      measured: "at worst 0.50x faster (one-dangling, 10 messages)",
    });
  });

  it("bound the window's growth and the agent step's overhead", () => {
    expect(verdict(measurements({ window: comparison(3.2) }), "Window").pass).toBe(false);
    expect(verdict(measurements({ agentStep: comparison(1.06) }), "createAgent")).toMatchObject({
      pass: false,
      measured: "+6.0%",
    });
  });

  it("fail an allocation that grows with the history, and pass noise", () => {
    const growing = measurements({
      bytesPerCall: [
        {
          contender: "engine",
          bySize: new Map([
            [100, 40],
            [100_000, 800_040],
          ]),
        },
      ],
    });
    expect(verdict(growing, "No allocation").pass).toBe(false);
    expect(verdict(measurements(), "No allocation").pass).toBe(true);
  });

  it("fail a target that nothing measured", () => {
    expect(verdict(measurements({ engineVsFloor: [] }), "Clean")).toMatchObject({
      pass: false,
      measured: "not measured",
    });
  });
});

describe("what a verdict reads", () => {
  it("is the median of the rounds' ratios, and says how wide their middle half was", () => {
    const spread: [number, number] = [1.62, 1.75];
    const clean = { ...workload("clean", 1_000, 1.7), spread };
    expect(verdict(measurements({ engineVsFloor: [clean] }), "Clean").measured).toBe(
      "at worst 1.70x the floor (clean, 1,000 messages; middle half of rounds 1.62x-1.75x)",
    );
    const peer = {
      ...workload("parallel-one-dangling", 10, 0.8),
      spread: [0.75, 0.9] as [number, number],
    };
    expect(verdict(measurements({ middlewareVsPeer: [peer] }), "Never").measured).toBe(
      "at worst 1.25x faster (parallel-one-dangling, 10 messages; middle half of rounds 1.11x-1.33x)",
    );
  });

  it("takes quantiles between neighbours, whatever the order of the rounds", () => {
    expect(percentile([3, 1, 2, 4], 0.5)).toBe(2.5);
    expect(percentile([3, 1, 2, 4, 5], 0.25)).toBe(2);
    expect(percentile([1, 2, 3, 4], 0.75)).toBe(3.25);
    expect(percentile([7], 0.25)).toBe(7);
  });
});
