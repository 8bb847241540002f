/**
 * toolCallRepairInputFilter when the repair engine fails (it guards itself against any history, so
 * its failure here is a bug made to happen by replacing it): the model data goes on as it came,
 * logged and counted as `failed_open`, and a run goes on as it would without the filter. And when
 * the agent cannot be read: the run is repaired and answered, the failure logged once, and the
 * model call counted by its outcome, without the agent's model and tools.
 */
import { Agent, type CallModelInputFilter, Runner, tool } from "@openai/agents";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { toolCallRepairInputFilter } from "../../src/stacks/openai-agents.js";
import {
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_OUTCOME,
  METRIC_DANGLING_TOOL_CALLS,
  METRIC_MODEL_CALLS,
} from "../../src/telemetry/semconv.js";
import {
  COMPLETION_TEXT,
  type StrictProviderServer,
  startStrictProviderServer,
} from "../helpers/strict-provider-server.js";
import { metricsHarness } from "../helpers/telemetry.js";
import { functionCall, functionResult, providerFor, user } from "./sdk.js";

/** When set, the engine throws this instead of repairing. */
const engine = vi.hoisted(() => ({ fault: undefined as Error | undefined }));

vi.mock("../../src/core/repair.js", async (importOriginal) => {
  const actual = await importOriginal<typeof import("../../src/core/repair.js")>();
  return {
    ...actual,
    repairHistory: (...args: Parameters<typeof actual.repairHistory>) => {
      if (engine.fault !== undefined) throw engine.fault;
      return actual.repairHistory(...args);
    },
  };
});

let server: StrictProviderServer;
beforeAll(async () => {
  server = await startStrictProviderServer();
});
afterAll(() => server.close());
afterEach(() => {
  engine.fault = undefined;
});

const agent = new Agent({ name: "support", instructions: "Help.", model: "gpt-4.1" });

describe("when the engine throws", () => {
  it("passes modelData on as it came, logged and counted as failed_open", async () => {
    const harness = metricsHarness();
    const logger = { warn: vi.fn(), error: vi.fn() };
    const filter = toolCallRepairInputFilter({ logger, meterProvider: harness.meterProvider });
    engine.fault = new Error("engine bug");
    const modelData = { input: [user("a"), functionCall("call_1"), user("b")] };
    expect(filter({ modelData, agent, context: undefined })).toBe(modelData);
    expect(logger.error).toHaveBeenCalledWith(
      expect.stringContaining("passing the request on unchanged"),
      expect.objectContaining({ error: engine.fault }),
    );
    expect(await harness.sum(METRIC_MODEL_CALLS, { [ATTR_OUTCOME]: "failed_open" })).toBe(1);
    await harness.shutdown();
  });

  it("lets a run go on as it would without the filter: answered when clean, the API's own 400 when not", async () => {
    const runner = new Runner({
      modelProvider: providerFor(server),
      callModelInputFilter: toolCallRepairInputFilter({ logger: false }),
    });
    engine.fault = new Error("engine bug");
    const clean = [user("a"), functionCall("call_1"), functionResult("call_1"), user("b")];
    expect((await runner.run(agent, clean)).finalOutput).toBe(COMPLETION_TEXT);
    await expect(runner.run(agent, [user("a"), functionCall("call_2"), user("b")])).rejects.toThrow(
      /400 No tool output found for function call call_2/,
    );

    engine.fault = undefined;
    const repaired = await runner.run(agent, [user("a"), functionCall("call_3"), user("b")]);
    expect(repaired.finalOutput).toBe(COMPLETION_TEXT);
  });
});

describe("when reading the agent throws", () => {
  it("repairs and answers the run; the failure is logged once, the call counted without the agent's model and tools", async () => {
    const harness = metricsHarness();
    const logger = { warn: vi.fn(), error: vi.fn() };
    const lookup = tool({
      name: "lookup",
      description: "Looks an order up.",
      parameters: z.object({ order: z.string() }),
      execute: async ({ order }) => `order ${order}: shipped`,
    });
    const hostile = new Agent({ name: "support", model: "gpt-4.1", tools: [lookup] });
    // The SDK reads the agent as it always does; inside the filter, `model` and `tools` throw.
    let inFilter = false;
    for (const key of ["model", "tools"] as const) {
      const value = hostile[key];
      Object.defineProperty(hostile, key, {
        get() {
          if (inFilter) throw new Error(`no reading ${key}`);
          return value;
        },
      });
    }
    const filter = toolCallRepairInputFilter({ logger, meterProvider: harness.meterProvider });
    const callModelInputFilter: CallModelInputFilter = Object.assign(
      (args: Parameters<CallModelInputFilter>[0]) => {
        inFilter = true;
        try {
          return filter(args);
        } finally {
          inFilter = false;
        }
      },
      { preserveInputIdentity: true },
    );
    const runner = new Runner({ modelProvider: providerFor(server), callModelInputFilter });
    const dangling = () => [user("a"), functionCall("call_4", "lookup"), user("b")];
    await expect(
      new Runner({ modelProvider: providerFor(server) }).run(hostile, dangling()),
    ).rejects.toThrow(/400 No tool output found for function call call_4/);

    expect((await runner.run(hostile, dangling())).finalOutput).toBe(COMPLETION_TEXT);
    expect((await runner.run(hostile, [user("c")])).finalOutput).toBe(COMPLETION_TEXT);

    const failures = logger.error.mock.calls.filter(([line]) => String(line).includes("agent"));
    expect(failures).toEqual([
      [
        expect.stringContaining("reading the agent failed"),
        { error: new Error("no reading model") },
      ],
    ]);
    expect(await harness.sum(METRIC_MODEL_CALLS, { [ATTR_OUTCOME]: "repaired" })).toBe(1);
    expect(await harness.sum(METRIC_MODEL_CALLS, { [ATTR_OUTCOME]: "clean" })).toBe(1);
    expect(await harness.sum(METRIC_MODEL_CALLS, { [ATTR_OUTCOME]: "failed_open" })).toBe(0);
    expect(await harness.sum(METRIC_MODEL_CALLS, { [ATTR_GEN_AI_REQUEST_MODEL]: "unknown" })).toBe(
      2,
    );
    expect(
      await harness.sum(METRIC_DANGLING_TOOL_CALLS, { [ATTR_GEN_AI_TOOL_NAME]: "_OTHER" }),
    ).toBe(1);
    await harness.shutdown();
  });
});
