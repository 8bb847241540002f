import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

export default defineConfig({
  resolve: {
    // Examples and tests import the package by its published name, served from the sources.
    alias: [
      {
        find: /^tool-call-resilience\/setup$/,
        replacement: fileURLToPath(new URL("./src/setup/index.ts", import.meta.url)),
      },
      {
        find: /^tool-call-resilience$/,
        replacement: fileURLToPath(new URL("./src/index.ts", import.meta.url)),
      },
    ],
  },
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 20_000,
  },
});
