/**
 * `tool-call-resilience audit` on large values: a message holding a 50 MB string, and a 120 MB
 * line, each audited (and fixed) in a process whose heap is capped far below what reading them a
 * character at a time took (1.75 GB and 4.2 GB), and whose peak memory stays a small multiple of
 * the value. The files are generated here, not committed.
 */
import { execFile } from "node:child_process";
import { createWriteStream } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const MB = 1024 * 1024;
/** The heap the audit runs in: a few times the values, far below what it once needed. */
const HEAP_MB = 300;
/** The peak resident memory allowed, beside Node and LangChain's own. */
const PEAK_LIMIT_MB = 1_000;

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "tcr-audit-large-"));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

/** Writes `parts` to a file a part at a time, so the test holds no file-sized string. */
async function writeParts(path: string, parts: Iterable<string>): Promise<void> {
  await pipeline(Readable.from(parts), createWriteStream(path));
}

const CALL =
  '{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"book","arguments":"{}"}}]}';

/** One thread whose first message holds a string of `size` bytes, and a call left dangling. */
function* hugeString(size: number): Generator<string> {
  yield '{"thread_id":"huge-string","messages":[{"role":"user","content":"';
  const block = "x".repeat(MB);
  for (let written = 0; written < size; written += MB) yield block;
  yield `"},${CALL}]}\n`;
}

/** One line of `count` messages of 100 kB each, the last a call left dangling. */
function* hugeLine(count: number): Generator<string> {
  yield '{"thread_id":"huge-line","messages":[';
  const text = "y".repeat(100_000);
  for (let index = 0; index < count; index++) {
    yield `{"role":"${index % 2 === 0 ? "user" : "assistant"}","content":"${text}"},`;
  }
  yield `${CALL}]}\n`;
}

/** Runs the audit in a child process with a capped heap; its exit code and peak memory. */
async function auditInChild(
  args: string[],
): Promise<{ code: number; peakMB: number; stdout: string }> {
  const run = fileURLToPath(new URL("../../src/cli/run.ts", import.meta.url));
  const script = `
    import { runCli } from ${JSON.stringify(run)};
    let stdout = "";
    const sink = { write(text) { stdout += text; return true; }, isTTY: false };
    const code = await runCli(${JSON.stringify(args)}, { stdin: process.stdin, stdout: sink, stderr: sink });
    console.log(JSON.stringify({ code, peakMB: process.resourceUsage().maxRSS / 1024, stdout }));
  `;
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [`--max-old-space-size=${HEAP_MB}`, "--import", "tsx", "--input-type=module", "--eval", script],
    { maxBuffer: 16 * MB },
  );
  return JSON.parse(stdout);
}

describe("audit: large values in bounded memory", () => {
  it.each([
    ["a message holding a 50 MB string", "string.jsonl", () => hugeString(50 * MB), "huge-string"],
    ["a 120 MB line", "line.jsonl", () => hugeLine(1_200), "huge-line"],
  ])(
    `audits and fixes %s in a ${HEAP_MB} MB heap`,
    async (_name, file, parts, id) => {
      const input = join(scratch, file);
      await writeParts(input, parts());
      const audited = await auditInChild(["audit", input]);
      expect(audited.code).toBe(1);
      expect(audited.stdout).toContain(`thread 0 "${id}" (openai): 1 dangling`);
      expect(audited.peakMB).toBeLessThan(PEAK_LIMIT_MB);

      const out = join(scratch, `fixed-${file}`);
      const fixed = await auditInChild(["audit", input, "--fix", "--out", out]);
      expect(fixed.code).toBe(0);
      expect(fixed.stdout).toContain("all fixed");
      expect(fixed.peakMB).toBeLessThan(PEAK_LIMIT_MB);
      const [original, written] = await Promise.all([readFile(input), readFile(out)]);
      // The repaired thread is the original with the placeholder added after the call.
      const end = original.lastIndexOf(`${CALL}]}`);
      // Compared as bytes: a matcher would walk 120 million of them one at a time.
      const kept = end + CALL.length;
      expect(written.subarray(0, kept).equals(original.subarray(0, kept))).toBe(true);
      expect(written.subarray(end + CALL.length).toString()).toMatch(
        /^,\{"role":"tool","tool_call_id":"c1".*\]\}\n$/,
      );
    },
    120_000,
  );
});
