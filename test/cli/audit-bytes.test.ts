/**
 * `tool-call-resilience audit` keeps every byte it was not asked to change: the input is read as
 * bytes, however it is cut into chunks; a thread that needed nothing is written from its own
 * bytes; in a repaired thread each message left alone keeps its bytes; and a thread whose repair
 * would rewrite a value JSON cannot carry exactly is written as it was, and named.
 */
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type JsonEvent, jsonEvents } from "../../src/cli/json-stream.js";
import { inexactness } from "../../src/cli/rewrite.js";
import { audit } from "../helpers/cli.js";

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "tcr-audit-bytes-"));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

/** An OpenAI thread: a user message (with extra fields), then a call without its result. */
function danglingThread(id: string, userExtra = "", callExtra = ""): string {
  return `{"thread_id":"${id}","messages":[{"role":"user","content":"Book it"${userExtra}},{"role":"assistant","content":null${callExtra},"tool_calls":[{"id":"c1","type":"function","function":{"name":"book","arguments":"{}"}}]}]}`;
}

/** Values `JSON.parse` and `JSON.stringify` would not carry exactly, as a message's fields. */
const INEXACT_FIELDS =
  ',"big":12345678901234567890,"huge":1e400,"price":1.10,"zero":-0,"twice":1,"twice":2,"escaped":"\\u00e9\\/"';
/** Bytes that are not UTF-8, inside a string. */
const INVALID_UTF8 = Buffer.from([0x22, 0x61, 0xff, 0xfe, 0x62, 0x22]);

async function eventsOf(input: Buffer, chunkSize: number): Promise<JsonEvent[]> {
  const chunks: Buffer[] = [];
  for (let at = 0; at < input.length; at += chunkSize) {
    chunks.push(input.subarray(at, at + chunkSize));
  }
  const events: JsonEvent[] = [];
  for await (const event of jsonEvents(Readable.from(chunks))) events.push(event);
  return events;
}

/** Events as comparable data: gaps merged, bytes as text. */
function comparable(events: JsonEvent[]): unknown[] {
  const out: unknown[] = [];
  for (const event of events) {
    const previous = out.at(-1) as { kind: string; raw: string } | undefined;
    if (event.kind === "gap" && previous?.kind === "gap") {
      previous.raw += event.raw.toString("latin1");
      continue;
    }
    out.push("raw" in event ? { ...event, raw: event.raw.toString("latin1") } : { ...event });
  }
  return out;
}

describe("audit: the input is read as bytes", () => {
  const samples: Record<string, Buffer> = {
    "JSONL with escapes, CRLF and a blank line": Buffer.from(
      `${danglingThread('a\\"b\\\\')}\r\n\r\n[{"role":"user","content":"\\"]}\\\\"}]\n`,
    ),
    "a pretty-printed array of threads": Buffer.from(
      `[\n  ${danglingThread("p1")},\n  {\n    "messages": [ {"role":"user","content":"x"} ]\n  }\n]\n`,
    ),
    "a byte order mark": Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from("[]\n")]),
    "a first line cut off, then JSONL": Buffer.from(
      `{"messages":[{"role":"user"\n${danglingThread("after")}\n`,
    ),
    "bytes that are not UTF-8": Buffer.concat([
      Buffer.from('{"messages":[{"role":"user","content":'),
      INVALID_UTF8,
      Buffer.from("}]}\n"),
    ]),
  };

  it.each(Object.entries(samples))(
    "finds the same values, lines and bytes however the input is cut: %s",
    async (_name, input) => {
      const whole = comparable(await eventsOf(input, input.length));
      for (const size of [1, 2, 3, 5, 7, 13, 64]) {
        expect(comparable(await eventsOf(input, size))).toEqual(whole);
      }
    },
  );

  it("hands back every byte of a well-formed input, in order", async () => {
    for (const name of [
      "a pretty-printed array of threads",
      "JSONL with escapes, CRLF and a blank line",
      "a byte order mark",
    ]) {
      const input = samples[name] as Buffer;
      const events = await eventsOf(input, 3);
      expect(events.filter((event) => event.kind === "error")).toEqual([]);
      const bytes = Buffer.concat(events.flatMap((event) => ("raw" in event ? [event.raw] : [])));
      expect(bytes).toEqual(input);
    }
  });

  it("names the line a JSON document ends on when it is cut off inside a value", async () => {
    const events = await eventsOf(Buffer.from('[\n  {\n    "id": "weather-1'), 4);
    expect(events.at(-1)).toEqual({
      kind: "error",
      line: 3,
      message: "Unexpected end of JSON input",
    });
  });

  it("names a value longer than the longest string once, and reads the lines after it", async () => {
    const input = Buffer.from(`["${"x".repeat(100)}"]\n{"messages":[]}\n`);
    const events: JsonEvent[] = [];
    for await (const event of jsonEvents(Readable.from([input]), { maxValueBytes: 50 })) {
      events.push(event);
    }
    expect(events.filter((event) => event.kind === "error")).toEqual([
      {
        kind: "error",
        line: 1,
        message:
          "A value of more than 50 bytes: longer than the longest string JavaScript can hold",
      },
    ]);
    expect(events.some((event) => event.kind === "value" && event.line === 2)).toBe(true);
  });
});

describe("audit --fix: nothing changes that was not asked to change", () => {
  it("writes a thread that needed nothing from its own bytes, whatever JSON.parse would make of it", async () => {
    const input = join(scratch, "exact.jsonl");
    const clean = Buffer.concat([
      Buffer.from(
        `{ "thread_id" : "clean", "messages" : [ {"role":"user","content":"hi"${INEXACT_FIELDS}},\t{"role":"user","content":`,
      ),
      INVALID_UTF8,
      Buffer.from("} ] }  \r\n"),
    ]);
    await writeFile(input, Buffer.concat([clean, Buffer.from(`${danglingThread("d")}\n`), clean]));
    const out = join(scratch, "exact-out.jsonl");
    const run = await audit(["audit", input, "--fix", "--out", out]);
    expect(run.code).toBe(0);
    const written = await readFile(out);
    expect(written.subarray(0, clean.length)).toEqual(clean);
    expect(written.subarray(written.length - clean.length)).toEqual(clean);
  });

  it("keeps each message a repair leaves alone byte for byte, and the array's own spacing", async () => {
    const input = join(scratch, "kept.json");
    const user = `{"role":"user","content":"hi"${INEXACT_FIELDS}}`;
    const call =
      '{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"book","arguments":"{}"}}]}';
    await writeFile(
      input,
      `[\n  {\n    "id": "k",\n    "messages": [\n      ${user},\n      ${call}\n    ]\n  }\n]\n`,
    );
    const out = join(scratch, "kept-out.json");
    const run = await audit(["audit", input, "--fix", "--out", out]);
    expect(run.code).toBe(0);
    const written = await readFile(out, "utf8");
    expect(
      written.startsWith(
        `[\n  {\n    "id": "k",\n    "messages": [\n      ${user},\n      ${call},\n      {"role":"tool","tool_call_id":"c1"`,
      ),
    ).toBe(true);
    expect(written.endsWith("}\n    ]\n  }\n]\n")).toBe(true);
  });

  it.each([
    [
      "a number JavaScript rounds",
      ',"seq":12345678901234567890',
      /holds the number 12345678901234567890, which JavaScript would write as 12345678901234567000/,
    ],
    [
      "a number too large for a double",
      ',"seq":1e400',
      /holds the number 1e400, which JavaScript would write as null/,
    ],
    ["a decimal written with a trailing zero", ',"price":1.10', /holds the number 1\.10/],
    ["minus zero", ',"offset":-0', /holds the number -0/],
    ["a key given twice", ',"seq":1,"seq":2', /holds the key "seq" twice in one object/],
  ])(
    "writes a thread as it was when its repair would rewrite %s, and says why",
    async (_name, fields, why) => {
      // A call without an id: the repair rewrites its message to give it one.
      const thread = danglingThread("r", "", fields).replace('"id":"c1",', "");
      const input = join(scratch, "refused.jsonl");
      await writeFile(input, `${thread}\n`);
      const out = join(scratch, "refused-out.jsonl");
      const run = await audit(["audit", input, "--fix", "--out", out]);
      expect(run.code).toBe(1);
      const [line, summary] = run.stdout.trim().split("\n");
      expect(line).toMatch(
        /: thread 0 "r" \(openai\): 1 dangling, 1 missing_id; left after fixing: 1 dangling, 1 missing_id \(written as it was: message 1 /,
      );
      expect(line).toMatch(why);
      expect(summary).toContain("left after fixing: 1 dangling, 1 missing_id. Threads written to");
      expect(await readFile(out, "utf8")).toBe(`${thread}\n`);
    },
  );

  it("writes a thread as it was when its repair would rewrite bytes that are not UTF-8", async () => {
    const input = join(scratch, "refused-bytes.jsonl");
    const thread = Buffer.concat([
      Buffer.from(
        danglingThread("u", "", ',"note":').replace('"id":"c1",', "").split(',"note":')[0] ?? "",
      ),
      Buffer.from(',"note":'),
      INVALID_UTF8,
      Buffer.from(
        ',"tool_calls":[{"type":"function","function":{"name":"book","arguments":"{}"}}]}]}\n',
      ),
    ]);
    await writeFile(input, thread);
    const out = join(scratch, "refused-bytes-out.jsonl");
    const run = await audit(["audit", input, "--fix", "--out", out, "--format", "json"]);
    expect(run.code).toBe(1);
    const report = JSON.parse(run.stdout);
    expect(report.threads[0].unrepaired).toBe("message 1 holds bytes that are not UTF-8");
    expect(await readFile(out)).toEqual(thread);
  });

  it("repairs a thread whose message nests 100,000 deep, as the plain audit reads it", async () => {
    const deep = `${"[".repeat(100_000)}${"]".repeat(100_000)}`;
    const input = join(scratch, "deep.jsonl");
    await writeFile(input, `${danglingThread("deep", `,"extra":${deep}`)}\n`);
    const plain = await audit(["audit", input]);
    expect(plain.stdout).toContain('thread 0 "deep" (openai): 1 dangling');
    const out = join(scratch, "deep-out.jsonl");
    const run = await audit(["audit", input, "--fix", "--out", out]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("all fixed");
    const written = await readFile(out, "utf8");
    expect(written).toContain(deep);
    expect(written).toContain('{"role":"tool","tool_call_id":"c1"');
  });

  it("names the limit in one line when the message it must rewrite nests too deep to write", async () => {
    const deep = `${"[".repeat(100_000)}${"]".repeat(100_000)}`;
    const input = join(scratch, "deep-rewrite.jsonl");
    const thread = danglingThread("deep", "", `,"extra":${deep}`).replace('"id":"c1",', "");
    await writeFile(input, `${thread}\n`);
    const out = join(scratch, "deep-rewrite-out.jsonl");
    const run = await audit(["audit", input, "--fix", "--out", out]);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe("");
    expect(run.stdout).toContain(
      "(written as it was: message 1 of the repaired thread nests too deep to be written)",
    );
    expect(await readFile(out, "utf8")).toBe(`${thread}\n`);
    expect(await readdir(scratch)).not.toContainEqual(expect.stringMatching(/\.tmp$/));
  });
});

describe("inexactness: what JSON.parse and JSON.stringify would not give back", () => {
  it.each([
    ['{"a":1,"b":[0.5,-2,3e-7,"1.10"],"c":{"a":1}}', undefined],
    ['{"s":"\\u00e9\\/\\ud800"}', undefined],
    ['{"a":{"b":1,"b":2}}', 'holds the key "b" twice in one object'],
    ['[{"a":1},{"a":1}]', undefined],
    ["[1E5]", "holds the number 1E5, which JavaScript would write as 100000"],
  ])("%s", (json, expected) => {
    expect(inexactness(Buffer.from(json))).toBe(expected);
  });
});

describe("audit: a value longer than the longest string JavaScript can hold", () => {
  it("is named in one line with exit 2, and is not held whole while it is skipped", async () => {
    // 600 MiB of one string, streamed from one reused chunk: the audit must give up on it.
    const chunk = Buffer.alloc(1 << 20, 0x78);
    async function* input() {
      yield Buffer.from('{"messages":[{"role":"user","content":"');
      for (let index = 0; index < 600; index++) yield chunk;
      yield Buffer.from('"}]}\n');
      yield Buffer.from(`${danglingThread("after")}\n`);
    }
    const run = await audit(["audit", "-"], { stdin: Readable.from(input()) });
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(
      "tool-call-resilience: <stdin>:1: A value of more than 536,870,888 bytes: longer than the longest string JavaScript can hold\n",
    );
    expect(run.stdout).toContain('<stdin>:2: thread 0 "after" (openai): 1 dangling');
  }, 60_000);
});
