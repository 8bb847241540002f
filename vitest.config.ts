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
        find: /^tool-call-resilience\/semconv$/,
        replacement: fileURLToPath(new URL("./src/telemetry/semconv.ts", import.meta.url)),
      },
      {
        find: /^tool-call-resilience\/ai-sdk$/,
        replacement: fileURLToPath(new URL("./src/stacks/ai-sdk.ts", import.meta.url)),
      },
      {
        find: /^tool-call-resilience\/openai-agents$/,
        replacement: fileURLToPath(new URL("./src/stacks/openai-agents.ts", import.meta.url)),
      },
      {
        find: /^tool-call-resilience\/formats$/,
        replacement: fileURLToPath(new URL("./src/formats/index.ts", import.meta.url)),
      },
      {
        find: /^tool-call-resilience$/,
        replacement: fileURLToPath(new URL("./src/index.ts", import.meta.url)),
      },
    ],
  },
  test: {
    include: ["test/**/*.test.ts"],
    // The installed-package test needs the npm registry: `npm run test:package`. The long files
    // (real Prometheus and Alertmanager incidents, property runs through each provider's
    // converter, the audit's largest files) have a command of their own: `npm run test:long`.
    exclude: ["test/package/**", "test/**/*.long.test.ts", "**/node_modules/**"],
    testTimeout: 20_000,
    // Two files at a time even on two cores: most of the time a file waits on a process it started.
    maxWorkers: 2,
  },
});
