/**
 * `tool-call-resilience audit --fix` when a repair leaves a problem behind. No known input does
 * (the engine's repair is idempotent, and each written thread is checked again), so the check is
 * made to find one: the dangling calls a thread had are said to be dangling still.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { audit, auditFixture } from "../helpers/cli.js";

vi.mock("../../src/cli/audit-thread.js", async (importOriginal) => {
  const actual = await importOriginal<typeof import("../../src/cli/audit-thread.js")>();
  return {
    ...actual,
    problemsLeft: async (audit: Awaited<ReturnType<typeof actual.auditThread>>) => ({
      ...actual.problemsOf([]),
      dangling: audit.problems.dangling,
    }),
  };
});

const fixture = auditFixture;

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "tcr-audit-left-"));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

describe("audit --fix when problems are left after fixing", () => {
  it("exits 1, names what is left in each thread and in all, and still writes the output", async () => {
    const out = join(scratch, "left.jsonl");
    const run = await audit(["audit", fixture("ai-sdk.jsonl"), "--fix", "--out", out]);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe("");
    expect(run.stdout).toBe(
      [
        `${fixture("ai-sdk.jsonl")}:1: thread 0 (ai-sdk): 1 dangling; left after fixing: 1 dangling`,
        `Audited 1 thread(s), 3 message(s) (1 ai-sdk): 1 with problems: 1 dangling; left after fixing: 1 dangling. Threads written to ${out}.`,
        "",
      ].join("\n"),
    );
    expect(await readFile(out, "utf8")).toContain("tool-call");
  });

  it("gives machines the problems left, per thread and in the summary", async () => {
    const out = join(scratch, "left.json");
    const run = await audit([
      "audit",
      fixture("anthropic.json"),
      "--fix",
      "--out",
      out,
      "--format",
      "json",
    ]);
    expect(run.code).toBe(1);
    const report = JSON.parse(run.stdout);
    expect(report.threads[0]).toMatchObject({
      problems: { dangling: 1, misplaced: 1 },
      remaining: { dangling: 1 },
    });
    expect(report.summary).toMatchObject({
      remaining: { dangling: 1, misplaced: 0 },
      written: true,
    });
  });

  it("exits 0 when what was found is not what is left: fixed threads count for nothing", async () => {
    const out = join(scratch, "fixed.jsonl");
    // openai.jsonl has an invalid call and an orphan, no dangling one: all of it fixed.
    const run = await audit(["audit", fixture("openai.jsonl"), "--fix", "--out", out]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("; all fixed.");
  });
});
