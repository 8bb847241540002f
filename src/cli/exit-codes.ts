/**
 * The exit codes of `tool-call-resilience audit`, and which one an audit ends with: 0 when every
 * thread is clean (with `--fix`: when everything found was fixed and written), 1 when problems
 * were found (with `--fix`: when some are left after fixing), 2 on bad usage or bad input (named
 * with the file and line, or the redacted connection string). Scripts branch on them.
 */

/** Exit code: no problems; with `--fix`, everything found was fixed and written. */
export const EXIT_CLEAN = 0;
/** Exit code: problems found; with `--fix`, problems left after fixing. */
export const EXIT_PROBLEMS = 1;
/** Exit code: bad usage, or input (or output) the audit could not read (or write) whole. */
export const EXIT_BAD_INPUT = 2;

/** What the exit code of an audit depends on. */
interface AuditOutcome {
  /** How many things could not be read (or written). */
  readonly errors: number;
  /** Whether some thread had problems. */
  readonly problemsFound: boolean;
  /** With `--fix`: whether the repaired threads still have problems; `undefined` without it. */
  readonly problemsLeft: boolean | undefined;
}

/**
 * The exit code an audit ends with: an error outweighs everything; with `--fix`, what counts is
 * what is left after fixing, not what was found.
 */
export function exitCodeOf(outcome: AuditOutcome): number {
  if (outcome.errors > 0) return EXIT_BAD_INPUT;
  const problems = outcome.problemsLeft ?? outcome.problemsFound;
  return problems ? EXIT_PROBLEMS : EXIT_CLEAN;
}
