/** Where a `persist` repair waits for the model call of its history. */
import { afterEach, describe, expect, it, vi } from "vitest";
import type { HistoryPlace } from "../../src/telemetry/call-identity.js";
import type { Inspection } from "../../src/telemetry/inspection.js";
import { MODEL_CALL_WAIT_MS, PendingInspections } from "../../src/telemetry/pending-inspections.js";

function inspection(messageCount: number): Inspection {
  return { outcome: "repaired", repairs: [], messageCount, startedAt: 0, endedAt: 1 };
}

/** A queue that keeps what it hands back, to be read by the test. */
function waitingWithHandBacks(waitMs?: number) {
  const handedBack: { place: HistoryPlace; counts: number[] }[] = [];
  const waiting = new PendingInspections(
    (place, inspections) =>
      void handedBack.push({ place, counts: inspections.map((found) => found.messageCount) }),
    waitMs,
  );
  return { waiting, handedBack };
}

const thread = (threadId: string | undefined, namespace?: string): HistoryPlace => ({
  threadId,
  namespace,
});

afterEach(() => {
  vi.useRealTimers();
});

describe("PendingInspections", () => {
  it("gives each history its own inspections, oldest first, once", () => {
    const { waiting, handedBack } = waitingWithHandBacks();
    waiting.add(thread("t1"), inspection(1));
    waiting.add(thread("t2"), inspection(2));
    waiting.add(thread("t1"), inspection(3));
    expect(waiting.take(thread("t1")).map((found) => found.messageCount)).toEqual([1, 3]);
    expect(waiting.take(thread("t1"))).toEqual([]);
    expect(waiting.take(thread("t2")).map((found) => found.messageCount)).toEqual([2]);
    expect(handedBack).toEqual([]);
  });

  it("tells apart the namespaces of one thread: a sub-agent's history is not its parent's", () => {
    const { waiting } = waitingWithHandBacks();
    waiting.add(thread("t1", "tools"), inspection(1));
    expect(waiting.take(thread("t1"))).toEqual([]);
    expect(waiting.take(thread("t1", "tools"))).toHaveLength(1);
  });

  it("tells apart two runs of one namespace: sub-agents run at once from one node", () => {
    const { waiting } = waitingWithHandBacks();
    const run = (id: string): HistoryPlace => ({ threadId: "t1", namespace: "tools", run: id });
    waiting.add(run("tools:a"), inspection(1));
    waiting.add(run("tools:b"), inspection(2));
    expect(waiting.take(run("tools:b")).map((found) => found.messageCount)).toEqual([2]);
    expect(waiting.take(run("tools:a")).map((found) => found.messageCount)).toEqual([1]);
  });

  it("keeps runs without a thread id in one queue of their own", () => {
    const { waiting } = waitingWithHandBacks();
    waiting.add(thread(undefined), inspection(1));
    expect(waiting.take(thread("t1"))).toEqual([]);
    expect(waiting.take(thread(undefined))).toHaveLength(1);
  });

  it("hands back what no model call took within the wait, once", () => {
    vi.useFakeTimers();
    const { waiting, handedBack } = waitingWithHandBacks();
    waiting.add(thread("t1"), inspection(1));
    waiting.add(thread("t1"), inspection(2));
    vi.advanceTimersByTime(MODEL_CALL_WAIT_MS - 1);
    expect(handedBack).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(handedBack).toEqual([{ place: thread("t1"), counts: [1, 2] }]);
    expect(waiting.take(thread("t1"))).toEqual([]);
    vi.advanceTimersByTime(MODEL_CALL_WAIT_MS);
    expect(handedBack).toHaveLength(1);
  });

  it("hands back nothing that a model call took", () => {
    vi.useFakeTimers();
    const { waiting, handedBack } = waitingWithHandBacks();
    waiting.add(thread("t1"), inspection(1));
    waiting.take(thread("t1"));
    vi.advanceTimersByTime(MODEL_CALL_WAIT_MS * 2);
    expect(handedBack).toEqual([]);
  });

  it("holds at most 10,000 histories, handing back the oldest one's", () => {
    const { waiting, handedBack } = waitingWithHandBacks();
    for (let index = 0; index <= 10_000; index++)
      waiting.add(thread(`t${index}`), inspection(index));
    expect(handedBack).toEqual([{ place: thread("t0"), counts: [0] }]);
    expect(waiting.take(thread("t0"))).toEqual([]);
    expect(waiting.take(thread("t1"))).toHaveLength(1);
    expect(waiting.take(thread("t10000"))).toHaveLength(1);
  });
});
