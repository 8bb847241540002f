/**
 * fieldsOf and listOf: the one way the package reads records and lists of unknown shape. By
 * default any object is a record, as the engine reads LangChain-shaped values; under "records",
 * as the native formats read JSON, an array is not. A list is an array; neither reads a property.
 */
import { describe, expect, it } from "vitest";
import { fieldsOf, listOf } from "../../src/core/fields.js";

class Message {
  readonly type = "ai";
}

describe("fieldsOf", () => {
  it("gives a plain object back as it is, the same reference", () => {
    const call = { id: "call_1", name: "search" };
    expect(fieldsOf(call)).toBe(call);
  });

  it("gives a class instance back as it is, its prototype's fields readable", () => {
    const message = new Message();
    expect(fieldsOf(message)).toBe(message);
    expect(fieldsOf(message)?.type).toBe("ai");
  });

  it("gives an object without a prototype back as it is", () => {
    const bare = Object.create(null) as Record<string, unknown>;
    bare.id = "call_1";
    expect(fieldsOf(bare)).toBe(bare);
  });

  it("reads an array's own fields like any object's, as the engine reads what stands for a message", () => {
    const message = Object.assign([], { type: "tool", tool_call_id: "call_1" });
    expect(fieldsOf(message)).toBe(message);
    expect(fieldsOf(message)?.tool_call_id).toBe("call_1");
  });

  it('gives undefined for an array under "records", empty or not: JSON\'s list is read with listOf', () => {
    expect(fieldsOf([], "records")).toBeUndefined();
    expect(fieldsOf([{ id: "call_1" }], "records")).toBeUndefined();
    expect(fieldsOf({ id: "call_1" }, "records")?.id).toBe("call_1");
  });

  it("gives undefined for null and undefined", () => {
    expect(fieldsOf(null)).toBeUndefined();
    expect(fieldsOf(undefined)).toBeUndefined();
  });

  it("gives undefined for every primitive", () => {
    for (const value of ["call_1", "", 0, 42, Number.NaN, true, false, 10n, Symbol("id")]) {
      expect(fieldsOf(value)).toBeUndefined();
    }
  });

  it("gives undefined for a function, whatever fields it carries", () => {
    const fn = Object.assign(() => {}, { id: "call_1" });
    expect(fieldsOf(fn)).toBeUndefined();
  });

  it("never triggers a getter: an object whose getters throw is given back as it is", () => {
    const hostile = {
      get id(): string {
        throw new Error("unreadable");
      },
    };
    expect(fieldsOf(hostile)).toBe(hostile);
  });

  it("calls no proxy trap: a proxy whose every trap throws is given back as it is", () => {
    const throwing = () => {
      throw new Error("trap");
    };
    const proxy = new Proxy(
      {},
      {
        get: throwing,
        has: throwing,
        ownKeys: throwing,
        getPrototypeOf: throwing,
        getOwnPropertyDescriptor: throwing,
      },
    );
    expect(fieldsOf(proxy)).toBe(proxy);
  });

  it('sees through a proxy of an array to the array: not a record under "records"', () => {
    expect(fieldsOf(new Proxy([], {}), "records")).toBeUndefined();
  });

  it('gives a revoked proxy back by default, and throws a TypeError under "records", as Array.isArray does', () => {
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    expect(fieldsOf(proxy)).toBe(proxy);
    expect(() => fieldsOf(proxy, "records")).toThrow(TypeError);
  });
});

describe("listOf", () => {
  it("gives an array back as it is, the same reference", () => {
    const calls = [{ id: "call_1" }, "junk", null];
    expect(listOf(calls)).toBe(calls);
  });

  it("gives one shared, frozen empty list for anything that is not an array", () => {
    const empty = listOf(undefined);
    expect(empty).toEqual([]);
    expect(Object.isFrozen(empty)).toBe(true);
    for (const value of [null, "abc", 3, { length: 2, 0: "a", 1: "b" }, new Set([1]), () => {}]) {
      expect(listOf(value)).toBe(empty);
    }
  });

  it("never reads an entry: an array holding hostile entries is given back as it is", () => {
    const hostile = {
      get id(): string {
        throw new Error("unreadable");
      },
    };
    const list = [hostile];
    expect(listOf(list)).toBe(list);
  });

  it("throws a TypeError for a revoked proxy, as any read of it would", () => {
    const { proxy, revoke } = Proxy.revocable([], {});
    revoke();
    expect(() => listOf(proxy)).toThrow(TypeError);
  });
});
