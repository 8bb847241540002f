import { describe, expect, it } from "vitest";
import { USAGE } from "../../src/cli/arguments.js";
import { PROBLEM_DESCRIPTIONS, PROBLEMS, problemsOf } from "../../src/cli/audit-thread.js";
import { REPAIR_KINDS, type RepairKind } from "../../src/core/repair-kinds.js";
import { countRepairs, describeRepairs } from "../../src/core/summary.js";
import type { ToolCallRepair } from "../../src/index.js";
import * as semconv from "../../src/telemetry/semconv.js";

const KINDS = Object.keys(REPAIR_KINDS) as RepairKind[];

/** One repair of this kind, as the engine records it. */
function repairOf(kind: RepairKind): ToolCallRepair {
  return kind === "placeholder_inserted"
    ? { kind, toolCallId: "call_1", toolName: "search", reason: "interrupted" }
    : { kind, toolCallId: "call_1", toolName: "search" };
}

describe("the table of repair kinds", () => {
  it("gives every kind its own audit name and phrase", () => {
    const entries = KINDS.map((kind) => REPAIR_KINDS[kind]);
    const distinct = (values: readonly string[]) => new Set(values).size;

    expect(KINDS).toHaveLength(7);
    const { auditName, phrase } = REPAIR_KINDS.turn_inserted;
    expect({ auditName, phrase }).toEqual({
      auditName: "turn_order",
      phrase: { verb: "inserted", object: "synthetic turn(s) the order of turns needs" },
    });
    expect(distinct(entries.map((entry) => entry.auditName))).toBe(KINDS.length);
    expect(distinct(entries.map((entry) => entry.phrase.verb))).toBe(KINDS.length);
    expect(distinct(entries.map((entry) => entry.phrase.object))).toBe(KINDS.length);
  });

  it("records each kind on the metrics under its own name: one semconv constant per kind, none other", () => {
    const constants = Object.entries(semconv).filter(([name]) =>
      name.startsWith("REPAIR_KIND_VALUE_"),
    );
    expect(Object.fromEntries(constants)).toEqual(
      Object.fromEntries(KINDS.map((kind) => [`REPAIR_KIND_VALUE_${kind.toUpperCase()}`, kind])),
    );
    expect(semconv.REPAIR_KIND_VALUES).toEqual(
      Object.fromEntries(KINDS.map((kind) => [kind, kind])),
    );
  });

  it("counts a repair of each kind under that kind", () => {
    const counts = countRepairs(KINDS.map(repairOf));

    expect(Object.keys(counts)).toEqual(KINDS);
    for (const kind of KINDS) expect(counts[kind]).toBe(1);
  });

  it("describes a repair of each kind with its phrase", () => {
    for (const kind of KINDS) {
      const { verb, object } = REPAIR_KINDS[kind].phrase;
      expect(describeRepairs([repairOf(kind)])).toContain(
        `${verb} 1 ${object.replace("{result}", "tool result")}`,
      );
    }
  });

  it("names the placeholders tool results, or by the class of message they are", () => {
    const placeholders = [repairOf("placeholder_inserted"), repairOf("placeholder_inserted")];
    expect(describeRepairs(placeholders)).toBe(
      "Injecting 2 placeholder tool result(s) for dangling tool calls",
    );
    expect(describeRepairs(placeholders, "ToolMessage")).toBe(
      "Injecting 2 placeholder ToolMessage(s) for dangling tool calls",
    );
  });

  it("describes repairs of every kind in one line, placeholders first", () => {
    expect(describeRepairs(KINDS.map(repairOf))).toBe(
      "Injecting 1 placeholder tool result(s) for dangling tool calls; " +
        "moved 1 misplaced tool result(s); dropped 1 orphan tool result(s); " +
        "assigned 1 missing or repeated tool call id(s); named 1 tool call(s) that had no name; " +
        "listed 1 tool call(s) in tool_calls that not every client sends; " +
        "inserted 1 synthetic turn(s) the order of turns needs",
    );
    expect(describeRepairs([repairOf("orphan_dropped")])).toBe(
      "Repaired tool-call history: dropped 1 orphan tool result(s)",
    );
  });

  it("has the audit count a repair of each kind under its audit name", () => {
    for (const kind of KINDS) {
      const problems = problemsOf([repairOf(kind)]);
      expect(problems[REPAIR_KINDS[kind].auditName]).toBe(1);
      expect(Object.values(problems).reduce((sum, count) => sum + count, 0)).toBe(1);
    }
  });

  it("has the audit count a placeholder for unparsable arguments as invalid, not dangling", () => {
    const invalid: ToolCallRepair = {
      ...repairOf("placeholder_inserted"),
      reason: "invalid_arguments",
    };

    expect(problemsOf([invalid])).toMatchObject({ invalid: 1, dangling: 0 });
  });

  it("lists every kind's audit name among the audit's problems, and explains each in --help", () => {
    for (const kind of KINDS) expect(PROBLEMS).toContain(REPAIR_KINDS[kind].auditName);
    const help = USAGE.replace(/\n/g, " ");
    for (const problem of PROBLEMS) {
      expect(help).toContain(`${PROBLEM_DESCRIPTIONS[problem]} (${problem})`);
    }
  });
});
