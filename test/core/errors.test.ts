/**
 * The library's errors and their guards, which recognise an error from this copy of the package
 * and from a second copy loaded beside it (by its `name`, since `instanceof` fails across copies).
 */
import { describe, expect, it } from "vitest";
import { z } from "zod/v4";
import {
  isOptionsError,
  isToolCallResilienceError,
  optionsError,
  ToolCallResilienceError,
  ToolCallResilienceOptionsError,
} from "../../src/core/errors.js";
import { isSetupError, ToolCallResilienceSetupError } from "../../src/setup/errors.js";

/** An error as a second copy of the package would throw it: no instance of this copy's classes. */
function fromSecondCopy(name: string, fields: Record<string, unknown> = {}): Error {
  return Object.assign(new Error("from another copy"), { name }, fields);
}

describe("isToolCallResilienceError", () => {
  it("recognises every error class of this copy", () => {
    expect(isToolCallResilienceError(new ToolCallResilienceError("x"))).toBe(true);
    expect(isToolCallResilienceError(new ToolCallResilienceOptionsError([]))).toBe(true);
    expect(isToolCallResilienceError(new ToolCallResilienceSetupError("x"))).toBe(true);
  });

  it("recognises the errors of a second copy of the package by their name", () => {
    for (const name of [
      "ToolCallResilienceError",
      "ToolCallResilienceOptionsError",
      "ToolCallResilienceSetupError",
    ]) {
      expect(isToolCallResilienceError(fromSecondCopy(name))).toBe(true);
    }
  });

  it("rejects other errors and values that are no errors", () => {
    expect(isToolCallResilienceError(new Error("x"))).toBe(false);
    expect(isToolCallResilienceError(fromSecondCopy("TypeError"))).toBe(false);
    expect(isToolCallResilienceError("ToolCallResilienceError")).toBe(false);
    expect(isToolCallResilienceError(null)).toBe(false);
    expect(isToolCallResilienceError(undefined)).toBe(false);
  });
});

describe("isOptionsError", () => {
  it("recognises an options error of this copy", () => {
    expect(isOptionsError(new ToolCallResilienceOptionsError([]))).toBe(true);
  });

  it("recognises an options error of a second copy by its name and its problems", () => {
    const problems = [{ path: "window", message: "expected a whole number of messages" }];
    const error = fromSecondCopy("ToolCallResilienceOptionsError", { problems });
    expect(isOptionsError(error)).toBe(true);
    if (isOptionsError(error)) expect(error.problems[0]?.path).toBe("window");
  });

  it("rejects an error with the right name but no problems list, and other library errors", () => {
    expect(isOptionsError(fromSecondCopy("ToolCallResilienceOptionsError"))).toBe(false);
    expect(isOptionsError(new ToolCallResilienceError("x"))).toBe(false);
    expect(isOptionsError(new ToolCallResilienceSetupError("x"))).toBe(false);
  });
});

describe("isSetupError", () => {
  it("recognises the setup error of this copy and of a second copy", () => {
    expect(isSetupError(new ToolCallResilienceSetupError("no exporter"))).toBe(true);
    expect(isSetupError(fromSecondCopy("ToolCallResilienceSetupError"))).toBe(true);
  });

  it("rejects the other errors of the library", () => {
    expect(isSetupError(new ToolCallResilienceOptionsError([]))).toBe(false);
    expect(isSetupError(new ToolCallResilienceError("x"))).toBe(false);
    expect(isSetupError(new Error("x"))).toBe(false);
  });
});

describe("optionsError", () => {
  it("names each problem with its path, and keeps the validation error as cause", () => {
    const parsed = z.strictObject({ window: z.number() }).safeParse({ window: "3", extra: 1 });
    if (parsed.success) throw new Error("expected a failed parse");
    const error = optionsError(parsed.error, "repair");
    expect(error).toBeInstanceOf(ToolCallResilienceOptionsError);
    expect(error.cause).toBe(parsed.error);
    expect(error.problems.map((problem) => problem.path)).toEqual(["window", ""]);
    expect(error.problems[1]?.message).toBe("unknown option(s) extra");
    expect(error.message).toMatch(/^Invalid repair options:\n- window: /);
  });
});

describe("every guard", () => {
  it("answers false, never throws, for a value that throws when read", () => {
    const throwing = () => {
      throw new Error("unreadable");
    };
    const hostile = [
      new Proxy({}, { get: throwing, getPrototypeOf: throwing }),
      Object.defineProperty({}, "name", { get: throwing }),
    ];
    for (const value of hostile) {
      expect(isToolCallResilienceError(value)).toBe(false);
      expect(isOptionsError(value)).toBe(false);
      expect(isSetupError(value)).toBe(false);
    }
    const unreadableProblems = Object.defineProperties(
      {},
      { name: { value: "ToolCallResilienceOptionsError" }, problems: { get: throwing } },
    );
    expect(isOptionsError(unreadableProblems)).toBe(false);
  });
});
