/** outcomeOfCall: what a model call's outcome is, from the inspections of its request. */
import { describe, expect, it } from "vitest";
import { type Inspection, type Outcome, outcomeOfCall } from "../../src/telemetry/inspection.js";

function inspected(outcome: Outcome): Inspection {
  return { outcome, repairs: [], messageCount: 1, startedAt: 0, endedAt: 0 };
}

describe("outcomeOfCall", () => {
  it("is clean when every inspection was clean, or there was none", () => {
    expect(outcomeOfCall([inspected("clean"), inspected("clean")])).toBe("clean");
    expect(outcomeOfCall([])).toBe("clean");
  });

  it("is repaired when any inspection repaired and the last did not fail", () => {
    expect(outcomeOfCall([inspected("repaired"), inspected("clean")])).toBe("repaired");
    expect(outcomeOfCall([inspected("failed_open"), inspected("repaired")])).toBe("repaired");
  });

  it("is failed_open when the last inspection failed, whatever came before", () => {
    expect(outcomeOfCall([inspected("repaired"), inspected("failed_open")])).toBe("failed_open");
  });

  it("is failed_open when an earlier inspection failed and none repaired", () => {
    expect(outcomeOfCall([inspected("failed_open"), inspected("clean")])).toBe("failed_open");
  });
});
