/**
 * `repairResponsesInput` failing open on a failure of its own: an input it cannot read, and a
 * repair it cannot write back (a bug, made to happen by corrupting what the shared steps return).
 * Either way the input comes back as it is, the failure is logged once, and the model call is
 * counted once: `failed_open` when the input could not be read.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { repairResponsesInput } from "../../src/formats/openai-responses.js";
import { ATTR_OUTCOME, METRIC_MODEL_CALLS } from "../../src/telemetry/semconv.js";
import { metricsHarness } from "../helpers/telemetry.js";

/** When set, what the shared steps return has a repair that throws as it is read. */
const writing = vi.hoisted(() => ({ fault: undefined as Error | undefined }));

vi.mock("../../src/formats/format.js", async (importOriginal) => {
  const actual = await importOriginal<typeof import("../../src/formats/format.js")>();
  const corrupt = <R extends { repairs: readonly unknown[] }>(repaired: R): R => {
    const fault = writing.fault;
    if (fault === undefined) return repaired;
    const unreadable = {
      get kind(): never {
        throw fault;
      },
    };
    return { ...repaired, repairs: [...repaired.repairs, unreadable] };
  };
  return {
    ...actual,
    prepareInFormat: (...args: Parameters<typeof actual.prepareInFormat>) => {
      const prepared = actual.prepareInFormat(...args);
      return { ...prepared, repaired: corrupt(prepared.repaired) };
    },
    repairInFormat: (...args: Parameters<typeof actual.repairInFormat>) =>
      corrupt(actual.repairInFormat(...args)),
  };
});

afterEach(() => {
  writing.fault = undefined;
});

const call = { type: "function_call", call_id: "c1", name: "search", arguments: "{}" };
const user = { role: "user", content: "Go on" };

function failuresLogged(logger: { error: ReturnType<typeof vi.fn> }) {
  return logger.error.mock.calls.filter(([line]) =>
    String(line).includes("failed; passing the messages on unchanged"),
  );
}

describe("repairResponsesInput failing open", () => {
  it("passes an item that throws when first read on as it is: logged, counted failed_open once", async () => {
    const harness = metricsHarness();
    const logger = { warn: vi.fn(), error: vi.fn() };
    const fault = new Error("no reading me");
    let reads = 0;
    // Read once, it throws; read again, it would pass for an orphan output.
    const flaky = {
      get type(): string {
        reads++;
        if (reads === 1) throw fault;
        return "function_call_output";
      },
      call_id: "ghost",
      output: "x",
    };
    const input = [call, flaky, user];
    const result = repairResponsesInput(input, { logger, meterProvider: harness.meterProvider });
    expect(result.messages).toBe(input);
    expect(result.repairs).toEqual([]);
    expect(failuresLogged(logger)).toEqual([[expect.any(String), { error: fault }]]);
    expect(await harness.sum(METRIC_MODEL_CALLS, { [ATTR_OUTCOME]: "failed_open" })).toBe(1);
    expect(await harness.sum(METRIC_MODEL_CALLS)).toBe(1);
    await harness.shutdown();
  });

  it("passes the input on as it is when the repair cannot be written back: logged, counted once", async () => {
    const harness = metricsHarness();
    const logger = { warn: vi.fn(), error: vi.fn() };
    writing.fault = new Error("write-back bug");
    const input = [user, call, user];
    const result = repairResponsesInput(input, { logger, meterProvider: harness.meterProvider });
    expect(result.messages).toBe(input);
    expect(result.repairs).toEqual([]);
    expect(failuresLogged(logger)).toEqual([[expect.any(String), { error: writing.fault }]]);
    // The engine's inspection is the call's one record: the failure adds no second call.
    expect(await harness.sum(METRIC_MODEL_CALLS)).toBe(1);
    await harness.shutdown();
  });
});
