import { describe, expect, it } from "vitest";
import {
  BUCKETS_PER_WINDOW,
  sharedThreadActivity,
  ThreadActivity,
  threadActivityOf,
  trackedSeriesBound,
} from "../../src/telemetry/thread-activity.js";

/** A store on a clock the test moves, with a 60 s window (4 s buckets) and a limit of `limit`. */
function storeAt(limit = 10) {
  let now = 1_750_000_000_000;
  const store = new ThreadActivity(() => now);
  store.configure(60, limit);
  return {
    store,
    advance: (seconds: number) => {
      now += seconds * 1000;
    },
  };
}

describe("ThreadActivity", () => {
  it("counts each thread's calls per model, most first", () => {
    const { store } = storeAt();
    store.record("a", "gpt-4.1");
    store.record("b", "gpt-4.1");
    store.record("b", "gpt-4.1");
    store.record("b", "claude");
    expect(store.top()).toEqual([
      { thread: "b", model: "gpt-4.1", count: 2 },
      { thread: "b", model: "claude", count: 1 },
      { thread: "a", model: "gpt-4.1", count: 1 },
    ]);
  });

  it("keeps a call for the window, and drops it at most one bucket later", () => {
    const { store, advance } = storeAt();
    store.record("a", "m");
    advance(59);
    expect(store.top()).toEqual([{ thread: "a", model: "m", count: 1 }]);
    advance(60 / BUCKETS_PER_WINDOW + 1);
    expect(store.top()).toEqual([]);
    expect(store.size).toBe(0);
  });

  it("drops the old calls of a thread and keeps its recent ones", () => {
    const { store, advance } = storeAt();
    store.record("a", "m");
    store.record("a", "m");
    advance(30);
    store.record("a", "m");
    advance(40);
    expect(store.top()).toEqual([{ thread: "a", model: "m", count: 1 }]);
  });

  it("reports at most its limit, ties to the most recently active", () => {
    const { store, advance } = storeAt(2);
    for (const thread of ["a", "b", "c"]) {
      store.record(thread, "m");
      advance(1);
    }
    expect(store.top().map((series) => series.thread)).toEqual(["c", "b"]);
  });

  it("takes the largest window and limit it is configured with", () => {
    const { store, advance } = storeAt(1);
    store.configure(30, 3);
    expect([store.windowSeconds, store.limit]).toEqual([60, 3]);
    store.record("a", "m");
    advance(45);
    expect(store.top()).toHaveLength(1);
  });

  it("tracks at most trackedSeriesBound series, forgetting the least active first", () => {
    const { store } = storeAt(5);
    const bound = trackedSeriesBound(5);
    expect(bound).toBe(1_000);
    for (let index = 0; index < 3 * bound; index++) {
      store.record(`t${index}`, "m");
      expect(store.size).toBeLessThanOrEqual(bound);
    }
    expect(store.size).toBeGreaterThanOrEqual(bound - bound / 10);
    store.record(`t${3 * bound - 1}`, "m");
    expect(store.top()[0]).toEqual({ thread: `t${3 * bound - 1}`, model: "m", count: 2 });
    expect(trackedSeriesBound(500)).toBe(5_000);
  });

  it("keeps the worst threads through a flood of threads with one dangling call each", () => {
    const { store, advance } = storeAt(5);
    for (let call = 0; call < 50; call++) store.record("worst", "m");
    for (let call = 0; call < 7; call++) store.record("second", "m");
    for (let index = 0; index < 5 * trackedSeriesBound(5); index++) {
      store.record(`one-${index}`, "m");
      if (index % 100 === 0) advance(0.1);
    }
    const [first, second, third] = store.top();
    expect(first).toEqual({ thread: "worst", model: "m", count: 50 });
    expect(second).toEqual({ thread: "second", model: "m", count: 7 });
    expect(third?.count).toBe(1);
    // Among threads with one call each, the most recent are kept.
    expect(third?.thread).toBe(`one-${5 * trackedSeriesBound(5) - 1}`);
  });

  it("holds a thread's calls in a bounded number of buckets, however many there are", () => {
    const { store, advance } = storeAt();
    for (let second = 0; second < 600; second++) {
      for (let call = 0; call < 100; call++) store.record("busy", "m");
      advance(1);
    }
    // 60 s of calls at 100 a second, give or take the bucket that is leaving.
    const [busy] = store.top();
    expect(busy?.count).toBeGreaterThanOrEqual(6_000);
    expect(busy?.count).toBeLessThanOrEqual(6_000 + 100 * (60 / BUCKETS_PER_WINDOW));
  });

  it("is shared per meter provider, and found by the producer only once something recorded", () => {
    const provider = {};
    expect(threadActivityOf(provider)).toBeUndefined();
    expect(sharedThreadActivity(provider)).toBe(sharedThreadActivity(provider));
    expect(threadActivityOf(provider)).toBe(sharedThreadActivity(provider));
    expect(sharedThreadActivity({})).not.toBe(sharedThreadActivity(provider));
  });
});
