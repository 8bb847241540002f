/**
 * The demo's simulated fleet, run in-process on the real stack (createAgent, MemorySaver, the
 * middleware with `persist`), its counters read from an in-memory meter provider: what the scripts
 * say happened is what the library counts, the same seed replays the same conversations, and
 * `run()` resolves only once no run is in flight.
 */
import { setMaxListeners } from "node:events";
import { createMiddleware } from "langchain";
import { beforeAll, describe, expect, it } from "vitest";
import {
  CONVERSATION_TURNS,
  type CountsByModelAndTool,
  createFleet,
  FLEET_MODELS,
  FLEET_TOOL_NAMES,
  type Fleet,
  type FleetSettings,
  planTurn,
  scriptedThread,
  totalOf,
} from "../../demo/fleet.js";
import { danglingToolCallMiddleware } from "../../src/index.js";
import {
  ATTR_GEN_AI_PROVIDER_NAME,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_REPAIR_KIND,
  METRIC_DANGLING_TOOL_CALLS,
  METRIC_MODEL_CALLS,
  METRIC_REPAIRS,
  METRIC_TOOL_CALLS,
  REPAIR_KIND_VALUE_PLACEHOLDER_INSERTED,
  REPAIR_KIND_VALUE_TURN_INSERTED,
} from "../../src/telemetry/semconv.js";
import { metricsHarness } from "../helpers/telemetry.js";

/**
 * Six threads (two per model) of three turns, half the runs interrupted. With seed 4 the scripts
 * interrupt runs in all three ways (3 aborts, 4 timeouts, 3 unanswered interrupts) and leave calls
 * of every model and every tool dangling; the scripts depend on the seed alone, not on timing.
 */
const SMALL_FLEET = { threads: 6, concurrency: 6, turns: 3, seed: 4, interruptRate: 0.5 } as const;

/**
 * A signal for `run()`. The fleet adds up to two abort listeners to `cancel` per run in flight, more
 * than Node's default warning threshold of 10 once several fleets share one signal.
 */
function signal(): AbortController {
  const controller = new AbortController();
  setMaxListeners(100, controller.signal);
  return controller;
}

const NEVER = signal().signal;

type Overrides = Partial<Omit<FleetSettings, "interruptRate" | "middleware">> & {
  readonly interruptRate?: number;
};

/**
 * Model and tool calls entered, those not yet left, and the first message of each conversation the
 * model saw, from a middleware after the repair.
 */
function inFlightProbe() {
  const probe = {
    entered: { modelCalls: 0, toolCalls: 0 },
    inFlight: { modelCalls: 0, toolCalls: 0 },
    openers: new Set<string | undefined>(),
    /** The turns each thread had, by the ids of the human messages the model saw. */
    turns: new Map<string, Set<number>>(),
  };
  const track = async <T>(kind: "modelCalls" | "toolCalls", call: () => Promise<T>) => {
    probe.entered[kind] += 1;
    probe.inFlight[kind] += 1;
    try {
      return await call();
    } finally {
      probe.inFlight[kind] -= 1;
    }
  };
  const middleware = createMiddleware({
    name: "InFlightProbe",
    wrapModelCall: (request, handler) => {
      probe.openers.add(request.messages[0]?.id);
      for (const message of request.messages) {
        const [, thread, turn] = /^(thread-\d+):turn-(\d+):human$/.exec(message.id ?? "") ?? [];
        if (thread === undefined) continue;
        const turns = probe.turns.get(thread) ?? new Set();
        turns.add(Number(turn));
        probe.turns.set(thread, turns);
      }
      return track("modelCalls", async () => handler(request));
    },
    wrapToolCall: (request, handler) => track("toolCalls", async () => handler(request)),
  });
  return { probe, middleware };
}

/** A fleet with the middleware as the demo configures it, its counters in memory. */
function fleetOf(overrides: Overrides = {}) {
  const metrics = metricsHarness();
  const { probe, middleware } = inFlightProbe();
  const { interruptRate, ...rest } = { ...SMALL_FLEET, ...overrides };
  const fleet = createFleet({
    ...rest,
    interruptRate: () => interruptRate,
    middleware: [
      danglingToolCallMiddleware({
        persist: true,
        logger: false,
        meterProvider: metrics.meterProvider,
      }),
      middleware,
    ],
  });
  return { fleet, metrics, probe };
}

/** A counter's points, by model and then by tool, in the shape of the ground truth. */
async function countedByModelAndTool(
  metrics: ReturnType<typeof metricsHarness>,
  name: string,
): Promise<CountsByModelAndTool> {
  const counts: CountsByModelAndTool = {};
  for (const point of await metrics.points(name)) {
    const model = String(point.attributes[ATTR_GEN_AI_REQUEST_MODEL]);
    const tool = String(point.attributes[ATTR_GEN_AI_TOOL_NAME]);
    const byTool = counts[model] ?? {};
    counts[model] = byTool;
    byTool[tool] = (byTool[tool] ?? 0) + (point.value as number);
  }
  return counts;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("the demo's fleet", () => {
  // Three complete fleets, run side by side: two with the same seed, one with another.
  let small: ReturnType<typeof fleetOf>;
  let replay: Fleet;
  let otherSeed: Fleet;
  beforeAll(async () => {
    small = fleetOf();
    const again = fleetOf();
    const other = fleetOf({ seed: 8 });
    await Promise.all(
      [small, again, other].map(({ fleet }) => fleet.run({ noMoreRuns: NEVER, cancel: NEVER })),
    );
    replay = again.fleet;
    otherSeed = other.fleet;
  });

  describe("ground truth", () => {
    it("counts the tool calls each model issued, per tool, exactly as the library's counter does", async () => {
      const { fleet, metrics } = small;
      expect(totalOf(fleet.truth.toolCalls)).toBeGreaterThan(0);
      expect(await countedByModelAndTool(metrics, METRIC_TOOL_CALLS)).toEqual(
        fleet.truth.toolCalls,
      );
    });

    it("counts the calls an interruption left dangling, per model and tool, exactly as the library's counter does", async () => {
      const { fleet, metrics } = small;
      expect(await countedByModelAndTool(metrics, METRIC_DANGLING_TOOL_CALLS)).toEqual(
        fleet.truth.dangling,
      );
    });

    it("leaves calls of every model and every tool dangling in a small fleet", () => {
      const { truth } = small.fleet;
      expect(Object.keys(truth.dangling).sort()).toEqual(
        FLEET_MODELS.map((model) => model.name).sort(),
      );
      const tools = new Set(Object.values(truth.dangling).flatMap((byTool) => Object.keys(byTool)));
      expect([...tools].sort()).toEqual([...FLEET_TOOL_NAMES].sort());
    });

    it("with persist, repairs each dangling call once: one placeholder per dangling call", async () => {
      const { fleet, metrics } = small;
      const placeholders = await metrics.sum(METRIC_REPAIRS, {
        [ATTR_REPAIR_KIND]: REPAIR_KIND_VALUE_PLACEHOLDER_INSERTED,
      });
      expect(placeholders).toBe(totalOf(fleet.truth.dangling));
      // And one synthetic reply per interrupted turn the thread went on from (the fake models'
      // wire is any): the placeholders of its calls, then the user's next message.
      const continued = Array.from({ length: SMALL_FLEET.threads }, (_, index) =>
        Array.from(
          { length: SMALL_FLEET.turns - 1 },
          (_, turn) =>
            planTurn(
              SMALL_FLEET.seed,
              { ...scriptedThread(index), turn },
              SMALL_FLEET.interruptRate,
            ).interruption !== undefined,
        ).filter(Boolean),
      ).flat().length;
      expect(continued).toBeGreaterThan(0);
      const replies = await metrics.sum(METRIC_REPAIRS, {
        [ATTR_REPAIR_KIND]: REPAIR_KIND_VALUE_TURN_INSERTED,
      });
      expect(replies).toBe(continued);
      // No repair of any other kind.
      expect(await metrics.sum(METRIC_REPAIRS)).toBe(placeholders + replies);
    });

    it("counts every run and every thread", () => {
      const { truth } = small.fleet;
      expect(truth.runs).toBe(SMALL_FLEET.threads * SMALL_FLEET.turns);
      expect(truth.threads).toBe(SMALL_FLEET.threads);
    });
  });

  describe("models", () => {
    it("reports each model with its provider, as real chat models do", async () => {
      const providers = new Map<string, Set<string>>();
      for (const point of await small.metrics.points(METRIC_MODEL_CALLS)) {
        const model = String(point.attributes[ATTR_GEN_AI_REQUEST_MODEL]);
        const seen = providers.get(model) ?? new Set();
        seen.add(String(point.attributes[ATTR_GEN_AI_PROVIDER_NAME]));
        providers.set(model, seen);
      }
      expect(Object.fromEntries([...providers].map(([model, seen]) => [model, [...seen]]))).toEqual(
        {
          "gpt-4.1": ["openai"],
          "claude-sonnet-4-5": ["anthropic"],
          // LangChain's google_genai is the semantic conventions' gcp.gemini.
          "gemini-2.5-flash": ["gcp.gemini"],
        },
      );
    });
  });

  describe("interruptions", () => {
    it("interrupts runs in every way production runs break: stop pressed, timeout, unanswered interrupt()", () => {
      const { interruptions } = small.fleet.truth;
      expect(interruptions.abort).toBeGreaterThanOrEqual(2);
      expect(interruptions.timeout).toBeGreaterThanOrEqual(2);
      expect(interruptions.interrupt).toBeGreaterThanOrEqual(2);
    });

    it("interrupts no run at rate 0: nothing dangles and nothing is repaired", async () => {
      const { fleet, metrics } = fleetOf({ threads: 3, turns: 2, interruptRate: 0 });
      await fleet.run({ noMoreRuns: NEVER, cancel: NEVER });
      expect(fleet.truth.interruptions).toEqual({ abort: 0, timeout: 0, interrupt: 0 });
      expect(fleet.truth.dangling).toEqual({});
      expect(totalOf(fleet.truth.toolCalls)).toBeGreaterThan(0);
      expect(await metrics.sum(METRIC_DANGLING_TOOL_CALLS)).toBe(0);
      expect(await metrics.sum(METRIC_REPAIRS)).toBe(0);
    });
  });

  describe("seed", () => {
    it("replays the same conversations for the same seed", () => {
      expect(replay.truth).toEqual(small.fleet.truth);
    });

    it("gives other conversations for another seed", () => {
      expect(otherSeed.truth.toolCalls).not.toEqual(small.fleet.truth.toolCalls);
    });
  });

  describe("run()", () => {
    it("resolves with no model or tool call in flight, and nothing runs afterwards", async () => {
      const { fleet, metrics, probe } = small;
      expect(probe.entered.modelCalls).toBeGreaterThan(0);
      expect(probe.entered.toolCalls).toBeGreaterThan(0);
      expect(probe.inFlight).toEqual({ modelCalls: 0, toolCalls: 0 });
      const entered = { ...probe.entered };
      const modelCalls = await metrics.sum(METRIC_MODEL_CALLS);
      await sleep(300);
      expect(probe.entered).toEqual(entered);
      expect(await metrics.sum(METRIC_MODEL_CALLS)).toBe(modelCalls);
      expect(fleet.truth.runs).toBe(SMALL_FLEET.threads * SMALL_FLEET.turns);
    });

    it("at the deadline (noMoreRuns) starts no new run and lets those in flight finish, so the counters still agree", async () => {
      const { fleet, metrics, probe } = fleetOf({ turns: undefined, seed: 11 });
      const noMoreRuns = signal();
      setTimeout(() => noMoreRuns.abort(), 500);
      await fleet.run({ noMoreRuns: noMoreRuns.signal, cancel: NEVER });
      expect(fleet.truth.runs).toBeGreaterThan(0);
      expect(probe.inFlight).toEqual({ modelCalls: 0, toolCalls: 0 });
      expect(await countedByModelAndTool(metrics, METRIC_TOOL_CALLS)).toEqual(
        fleet.truth.toolCalls,
      );
      expect(await countedByModelAndTool(metrics, METRIC_DANGLING_TOOL_CALLS)).toEqual(
        fleet.truth.dangling,
      );
    });

    it(`without turns, ends a conversation after ${CONVERSATION_TURNS} turns and starts a new thread in its place`, async () => {
      const { fleet, probe } = fleetOf({ threads: 2, concurrency: 2, turns: undefined });
      const noMoreRuns = signal();
      const watch = setInterval(() => {
        if (fleet.truth.threads > 2) noMoreRuns.abort();
      }, 10);
      try {
        await fleet.run({ noMoreRuns: noMoreRuns.signal, cancel: NEVER });
      } finally {
        clearInterval(watch);
      }
      const { threads } = fleet.truth;
      expect(threads).toBeGreaterThanOrEqual(3);
      // A new conversation started once an old one had all its turns, and none had more.
      const allTurns = new Set(Array.from({ length: CONVERSATION_TURNS }, (_, turn) => turn));
      const ended = [...probe.turns.values()].filter((turns) => turns.size >= CONVERSATION_TURNS);
      expect(ended.length).toBeGreaterThanOrEqual(1);
      for (const turns of ended) expect(turns).toEqual(allTurns);
      // Each conversation, the new ones too, starts from its own first message.
      expect([...probe.openers].sort()).toEqual(
        Array.from({ length: threads }, (_, index) => `thread-000${index + 1}:turn-0:human`),
      );
    });

    it("on cancel aborts the runs in flight, even tools that would stall, and resolves at once", async () => {
      // Every run interrupted: most runs in flight wait on a tool that stalls for 30 s.
      const { fleet, probe } = fleetOf({ turns: undefined, interruptRate: 1, seed: 12 });
      const cancel = signal();
      setTimeout(() => cancel.abort(new Error("stopped by SIGINT")), 400);
      const startedAt = Date.now();
      await fleet.run({ noMoreRuns: NEVER, cancel: cancel.signal });
      expect(Date.now() - startedAt).toBeLessThan(5_000);
      expect(probe.entered.toolCalls).toBeGreaterThan(0);
      expect(probe.inFlight).toEqual({ modelCalls: 0, toolCalls: 0 });
      const entered = { ...probe.entered };
      await sleep(300);
      expect(probe.entered).toEqual(entered);
    });
  });
});
