/**
 * `tool-call-resilience audit`: fixtures of every format, well formed and malformed, run through
 * the command line as a user runs it (in-process for the details, as a process for the exit code).
 */
import { execFile } from "node:child_process";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { USAGE } from "../../src/cli/arguments.js";
import { auditThread, problemsLeft } from "../../src/cli/audit-thread.js";
import { runCli } from "../../src/cli/run.js";
import { TURN_CATALOG } from "../../src/core/locales.js";
import { audit, auditFixture } from "../helpers/cli.js";
import { aiSdkRefusal } from "../helpers/native-formats.js";
import { anthropicViolations, openAIViolations } from "../helpers/provider-rules.js";

const fixture = auditFixture;

/** A thread "d" with one dangling call, on one line. */
const DANGLING = JSON.stringify({
  thread_id: "d",
  messages: [
    { role: "user", content: "Book it" },
    {
      role: "assistant",
      content: null,
      tool_calls: [{ id: "c1", type: "function", function: { name: "book", arguments: "{}" } }],
    },
  ],
});
/** A result that answers no call. */
const ORPHAN = { role: "tool", tool_call_id: "ghost", content: "orphan" };

const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

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
    // A LangChain thread is repaired for every wire: its user message right after the dangling
    // call's (missing) result is out of the order Bedrock Converse and Mistral require.
    ["langchain-serialized.json", "langchain", "1 dangling, 1 turn_order"],
    ["langchain-stored.jsonl", "langchain", "1 dangling, 1 turn_order"],
    ["langchain-plain.json", "langchain", "1 dangling, 1 turn_order"],
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
      problems: { dangling: 0, invalid: 1, orphan: 1, misplaced: 0, turn_order: 0 },
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
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`; all fixed. Threads written to ${out}.`);
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
    // [human, ai(call_deploy), placeholder, synthetic reply, human]: the reply keeps the user's
    // message from following a tool result.
    expect(fixed.messages).toHaveLength(5);
    expect(fixed.messages[0]).toEqual(original.messages[0]);
    expect(fixed.messages[1]).toEqual(original.messages[1]);
    expect(fixed.messages[2]).toMatchObject({
      lc: 1,
      type: "constructor",
      id: ["langchain_core", "messages", "ToolMessage"],
      kwargs: { tool_call_id: "call_deploy", status: "error" },
    });
    expect(fixed.messages[3]).toMatchObject({
      lc: 1,
      type: "constructor",
      id: ["langchain_core", "messages", "AIMessage"],
      kwargs: {
        content: TURN_CATALOG.en.reply,
        tool_calls: [],
        response_metadata: { synthetic: true, synthetic_reason: "turn_order" },
      },
    });
    expect(fixed.messages[4]).toEqual(original.messages[2]);
    expect(clean).toEqual(originalClean);
  });

  it("writes placeholders in the language asked for", async () => {
    const out = join(scratch, "fixed-de.jsonl");
    await audit(["audit", fixture("ai-sdk.jsonl"), "--fix", "--out", out, "--locale", "de"]);
    expect(await readFile(out, "utf8")).not.toContain("Tool call was interrupted");
  });
});

describe("audit --fix: the exit code follows eslint --fix", () => {
  it.each([
    "openai.jsonl",
    "anthropic.json",
    "ai-sdk.jsonl",
    "langchain-serialized.json",
    "langchain-stored.jsonl",
    "langchain-plain.json",
  ])("exits 0 when everything found in %s was fixed and written", async (name) => {
    const out = join(scratch, `all-fixed-${name}`);
    const run = await audit(["audit", fixture(name), "--fix", "--out", out]);
    expect(run).toMatchObject({ code: 0, stderr: "" });
    expect(run.stdout).toMatch(/ with problems: .*; all fixed\. Threads written to /);
    // What was written audits clean: the re-check read the output, not the repair's word.
    expect((await audit(["audit", out])).code).toBe(0);
  });

  it("exits 0 on a clean input, and writes it byte for byte, blank lines included", async () => {
    const out = join(scratch, "clean-copy.jsonl");
    const run = await audit(["audit", fixture("clean.jsonl"), "--fix", "--out", out]);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(
      `Audited 2 thread(s), 4 message(s) (2 openai): no problems found. Threads written to ${out}.\n`,
    );
    expect(await readFile(out)).toEqual(await readFile(fixture("clean.jsonl")));
  });

  it("gives machines what is left in each thread and in all, and whether the output was written", async () => {
    const out = join(scratch, "fixed-report.jsonl");
    const run = await audit([
      "audit",
      fixture("openai.jsonl"),
      "--fix",
      "--out",
      out,
      "--format",
      "json",
    ]);
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(report.threads.map((thread: { remaining: unknown }) => thread.remaining)).toEqual([
      {},
      {},
    ]);
    expect(report.errors).toEqual([]);
    expect(report.summary).toMatchObject({
      threadsWithProblems: 2,
      problems: { invalid: 1, orphan: 1 },
      remaining: { dangling: 0, invalid: 0, orphan: 0, misplaced: 0, turn_order: 0 },
      errors: 0,
      out,
      written: true,
    });
  });

  it("re-checks a repaired thread as it is written: read back from its JSON, nothing is left", async () => {
    for (const name of ["openai.jsonl", "ai-sdk.jsonl", "langchain-stored.jsonl"]) {
      const [line] = (await readFile(fixture(name), "utf8")).trim().split("\n");
      const value = JSON.parse(line ?? "");
      const messages = Array.isArray(value) ? value : value.messages;
      const found = await auditThread(messages, {});
      expect(found.repairs.length).toBeGreaterThan(0);
      const written = JSON.parse(JSON.stringify(found.messages));
      const left = await problemsLeft(found, written, {});
      expect(Object.values(left).every((count) => count === 0)).toBe(true);
    }
  });

  it("exits 2 and writes nothing when the input has a broken line, saying so", async () => {
    const out = join(scratch, "never.jsonl");
    const run = await audit(["audit", fixture("cut-off.jsonl"), "--fix", "--out", out]);
    expect(run.code).toBe(2);
    expect(run.stdout).toMatch(
      / 1 error\(s\), on standard error\. Threads not written to .*never\.jsonl\.\n$/,
    );
    expect(run.stdout).not.toContain("all fixed");
    await expect(readFile(out)).rejects.toThrow(/ENOENT/);
    await expect(readdir(scratch)).resolves.not.toContainEqual(expect.stringMatching(/\.tmp$/));
  });

  it("leaves a file already at --out as it was when the input has errors", async () => {
    const out = join(scratch, "kept.jsonl");
    await writeFile(out, "what was there\n");
    const run = await audit(["audit", fixture("bad-json.jsonl"), "--fix", "--out", out]);
    expect(run.code).toBe(2);
    expect(await readFile(out, "utf8")).toBe("what was there\n");
  });

  it("exits 2 on an output it cannot write, naming that file, and still reports the threads", async () => {
    const out = join(scratch, "no-such-folder", "fixed.jsonl");
    const run = await audit(["audit", fixture("openai.jsonl"), "--fix", "--out", out]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(
      new RegExp(`^tool-call-resilience: ${escaped(out)}: cannot be written: ENOENT`),
    );
    expect(run.stdout).toContain('thread 2 "support-3" (openai): 1 orphan');
    expect(run.stdout).toContain(`Threads not written to ${out}.`);
  });
});

describe("audit: JSONL is read a line at a time", () => {
  it("names a line cut off by a crashed writer by its own number, and audits the threads after it", async () => {
    const path = fixture("cut-off.jsonl");
    const run = await audit(["audit", path]);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(`tool-call-resilience: ${path}:2: Unexpected end of JSON input\n`);
    expect(run.stdout).toBe(
      [
        `${path}:3: thread 1 "after-1" (openai): 1 orphan`,
        `${path}:5: thread 2 "after-2" (openai): 1 dangling`,
        "Audited 3 thread(s), 6 message(s) (3 openai): 2 with problems: 1 dangling, 1 orphan. 1 error(s), on standard error.",
        "",
      ].join("\n"),
    );
  });

  it("names every broken line, each with its own number", async () => {
    const path = fixture("bad-json.jsonl");
    const run = await audit(["audit", path]);
    expect(run.code).toBe(2);
    expect(run.stderr.split("\n")).toEqual([
      `tool-call-resilience: ${path}:3: Unexpected end of JSON input`,
      `tool-call-resilience: ${path}:4: Unexpected non-whitespace character after JSON`,
      "",
    ]);
    expect(run.stdout).toContain("Audited 2 thread(s), 2 message(s)");
  });

  it.each([
    [
      "not-a-thread.jsonl",
      2,
      "Expected a thread: an array of messages, or an object with a `messages` array",
      "Audited 1 thread(s), 1 message(s) (1 openai): none with problems. 1 error(s), on standard error.",
    ],
    [
      "message-not-object.jsonl",
      1,
      "Message 1 of the thread is not a JSON object",
      "No thread audited: 1 error(s), on standard error.",
    ],
    [
      "unauditable.jsonl",
      1,
      "Thread 0 cannot be audited: Invalid namespace",
      "Audited 1 thread(s), 1 message(s) (1 openai): 1 with problems: 1 orphan. 1 error(s), on standard error.",
    ],
  ])(
    "%s: a line that is no thread is an error of line %i, and the others are audited",
    async (name, line, message, summary) => {
      const run = await audit(["audit", fixture(name)]);
      expect(run.code).toBe(2);
      expect(run.stderr).toMatch(
        new RegExp(`^tool-call-resilience: ${escaped(fixture(name))}:${line}: ${escaped(message)}`),
      );
      // Never "no problems found" beside an error.
      expect(run.stdout).toContain(`${summary}\n`);
    },
  );

  it("reads a file named .jsonl as JSONL even when its first line is cut off", async () => {
    const path = join(scratch, "first-cut.jsonl");
    await writeFile(path, `{"thread_id":"cut","messages":[\n${DANGLING}\n`);
    const run = await audit(["audit", path]);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(`tool-call-resilience: ${path}:1: Unexpected end of JSON input\n`);
    expect(run.stdout).toContain(`${path}:2: thread 0 "d" (openai): 1 dangling`);
  });

  it("keeps the progress bar on a terminal, the broken line above it", async () => {
    const run = await audit(["audit", fixture("cut-off.jsonl")], { tty: true });
    expect(run.stderr).toMatch(/thread\(s\)/);
    expect(run.stderr).toContain("cut-off.jsonl:2: Unexpected end of JSON input");
  });

  it("holds one line at a time: a broken line among 20,000 costs only that line", async () => {
    const path = join(scratch, "large-broken.jsonl");
    const lines = Array.from({ length: 20_000 }, (_, index) =>
      index === 10_000 ? DANGLING.slice(0, 50) : DANGLING.replace('"d"', `"t-${index}"`),
    );
    await writeFile(path, `${lines.join("\n")}\n`);
    const run = await audit(["audit", path, "--format", "json"]);
    expect(run.code).toBe(2);
    const report = JSON.parse(run.stdout);
    expect(report.errors).toEqual([
      { file: path, line: 10_001, message: "Unexpected end of JSON input" },
    ]);
    expect(report.summary).toMatchObject({
      threads: 19_999,
      threadsWithProblems: 19_999,
      errors: 1,
    });
    expect(report.threads.at(-1)).toMatchObject({ id: "t-19999", line: 20_000 });
  }, 60_000);
});

describe("audit: which layout the input is in", () => {
  const pretty = JSON.stringify(
    [JSON.parse(DANGLING), { thread_id: "orphan", messages: [ORPHAN] }],
    null,
    2,
  );
  it.each([
    ["a pretty-printed array of threads", pretty, ["2: thread 0", "25: thread 1"], 0],
    [
      "an array printed with no indent",
      pretty.replace(/\n +/g, "\n"),
      ["2: thread 0", "25: thread 1"],
      0,
    ],
    [
      "a pretty-printed thread object",
      JSON.stringify(JSON.parse(DANGLING), null, 2),
      ["1: thread 0"],
      0,
    ],
    [
      "a pretty-printed array of messages",
      JSON.stringify([{ role: "user", content: "Hi" }, ORPHAN], null, 2),
      ["1: thread 0"],
      0,
    ],
    [
      "an array of threads on one line",
      JSON.stringify(JSON.parse(pretty)),
      ["1: thread 0", "1: thread 1"],
      0,
    ],
    ["JSONL", `${DANGLING}\n${DANGLING}\n`, ["1: thread 0", "2: thread 1"], 0],
    [
      "JSONL with Windows line ends",
      `${DANGLING}\r\n${DANGLING}\r\n`,
      ["1: thread 0", "2: thread 1"],
      0,
    ],
    [
      "JSONL whose first line is cut off",
      `${DANGLING.slice(0, 60)}\n${DANGLING}\n\n${DANGLING}\n`,
      ["2: thread 0", "4: thread 1"],
      1,
    ],
  ])("reads %s from standard input", async (_, input, threads, errors) => {
    const stdin = new PassThrough();
    stdin.end(input);
    const run = await audit(["audit", "-", "--format", "json"], { stdin });
    const report = JSON.parse(run.stdout);
    expect(
      report.threads.map(
        (thread: { line: number; index: number }) => `${thread.line}: thread ${thread.index}`,
      ),
    ).toEqual(threads);
    expect(report.summary.errors).toBe(errors);
    expect(run.code).toBe(errors > 0 ? 2 : 1);
  });

  it("reads a JSON document up to its first syntax error: past it nothing can be trusted", async () => {
    const path = fixture("broken-document.json");
    const run = await audit(["audit", path]);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(
      `tool-call-resilience: ${path}:18: Expected ',' or '}' after property value in JSON\n`,
    );
    expect(run.stdout).toContain(`${path}:2: thread 0 "first" (openai): 1 dangling`);
    expect(run.stdout).not.toContain("third");
  });

  it("reads on past an element of a JSON document that is no thread", async () => {
    const path = fixture("not-a-thread.json");
    const run = await audit(["audit", path]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(
      new RegExp(`^tool-call-resilience: ${escaped(path)}:6: Expected a thread`),
    );
    expect(run.stdout).toContain(`${path}:7: thread 1 "third" (openai): 1 orphan`);
  });

  it("names the last line of a JSON document that is cut off", async () => {
    const run = await audit(["audit", fixture("truncated.json")]);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(
      `tool-call-resilience: ${fixture("truncated.json")}:3: Unexpected end of JSON input\n`,
    );
    expect(run.stdout).toContain("Audited 1 thread(s), 1 message(s)");
  });
});

describe("audit --format json: one JSON document, whatever the input", () => {
  const listedError = (file: string, line: number | null, message: RegExp | string) => ({
    file,
    line,
    message: typeof message === "string" ? message : expect.stringMatching(message),
  });

  it("lists a broken JSONL line with its file and line, beside the threads after it", async () => {
    const path = fixture("cut-off.jsonl");
    const run = await audit(["audit", path, "--format", "json"]);
    expect(run.code).toBe(2);
    const report = JSON.parse(run.stdout);
    expect(Object.keys(report)).toEqual(["source", "threads", "errors", "summary"]);
    expect(report.errors).toEqual([listedError(path, 2, "Unexpected end of JSON input")]);
    expect(report.threads.map((thread: { id: string }) => thread.id)).toEqual([
      "after-1",
      "after-2",
    ]);
    expect(report.summary).toMatchObject({ threads: 3, threadsWithProblems: 2, errors: 1 });
    expect(run.stderr).toBe(`tool-call-resilience: ${path}:2: Unexpected end of JSON input\n`);
  });

  it.each([
    ["a broken JSON array", "truncated.json", 3, /^Unexpected end of JSON input$/],
    ["a thread of another shape", "not-a-thread.jsonl", 2, /^Expected a thread/],
    ["a message of another shape", "message-not-object.jsonl", 1, /^Message 1 of the thread/],
    ["a thread no reader takes", "unauditable.jsonl", 1, /^Thread 0 cannot be audited/],
  ])("lists %s as an error of its line", async (_, name, line, message) => {
    const run = await audit(["audit", fixture(name), "--format", "json"]);
    expect(run.code).toBe(2);
    const report = JSON.parse(run.stdout);
    expect(report.errors).toEqual([listedError(fixture(name), line, message)]);
    expect(report.summary.errors).toBe(1);
  });

  it("lists a file that cannot be read, with no line, and an empty report", async () => {
    const missing = join(scratch, "missing.jsonl");
    const run = await audit(["audit", missing, "--format", "json"]);
    expect(run.code).toBe(2);
    expect(JSON.parse(run.stdout)).toMatchObject({
      threads: [],
      errors: [listedError(missing, null, /^cannot be read: ENOENT/)],
      summary: { threads: 0, errors: 1 },
    });
    const folder = await audit(["audit", scratch, "--format", "json"]);
    expect(folder.code).toBe(2);
    expect(JSON.parse(folder.stdout).errors).toEqual([
      listedError(scratch, null, "cannot be read: not a file"),
    ]);
  });

  it("lists the first 1,000 errors, and counts them all in the summary", async () => {
    const path = join(scratch, "not-jsonl.jsonl");
    await writeFile(path, `${DANGLING}\n${"name,age\n".repeat(1_001)}${DANGLING}\n`);
    const run = await audit(["audit", path, "--format", "json"]);
    expect(run.code).toBe(2);
    const report = JSON.parse(run.stdout);
    expect(report.errors).toHaveLength(1_000);
    expect(report.errors[999]).toMatchObject({ line: 1_001 });
    expect(report.summary).toMatchObject({ threads: 2, errors: 1_001 });
    expect(run.stderr.trim().split("\n")).toHaveLength(1_001);
  });

  it("gives an empty input an empty report: no threads, no errors, exit 0", async () => {
    const path = join(scratch, "empty.jsonl");
    await writeFile(path, "\n\n");
    for (const input of [path, "-"]) {
      const stdin = new PassThrough();
      stdin.end();
      const run = await audit(["audit", input, "--format", "json"], { stdin });
      expect(run.code).toBe(0);
      expect(JSON.parse(run.stdout)).toMatchObject({
        threads: [],
        errors: [],
        summary: { threads: 0, errors: 0 },
      });
    }
  });

  it("lists an output that cannot be written under its own file, and says it was not written", async () => {
    const out = join(scratch, "no-such-folder", "fixed.jsonl");
    const run = await audit([
      "audit",
      fixture("openai.jsonl"),
      "--fix",
      "--out",
      out,
      "--format",
      "json",
    ]);
    expect(run.code).toBe(2);
    const report = JSON.parse(run.stdout);
    expect(report.errors).toEqual([listedError(out, null, /^cannot be written: ENOENT/)]);
    expect(report.summary).toMatchObject({ out, written: false, errors: 1 });
  });
});

describe("audit: a usage error is one line, and the way to the help", () => {
  it.each([
    [[], "Missing the command: audit"],
    [["check", "x"], 'Unknown command "check"; the command is audit'],
    [["audit"], 'Missing the input: a file, "-" for standard input, or --checkpointer <url>'],
    [["audit", "a", "b"], 'Unexpected argument "b": audit reads one input'],
    [["audit", "a", "--fix"], "--fix needs --out <file>"],
    [["audit", "a", "--out", "b"], "--out is only for --fix"],
    [
      ["audit", "a", "--fix", "--out", "a"],
      "--out must not be the input file: it is read as a stream",
    ],
    [
      ["audit", "a", "--fix", "--out", "-"],
      "--out must be a file: the report goes to standard output",
    ],
    [["audit", "a", "--format", "xml"], '--format must be text or json, not "xml"'],
    [
      ["audit", "a", "--locale", "not a tag"],
      '--locale must be a BCP 47 tag such as "de" or "pt-BR", not "not a tag"',
    ],
    [["audit", "a", "--frobnicate"], "Unknown option '--frobnicate'"],
    [["audit", "a", "--out"], "Option '--out <value>' argument missing"],
    [["audit", "a", "--thread", "t1"], "--thread is only for --checkpointer"],
    [
      ["audit", "--checkpointer", "postgres://h/db", "--fix", "--out", "b"],
      "--fix and --out are not for --checkpointer: the audit reads a checkpointer, and never writes to it",
    ],
    [
      ["audit", "a", "--checkpointer", "postgres://h/db"],
      '--checkpointer reads the threads: give no file as well (found "a")',
    ],
  ])("%j", async (args, message) => {
    const run = await audit(args);
    expect(run).toEqual({
      code: 2,
      stdout: "",
      stderr: `tool-call-resilience: ${message}\nRun 'tool-call-resilience audit --help' for usage.\n`,
    });
  });

  it("--help prints the whole usage on standard output, with the exit codes, and exits 0", async () => {
    for (const flag of ["--help", "-h"]) {
      const run = await audit(["audit", flag]);
      expect(run).toEqual({ code: 0, stdout: USAGE, stderr: "" });
    }
    expect(USAGE).toContain("Usage: tool-call-resilience audit <file|-> [options]");
    expect(USAGE).toContain(
      "tool-call-resilience audit --checkpointer <postgres-url> [--thread <id>] [options]",
    );
    expect(USAGE.replace(/\n/g, " ")).toContain(
      "Exit codes: 0 no problems (with --fix: all fixed and written), 1 problems found (with --fix: problems left after fixing), 2 bad usage or bad input (LangChain messages without @langchain/core; with --checkpointer: a database that cannot be reached or read, is no checkpointer, or has no thread --thread names).",
    );
    // What to install, for the formats that need more than this package.
    expect(USAGE.replace(/\n/g, " ")).toContain(
      "LangChain messages need @langchain/core (npm install @langchain/core); the other formats need nothing more.",
    );
  });
});

describe("audit: on a terminal", () => {
  it("draws a progress bar on standard error, and none when it is not a terminal", async () => {
    const onTerminal = await audit(["audit", fixture("openai.jsonl")], { tty: true });
    expect(onTerminal.stderr).toMatch(/thread\(s\)/);
    const piped = await audit(["audit", fixture("openai.jsonl")]);
    expect(piped.stderr).toBe("");
  });

  it("keeps every report line when the report and the bar share the terminal", async () => {
    const run = await audit(["audit", fixture("cut-off.jsonl")], { tty: true, stdoutTty: true });
    // On one terminal the bar writes the lines above itself, the last ones as it stops.
    expect(run.stderr).toContain("cut-off.jsonl:2: Unexpected end of JSON input");
    expect(run.stderr).toContain('thread 1 "after-1" (openai): 1 orphan');
    expect(run.stderr).toContain('thread 2 "after-2" (openai): 1 dangling');
    expect(run.stdout).toMatch(/^Audited 3 thread\(s\)/);
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
    const out = join(scratch, "bin-fixed.jsonl");
    const fixed = await run(tsx, [main, "audit", fixture("ai-sdk.jsonl"), "--fix", "--out", out]);
    expect(fixed.stdout).toContain("all fixed");
    const help = await run(tsx, [main, "--help"]);
    expect(help.stdout).toBe(USAGE);
  }, 60_000);

  it("stops quietly when its reader closes the pipe early (`| head -1`)", async () => {
    const main = fileURLToPath(new URL("../../src/cli/main.ts", import.meta.url));
    const tsx = fileURLToPath(new URL("../../node_modules/.bin/tsx", import.meta.url));
    // Many threads, so the report outlives the reader.
    const many = join(scratch, "many.jsonl");
    const thread = (await readFile(fixture("ai-sdk.jsonl"), "utf8")).split("\n")[0];
    await writeFile(many, `${Array.from({ length: 5_000 }, () => thread).join("\n")}\n`);
    const { stdout, stderr } = await promisify(execFile)("sh", [
      "-c",
      `"${tsx}" "${main}" audit "${many}" | head -n 1`,
    ]);
    expect(stdout.split("\n").filter(Boolean)).toHaveLength(1);
    expect(stderr).toBe("");
  }, 60_000);
});
