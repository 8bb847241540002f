import { describe, expect, it } from "vitest";
import { sharedThreadSeries, ThreadSeries } from "../../src/telemetry/thread-series.js";

describe("ThreadSeries", () => {
  it("admits threads up to its limit, then only those it already admitted", () => {
    const series = new ThreadSeries(2);
    expect(["a", "b", "c", "a", "d", "b"].map((thread) => series.admit(thread))).toEqual([
      true,
      true,
      false,
      true,
      false,
      true,
    ]);
    expect(series.size).toBe(2);
  });

  it("is shared per meter provider and limit", () => {
    const provider = {};
    expect(sharedThreadSeries(provider, 5)).toBe(sharedThreadSeries(provider, 5));
    expect(sharedThreadSeries(provider, 5)).not.toBe(sharedThreadSeries(provider, 6));
    expect(sharedThreadSeries(provider, 5)).not.toBe(sharedThreadSeries({}, 5));
  });
});
