/**
 * The PostgreSQL comparison of `npm run bench` alone (`bench/persist.ts`), with as many rounds as
 * asked: what `persist: true` costs per `createAgent` call over `PostgresSaver`. After
 * `npm run build`:
 *
 *   TSX_TSCONFIG_PATH=bench/tsconfig.json node --expose-gc --single-threaded-gc --import tsx \
 *     bench/persist-run.ts [--rounds 150]
 *
 * Exits 0 with a SKIPPED line when the PostgreSQL binaries are not installed.
 */
import { parseArgs } from "node:util";
import { formatPersist, measurePersistOnPostgres } from "./persist.js";

const { values } = parseArgs({
  options: { rounds: { type: "string", default: "150" }, help: { type: "boolean" } },
  strict: true,
});
if (values.help === true) {
  console.log(
    "Usage: bench/persist-run.ts [--rounds <n>] (default 150; npm run bench -- --quick runs 20)",
  );
  process.exit(0);
}
const rounds = Number(values.rounds);
if (!Number.isInteger(rounds) || rounds < 1) {
  console.error("--rounds must be an integer >= 1");
  process.exit(2);
}
const result = await measurePersistOnPostgres({
  rounds,
  warmUpRounds: 5,
  onProgress: (step) => process.stderr.write(`${step}\n`),
});
console.log(formatPersist(result));
