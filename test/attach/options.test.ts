/**
 * The options every attachment takes, defined once by their schema: each is described, the
 * defaults are filled in, and a bad or unknown option is named.
 */
import { describe, expect, it } from "vitest";
import { toolCallRepairOptionsSchema } from "../../src/attach/options.js";
import { repairOptionsShape } from "../../src/core/policy.js";

describe("toolCallRepairOptionsSchema", () => {
  it("describes every option", () => {
    const undescribed = Object.entries(toolCallRepairOptionsSchema.shape)
      .filter(([, field]) => (field.description ?? "").trim() === "")
      .map(([name]) => name);
    expect(undescribed).toEqual([]);
  });

  it("holds every option of the engine, and widens locale and target", () => {
    expect(Object.keys(toolCallRepairOptionsSchema.shape)).toEqual(
      expect.arrayContaining(Object.keys(repairOptionsShape)),
    );
    const parsed = toolCallRepairOptionsSchema.parse({ locale: () => "fr", target: "auto" });
    expect(typeof parsed.locale).toBe("function");
    expect(parsed.target).toBe("auto");
  });

  it("fills in the defaults of an empty options object", () => {
    expect(toolCallRepairOptionsSchema.parse({})).toEqual({
      markSynthetic: true,
      orphans: "drop",
      misplaced: "regroup",
      target: "auto",
      threadMetrics: true,
      threadSeriesLimit: 100,
      threadWindow: 900,
      threadIdAttribute: "raw",
      traceAllCalls: false,
    });
  });

  it("words a value outside a set as the engine does: the values it takes, then the one given", () => {
    const parsed = toolCallRepairOptionsSchema.safeParse({
      target: "openai",
      threadIdAttribute: "md5",
    });
    expect(
      parsed.error?.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`),
    ).toEqual([
      'target: expected one of "auto", "any", "openai-completions", "openai-responses", "anthropic"; got "openai"',
      'threadIdAttribute: expected one of "raw", "sha256", or a function that maps a thread id to a string; got "md5"',
    ]);
  });

  it("rejects an unknown option and a logger without warn", () => {
    expect(toolCallRepairOptionsSchema.safeParse({ windw: 3 }).success).toBe(false);
    expect(toolCallRepairOptionsSchema.safeParse({ logger: { error() {} } }).success).toBe(false);
    expect(toolCallRepairOptionsSchema.safeParse({ logger: false }).success).toBe(true);
  });
});
