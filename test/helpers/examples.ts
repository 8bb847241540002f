/** Runs a file of `examples/` as a user would (through tsx, from the repository's root). */
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const run = promisify(execFile);
const root = fileURLToPath(new URL("../..", import.meta.url));
const tsx = fileURLToPath(new URL("../../node_modules/.bin/tsx", import.meta.url));

/**
 * Runs `examples/<name>` with tsx and returns what it printed; fails if it exits non-zero.
 *
 * @example
 * ```ts
 * const output = await runExample("basic.ts");
 * ```
 */
export async function runExample(name: string, env: Record<string, string> = {}): Promise<string> {
  const { stdout } = await run(tsx, [`examples/${name}`], {
    cwd: root,
    timeout: 60_000,
    env: { ...process.env, ...env },
  });
  return stdout;
}
