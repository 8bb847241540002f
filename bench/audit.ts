/**
 * `tool-call-resilience audit` on large files: how fast it reads and how much memory it holds,
 * beside `JSON.parse` on the same file. Three JSONL files are written to a temporary folder (one
 * thread with one huge string, one thread of many 100 kB messages, many ordinary threads), and on
 * each, every measure runs in a fresh `node` process of its own (the built `dist/`, no tsx), which
 * prints what it measured as JSON:
 *
 * - `JSON.parse`: the file read whole, then each line parsed;
 * - the reader: `jsonEvents` over `createReadStream(file)`, every event drained;
 * - the audit: `runCli(["audit", file])` with the report discarded;
 * - `--fix`: the same with `--fix --out <file>`.
 *
 * Time is read inside the process after its imports, so loading modules is not counted; memory is
 * the process's peak RSS (`process.resourceUsage().maxRSS`), and its peak before the measure began.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { createWriteStream, type WriteStream } from "node:fs";
import { mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { seeded } from "../demo/random.js";
import { median } from "./measure.js";
import { ratio, table } from "./report.js";
import type { Verdict } from "./targets.js";

/** The files: one huge string, one thread of many large messages, many ordinary threads. */
const AUDIT_FILES = ["large-string", "large-thread", "many-threads"] as const;
type AuditFile = (typeof AUDIT_FILES)[number];

/** What each process measures. */
const AUDIT_MEASURES = ["parse", "reader", "audit", "fix"] as const;
type AuditMeasure = (typeof AUDIT_MEASURES)[number];

const FILE_LABELS: Record<AuditFile, string> = {
  "large-string": "(a) one thread, one huge string",
  "large-thread": "(b) one thread of 100 kB messages",
  "many-threads": "(c) ordinary threads, one a line",
};

const MEASURE_LABELS: Record<AuditMeasure, string> = {
  parse: "JSON.parse",
  reader: "reader (jsonEvents)",
  audit: "audit",
  fix: "audit --fix --out",
};

/** Bytes per MB: 10^6, in MB/s and in RSS alike. */
const MB = 1e6;

/**
 * The reader's least MB/s, as a share of `JSON.parse`'s on the same file: the scanner crosses the
 * bytes once more before `JSON.parse` reads them, and may not cost more than the parse.
 */
const READER_SHARE = 0.5;

/**
 * How much more than `JSON.parse` of the same file the audit may hold, in values: the value's
 * bytes joined into one buffer (kept for `--fix`) and the chunks read until they are collected.
 */
const MEMORY_MARGIN = 2;

/** The files measured against the memory target: those made of one huge value. */
const MEMORY_FILES: readonly AuditFile[] = ["large-string", "large-thread"];

/** What one process printed. */
interface ChildResult {
  readonly seconds: number;
  /** The process's peak RSS in KiB before the measure began (after its imports). */
  readonly startRssKb: number;
  /** The process's peak RSS in KiB at the end. */
  readonly peakRssKb: number;
  /** Values read (`parse`, `reader`). */
  readonly values?: number;
  /** `runCli`'s exit code (`audit`, `fix`). */
  readonly exitCode?: number;
  /** What the audit wrote on standard error, for a failure's message. */
  readonly stderr?: string;
}

/** One measure on one file: medians over the runs. */
interface MeasureResult {
  readonly mbPerSecond: number;
  /** The median of the runs' ratios of this MB/s to `JSON.parse`'s in the same run. */
  readonly versusParse: number;
  /** The lowest and highest of those ratios. */
  readonly spread: readonly [low: number, high: number];
  readonly peakRssBytes: number;
  readonly startRssBytes: number;
}

/** One file and its measures. */
interface FileResult {
  readonly file: AuditFile;
  readonly bytes: number;
  /** The longest line: the largest top-level value. */
  readonly largestValueBytes: number;
  readonly measures: Record<AuditMeasure, MeasureResult>;
}

/** What {@link measureAudit} measured. */
export interface AuditResult {
  readonly runs: number;
  readonly files: readonly FileResult[];
}

/** The sizes written, in bytes: smaller in a quick run. */
interface Sizes {
  readonly largeString: number;
  readonly largeThreadMessages: number;
  readonly manyThreads: number;
}

/**
 * A quick run's files are small: it starts 36 processes, and in each of the 18 that run the audit,
 * loading its modules takes half a second to a second before the timed part. Not smaller: on
 * small files the start of a process weighs more on the reader than on `JSON.parse` (0.4x at
 * 12 MB of (c), 0.5x at 16 MB of (a), against 0.55x and 0.65x at 100 MB).
 */
const QUICK_SIZES: Sizes = {
  largeString: 32e6,
  largeThreadMessages: 160,
  manyThreads: 20e6,
};
const FULL_SIZES: Sizes = {
  largeString: 120e6,
  largeThreadMessages: 1_200,
  manyThreads: 100e6,
};

/** Bytes of each message of the large thread. */
const LARGE_MESSAGE_BYTES = 100_000;

/** Every this many threads of (c), one ends its last turn on a call without a result. */
const DANGLING_EVERY = 40;

/**
 * Writes the three files into a temporary folder (removed afterwards), then measures each of
 * them with each measure in a fresh process: 3 runs in a quick run, 5 in the full run, the order
 * of the measures rotating from run to run.
 */
export async function measureAudit(options: {
  readonly quick: boolean;
  readonly onProgress?: (step: string) => void;
}): Promise<AuditResult> {
  const runs = options.quick ? 3 : 5;
  const sizes = options.quick ? QUICK_SIZES : FULL_SIZES;
  const folder = await mkdtemp(join(tmpdir(), "tcr-bench-audit-"));
  try {
    const script = join(folder, "measure.mjs");
    await writeFile(script, CHILD_SCRIPT);
    const written: { file: AuditFile; path: string; bytes: number; largest: number }[] = [];
    for (const file of AUDIT_FILES) {
      const path = join(folder, `${file}.jsonl`);
      const largest = await writeAuditFile(file, path, sizes);
      const { size } = await stat(path);
      written.push({ file, path, bytes: size, largest });
      options.onProgress?.(`audit: wrote ${file} (${mb(size)})`);
    }
    const files: FileResult[] = [];
    for (const { file, path, bytes, largest } of written) {
      const out = join(folder, `${file}.fixed.jsonl`);
      const perRun: Record<AuditMeasure, ChildResult>[] = [];
      for (let run = 0; run < runs; run++) {
        const results = {} as Record<AuditMeasure, ChildResult>;
        for (const measure of rotate(AUDIT_MEASURES, run)) {
          const result = await runChild(script, measure, path, out);
          checkChild(measure, result, path);
          if (measure === "fix") await checkFixed(out, path, bytes);
          await rm(out, { force: true });
          results[measure] = result;
        }
        if (results.reader.values !== results.parse.values) {
          throw new Error(
            `the reader read ${results.reader.values} values of ${path}, JSON.parse ${results.parse.values}`,
          );
        }
        perRun.push(results);
        options.onProgress?.(`audit: ${file}, run ${run + 1} of ${runs}`);
      }
      files.push({ file, bytes, largestValueBytes: largest, measures: combine(perRun, bytes) });
    }
    return { runs, files };
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

/** Medians over the runs; each ratio to `JSON.parse` is taken within its run first. */
function combine(
  perRun: readonly Record<AuditMeasure, ChildResult>[],
  bytes: number,
): Record<AuditMeasure, MeasureResult> {
  const speed = (result: ChildResult) => bytes / MB / result.seconds;
  return Object.fromEntries(
    AUDIT_MEASURES.map((measure) => {
      const ratios = perRun.map((run) => speed(run[measure]) / speed(run.parse));
      return [
        measure,
        {
          mbPerSecond: median(perRun.map((run) => speed(run[measure]))),
          versusParse: median(ratios),
          spread: [Math.min(...ratios), Math.max(...ratios)] as const,
          peakRssBytes: median(perRun.map((run) => run[measure].peakRssKb * 1024)),
          startRssBytes: median(perRun.map((run) => run[measure].startRssKb * 1024)),
        },
      ];
    }),
  ) as Record<AuditMeasure, MeasureResult>;
}

function rotate<T>(items: readonly T[], by: number): T[] {
  const start = by % items.length;
  return [...items.slice(start), ...items.slice(0, start)];
}

/** A measure means something only if it read the file and the audit found what the file holds. */
function checkChild(measure: AuditMeasure, result: ChildResult, path: string): void {
  // Every file has dangling calls: the audit finds problems (1); --fix fixes them all (0).
  const expected = measure === "audit" ? 1 : measure === "fix" ? 0 : undefined;
  if (expected !== undefined && result.exitCode !== expected) {
    throw new Error(
      `${MEASURE_LABELS[measure]} of ${path} exited with ${result.exitCode}, expected ${expected}: ${result.stderr ?? ""}`,
    );
  }
  if (expected === undefined && (result.values ?? 0) < 1) {
    throw new Error(`${MEASURE_LABELS[measure]} read no value of ${path}`);
  }
}

/** `--fix` wrote the file: every thread, and a placeholder more per dangling call. */
async function checkFixed(out: string, path: string, inputBytes: number): Promise<void> {
  const { size } = await stat(out);
  if (size <= inputBytes) {
    throw new Error(`audit --fix of ${path} wrote ${size} bytes, no more than its input`);
  }
}

/** Runs one measure in a fresh `node` process and reads what it printed. */
function runChild(
  script: string,
  measure: AuditMeasure,
  path: string,
  out: string,
): Promise<ChildResult> {
  return new Promise((resolve, reject) => {
    const args = [script, measure, path, CLI_DIR, out];
    // Through a shell that forks again: a fork of this process starts with its RSS as its
    // ru_maxrss, which Linux keeps across exec, so a child spawned directly reports at least the
    // bench's own RSS (400 MB more in the bench made a directly spawned node report 390 MB).
    const child =
      process.platform === "win32"
        ? spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"] })
        : spawn("/bin/sh", ["-c", '"$0" "$@"; exit $?', process.execPath, ...args], {
            stdio: ["ignore", "pipe", "pipe"],
          });
    let output = "";
    let errors = "";
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => {
      output += chunk;
    });
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk: string) => {
      errors += chunk;
    });
    child.on("error", reject);
    child.on("close", (code) => {
      if (code !== 0) {
        reject(new Error(`the ${measure} process on ${path} exited with ${code}: ${errors}`));
        return;
      }
      try {
        resolve(JSON.parse(output) as ChildResult);
      } catch (error) {
        reject(new Error(`the ${measure} process printed no result: ${(error as Error).message}`));
      }
    });
  });
}

/** The built command's modules, as a `file:` URL ending in `/`. */
const CLI_DIR = new URL("../dist/cli/", import.meta.url).href;

/**
 * The measuring process, plain JavaScript for plain `node`: `measure file cliDir out`. It imports
 * only what its measure needs, then reads its peak RSS so far, times the measure, and prints JSON.
 */
const CHILD_SCRIPT = `import { createReadStream } from "node:fs";
import { readFile } from "node:fs/promises";
import { Readable } from "node:stream";

const [measure, file, cliDir, out] = process.argv.slice(2);
let work;
if (measure === "parse") {
  work = async () => {
    const bytes = await readFile(file);
    let values = 0;
    for (let start = 0; start < bytes.length; ) {
      let end = bytes.indexOf(10, start);
      if (end === -1) end = bytes.length;
      if (end > start) {
        JSON.parse(bytes.toString("utf8", start, end));
        values++;
      }
      start = end + 1;
    }
    return { values };
  };
} else if (measure === "reader") {
  const { jsonEvents } = await import(new URL("json-stream.js", cliDir).href);
  work = async () => {
    let values = 0;
    for await (const event of jsonEvents(createReadStream(file), { layout: "lines" })) {
      if (event.kind === "value") values++;
      else if (event.kind === "error") throw new Error(event.message);
    }
    return { values };
  };
} else {
  const { runCli } = await import(new URL("run.js", cliDir).href);
  let stderr = "";
  const io = {
    stdin: Readable.from([]),
    stdout: { write: () => true },
    stderr: {
      write: (text) => {
        if (stderr.length < 2000) stderr += text;
        return true;
      },
    },
  };
  const args = measure === "fix" ? ["audit", file, "--fix", "--out", out] : ["audit", file];
  work = async () => ({ exitCode: await runCli(args, io), stderr });
}
const startRssKb = process.resourceUsage().maxRSS;
const started = performance.now();
const result = await work();
const seconds = (performance.now() - started) / 1000;
process.stdout.write(
  JSON.stringify({ ...result, seconds, startRssKb, peakRssKb: process.resourceUsage().maxRSS }),
);
`;

// ---------------------------------------------------------------------------------------------
// The files

const WORDS =
  "the agent called a tool to read file and search index for result of query with limit page next value error retry timeout status ok done".split(
    " ",
  );
const ACCENTED = "café naïve Zürich résumé déjà-vu São Paulo Kraków 東京 données señal ✓ →".split(
  " ",
);

function sentence(next: () => number, words: readonly string[], length: number): string {
  const picked: string[] = [];
  for (let index = 0; index < length; index++) {
    picked.push(words[Math.floor(next() * words.length)] as string);
  }
  return `${picked.join(" ")}.`;
}

/**
 * Source code, as a tool reads or writes a file: lines of 20 to 70 bytes, indented, some with a
 * string in quotes, so that its JSON has an escape (`\n`, `\"`) every 25 bytes or so.
 */
function codeText(next: () => number, bytes: number): string {
  const lines: string[] = [];
  let length = 0;
  while (length < bytes) {
    const indent = "  ".repeat(Math.floor(next() * 4));
    const words = sentence(next, WORDS, 2 + Math.floor(next() * 6)).slice(0, -1);
    const text =
      next() < 0.4
        ? `${indent}log.info("${words}");`
        : `${indent}${words.replaceAll(" ", "_")} = compute(value, limit);`;
    lines.push(text);
    length += text.length + 1;
  }
  return lines.join("\n");
}

/** Writes `text` to `stream`, waiting when its buffer is full. */
async function put(stream: WriteStream, text: string): Promise<void> {
  if (!stream.write(text)) await once(stream, "drain");
}

async function close(stream: WriteStream): Promise<void> {
  stream.end();
  await once(stream, "finish");
}

function toolCall(id: string, name: string, args: unknown): Record<string, unknown> {
  return {
    role: "assistant",
    content: null,
    tool_calls: [{ id, type: "function", function: { name, arguments: JSON.stringify(args) } }],
  };
}

/** Writes one of the files; returns its longest line's bytes. */
async function writeAuditFile(file: AuditFile, path: string, sizes: Sizes): Promise<number> {
  const stream = createWriteStream(path);
  let largest = 0;
  try {
    if (file === "large-string") largest = await writeLargeString(stream, sizes.largeString);
    else if (file === "large-thread") {
      largest = await writeLargeThread(stream, sizes.largeThreadMessages);
    } else largest = await writeManyThreads(stream, sizes.manyThreads);
  } finally {
    await close(stream);
  }
  return largest;
}

/**
 * (a) One thread whose user message holds an image of `bytes` as a base64 data URL (the largest
 * strings stored threads hold are such files), then a call left dangling. The base64 is one
 * block of random bytes written again and again, which its parse does not know.
 */
async function writeLargeString(stream: WriteStream, bytes: number): Promise<number> {
  const next = seeded(1);
  const block = Buffer.from(
    Uint8Array.from({ length: 48_000 }, () => Math.floor(next() * 256)),
  ).toString("base64");
  const head = `{"thread_id":"large-string","messages":[{"role":"user","content":[{"type":"text","text":"What does this chart show?"},{"type":"image_url","image_url":{"url":"data:image/png;base64,`;
  const tail = `"}}]},${[
    JSON.stringify(toolCall("call_zoom", "zoom", { region: "top-left", factor: 2 })),
    JSON.stringify({ role: "user", content: "Stop, just tell me what you see." }),
  ].join(",")}]}`;
  let length = Buffer.byteLength(head) + Buffer.byteLength(tail);
  await put(stream, head);
  while (length < bytes) {
    await put(stream, block);
    length += block.length;
  }
  await put(stream, `${tail}\n`);
  return length;
}

/**
 * (b) One thread of `messages` messages of about 100 kB each, in turns of a question, a call whose
 * arguments are 100 kB of JSON, its result and an answer with non-ASCII text; the last turn's call
 * dangles.
 */
async function writeLargeThread(stream: WriteStream, messages: number): Promise<number> {
  const next = seeded(2);
  const bodies = Array.from({ length: 8 }, () => codeText(next, LARGE_MESSAGE_BYTES));
  const answers = Array.from({ length: 8 }, () => {
    const parts: string[] = [];
    for (let length = 0; length < LARGE_MESSAGE_BYTES; ) {
      const part = sentence(next, [...WORDS, ...ACCENTED], 12);
      parts.push(part);
      length += Buffer.byteLength(part) + 1;
    }
    return parts.join(" ");
  });
  const turns = Math.ceil(messages / 4);
  let length = 0;
  const write = async (text: string) => {
    length += Buffer.byteLength(text);
    await put(stream, text);
  };
  await write(`{"thread_id":"large-thread","messages":[`);
  for (let turn = 0; turn < turns; turn++) {
    const body = bodies[turn % bodies.length] as string;
    const id = `call_${turn}`;
    const parts = [
      { role: "user", content: `Turn ${turn}: ${body}` },
      toolCall(id, "write_file", { path: `src/file-${turn}.ts`, content: body }),
    ];
    if (turn < turns - 1) {
      parts.push(
        { role: "tool", tool_call_id: id, content: body },
        { role: "assistant", content: answers[turn % answers.length] },
      );
    }
    await write(`${turn === 0 ? "" : ","}${parts.map((part) => JSON.stringify(part)).join(",")}`);
  }
  await write("]}");
  await put(stream, "\n");
  return length;
}

/**
 * (c) Threads of 1 to 8 turns, one a line, until `bytes`: a question, a call whose arguments are
 * JSON with escapes, its result (JSON or lines), an answer with non-ASCII text. Every {@link DANGLING_EVERY}th
 * thread's last call has no result, and a question follows it.
 */
async function writeManyThreads(stream: WriteStream, bytes: number): Promise<number> {
  const next = seeded(3);
  let length = 0;
  let largest = 0;
  for (let thread = 0; length < bytes; thread++) {
    const messages: Record<string, unknown>[] = [];
    const turns = 1 + Math.floor(next() * 8);
    for (let turn = 0; turn < turns; turn++) {
      const id = `call_${thread}_${turn}`;
      const query = sentence(next, WORDS, 8);
      messages.push(
        { role: "user", content: `${sentence(next, WORDS, 10)} "${query}"?` },
        toolCall(id, "search", {
          query,
          filters: { path: "C:\\data\\index", tags: ["news", 'say "hi"'] },
          limit: 5,
        }),
      );
      if (thread % DANGLING_EVERY === 0 && turn === turns - 1) {
        messages.push({ role: "user", content: "Never mind, go on." });
        continue;
      }
      // Half the tools answer JSON (every quote of it escaped), half plain lines.
      const hits = Array.from({ length: 5 }, (_, hit) => ({
        rank: hit + 1,
        title: sentence(next, WORDS, 5),
        snippet: sentence(next, [...WORDS, ...ACCENTED], 30),
      }));
      const result =
        next() < 0.5
          ? JSON.stringify(hits)
          : hits.map((hit) => `${hit.rank}. ${hit.title}\n   ${hit.snippet}`).join("\n");
      messages.push(
        { role: "tool", tool_call_id: id, content: result },
        { role: "assistant", content: sentence(next, [...WORDS, ...ACCENTED], 40) },
      );
    }
    const line = JSON.stringify({ thread_id: `thread-${thread}`, messages });
    const lineBytes = Buffer.byteLength(line);
    largest = Math.max(largest, lineBytes);
    length += lineBytes + 1;
    await put(stream, `${line}\n`);
  }
  return largest;
}

// ---------------------------------------------------------------------------------------------
// The report

/** `52.3 MB`, `12.4 kB` */
function mb(bytes: number): string {
  return bytes < MB ? `${(bytes / 1e3).toFixed(1)} kB` : `${(bytes / MB).toFixed(1)} MB`;
}

/** The table: a row per file and measure. */
export function formatAudit(result: AuditResult): string {
  const lines = result.files.flatMap((file) =>
    AUDIT_MEASURES.map((measure) => {
      const entry = file.measures[measure];
      return [
        FILE_LABELS[file.file],
        mb(file.bytes),
        mb(file.largestValueBytes),
        MEASURE_LABELS[measure],
        entry.mbPerSecond.toFixed(0),
        measure === "parse" ? "" : ratio(entry.versusParse),
        mb(entry.peakRssBytes),
        MEMORY_FILES.includes(file.file)
          ? `${((entry.peakRssBytes - entry.startRssBytes) / file.largestValueBytes).toFixed(1)}x`
          : "",
      ];
    }),
  );
  return [
    `tool-call-resilience audit on JSONL files, each measure in a fresh process; medians of ${result.runs} runs (ratio: median of the runs' ratios to JSON.parse; MB = 10^6 bytes)`,
    table(
      [
        "file",
        "size",
        "largest value",
        "measure",
        "MB/s",
        "/ JSON.parse",
        "peak RSS",
        "(peak - start) / largest value",
      ],
      lines,
    ),
  ].join("\n");
}

/**
 * The audit's targets: on every file the reader reads at least {@link READER_SHARE} of
 * `JSON.parse`'s MB/s; on the files of one huge value, the audit's memory grows, from its RSS
 * before reading, by at most what `JSON.parse` of the same file grows by, plus
 * {@link MEMORY_MARGIN} times that value. `--fix` is reported, without a target.
 */
export function evaluateAuditTargets(result: AuditResult): Verdict[] {
  const speed = result.files.map((file): Verdict => {
    const reader = file.measures.reader;
    const [low, high] = reader.spread;
    return {
      target: `Audit's reader on ${FILE_LABELS[file.file]}: at least ${READER_SHARE}x JSON.parse's MB/s`,
      pass: reader.versusParse >= READER_SHARE,
      measured: `${reader.versusParse.toFixed(3)}x (${reader.mbPerSecond.toFixed(0)} against ${file.measures.parse.mbPerSecond.toFixed(0)} MB/s; ${result.runs} runs ${ratio(low)}-${ratio(high)})`,
    };
  });
  const memory = result.files
    .filter((file) => MEMORY_FILES.includes(file.file))
    .map((file): Verdict => {
      const value = file.largestValueBytes;
      const { peakRssBytes, startRssBytes } = file.measures.audit;
      const parse = file.measures.parse;
      const parseFactor = (parse.peakRssBytes - parse.startRssBytes) / value;
      const factor = (peakRssBytes - startRssBytes) / value;
      const limit = parseFactor + MEMORY_MARGIN;
      return {
        target: `Audit's memory on ${FILE_LABELS[file.file]}: grows by at most JSON.parse's growth + ${MEMORY_MARGIN}x the value`,
        pass: factor <= limit,
        measured: `${factor.toFixed(1)}x the value (${mb(peakRssBytes)} from ${mb(startRssBytes)}), JSON.parse ${parseFactor.toFixed(1)}x (limit ${limit.toFixed(1)}x)`,
      };
    });
  return [...speed, ...memory];
}

// Run alone, after `npm run build`: `TSX_TSCONFIG_PATH=bench/tsconfig.json node --import tsx
// bench/audit.ts [--quick]`; exits 1 when a target fails.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const result = await measureAudit({
    quick: process.argv.includes("--quick"),
    onProgress: (step) => process.stderr.write(`${step}\n`),
  });
  console.log(formatAudit(result));
  const verdicts = evaluateAuditTargets(result);
  for (const verdict of verdicts) {
    console.log(`${verdict.pass ? "PASS" : "FAIL"}  ${verdict.target}: ${verdict.measured}`);
  }
  process.exitCode = verdicts.every((verdict) => verdict.pass) ? 0 : 1;
}
