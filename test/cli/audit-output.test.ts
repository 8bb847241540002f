/**
 * `audit --fix --out`'s output file: written beside `--out` under a name no one can guess or
 * plant a link at, put in place whole on commit, and gone on discard and on Ctrl-C / SIGTERM.
 */
import { spawn } from "node:child_process";
import {
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  readlink,
  rm,
  symlink,
  writeFile,
} from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { FixedOutput, OutputError } from "../../src/cli/fixed-output.js";

/** When set, the bytes `randomBytes` gives: the test then knows the temporary name in advance. */
const random = vi.hoisted(() => ({ fixed: undefined as Buffer | undefined }));
vi.mock("node:crypto", async (importOriginal) => {
  const actual = await importOriginal<typeof import("node:crypto")>();
  const randomBytes = (size: number) => random.fixed?.subarray(0, size) ?? actual.randomBytes(size);
  return { ...actual, default: { ...actual, randomBytes }, randomBytes };
});

const root = fileURLToPath(new URL("../..", import.meta.url));
const source = pathToFileURL(join(root, "src/cli/fixed-output.ts")).href;

let scratch: string;
let folder: string;
let count = 0;
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "tcr-audit-output-"));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});
beforeEach(async () => {
  folder = join(scratch, `case-${count++}`);
  await mkdir(folder);
});
afterEach(() => {
  random.fixed = undefined;
});

/** The temporary files in `folder`. */
const temporaries = async () => (await readdir(folder)).filter((name) => name.endsWith(".tmp"));

describe("FixedOutput: the temporary file cannot be guessed or hijacked", () => {
  it("gets a new random name each time, never `<out>.<pid>.tmp`", async () => {
    const out = join(folder, "fixed.jsonl");
    const first = await FixedOutput.open(out);
    const second = await FixedOutput.open(out);
    const names = await temporaries();
    expect(names).toHaveLength(2);
    expect(names[0]).not.toBe(names[1]);
    expect(names).not.toContain(`fixed.jsonl.${process.pid}.tmp`);
    for (const name of names) expect(name).toMatch(/^\.fixed\.jsonl\.[0-9a-f]{12}\.tmp$/);
    await first.discard();
    await second.discard();
  });

  it("never writes through a link planted in the folder, at the old name or at `--out`", async () => {
    const victim = join(scratch, `victim-${count}.txt`);
    await writeFile(victim, "precious");
    const out = join(folder, "fixed.jsonl");
    await symlink(victim, join(folder, `fixed.jsonl.${process.pid}.tmp`));
    await symlink(victim, join(folder, `fixed.jsonl.${process.pid + 1}.tmp`));
    await symlink(victim, out);
    const output = await FixedOutput.open(out);
    await output.write("repaired\n");
    expect(await output.commit()).toBe(true);
    expect(await readFile(victim, "utf8")).toBe("precious");
    // `--out` itself was a link: the rename replaced the link, not the file it pointed to.
    expect(await readFile(out, "utf8")).toBe("repaired\n");
    expect(await readlink(join(folder, `fixed.jsonl.${process.pid}.tmp`))).toBe(victim);
  });

  it("refuses, rather than follows, a link planted at the very name it draws", async () => {
    const victim = join(scratch, `victim-${count}.txt`);
    await writeFile(victim, "precious");
    random.fixed = Buffer.from("0123456789ab", "hex");
    await symlink(victim, join(folder, ".fixed.jsonl.0123456789ab.tmp"));
    const opening = FixedOutput.open(join(folder, "fixed.jsonl"));
    await expect(opening).rejects.toThrow(OutputError);
    await expect(opening).rejects.toThrow(/^cannot be written: EEXIST/);
    expect(await readFile(victim, "utf8")).toBe("precious");
  });

  it("refuses, rather than truncates, a file already at the name it draws", async () => {
    random.fixed = Buffer.from("0123456789ab", "hex");
    const taken = join(folder, ".fixed.jsonl.0123456789ab.tmp");
    await writeFile(taken, "someone else's");
    await expect(FixedOutput.open(join(folder, "fixed.jsonl"))).rejects.toThrow(
      /^cannot be written: EEXIST/,
    );
    expect(await readFile(taken, "utf8")).toBe("someone else's");
  });

  it("cannot be created in a folder that is not there", async () => {
    const opening = FixedOutput.open(join(folder, "missing", "fixed.jsonl"));
    await expect(opening).rejects.toThrow(OutputError);
    await expect(opening).rejects.toThrow(/^cannot be written: ENOENT/);
  });
});

describe("FixedOutput: commit and discard", () => {
  it("puts exactly the bytes written at `--out`, text and invalid UTF-8 alike", async () => {
    const out = join(folder, "fixed.bin");
    await writeFile(out, "old content");
    const bytes = Uint8Array.from([0xff, 0xfe, 0x00, 0xc3, 0x28, 0xed, 0xa0, 0x80, 0x0a]);
    const output = await FixedOutput.open(out);
    await output.write("é→\n");
    await output.write(bytes);
    await output.write("");
    // The old content stays until the commit.
    expect(await readFile(out, "utf8")).toBe("old content");
    expect(await output.commit()).toBe(true);
    expect(await readFile(out)).toEqual(Buffer.concat([Buffer.from("é→\n", "utf8"), bytes]));
    expect(await readdir(folder)).toEqual(["fixed.bin"]);
  });

  it("writes in the order of the calls, even when they are not awaited one by one", async () => {
    const out = join(folder, "fixed.jsonl");
    const output = await FixedOutput.open(out);
    const big = "x".repeat(1 << 20);
    await Promise.all([output.write("a"), output.write(big), output.write("b")]);
    await output.commit();
    expect(await readFile(out, "utf8")).toBe(`a${big}b`);
  });

  it("throws the output away on discard: no temporary file, `--out` untouched", async () => {
    const out = join(folder, "fixed.jsonl");
    await writeFile(out, "old content");
    const output = await FixedOutput.open(out);
    await output.write("half a thread");
    await output.discard();
    expect(await readdir(folder)).toEqual(["fixed.jsonl"]);
    expect(await readFile(out, "utf8")).toBe("old content");
    await output.discard();
    await output.write("ignored");
    expect(await output.commit()).toBe(false);
    expect(await readdir(folder)).toEqual(["fixed.jsonl"]);
  });

  it("leaves a committed output where it is on a discard after the commit", async () => {
    const out = join(folder, "fixed.jsonl");
    const output = await FixedOutput.open(out);
    await output.write("kept\n");
    expect(await output.commit()).toBe(true);
    await output.discard();
    expect(await readFile(out, "utf8")).toBe("kept\n");
  });

  it("reports a commit that fails as an OutputError, and removes the temporary file", async () => {
    // A folder that is not empty cannot be replaced by a file.
    const out = join(folder, "taken");
    await mkdir(out);
    await writeFile(join(out, "inside"), "");
    const output = await FixedOutput.open(out);
    await output.write("repaired\n");
    const committing = output.commit();
    await expect(committing).rejects.toThrow(OutputError);
    await expect(committing).rejects.toThrow(/^cannot be written: /);
    expect(await temporaries()).toEqual([]);
    expect(await output.commit()).toBe(false);
  });
});

describe("FixedOutput: a fix stopped by a signal", () => {
  /** Starts a process that opens an output in `folder`, writes to it and waits to be stopped. */
  const startFix = (out: string) => {
    const script = [
      `import { FixedOutput } from ${JSON.stringify(source)};`,
      `const output = await FixedOutput.open(${JSON.stringify(out)});`,
      `await output.write("half a thread");`,
      `console.log("ready");`,
      "setInterval(() => {}, 60_000);",
    ].join("\n");
    const child = spawn(
      process.execPath,
      ["--import", "tsx", "--input-type=module", "--eval", script],
      { cwd: root, stdio: ["ignore", "pipe", "pipe"] },
    );
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const ready = new Promise<void>((resolve, reject) => {
      child.stdout.on("data", (chunk: Buffer) => {
        if (chunk.toString().includes("ready")) resolve();
      });
      child.once("exit", () => reject(new Error(`the fix ended before it was ready: ${stderr}`)));
    });
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.once("exit", (code, signal) => resolve({ code, signal })),
    );
    return { child, ready, exited };
  };

  it.each(["SIGTERM", "SIGINT"] as const)(
    "%s ends the fix as that signal does, leaving no temporary file",
    async (signal) => {
      await writeFile(join(folder, "fixed.jsonl"), "old content");
      const before = await readdir(folder);
      const fix = startFix(join(folder, "fixed.jsonl"));
      try {
        await fix.ready;
        expect(await temporaries()).toHaveLength(1);
        fix.child.kill(signal);
        expect(await fix.exited).toEqual({ code: null, signal });
      } finally {
        fix.child.kill("SIGKILL");
      }
      expect(await readdir(folder)).toEqual(before);
      expect(await readFile(join(folder, "fixed.jsonl"), "utf8")).toBe("old content");
    },
  );
});
