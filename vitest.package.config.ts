import { defineConfig } from "vitest/config";
import base from "./vitest.config.js";

/** The installed-package test alone (`npm run test:package`), with the same aliases. */
export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: ["test/package/**/*.test.ts"],
    exclude: ["**/node_modules/**"],
    testTimeout: 300_000,
    hookTimeout: 900_000,
  },
});
