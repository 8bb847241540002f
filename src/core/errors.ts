/**
 * The errors the library throws on purpose, the guards that recognise them, and the one way a
 * failed options parse becomes such an error.
 */
import type { z } from "zod/v4";

/**
 * Base class of every error this library throws on purpose.
 *
 * The library only throws for what its caller gets wrong (bad options, or a history passed inside
 * the object that holds it), before any model call; around a model call it fails open.
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
 * Thrown by {@link createRepairPolicy}, {@link danglingToolCallMiddleware} and every other
 * factory when an option is invalid, and by the repair functions when the history is given inside
 * the object that holds it. The message lists every problem; {@link problems} holds them as data
 * and `cause` keeps the underlying validation error.
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

  /**
   * @param options.subject - what the options are for, as the message names it
   * @param options.of - what was given wrong: the `"options"`, or the `"arguments"` (a history)
   */
  constructor(
    problems: readonly OptionsProblem[],
    options?: { cause?: unknown; subject?: string; of?: "options" | "arguments" },
  ) {
    const subject = options?.subject ?? "tool-call-resilience";
    const lines = problems.map((problem) =>
      problem.path === "" ? `- ${problem.message}` : `- ${problem.path}: ${problem.message}`,
    );
    super(`Invalid ${subject} ${options?.of ?? "options"}:\n${lines.join("\n")}`, {
      cause: options?.cause,
    });
    this.problems = problems;
  }
}

/**
 * Options that are unknown where they are given, though another entry point takes them: what the
 * error says of each, after its name.
 */
const OPTIONS_ELSEWHERE: Readonly<Record<string, (subject: string) => string>> = {
  persist: (subject) =>
    `belongs to danglingToolCallMiddleware, whose hooks write the repair into the agent's state; ${subject} repairs each request and cannot write the thread`,
};

/**
 * The problems of an `unrecognized_keys` issue: one for each key another entry point takes, one
 * for the rest.
 */
function unknownKeyProblems(
  issue: z.core.$ZodIssueUnrecognizedKeys,
  subject: string,
  repairsRequests: boolean,
): OptionsProblem[] {
  const path = issue.path.map(String).join(".");
  const topLevel = issue.path.length === 0;
  const problems: OptionsProblem[] = [];
  const unknown: string[] = [];
  for (const key of issue.keys) {
    const elsewhere = topLevel && repairsRequests ? OPTIONS_ELSEWHERE[key] : undefined;
    if (elsewhere === undefined) unknown.push(key);
    else problems.push({ path: key, message: elsewhere(subject) });
  }
  if (unknown.length > 0) {
    problems.unshift({
      path,
      message: `unknown ${topLevel ? "option" : "key"}(s) ${unknown.join(", ")}`,
    });
  }
  return problems;
}

/**
 * Turns a failed parse into the library's named options error, keeping the zod error as `cause`.
 * For an attachment that repairs requests, an option that belongs to the middleware (`persist`)
 * is named with the one it belongs to.
 *
 * @param subject - what the options are for, as the message names it (e.g. `"repair"`)
 * @param repairsRequests - whether `subject` is such an attachment
 */
export function optionsError(
  error: z.ZodError,
  subject: string,
  repairsRequests = false,
): ToolCallResilienceOptionsError {
  const problems: OptionsProblem[] = error.issues.flatMap((issue) =>
    issue.code === "unrecognized_keys"
      ? unknownKeyProblems(issue, subject, repairsRequests)
      : [{ path: issue.path.map(String).join("."), message: issue.message }],
  );
  return new ToolCallResilienceOptionsError(problems, { cause: error, subject });
}

/** A value as an error quotes what it got: a string in quotes, a number as it is, else its kind. */
function shown(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (
    value === null ||
    ["number", "boolean", "undefined", "bigint", "symbol"].includes(typeof value)
  ) {
    return String(value);
  }
  if (typeof value === "function") return "a function";
  return Array.isArray(value) ? "an array" : "an object";
}

/**
 * The message of a value that is not one of a set, worded the same for every option:
 * `expected one of "drop", "keep"; got "delete"`.
 *
 * @param values - the values the option takes
 * @param got - the value given
 * @param orElse - what else it takes, besides the set (`"a function of the thread id"`)
 * @example
 * ```ts
 * z.enum(["drop", "keep"], { error: (issue) => notOneOf(["drop", "keep"], issue.input) });
 * ```
 */
export function notOneOf(values: readonly unknown[], got: unknown, orElse?: string): string {
  const list = values.map(shown).join(", ");
  return `expected one of ${list}${orElse === undefined ? "" : `, or ${orElse}`}; got ${shown(got)}`;
}

/**
 * Refuses a history given inside the object that holds it (a graph's state, a request's
 * parameters) instead of as the list itself: the caller's mistake, told before any model call,
 * where passing the object on would repair nothing on every call, without a word. Anything else
 * that is no list is left to the repair, which passes it on as it is.
 *
 * @param history - the first argument of a repair function
 * @param field - the field such an object holds the list in: `"messages"`, or `"input"`
 * @param subject - the function, as the message names it
 * @param list - the list expected, as the message names it: `"the message array (state.messages)"`
 * @throws {ToolCallResilienceOptionsError} when `history` is an object with such a field
 */
export function refuseHistoryHolder(
  history: unknown,
  field: string,
  subject: string,
  list: string,
): void {
  if (!isHolder(history, field)) return;
  const article = /^[aeiou]/.test(field) ? "an" : "a";
  throw new ToolCallResilienceOptionsError(
    [{ path: "", message: `expected ${list}, got an object with ${article} ${field} field` }],
    { subject, of: "arguments" },
  );
}

/** Whether a value is an object, not a list, with `field` (read safely: a history may be hostile). */
function isHolder(value: unknown, field: string): boolean {
  try {
    return typeof value === "object" && value !== null && !Array.isArray(value) && field in value;
  } catch {
    return false;
  }
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
