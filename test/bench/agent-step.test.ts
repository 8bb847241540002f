/**
 * The benchmark's agent step does what the end-to-end figure says it does: one model call on the
 * same history every time, with or without a checkpointer, and with our middleware in the way.
 */
import { describe, expect, it } from "vitest";
import { agentStep } from "../../bench/agent-step.js";
import { buildHistory } from "../../bench/histories.js";

describe("benchmark agent step", () => {
  const history = buildHistory(100, "clean").messages;

  for (const checkpointing of ["memory-saver", "none"] as const) {
    for (const middleware of ["none", "pass-through", "ours"] as const) {
      it(`ends with the model's answer after the same history on every call (checkpointer: ${checkpointing}, middleware: ${middleware})`, async () => {
        const step = agentStep(history, middleware, checkpointing);
        // A step that kept its thread would also hold the answers of the steps before it.
        expect(await step()).toBe(history.length + 1);
        expect(await step()).toBe(history.length + 1);
      });
    }
  }
});
