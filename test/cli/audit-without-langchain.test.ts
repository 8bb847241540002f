/**
 * `tool-call-resilience` in an app with no LangChain installed (an OpenAI SDK or AI SDK user): the
 * command runs as a process with every `@langchain/*` package made not found by a module hook
 * (`test/helpers/without-langchain.mjs`), as it is there. `--help`, `--version` and the native
 * formats need no LangChain; a LangChain thread or a checkpointer ends the audit with exit 2 and
 * one line that says what to install, not a stack trace.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { USAGE } from "../../src/cli/arguments.js";
import { PACKAGE_VERSION } from "../../src/version.js";
import { auditFixture } from "../helpers/cli.js";

const HOOK = fileURLToPath(new URL("../helpers/without-langchain.mjs", import.meta.url));
const MAIN = fileURLToPath(new URL("../../src/cli/main.ts", import.meta.url));

/** What the command printed, and its exit code. */
interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `node --import <no LangChain> --import tsx src/cli/main.ts <args>`. */
async function withoutLangChain(args: string[]): Promise<Run> {
  return promisify(execFile)(process.execPath, ["--import", HOOK, "--import", "tsx", MAIN, ...args])
    .then(({ stdout, stderr }) => ({ code: 0, stdout, stderr }))
    .catch((error: { code: number; stdout: string; stderr: string }) => ({
      code: error.code,
      stdout: error.stdout,
      stderr: error.stderr,
    }));
}

/** The one line a LangChain thread of `name` gets, starting on `line`. */
const needsLangChain = (name: string, line: number) =>
  `tool-call-resilience: ${auditFixture(name)}:${line}: Thread 0 is in LangChain's format, which needs @langchain/core: npm install @langchain/core\n`;

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "tcr-no-langchain-"));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

describe.concurrent("the command without LangChain installed", () => {
  it("has no LangChain to load: the hook hides it", async () => {
    const probe = await promisify(execFile)(process.execPath, [
      "--import",
      HOOK,
      "--input-type=module",
      "--eval",
      'await import("@langchain/core/messages").then(() => console.log("found"), (error) => console.log(error.code));',
    ]);
    expect(probe.stdout).toBe("ERR_MODULE_NOT_FOUND\n");
  });

  it("prints --help and --version, exit 0", async () => {
    const [help, version] = await Promise.all([
      withoutLangChain(["--help"]),
      withoutLangChain(["--version"]),
    ]);
    expect(help).toEqual({ code: 0, stdout: USAGE, stderr: "" });
    expect(version).toEqual({ code: 0, stdout: `${PACKAGE_VERSION}\n`, stderr: "" });
  }, 60_000);

  it.each([
    [
      "openai.jsonl",
      1,
      "Audited 3 thread(s), 9 message(s) (3 openai): 2 with problems: 1 invalid, 1 orphan.",
    ],
    [
      "anthropic.json",
      1,
      "Audited 2 thread(s), 4 message(s) (2 anthropic): 1 with problems: 1 dangling, 1 misplaced.",
    ],
    [
      "ai-sdk.jsonl",
      1,
      "Audited 1 thread(s), 3 message(s) (1 ai-sdk): 1 with problems: 1 dangling.",
    ],
    ["clean.jsonl", 0, "Audited 2 thread(s), 4 message(s) (2 openai): no problems found."],
  ])(
    "audits %s, exit %i",
    async (name, code, summary) => {
      const run = await withoutLangChain(["audit", auditFixture(name)]);
      expect(run.stderr).toBe("");
      expect(run.code).toBe(code);
      expect(run.stdout.endsWith(`${summary}\n`)).toBe(true);
    },
    60_000,
  );

  it.each([
    ["openai.jsonl", "2 with problems: 1 invalid, 1 orphan; all fixed."],
    ["anthropic.json", "1 with problems: 1 dangling, 1 misplaced; all fixed."],
    ["ai-sdk.jsonl", "1 with problems: 1 dangling; all fixed."],
  ])(
    "fixes %s, exit 0",
    async (name, summary) => {
      const out = join(scratch, `fixed-${name}`);
      const run = await withoutLangChain(["audit", auditFixture(name), "--fix", "--out", out]);
      expect(run.stderr).toBe("");
      expect(run.code).toBe(0);
      expect(run.stdout).toContain(`${summary} Threads written to ${out}.`);
      expect((await readFile(out, "utf8")).length).toBeGreaterThan(0);
    },
    60_000,
  );

  it.each([
    ["langchain-serialized.json", 2],
    ["langchain-stored.jsonl", 1],
    ["langchain-plain.json", 1],
  ])(
    "stops at a LangChain thread of %s: one line naming what to install, exit 2",
    async (name, line) => {
      const run = await withoutLangChain(["audit", auditFixture(name)]);
      expect(run.code).toBe(2);
      expect(run.stderr).toBe(needsLangChain(name, line));
      expect(run.stdout).toBe("No thread audited: 1 error(s), on standard error.\n");
    },
    60_000,
  );

  it("reports the threads before the first LangChain one, and stops there", async () => {
    const mixed = join(scratch, "mixed.jsonl");
    const [aiSdk, langChain] = await Promise.all(
      ["ai-sdk.jsonl", "langchain-stored.jsonl"].map(async (name) =>
        (await readFile(auditFixture(name), "utf8")).trim(),
      ),
    );
    await writeFile(mixed, `${aiSdk}\n${langChain}\n${aiSdk}\n${langChain}\n`);
    const run = await withoutLangChain(["audit", mixed]);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(
      `tool-call-resilience: ${mixed}:2: Thread 1 is in LangChain's format, which needs @langchain/core: npm install @langchain/core\n`,
    );
    expect(run.stdout).toBe(
      [
        `${mixed}:1: thread 0 (ai-sdk): 1 dangling`,
        "Audited 1 thread(s), 3 message(s) (1 ai-sdk): 1 with problems: 1 dangling. 1 error(s), on standard error.",
        "",
      ].join("\n"),
    );
  }, 60_000);

  it("writes nothing with --fix, and gives a whole JSON report with the error", async () => {
    const name = "langchain-stored.jsonl";
    const out = join(scratch, "never-written.jsonl");
    const fixed = await withoutLangChain(["audit", auditFixture(name), "--fix", "--out", out]);
    expect(fixed.code).toBe(2);
    expect(fixed.stderr).toBe(needsLangChain(name, 1));
    expect(fixed.stdout).toContain(`Threads not written to ${out}.`);
    await expect(readFile(out)).rejects.toMatchObject({ code: "ENOENT" });
    const json = await withoutLangChain(["audit", auditFixture(name), "--format", "json"]);
    expect(json.code).toBe(2);
    expect(json.stderr).toBe(needsLangChain(name, 1));
    const report = JSON.parse(json.stdout);
    expect(report.errors).toEqual([
      {
        file: auditFixture(name),
        line: 1,
        message:
          "Thread 0 is in LangChain's format, which needs @langchain/core: npm install @langchain/core",
      },
    ]);
    expect(report.summary).toMatchObject({ threads: 0, errors: 1 });
  }, 60_000);

  it("says a checkpointer needs its package and @langchain/core, exit 2, before connecting", async () => {
    // Nothing listens on port 1: the audit must fail on the packages, not on the connection.
    const run = await withoutLangChain([
      "audit",
      "--checkpointer",
      "postgres://app:s3cret@127.0.0.1:1/app",
    ]);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(
      "tool-call-resilience: postgres://app:***@127.0.0.1:1/app: Reading a checkpointer needs @langchain/langgraph-checkpoint-postgres and @langchain/core: npm install @langchain/langgraph-checkpoint-postgres @langchain/core\n",
    );
    expect(run.stdout).toBe("");
  }, 60_000);
});
