/**
 * The errors the library throws on purpose, the guards that recognise them, and the one way a
 * failed options parse becomes such an error.
 */
import type { z } from "zod/v4";

/**
 * Base class of every error this library throws on purpose.
 *
 * The library only throws at construction time, for bad options; at call time it fails open.
 *
 * @example
 * ```ts
 * import { isToolCallResilienceError } from "tool-call-resilience";
 *
 * try {
 *   danglingToolCallMiddleware({ window: 0 });
 * } catch (error) {
 *   if (isToolCallResilienceError(error)) console.error(error.message);
 * }
 * ```
 */
export class ToolCallResilienceError extends Error {
  override name = "ToolCallResilienceError";
}

/** One problem found in an options object: where it is and what is wrong with it. */
export interface OptionsProblem {
  /** Dotted path of the offending option, for example `placeholder.interrupted`. */
  readonly path: string;
  /** What is wrong, in plain words. */
  readonly message: string;
}

/**
 * Thrown by {@link createRepairPolicy} and {@link danglingToolCallMiddleware} when an option is
 * invalid. The message lists every problem; {@link problems} holds them as data and `cause` keeps
 * the underlying validation error.
 *
 * @example
 * ```ts
 * import { createRepairPolicy, isOptionsError } from "tool-call-resilience";
 *
 * try {
 *   createRepairPolicy({ orphans: "delete" });
 * } catch (error) {
 *   if (isOptionsError(error)) console.error(error.problems[0]?.path); // "orphans"
 * }
 * ```
 */
export class ToolCallResilienceOptionsError extends ToolCallResilienceError {
  override name = "ToolCallResilienceOptionsError";
  /** Every problem found, in the order the validator reported them. */
  readonly problems: readonly OptionsProblem[];

  constructor(
    problems: readonly OptionsProblem[],
    options?: { cause?: unknown; subject?: string },
  ) {
    const subject = options?.subject ?? "tool-call-resilience";
    const lines = problems.map((problem) =>
      problem.path === "" ? `- ${problem.message}` : `- ${problem.path}: ${problem.message}`,
    );
    super(`Invalid ${subject} options:\n${lines.join("\n")}`, { cause: options?.cause });
    this.problems = problems;
  }
}

/**
 * Turns a failed parse into the library's named options error, keeping the zod error as `cause`.
 *
 * @param subject - what the options are for, as the message names it (e.g. `"repair"`)
 */
export function optionsError(error: z.ZodError, subject: string): ToolCallResilienceOptionsError {
  const problems: OptionsProblem[] = error.issues.map((issue) => ({
    path: issue.path.map(String).join("."),
    message:
      issue.code === "unrecognized_keys"
        ? `unknown ${issue.path.length === 0 ? "option" : "key"}(s) ${issue.keys.join(", ")}`
        : issue.message,
  }));
  return new ToolCallResilienceOptionsError(problems, { cause: error, subject });
}

/**
 * The `name` of the error `tool-call-resilience/setup` throws (`ToolCallResilienceSetupError`),
 * defined here so that {@link isToolCallResilienceError} knows it without loading the optional
 * setup entry, whose class takes its name from here.
 */
export const SETUP_ERROR_NAME = "ToolCallResilienceSetupError";

/**
 * Every `name` an error of this library carries. The guards read it as well as `instanceof`: an
 * application may load two copies of the package (two versions in `node_modules`, or the ESM and a
 * bundled copy), and an error thrown by one copy is no instance of the other's classes.
 */
const ERROR_NAMES: ReadonlySet<string> = new Set([
  "ToolCallResilienceError",
  "ToolCallResilienceOptionsError",
  SETUP_ERROR_NAME,
]);

/**
 * Whether a value is an instance of a class, for a guard: a proxy whose prototype cannot be read
 * is no instance, where `instanceof` would throw.
 */
export function isInstance(value: unknown, type: abstract new (...args: never[]) => unknown) {
  try {
    return value instanceof type;
  } catch {
    return false;
  }
}

/**
 * The `name` of a value, when it is an object that has a string one. A guard never throws: a
 * `name` that cannot be read (a getter or a proxy that throws) is no name.
 */
export function nameOf(value: unknown): string | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  try {
    const { name } = value as { name?: unknown };
    return typeof name === "string" ? name : undefined;
  } catch {
    return undefined;
  }
}

/** Whether an error from another copy of the package carries its list of problems. */
function hasProblems(error: unknown): boolean {
  try {
    return Array.isArray((error as { problems?: unknown }).problems);
  } catch {
    return false;
  }
}

/**
 * Tells whether a value is an error thrown by this library, by this copy of the package or by
 * another one loaded in the same process.
 *
 * @example
 * ```ts
 * if (isToolCallResilienceError(error)) console.error(error.name);
 * ```
 */
export function isToolCallResilienceError(error: unknown): error is ToolCallResilienceError {
  if (isInstance(error, ToolCallResilienceError)) return true;
  const name = nameOf(error);
  return name !== undefined && ERROR_NAMES.has(name);
}

/**
 * Tells whether a value is a {@link ToolCallResilienceOptionsError}, from this copy of the package
 * or from another one (then by its `name` and its `problems` list).
 *
 * @example
 * ```ts
 * if (isOptionsError(error)) for (const problem of error.problems) console.error(problem.path);
 * ```
 */
export function isOptionsError(error: unknown): error is ToolCallResilienceOptionsError {
  if (isInstance(error, ToolCallResilienceOptionsError)) return true;
  return nameOf(error) === "ToolCallResilienceOptionsError" && hasProblems(error);
}
