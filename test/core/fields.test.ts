/**
 * fieldsOf and listOf: the one way the package reads records and lists of unknown shape. A record
 * is any object that is not an array; a list is an array; neither reads a property.
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

  it("gives undefined for an array, empty or not: a list is read with listOf", () => {
    expect(fieldsOf([])).toBeUndefined();
    expect(fieldsOf([{ id: "call_1" }])).toBeUndefined();
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

  it("sees through a proxy of an array to the array: not a record", () => {
    expect(fieldsOf(new Proxy([], {}))).toBeUndefined();
  });

  it("throws a TypeError for a revoked proxy, as any read of it would", () => {
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    expect(() => fieldsOf(proxy)).toThrow(TypeError);
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
