/**
 * An option that was removed is refused by name, with what replaced it, so that code written for
 * an older release learns where to go.
 */
import { describe, expect, it } from "vitest";
import { isOptionsError } from "../../src/core/errors.js";
import { type RecommendedViewsOptions, recommendedViews } from "../../src/setup/views.js";

describe("recommendedViews' removed options", () => {
  it("says threadCardinalityLimit was removed, and to set threadSeriesLimit on the middleware instead", () => {
    let refused: unknown;
    try {
      recommendedViews({ threadCardinalityLimit: 500 } as unknown as RecommendedViewsOptions);
    } catch (error) {
      refused = error;
    }
    expect(isOptionsError(refused)).toBe(true);
    expect((refused as Error).message).toBe(
      "Invalid recommendedViews options:\n- threadCardinalityLimit: was removed; set threadSeriesLimit on danglingToolCallMiddleware (or whichever attachment records) instead: the per-thread metric is no instrument, so no view bounds it",
    );
  });
});

describe("persist where nothing repairs a request", () => {
  it("is an unknown option of recommendedViews, not one that belongs to the middleware", () => {
    expect(() => recommendedViews({ persist: true } as unknown as RecommendedViewsOptions)).toThrow(
      "Invalid recommendedViews options:\n- unknown option(s) persist",
    );
  });
});
