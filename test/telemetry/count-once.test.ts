/** The bounded memory behind counting each dangling call once. */
import { describe, expect, it } from "vitest";
import { CountOnceMemory, sharedCountOnceMemory } from "../../src/telemetry/count-once.js";

describe("CountOnceMemory", () => {
  it("reports a key as a first sighting once", () => {
    const memory = new CountOnceMemory(10);
    expect(memory.firstSighting("t1/call_1")).toBe(true);
    expect(memory.firstSighting("t1/call_1")).toBe(false);
    expect(memory.firstSighting("t2/call_1")).toBe(true);
  });

  it("forgets the least recently seen key first when full", () => {
    const memory = new CountOnceMemory(2);
    memory.firstSighting("a");
    memory.firstSighting("b");
    memory.firstSighting("a"); // a is now the most recent
    memory.firstSighting("c"); // forgets b
    expect(memory.size).toBe(2);
    expect(memory.firstSighting("a")).toBe(false);
    expect(memory.firstSighting("b")).toBe(true);
  });

  it("never holds more keys than its capacity", () => {
    const memory = new CountOnceMemory(100);
    for (let index = 0; index < 1_000; index++) memory.firstSighting(`call_${index}`);
    expect(memory.size).toBe(100);
  });

  it("remembers nothing with capacity 0, so every sighting is a first one", () => {
    const memory = new CountOnceMemory(0);
    expect(memory.firstSighting("a")).toBe(true);
    expect(memory.firstSighting("a")).toBe(true);
    expect(memory.size).toBe(0);
  });

  it("shares one default memory per destination", () => {
    const destination = {};
    expect(sharedCountOnceMemory(destination)).toBe(sharedCountOnceMemory(destination));
    expect(sharedCountOnceMemory(destination)).not.toBe(sharedCountOnceMemory({}));
    expect(sharedCountOnceMemory(destination).capacity).toBe(10_000);
  });
});
