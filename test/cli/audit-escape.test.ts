/**
 * `tool-call-resilience audit` on hostile text: thread ids, broken lines, file names and
 * arguments holding control characters are shown escaped, so the input can neither forge a line
 * of the report nor drive the terminal, in text or in JSON.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { audit } from "../helpers/cli.js";

/** A thread with one dangling call, on one line, named `id`. */
function danglingThread(id: string): string {
  return JSON.stringify({
    thread_id: id,
    messages: [
      { role: "user", content: "Book it" },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "c1", type: "function", function: { name: "book", arguments: "{}" } }],
      },
    ],
  });
}

/** An id that, printed raw, forges a clean summary on a line of its own and retitles the terminal. */
const FORGING_ID = "x\nFAKE: Audited 0 thread(s): no problems found.\u001b]0;pwned\u0007";
/** How the report shows it. */
const FORGING_ID_SHOWN = "x\\nFAKE: Audited 0 thread(s): no problems found.\\x1b]0;pwned\\x07";

/** A character a terminal acts on: C0, DEL, C1, a line or paragraph separator, a bidi control. */
const CONTROL = /[\p{Cc}\p{Zl}\p{Zp}\p{Bidi_Control}]/u;

/** Whether a line of `text` holds a {@link CONTROL}, besides the newlines that end them. */
function hasControl(text: string): boolean {
  return text.split("\n").some((line) => CONTROL.test(line));
}

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "tcr-audit-escape-"));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

/** Writes `lines` as a JSONL file named `name` in the scratch directory; returns its path. */
async function jsonl(name: string, lines: string[]): Promise<string> {
  const path = join(scratch, name);
  await writeFile(path, `${lines.join("\n")}\n`);
  return path;
}

describe("audit: text from the input is escaped in the text report", () => {
  it("shows a thread id with a newline and an OSC sequence escaped, on the thread's one line", async () => {
    const path = await jsonl("forged.jsonl", [danglingThread(FORGING_ID)]);
    const run = await audit(["audit", path]);
    expect(run.code).toBe(1);
    const lines = run.stdout.split("\n");
    expect(lines).toEqual([
      `${path}:1: thread 0 "${FORGING_ID_SHOWN}" (openai): 1 dangling`,
      "Audited 1 thread(s), 2 message(s) (1 openai): 1 with problems: 1 dangling.",
      "",
    ]);
    expect(lines.some((line) => line.startsWith("FAKE"))).toBe(false);
    for (const output of [run.stdout, run.stderr]) {
      expect(output).not.toContain("\u001b");
      expect(output).not.toContain("\u0007");
    }
  });

  it.each([
    ["a carriage return", "ok\rFAKE", "ok\\rFAKE"],
    ["a tab", "a\tb", "a\\tb"],
    ["DEL", "a\u007fb", "a\\x7fb"],
    ["a C1 control sequence introducer", "\u009b2Jcleared", "\\x9b2Jcleared"],
    ["a C1 next line", "a\u0085FAKE", "a\\x85FAKE"],
    ["the line and paragraph separators", "a\u2028b\u2029c", "a\\u2028b\\u2029c"],
    [
      "bidirectional controls",
      "\u202egnp.exe\u202c\u2066\u200f",
      "\\u202egnp.exe\\u202c\\u2066\\u200f",
    ],
  ])("shows %s in a thread id as an escape", async (_, id, shown) => {
    const path = await jsonl("controls.jsonl", [danglingThread(id)]);
    const run = await audit(["audit", path]);
    expect(run.stdout.split("\n")[0]).toBe(`${path}:1: thread 0 "${shown}" (openai): 1 dangling`);
    expect(hasControl(run.stdout)).toBe(false);
  });

  it("leaves a backslash and other text as it is", async () => {
    const path = await jsonl("plain.jsonl", [danglingThread('C:\\threads\\n°1 "é" 🙂')]);
    const run = await audit(["audit", path]);
    expect(run.stdout).toContain(`:1: thread 0 "C:\\threads\\n°1 "é" 🙂" (openai): 1 dangling\n`);
  });

  it("shows a broken line's escape sequences and C1 controls escaped, in one error line", async () => {
    const path = await jsonl("broken.jsonl", [
      danglingThread("d"),
      "\u009b2J\u001b]0;pwned\u0007\u001b[31m",
    ]);
    const run = await audit(["audit", path]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(
      new RegExp(`^tool-call-resilience: ${escapeRegExp(path)}:2: .+\\n$`),
    );
    expect(run.stderr.split("\n")).toHaveLength(2);
    expect(hasControl(run.stderr)).toBe(false);
  });

  it("shows a file name with a newline and an escape sequence escaped, in thread and error lines", async () => {
    const path = await jsonl("evil\nFAKE\u001b[2J.jsonl", [danglingThread("d"), "{broken"]);
    const shown = join(scratch, "evil\\nFAKE\\x1b[2J.jsonl");
    const run = await audit(["audit", path]);
    expect(run.code).toBe(2);
    expect(run.stdout.split("\n")[0]).toBe(`${shown}:1: thread 0 "d" (openai): 1 dangling`);
    expect(run.stderr).toMatch(
      new RegExp(`^tool-call-resilience: ${escapeRegExp(shown)}:2: .+\\n$`),
    );
    expect(hasControl(run.stdout) || hasControl(run.stderr)).toBe(false);
  });

  it("shows the --out file of --fix escaped in the summary", async () => {
    const path = await jsonl("to-fix.jsonl", [danglingThread("d")]);
    const out = join(scratch, "fixed\nFAKE\u001b[2J.jsonl");
    const run = await audit(["audit", path, "--fix", "--out", out]);
    const shown = join(scratch, "fixed\\nFAKE\\x1b[2J.jsonl");
    // Written or not, the summary names the file: one line, escaped.
    expect(run.stdout).toMatch(
      new RegExp(` Threads (not )?written to ${escapeRegExp(shown)}\\.\\n$`),
    );
    expect(run.stdout.split("\n")).toHaveLength(3);
    expect(run.stdout).not.toContain("\u001b");
  });

  it("escapes the lines the report shares with the progress bar on a terminal", async () => {
    const path = await jsonl("forged-on-terminal.jsonl", [danglingThread(FORGING_ID), "{broken"]);
    const run = await audit(["audit", path], { tty: true, stdoutTty: true });
    // The bar draws with escape sequences of its own; the input's must not be among them.
    expect(run.stderr).toContain(`thread 0 "${FORGING_ID_SHOWN}" (openai): 1 dangling`);
    expect(run.stderr).toContain(`${path}:2: `);
    expect(run.stderr).not.toContain("\u001b]0;pwned");
    expect(run.stderr).not.toContain("\u0007");
    expect(run.stderr).not.toMatch(/\nFAKE/);
  });
});

describe("audit: text from the input is escaped in the JSON report", () => {
  const id = `${FORGING_ID}\u007f\u0085\u009b2J\u2028\u2029\u202e`;

  it("stays valid JSON that gives back the id and names exactly, with no control character raw", async () => {
    const path = await jsonl("evil\u0085\u2028\u001b.jsonl", [
      danglingThread(id),
      "{\u009b\u001b[2J",
    ]);
    const run = await audit(["audit", path, "--format", "json"]);
    expect(run.code).toBe(2);
    const report = JSON.parse(run.stdout);
    expect(report.source).toBe(path);
    expect(report.threads).toHaveLength(1);
    expect(report.threads[0].id).toBe(id);
    expect(report.errors).toHaveLength(1);
    expect(report.errors[0]).toMatchObject({ file: path, line: 2 });
    expect(hasControl(run.stdout)).toBe(false);
    expect(run.stdout).toContain("\\u0085\\u009b2J\\u2028\\u2029\\u202e");
  });
});

describe("audit: arguments echoed by a usage error are escaped", () => {
  it.each([
    [
      "an extra argument",
      ["audit", "a.jsonl", "b\u001b]0;pwned\u0007\nFAKE"],
      'Unexpected argument "b\\x1b]0;pwned\\x07\\nFAKE": audit reads one input',
    ],
    [
      "an unknown command",
      ["\u001b[2Jaudit"],
      'Unknown command "\\x1b[2Jaudit"; the command is audit',
    ],
    [
      "an unknown option",
      ["audit", "a.jsonl", "--\u001b[31mred"],
      "Unknown option '--\\x1b[31mred'",
    ],
    [
      "a --format value",
      ["audit", "a.jsonl", "--format", "text\u009b2J"],
      '--format must be text or json, not "text\\x9b2J"',
    ],
  ])("shows %s escaped", async (_, args, message) => {
    const run = await audit(args);
    expect(run).toEqual({
      code: 2,
      stdout: "",
      stderr: `tool-call-resilience: ${message}\nRun 'tool-call-resilience audit --help' for usage.\n`,
    });
  });
});

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
