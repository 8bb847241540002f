/**
 * `audit --fix --out`'s output as the file system sees it: every call `FixedOutput` makes is
 * recorded (the real calls still run), to check that the output reaches the disk before it takes
 * the place of `--out`, and that a failing write is reported.
 */
import type { FileHandle } from "node:fs/promises";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { FixedOutput, OutputError } from "../../src/cli/fixed-output.js";

const fs = vi.hoisted(() => ({
  /** The calls, as `<what> <path>`; paths are shown by their base name. */
  calls: [] as string[],
  /** When set, every write to a file handle fails with it. */
  writeFailure: undefined as Error | undefined,
}));

vi.mock("node:fs/promises", async (importOriginal) => {
  const actual = await importOriginal<typeof import("node:fs/promises")>();
  const { basename } = await import("node:path");
  const record = (call: string) => fs.calls.push(call);
  const open = async (path: string, flags?: string, mode?: number) => {
    const handle: FileHandle = await actual.open(path, flags, mode);
    const name = basename(path);
    record(`open ${name} ${flags}`);
    const { sync, close, write } = handle;
    handle.sync = () => {
      record(`sync ${name}`);
      return sync.call(handle);
    };
    handle.close = () => {
      record(`close ${name}`);
      return close.call(handle);
    };
    handle.write = ((...args: Parameters<FileHandle["write"]>) => {
      record(`write ${name}`);
      if (fs.writeFailure !== undefined) return Promise.reject(fs.writeFailure);
      return (write as (...a: typeof args) => ReturnType<FileHandle["write"]>).apply(handle, args);
    }) as FileHandle["write"];
    return handle;
  };
  const rename = async (from: string, to: string) => {
    record(`rename ${basename(from)} -> ${basename(to)}`);
    return actual.rename(from, to);
  };
  const mocked = { ...actual, open, rename };
  return { ...mocked, default: mocked };
});

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "tcr-audit-output-order-"));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});
beforeEach(() => {
  fs.calls.length = 0;
  fs.writeFailure = undefined;
});

describe("FixedOutput: the order of the calls on commit", () => {
  it("syncs the file, then the folder, then renames onto `--out`, then syncs the folder again", async () => {
    const out = join(scratch, "fixed.jsonl");
    const output = await FixedOutput.open(out);
    await output.write("repaired\n");
    expect(await output.commit()).toBe(true);

    const temporary = fs.calls[0]?.split(" ")[1] ?? "";
    const folder = basename(scratch);
    expect(fs.calls[0]).toBe(`open ${temporary} wx`);
    expect(temporary).toMatch(/^\.fixed\.jsonl\.[0-9a-f]{12}\.tmp$/);
    const at = (call: string, from = 0) => {
      const index = fs.calls.indexOf(call, from);
      expect(index, `${call} in ${fs.calls.join(", ")}`).toBeGreaterThanOrEqual(0);
      return index;
    };
    const fileSync = at(`sync ${temporary}`);
    const fileClose = at(`close ${temporary}`);
    const folderSync = at(`sync ${folder}`);
    const renamed = at(`rename ${temporary} -> fixed.jsonl`);
    const folderSyncAfter = at(`sync ${folder}`, renamed);
    expect(at(`write ${temporary}`)).toBeLessThan(fileSync);
    expect(fileSync).toBeLessThan(fileClose);
    expect(fileClose).toBeLessThan(folderSync);
    expect(folderSync).toBeLessThan(renamed);
    expect(renamed).toBeLessThan(folderSyncAfter);
    expect(fs.calls.filter((call) => call === `open ${folder} r`)).toHaveLength(2);
    expect(fs.calls.filter((call) => call === `close ${folder}`)).toHaveLength(2);
    expect(await readFile(out, "utf8")).toBe("repaired\n");
  });

  it("makes nothing take the place of `--out` once discarded", async () => {
    const output = await FixedOutput.open(join(scratch, "discarded.jsonl"));
    await output.write("half a thread");
    await output.discard();
    expect(await output.commit()).toBe(false);
    expect(fs.calls.some((call) => call.startsWith("rename "))).toBe(false);
    expect(fs.calls.some((call) => call.startsWith("sync "))).toBe(false);
  });
});

describe("FixedOutput: a write that fails", () => {
  it("is an OutputError naming the cause, and so is the commit after it", async () => {
    const out = join(scratch, "full.jsonl");
    const output = await FixedOutput.open(out);
    fs.writeFailure = Object.assign(new Error("ENOSPC: no space left on device, write"), {
      code: "ENOSPC",
    });
    // Past the 1 MiB gathered before a write, the write goes to the file at once.
    const writing = output.write(Buffer.alloc(2 << 20, 0x61));
    await expect(writing).rejects.toThrow(OutputError);
    await expect(writing).rejects.toThrow("cannot be written: ENOSPC: no space left on device");
    await expect(writing).rejects.toMatchObject({ cause: fs.writeFailure });
    await expect(output.write("more")).rejects.toThrow(/^cannot be written: ENOSPC/);
    await expect(output.commit()).rejects.toThrow(/^cannot be written: ENOSPC/);
    expect(fs.calls.some((call) => call.startsWith("rename "))).toBe(false);
    expect(await readdir(scratch)).not.toContain("full.jsonl");
    expect((await readdir(scratch)).filter((name) => name.startsWith(".full.jsonl."))).toEqual([]);
  });

  it("surfaces at the commit when the write was small enough to be gathered", async () => {
    const out = join(scratch, "full-small.jsonl");
    const output = await FixedOutput.open(out);
    fs.writeFailure = Object.assign(new Error("ENOSPC: no space left on device, write"), {
      code: "ENOSPC",
    });
    await output.write("repaired\n");
    await expect(output.commit()).rejects.toThrow(/^cannot be written: ENOSPC/);
    expect(await readdir(scratch)).not.toContain("full-small.jsonl");
  });
});
