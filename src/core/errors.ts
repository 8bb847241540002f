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
 * Tells whether a value is an error thrown by this library.
 *
 * @example
 * ```ts
 * if (isToolCallResilienceError(error)) console.error(error.name);
 * ```
 */
export function isToolCallResilienceError(error: unknown): error is ToolCallResilienceError {
  return error instanceof ToolCallResilienceError;
}

/**
 * Tells whether a value is a {@link ToolCallResilienceOptionsError}.
 *
 * @example
 * ```ts
 * if (isOptionsError(error)) for (const problem of error.problems) console.error(problem.path);
 * ```
 */
export function isOptionsError(error: unknown): error is ToolCallResilienceOptionsError {
  return error instanceof ToolCallResilienceOptionsError;
}
