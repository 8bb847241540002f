import { defineConfig } from "vitest/config";
import base from "./vitest.config.js";

/**
 * The long test files alone (`npm run test:long`), with the same aliases, one file at a time:
 * their incidents and fleets keep time against real Prometheus and PostgreSQL processes.
 */
export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: ["test/**/*.long.test.ts"],
    exclude: ["**/node_modules/**"],
    maxWorkers: 1,
  },
});
