/**
 * `tool-call-resilience audit`: fixtures of every format, well formed and malformed, run through
 * the command line as a user runs it (in-process for the details, as a process for the exit code).
 */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../../src/cli/run.js";
import { aiSdkRefusal } from "../helpers/native-formats.js";
import { anthropicViolations, openAIViolations } from "../helpers/provider-rules.js";

const fixtures = fileURLToPath(new URL("../fixtures/audit/", import.meta.url));
const fixture = (name: string) => join(fixtures, name);

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

async function audit(
  args: string[],
  options: { stdin?: NodeJS.ReadableStream; tty?: boolean } = {},
): Promise<Run> {
  let stdout = "";
  let stderr = "";
  const code = await runCli(args, {
    stdin: options.stdin ?? new PassThrough(),
    stdout: {
      write: (text: string) => {
        stdout += text;
      },
    },
    stderr: {
      write: (text: string) => {
        stderr += text;
        return true;
      },
      isTTY: options.tty ?? false,
    },
  });
  return { code, stdout, stderr };
}

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "tcr-audit-"));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

describe("audit: the report", () => {
  it("names each thread with problems by file, line, id and format, and sums them up", async () => {
    const run = await audit(["audit", fixture("openai.jsonl")]);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain(
      `${fixture("openai.jsonl")}:1: thread 0 "support-1" (openai): 1 invalid`,
    );
    expect(run.stdout).toContain(
      `${fixture("openai.jsonl")}:3: thread 2 "support-3" (openai): 1 orphan`,
    );
    expect(run.stdout).not.toContain("support-2");
    expect(run.stdout).toContain(
      "Audited 3 thread(s), 9 message(s) (3 openai): 2 with problems: 1 invalid, 1 orphan.",
    );
  });

  it.each([
    ["anthropic.json", "anthropic", "1 dangling, 1 misplaced"],
    ["ai-sdk.jsonl", "ai-sdk", "1 dangling"],
    ["langchain-serialized.json", "langchain", "1 dangling"],
    ["langchain-stored.jsonl", "langchain", "1 dangling"],
    ["langchain-plain.json", "langchain", "1 dangling"],
  ])("detects %s as %s and finds %s", async (name, format, problems) => {
    const run = await audit(["audit", fixture(name)]);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(new RegExp(`thread 0.*\\(${format}\\): ${problems}\\n`));
  });

  it("exits 0 on a clean file, blank lines of JSONL included", async () => {
    const run = await audit(["audit", fixture("clean.jsonl")]);
    expect(run).toEqual({
      code: 0,
      stdout: "Audited 2 thread(s), 4 message(s) (2 openai): no problems found.\n",
      stderr: "",
    });
  });

  it("gives machines one JSON document: the threads with problems, their repairs, a summary", async () => {
    const run = await audit(["audit", fixture("openai.jsonl"), "--format", "json"]);
    expect(run.code).toBe(1);
    const report = JSON.parse(run.stdout);
    expect(report.threads).toEqual([
      expect.objectContaining({
        index: 0,
        id: "support-1",
        line: 1,
        format: "openai",
        problems: { invalid: 1 },
        repairs: [expect.objectContaining({ kind: "placeholder_inserted", toolCallId: "call_b" })],
      }),
      expect.objectContaining({ index: 2, id: "support-3", problems: { orphan: 1 } }),
    ]);
    expect(report.summary).toMatchObject({
      threads: 3,
      threadsWithProblems: 2,
      messages: 9,
      formats: { openai: 3 },
      problems: { dangling: 0, invalid: 1, orphan: 1, misplaced: 0 },
    });
  });

  it("writes the JSON report as it reads: an empty one is still one document", async () => {
    const run = await audit(["audit", fixture("clean.jsonl"), "--format", "json"]);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ threads: [], summary: { threads: 2 } });
  });

  it("reads standard input as a stream: a thread is reported before the input ends", async () => {
    const stdin = new PassThrough();
    let stdout = "";
    const reported = new Promise<void>((resolve) => {
      const done = runCli(["audit", "-"], {
        stdin,
        stdout: {
          write: (text: string) => {
            stdout += text;
            if (text.includes("thread 0")) resolve();
          },
        },
        stderr: { write: () => true },
      });
      void done;
    });
    stdin.write(
      '[{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]}]\n',
    );
    await reported;
    expect(stdout).toContain("<stdin>:1: thread 0 (openai): 1 dangling");
    stdin.end();
  });

  it("keeps a steady memory on a large file: 20,000 threads, each read, audited and let go", async () => {
    const path = join(scratch, "large.jsonl");
    const line = (index: number) =>
      JSON.stringify({
        thread_id: `t-${index}`,
        messages: [
          { role: "user", content: `question ${index} ${"x".repeat(200)}` },
          {
            role: "assistant",
            content: null,
            tool_calls: [
              { id: `c${index}`, type: "function", function: { name: "f", arguments: "{}" } },
            ],
          },
          ...(index % 10 === 0 ? [] : [{ role: "tool", tool_call_id: `c${index}`, content: "ok" }]),
        ],
      });
    await writeFile(
      path,
      `${Array.from({ length: 20_000 }, (_, index) => line(index)).join("\n")}\n`,
    );
    const run = await audit(["audit", path, "--format", "json"]);
    expect(run.code).toBe(1);
    const report = JSON.parse(run.stdout);
    expect(report.summary).toMatchObject({ threads: 20_000, threadsWithProblems: 2_000 });
    expect(report.summary.problems.dangling).toBe(2_000);
  }, 60_000);
});

describe("audit: --fix", () => {
  it.each([
    ["openai.jsonl", (messages: unknown[]) => openAIViolations(messages)],
    ["anthropic.json", (messages: unknown[]) => anthropicViolations(messages)],
  ])("writes %s repaired, in its layout, and the result audits clean", async (name, violations) => {
    const out = join(scratch, `fixed-${name}`);
    const run = await audit(["audit", fixture(name), "--fix", "--out", out]);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain(`Threads written to ${out}.`);
    const again = await audit(["audit", out]);
    expect(again.code).toBe(0);
    const text = await readFile(out, "utf8");
    const threads = name.endsWith(".jsonl")
      ? text
          .trim()
          .split("\n")
          .map((line) => JSON.parse(line))
      : JSON.parse(text);
    for (const thread of threads) expect(violations(thread.messages)).toEqual([]);
    // The layout of the input: JSONL stays one thread a line; the array stays an array.
    expect(text.startsWith("[")).toBe(name.endsWith(".json"));
  });

  it("writes AI SDK threads the AI SDK accepts, with the marker on the placeholder", async () => {
    const out = join(scratch, "fixed-ai-sdk.jsonl");
    await audit(["audit", fixture("ai-sdk.jsonl"), "--fix", "--out", out]);
    const [thread] = (await readFile(out, "utf8"))
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(await aiSdkRefusal(thread)).toBeUndefined();
    expect(JSON.stringify(thread)).toContain('"tool-call-resilience":{"synthetic":true');
  });

  it("writes LangChain threads back in the form they came in, untouched messages as they were", async () => {
    const out = join(scratch, "fixed-langchain.json");
    await audit(["audit", fixture("langchain-serialized.json"), "--fix", "--out", out]);
    const [fixed, clean] = JSON.parse(await readFile(out, "utf8"));
    const [original, originalClean] = JSON.parse(
      await readFile(fixture("langchain-serialized.json"), "utf8"),
    );
    expect(fixed.thread_id).toBe("lc-1");
    expect(fixed.messages).toHaveLength(4);
    expect(fixed.messages[0]).toEqual(original.messages[0]);
    expect(fixed.messages[2]).toMatchObject({
      lc: 1,
      type: "constructor",
      id: ["langchain_core", "messages", "ToolMessage"],
      kwargs: { tool_call_id: "call_deploy", status: "error" },
    });
    expect(clean).toEqual(originalClean);
  });

  it("writes placeholders in the language asked for", async () => {
    const out = join(scratch, "fixed-de.jsonl");
    await audit(["audit", fixture("ai-sdk.jsonl"), "--fix", "--out", out, "--locale", "de"]);
    expect(await readFile(out, "utf8")).not.toContain("Tool call was interrupted");
  });
});

describe("audit: bad input exits 2 with the file and line", () => {
  it.each([
    ["bad-json.jsonl", 4, /Expected ',' or '}' after property value in JSON/],
    ["truncated.json", 3, /Unexpected end of JSON input/],
    [
      "not-a-thread.jsonl",
      2,
      /Expected a thread: an array of messages, or an object with a `messages` array/,
    ],
    ["message-not-object.jsonl", 1, /Message 1 of the thread is not a JSON object/],
  ])("%s: line %i", async (name, line, message) => {
    const run = await audit(["audit", fixture(name)]);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr).toMatch(
      new RegExp(
        `^tool-call-resilience: ${fixture(name).replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}:${line}: `,
      ),
    );
    expect(run.stderr).toMatch(message);
  });

  it("leaves no output file behind when the input breaks half-way", async () => {
    const out = join(scratch, "never.jsonl");
    const run = await audit(["audit", fixture("bad-json.jsonl"), "--fix", "--out", out]);
    expect(run.code).toBe(2);
    await expect(readFile(out)).rejects.toThrow(/ENOENT/);
  });

  it("an output it cannot write", async () => {
    const out = join(scratch, "no-such-folder", "fixed.jsonl");
    const run = await audit(["audit", fixture("openai.jsonl"), "--fix", "--out", out]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`tool-call-resilience: cannot write ${out}: ENOENT`);
  });

  it("a file that is not there", async () => {
    const run = await audit(["audit", join(scratch, "missing.jsonl")]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/cannot read .*missing\.jsonl: .*ENOENT/);
  });

  it.each([
    [[], /Missing the command: audit/],
    [["check", "x"], /Unknown command "check"/],
    [["audit"], /Missing the input/],
    [["audit", "a", "b"], /Unexpected argument "b"/],
    [["audit", "a", "--fix"], /--fix needs --out/],
    [["audit", "a", "--out", "b"], /--out is only for --fix/],
    [["audit", "a", "--fix", "--out", "a"], /--out must not be the input file/],
    [["audit", "a", "--fix", "--out", "-"], /--out must be a file/],
    [["audit", "a", "--format", "xml"], /--format must be text or json/],
    [["audit", "a", "--locale", "not a tag"], /--locale must be a BCP 47 tag/],
    [["audit", "a", "--frobnicate"], /Unknown option '--frobnicate'/],
  ])("usage %j", async (args, message) => {
    const run = await audit(args);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(message);
    expect(run.stderr).toContain("Usage: tool-call-resilience audit");
  });
});

describe("audit: on a terminal", () => {
  it("draws a progress bar on standard error, and none when it is not a terminal", async () => {
    const onTerminal = await audit(["audit", fixture("openai.jsonl")], { tty: true });
    expect(onTerminal.stderr).toMatch(/thread\(s\)/);
    const piped = await audit(["audit", fixture("openai.jsonl")]);
    expect(piped.stderr).toBe("");
  });
});

describe("the tool-call-resilience command", () => {
  it("is the package's bin, and exits with the audit's code", async () => {
    const manifest = JSON.parse(
      await readFile(new URL("../../package.json", import.meta.url), "utf8"),
    );
    expect(manifest.bin).toEqual({ "tool-call-resilience": "./dist/cli/main.js" });
    const main = fileURLToPath(new URL("../../src/cli/main.ts", import.meta.url));
    expect((await readFile(main, "utf8")).startsWith("#!/usr/bin/env node\n")).toBe(true);
    const tsx = fileURLToPath(new URL("../../node_modules/.bin/tsx", import.meta.url));
    const run = promisify(execFile);
    const clean = await run(tsx, [main, "audit", fixture("clean.jsonl")]);
    expect(clean.stdout).toContain("no problems found");
    await expect(run(tsx, [main, "audit", fixture("ai-sdk.jsonl")])).rejects.toMatchObject({
      code: 1,
    });
    await expect(run(tsx, [main, "audit", fixture("truncated.json")])).rejects.toMatchObject({
      code: 2,
    });
    const help = await run(tsx, [main, "--help"]);
    expect(help.stdout).toContain(
      "Exit codes: 0 no problems, 1 problems found, 2 bad usage or bad input.",
    );
  }, 60_000);
});
