/** Where a `persist` repair waits for the model call of its thread. */
import { describe, expect, it } from "vitest";
import { PendingInspections } from "../../src/telemetry/pending-inspections.js";
import type { Inspection } from "../../src/telemetry/recorder.js";

function inspection(messageCount: number): Inspection {
  return { outcome: "repaired", repairs: [], messageCount, startedAt: 0, endedAt: 1 };
}

describe("PendingInspections", () => {
  it("gives each thread its own inspections, oldest first, once", () => {
    const waiting = new PendingInspections();
    waiting.add("t1", inspection(1));
    waiting.add("t2", inspection(2));
    waiting.add("t1", inspection(3));
    expect(waiting.take("t1").map((found) => found.messageCount)).toEqual([1, 3]);
    expect(waiting.take("t1")).toEqual([]);
    expect(waiting.take("t2").map((found) => found.messageCount)).toEqual([2]);
  });

  it("keeps runs without a thread id in one queue of their own", () => {
    const waiting = new PendingInspections();
    waiting.add(undefined, inspection(1));
    expect(waiting.take("t1")).toEqual([]);
    expect(waiting.take(undefined)).toHaveLength(1);
  });

  it("holds at most 10,000 threads, dropping the oldest", () => {
    const waiting = new PendingInspections();
    for (let thread = 0; thread <= 10_000; thread++) waiting.add(`t${thread}`, inspection(thread));
    expect(waiting.take("t0")).toEqual([]);
    expect(waiting.take("t1")).toHaveLength(1);
    expect(waiting.take("t10000")).toHaveLength(1);
  });
});
