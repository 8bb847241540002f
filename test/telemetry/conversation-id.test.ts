/** mappedThreadId: what a thread id becomes as gen_ai.conversation.id, by threadIdAttribute. */
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { mappedThreadId } from "../../src/telemetry/conversation-id.js";

describe("mappedThreadId", () => {
  it('keeps the thread id as it is with "raw"', () => {
    expect(mappedThreadId("raw", "thread-1")).toBe("thread-1");
  });

  it('gives the hex SHA-256 of the thread id with "sha256"', () => {
    const expected = createHash("sha256").update("thread-1").digest("hex");
    expect(mappedThreadId("sha256", "thread-1")).toBe(expected);
  });

  it("gives what a mapping function returns", () => {
    expect(mappedThreadId((id) => `tenant-a/${id}`, "thread-1")).toBe("tenant-a/thread-1");
  });

  it("throws a TypeError when the function returns an empty string or no string", () => {
    expect(() => mappedThreadId(() => "", "thread-1")).toThrow(/an empty string/);
    expect(() => mappedThreadId(() => 42 as unknown as string, "thread-1")).toThrow(TypeError);
  });

  it("lets an error of the mapping function through, for the recorder to report", () => {
    const failure = new Error("no tenant");
    expect(() =>
      mappedThreadId(() => {
        throw failure;
      }, "thread-1"),
    ).toThrow(failure);
  });
});
