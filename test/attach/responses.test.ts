/**
 * Waiting for a model's answer without changing it: values, promises and streams go back as they
 * came, and the whole answer reaches whoever counts it once the response has ended.
 */
import { describe, expect, it, vi } from "vitest";
import { isPromiseLike, settled } from "../../src/attach/responses.js";

/** A chunk that joins like LangChain's message chunks. */
class Chunk {
  constructor(readonly text: string) {}
  concat(other: Chunk): Chunk {
    return new Chunk(this.text + other.text);
  }
}

async function* streamOf(chunks: readonly Chunk[], failure?: Error): AsyncGenerator<Chunk> {
  for (const chunk of chunks) yield chunk;
  if (failure !== undefined) throw failure;
}

async function drain(stream: AsyncGenerator<unknown>): Promise<unknown[]> {
  const seen: unknown[] = [];
  for await (const chunk of stream) seen.push(chunk);
  return seen;
}

describe("settled", () => {
  it("hands a plain response to onEnd and returns the very same value", () => {
    const onEnd = vi.fn();
    const response = { content: "hi" };
    expect(settled(response, onEnd)).toBe(response);
    expect(onEnd).toHaveBeenCalledWith(response);
  });

  it("hands a promise's value to onEnd once it resolves, and resolves to that value", async () => {
    const onEnd = vi.fn();
    const response = { content: "hi" };
    await expect(settled(Promise.resolve(response), onEnd)).resolves.toBe(response);
    expect(onEnd).toHaveBeenCalledWith(response);
  });

  it("hands undefined to onEnd when the promise rejects, and rejects with the same error", async () => {
    const onEnd = vi.fn();
    const failure = new Error("model down");
    await expect(settled(Promise.reject(failure), onEnd)).rejects.toBe(failure);
    expect(onEnd).toHaveBeenCalledWith(undefined);
  });

  it("passes a stream on chunk by chunk and hands onEnd the chunks joined", async () => {
    const onEnd = vi.fn();
    const chunks = [new Chunk("a"), new Chunk("b"), new Chunk("c")];
    const stream = settled(streamOf(chunks), onEnd);
    expect(await drain(stream)).toEqual(chunks);
    expect(onEnd).toHaveBeenCalledTimes(1);
    expect(onEnd.mock.calls[0]?.[0]).toEqual(new Chunk("abc"));
  });

  it("hands undefined to onEnd when the stream fails, and passes the failure on", async () => {
    const onEnd = vi.fn();
    const failure = new Error("cut off");
    await expect(drain(settled(streamOf([new Chunk("a")], failure), onEnd))).rejects.toBe(failure);
    expect(onEnd).toHaveBeenCalledWith(undefined);
  });

  it("hands undefined to onEnd when the caller stops reading the stream early", async () => {
    const onEnd = vi.fn();
    const stream = settled(streamOf([new Chunk("a"), new Chunk("b")]), onEnd);
    for await (const _chunk of stream) break;
    expect(onEnd).toHaveBeenCalledWith(undefined);
  });

  it("keeps the last joined answer when a chunk's concat throws", async () => {
    const onEnd = vi.fn();
    const broken = Object.assign(new Chunk("a"), {
      concat: () => {
        throw new Error("cannot join");
      },
    });
    await drain(settled(streamOf([broken, new Chunk("b")]), onEnd));
    expect(onEnd).toHaveBeenCalledWith(broken);
  });

  it("treats an async iterable that is no generator as a plain value", () => {
    const onEnd = vi.fn();
    const iterable = { async *[Symbol.asyncIterator]() {} };
    expect(settled(iterable, onEnd)).toBe(iterable);
    expect(onEnd).toHaveBeenCalledWith(iterable);
  });

  it("never lets onEnd's failure reach the caller", async () => {
    const onEnd = () => {
      throw new Error("counting failed");
    };
    expect(settled("answer", onEnd)).toBe("answer");
    await expect(settled(Promise.resolve("answer"), onEnd)).resolves.toBe("answer");
  });
});

describe("isPromiseLike", () => {
  it("tells thenables from other values", () => {
    expect(isPromiseLike(Promise.resolve(1))).toBe(true);
    // biome-ignore lint/suspicious/noThenProperty: a hand-made thenable is what is tested here
    expect(isPromiseLike({ then: () => {} })).toBe(true);
    // biome-ignore lint/suspicious/noThenProperty: and so is a `then` that is no function
    expect(isPromiseLike({ then: 1 })).toBe(false);
    expect(isPromiseLike(null)).toBe(false);
    expect(isPromiseLike("then")).toBe(false);
  });
});
