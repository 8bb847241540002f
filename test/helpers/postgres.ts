/**
 * The PostgreSQL binaries for the suites that start a cluster: without them those suites are
 * skipped, loudly; with `REQUIRE_POSTGRES=1` (as in CI) they run and fail instead.
 *
 * @example
 * const postgres = postgresBinaries();
 * describe.skipIf(postgres === undefined && !postgresRequired)("with PostgreSQL", () => {
 *   // startPostgres() throws PostgresNotFoundError here when the binaries are missing.
 * });
 */
import {
  findPostgresBinaries,
  type PostgresBinaries,
  PostgresNotFoundError,
} from "../../demo/postgres-server.js";

/** Whether a missing PostgreSQL fails the suites that need it rather than skipping them. */
export const postgresRequired = process.env.REQUIRE_POSTGRES === "1";

/**
 * The binaries, or `undefined` after saying on the console why the suites that need them are
 * skipped (or, with `REQUIRE_POSTGRES=1`, why they fail).
 */
export function postgresBinaries(): PostgresBinaries | undefined {
  const binaries = findPostgresBinaries();
  if (binaries === undefined) {
    const outcome = postgresRequired
      ? "REQUIRE_POSTGRES=1, so the suites that need PostgreSQL FAIL"
      : "SKIPPING the suites that need PostgreSQL (set REQUIRE_POSTGRES=1 to fail them instead)";
    console.warn(`${outcome}: ${new PostgresNotFoundError().message}`);
  }
  return binaries;
}

/** What to add to the name of a suite that needs PostgreSQL: why it is skipped, if it is. */
export function skipNote(binaries: PostgresBinaries | undefined): string {
  return binaries === undefined && !postgresRequired
    ? " (skipped: no PostgreSQL binaries; set REQUIRE_POSTGRES=1 to fail instead)"
    : "";
}
