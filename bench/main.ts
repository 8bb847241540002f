/**
 * `npm run bench [-- --quick]`: every contender on every workload in one run, printed as one
 * table of medians and ratios, then one PASS or FAIL line per target. Exits 1 when a target fails,
 * 2 on a bad option.
 */
import { cpus } from "node:os";
import { parseArgs } from "node:util";
import type { BaseMessage } from "@langchain/core/messages";
import { metrics } from "@opentelemetry/api";
import { do_not_optimize } from "mitata";
import { METRIC_MODEL_CALLS } from "tool-call-resilience/semconv";
import { startTelemetry } from "tool-call-resilience/setup";
import { freePort, scrape } from "../test/helpers/prometheus.js";
import { agentStep } from "./agent-step.js";
import { evaluateAuditTargets, formatAudit, measureAudit } from "./audit.js";
import {
  answeringHandler,
  engine,
  ourHook,
  peerHook,
  readHistory,
  requestFor,
  type WrapModelCall,
} from "./contenders.js";
import { buildHistory, SHAPES, type Workload } from "./histories.js";
import {
  type Effort,
  FULL_EFFORT,
  interleaved,
  medianNs,
  type PairedOptions,
  paired,
  QUICK_EFFORT,
  SHORT_CALL_NS,
  timedNs,
} from "./measure.js";
import { bytesPerCall, collectGarbage } from "./memory.js";
import { combine, measureInProcesses, type ProcessResult, SHORT_ONLY_FLAG } from "./processes.js";
import { formatTable, type Row } from "./report.js";
import {
  type Comparison,
  count,
  evaluateTargets,
  type Measurements,
  type WorkloadComparison,
} from "./targets.js";

const USAGE = `Usage: npm run bench [-- --quick]

Measures the repair engine and the middleware against a floor loop, the deepagents peer and a
createAgent step without the middleware (with a checkpointer, and for scale without one), then
checks the targets of BENCHMARKS.md. Also measures, without a target, what persist: true costs
per createAgent call over PostgresSaver on a throwaway local PostgreSQL cluster (skipped, and
said so, when the PostgreSQL binaries are not installed), and the audit command's MB/s and peak
memory beside JSON.parse on generated JSONL files (written to a temporary folder, removed after).

  --quick   shorter samples, fewer rounds and processes, no peer at 100,000 messages: about
            two minutes instead of about fifteen
  --help    this text`;

const SIZES = [10, 100, 1_000, 10_000, 100_000] as const;
/** The sizes measured in fresh processes (`Effort.processes`): calls of a few µs at most. */
const SHORT_SIZES: readonly number[] = [10, 100, 1_000];
/**
 * The peer's check is quadratic: at 100,000 messages one call takes 10 to 20 s and allocates
 * gigabytes, so a quick run leaves it out there (the full run measures it).
 */
const QUICK_PEER_MAX_SIZE = 10_000;
/** A contender slower than this per call is timed in a few plain runs, not in paired rounds. */
const SLOW_CALL_NS = 20e6;

async function main(): Promise<number> {
  let quick: boolean;
  let shortOnly: boolean;
  try {
    const { values } = parseArgs({
      options: {
        quick: { type: "boolean", default: false },
        help: { type: "boolean" },
        [SHORT_ONLY_FLAG.slice(2)]: { type: "boolean", default: false },
      },
      strict: true,
    });
    if (values.help === true) {
      console.log(USAGE);
      return 0;
    }
    quick = values.quick === true;
    shortOnly = values[SHORT_ONLY_FLAG.slice(2)] === true;
  } catch (error) {
    console.error(`${(error as Error).message}\n\n${USAGE}`);
    return 2;
  }
  const effort = quick ? QUICK_EFFORT : FULL_EFFORT;
  if (shortOnly) {
    // One of the fresh processes: the short workloads alone, printed for the parent.
    const contenders = makeContenders();
    await warmUpEveryContender(contenders);
    const measured = await measureWorkloads(contenders, SHORT_SIZES, effort, quick, () => {}, true);
    const result: ProcessResult = {
      engineVsFloor: measured.engineVsFloor,
      middlewareVsPeer: measured.middlewareVsPeer,
    };
    process.stdout.write(JSON.stringify(result));
    return 0;
  }
  const startedAt = performance.now();
  console.log(machineLine(quick));

  const noTelemetry = metrics.getMeterProvider();
  const fresh = await measureInProcesses(effort.processes, quick, (index) =>
    progress(`short workloads, process ${index + 1} of ${effort.processes}`, startedAt),
  );
  const shortEngine = combine(fresh.map((result) => result.engineVsFloor));
  const shortPeer = combine(fresh.map((result) => result.middlewareVsPeer));
  const contenders = makeContenders();
  await warmUpEveryContender(contenders);
  progress("warm-up", startedAt);
  const long = await measureWorkloads(
    contenders,
    SIZES.filter((size) => !SHORT_SIZES.includes(size)),
    effort,
    quick,
    (step) => progress(step, startedAt),
  );
  const engineVsFloor = [...shortEngine, ...long.engineVsFloor];
  const middlewareVsPeer = [...shortPeer, ...long.middlewareVsPeer];
  const rows = rowsOf(engineVsFloor, middlewareVsPeer);

  const window = await windowComparison(effort);
  progress("window", startedAt);
  const bytes = measureAllocation(quick);
  progress("allocation", startedAt);

  // With the OpenTelemetry Node SDK and its Prometheus reader registered globally.
  const port = await freePort();
  const telemetry = await startTelemetry({ port });
  let agentStepComparison: Comparison;
  let bareAgentStep: Comparison;
  let frameworkCost: Comparison;
  const telemetryRows: Comparison[] = [];
  try {
    for (const [size, shape] of [
      [100, "clean"],
      [100, "one-dangling"],
      [10_000, "clean"],
    ] as const) {
      const { messages } = buildHistory(size, shape);
      const request = requestFor(messages);
      const recording = ourHook();
      const silent = ourHook({ meterProvider: noTelemetry });
      const { handler } = answeringHandler();
      telemetryRows.push({
        ...(await compare(
          `middleware, telemetry on (${shape}, ${count(size)})`,
          () => recording(request, handler),
          "telemetry off",
          () => silent(request, handler),
          effort,
        )),
      });
    }
    progress("telemetry", startedAt);
    const history = buildHistory(100, "clean").messages;
    // The target: the README's agent, whose checkpointer keeps the thread.
    const steps = quick ? 400 : 3_000;
    agentStepComparison = {
      subject: "createAgent step with a checkpointer, middleware + telemetry (clean, 100)",
      baseline: "without the middleware",
      ...(await interleaved(
        agentStep(history, "ours", "memory-saver"),
        agentStep(history, "none", "memory-saver"),
        steps,
        steps / 4,
      )),
    };
    // For scale, not targets: the same agent without a checkpointer, where a step costs a
    // quarter as much, and what createAgent itself charges there for any wrapModelCall middleware.
    const bareSteps = quick ? 600 : 6_000;
    const bare = agentStep(history, "none", "none");
    bareAgentStep = {
      subject: "the same step without a checkpointer",
      baseline: "without the middleware",
      ...(await interleaved(agentStep(history, "ours", "none"), bare, bareSteps, bareSteps / 4)),
    };
    frameworkCost = {
      subject: "that step with a pass-through middleware",
      baseline: "without any middleware",
      ...(await interleaved(
        agentStep(history, "pass-through", "none"),
        bare,
        bareSteps,
        bareSteps / 4,
      )),
    };
    progress("agent step", startedAt);
    await checkTelemetryRecorded(telemetry.metricsUrl);
  } finally {
    await telemetry.shutdown();
  }

  // No target: what persist costs per model call when the thread lives in PostgreSQL. Loaded
  // only now: nothing of PostgreSQL's client is in the process while the targets are measured.
  const { formatPersist, measurePersistOnPostgres } = await import("./persist.js");
  const persist = await measurePersistOnPostgres({
    rounds: quick ? 20 : 150,
    warmUpRounds: quick ? 3 : 5,
    onProgress: (step) => progress(step, startedAt),
  });
  if (persist.skipped)
    progress("persist on PostgreSQL: SKIPPED, no PostgreSQL binaries", startedAt);

  // The audit command on large files, each measure in a fresh process of its own.
  const audit = await measureAudit({ quick, onProgress: (step) => progress(step, startedAt) });

  const measured: Measurements = {
    engineVsFloor,
    middlewareVsPeer,
    window,
    agentStep: agentStepComparison,
    bytesPerCall: bytes,
  };
  console.log(
    formatTable(
      rows,
      [window, ...telemetryRows, agentStepComparison, bareAgentStep, frameworkCost],
      bytes,
    ),
  );
  console.log(`\n${formatPersist(persist)}`);
  console.log(`\n${formatAudit(audit)}`);
  const verdicts = [...evaluateTargets(measured), ...evaluateAuditTargets(audit)];
  console.log("");
  for (const verdict of verdicts) {
    console.log(`${verdict.pass ? "PASS" : "FAIL"}  ${verdict.target}: ${verdict.measured}`);
  }
  const seconds = (performance.now() - startedAt) / 1000;
  console.log(
    `\n${verdicts.filter((v) => v.pass).length}/${verdicts.length} targets met in ${seconds.toFixed(0)} s.`,
  );
  // Said again last, where nobody misses it: a run without PostgreSQL measured less.
  if (persist.skipped) console.log(formatPersist(persist));
  return verdicts.every((verdict) => verdict.pass) ? 0 : 1;
}

/** The engine against the floor, and the middleware against the peer, on every shape at these sizes. */
async function measureWorkloads(
  contenders: Contenders,
  sizes: readonly number[],
  effort: Effort,
  quick: boolean,
  onWorkload: (step: string) => void,
  shuffled = false,
): Promise<{ engineVsFloor: WorkloadComparison[]; middlewareVsPeer: WorkloadComparison[] }> {
  const engineVsFloor: WorkloadComparison[] = [];
  const middlewareVsPeer: WorkloadComparison[] = [];
  const { run, ours, peer, handler } = contenders;
  const workloads = sizes.flatMap((size) => SHAPES.map((shape) => ({ size, shape })));
  // In each fresh process the workloads come in another order, so that none is always measured
  // at the same point of a process's life (the workloads before it shape how V8 compiles).
  if (shuffled) shuffle(workloads);
  for (const { size, shape } of workloads) {
    {
      // What the previous workload left behind (the peer's copies run to gigabytes at 10,000
      // messages) is collected now, not by collector threads while this one is timed. Not
      // before short workloads: what they leave is small, and after a full collection V8 runs
      // the repair path up to four times slower until it has compiled it again (both before and
      // after the wire model), which the warm-up before timing did not always cover.
      if (size >= 10_000) collectGarbage();
      const workload = buildHistory(size, shape);
      const { messages } = workload;
      const peerRuns = !quick || size <= QUICK_PEER_MAX_SIZE;
      checkContendersAgree(workload, peerRuns);
      const floor = await compare(
        "engine",
        () => do_not_optimize(run(messages)),
        "floor",
        () => do_not_optimize(readHistory(messages)),
        effort,
      );
      engineVsFloor.push({ ...floor, shape, size });
      if (!peerRuns) {
        onWorkload(`${shape}, ${count(size)} (peer not run: quick)`);
        continue;
      }
      const request = requestFor(messages);
      // The peer copies the history on every call: at 10,000 messages its garbage is collected
      // before each side is timed, so that it is never collected while ours runs.
      const versusPeer = await compare(
        "middleware",
        () => ours(request, handler),
        "peer",
        () => peer(request, handler),
        effort,
        collectGarbage,
      );
      middlewareVsPeer.push({ ...versusPeer, shape, size });
      onWorkload(`${shape}, ${count(size)}`);
    }
  }
  return { engineVsFloor, middlewareVsPeer };
}

/** Shuffles in place (Fisher-Yates). */
function shuffle<T>(items: T[]): void {
  for (let index = items.length - 1; index > 0; index--) {
    const other = Math.floor(Math.random() * (index + 1));
    [items[index], items[other]] = [items[other] as T, items[index] as T];
  }
}

/** The table's rows: one per workload, with the peer's columns where it ran. */
function rowsOf(
  engineVsFloor: readonly WorkloadComparison[],
  middlewareVsPeer: readonly WorkloadComparison[],
): Row[] {
  return engineVsFloor.map((floor) => {
    const versusPeer = middlewareVsPeer.find(
      (other) => other.shape === floor.shape && other.size === floor.size,
    );
    return {
      workload: `${floor.shape}, ${count(floor.size)}`,
      cells: [floor.baselineNs, floor.subjectNs, versusPeer?.subjectNs, versusPeer?.baselineNs],
      ratios: [floor.ratio, versusPeer?.ratio],
    };
  });
}

function progress(step: string, startedAt: number): void {
  const seconds = ((performance.now() - startedAt) / 1000).toFixed(1);
  process.stderr.write(`  ${seconds.padStart(6)} s  ${step}\n`);
}

function machineLine(quick: boolean): string {
  const cpu = cpus()[0]?.model.trim() ?? "unknown CPU";
  return `Node ${process.version} on ${cpu}, ${cpus().length} cores; ${quick ? "quick" : "full"} run`;
}

/**
 * Times `subject` against `baseline`: both warmed up first (the JIT has seen every workload by
 * then, as it has in a process that serves agents), then in alternating rounds (see measure.ts),
 * or, when a call of either takes tens of milliseconds, in a few plain runs of each, where a slow
 * machine moment is small against the call itself.
 */
async function compare(
  subject: string,
  runSubject: () => unknown,
  baseline: string,
  runBaseline: () => unknown,
  effort: Effort,
  settle?: PairedOptions["settle"],
): Promise<Comparison> {
  const probe = Math.max(await warmUp(runSubject, effort), await warmUp(runBaseline, effort));
  if (probe < SLOW_CALL_NS) {
    // The probe is one call, timed with the clock's overhead: short calls read as a few µs.
    const result = await paired(runSubject, runBaseline, effort, {
      short: probe < SHORT_CALL_NS,
      settle,
    });
    return { subject, baseline, ...result };
  }
  const slow = { ...effort, minSamples: 2, sampleTimeNs: 0, rounds: 1 };
  const subjectNs = await medianNs(runSubject, slow);
  const baselineNs = await medianNs(runBaseline, slow);
  return { subject, baseline, subjectNs, baselineNs, ratio: subjectNs / baselineNs };
}

/** Runs `run` for about the effort's warm-up time (at least once); returns the last call's time. */
async function warmUp(run: () => unknown, effort: Effort): Promise<number> {
  const until = performance.now() + effort.warmUpNs / 1e6;
  let last: number;
  do {
    last = await timedNs(run);
  } while (performance.now() < until && last < SLOW_CALL_NS);
  return last;
}

/**
 * Every contender on every shape once at a few sizes, before anything is timed: the engine's
 * clean and repair paths are then compiled for all shapes, as in a process that has served
 * agents for a while, and the first workload measured is not the one that pays for it.
 */
/**
 * The contenders of the workloads, made once: one engine policy and one middleware of each for
 * every workload, as an application holds them. (A middleware made per workload measured up to
 * a fifth slower at 10 messages: V8 compiled its code again for each new instance.)
 */
interface Contenders {
  readonly run: ReturnType<typeof engine>;
  readonly ours: WrapModelCall;
  readonly peer: WrapModelCall;
  readonly handler: ReturnType<typeof answeringHandler>["handler"];
}

/**
 * Our middleware repairs for one client (`openai-completions`), the job the peer does: for every
 * wire (`"any"`, what a model it cannot tell gets) it would also write a synthetic reply per turn
 * the user's stop follows, which the peer does not.
 */
const SAME_JOB_AS_THE_PEER = { target: "openai-completions" } as const;

function makeContenders(): Contenders {
  return {
    run: engine(),
    ours: ourHook(SAME_JOB_AS_THE_PEER),
    peer: peerHook(),
    handler: answeringHandler().handler,
  };
}

async function warmUpEveryContender({ run, ours, peer, handler }: Contenders): Promise<void> {
  for (let pass = 0; pass < 50; pass++) {
    for (const size of [10, 100, 1_000]) {
      for (const shape of SHAPES) {
        const { messages } = buildHistory(size, shape);
        const request = requestFor(messages);
        do_not_optimize(readHistory(messages));
        do_not_optimize(run(messages));
        await ours(request, handler);
        if (size < 1_000) await peer(request, handler);
      }
    }
  }
}

/**
 * Runs both hooks once on the workload and checks that they hand the model the workload's
 * messages with its dangling calls answered: the two do the same job, or the comparison means
 * nothing.
 */
function checkContendersAgree(workload: Workload, withPeer: boolean): void {
  const request = requestFor(workload.messages);
  const expected = workload.messages.length + workload.dangling;
  const hooks: [string, WrapModelCall][] = [["middleware", ourHook(SAME_JOB_AS_THE_PEER)]];
  if (withPeer) hooks.push(["peer", peerHook()]);
  for (const [name, hook] of hooks) {
    const { handler, lastReceived } = answeringHandler();
    void hook(request, handler);
    if (lastReceived().length !== expected) {
      throw new Error(
        `${name} sent ${lastReceived().length} messages on ${workload.shape} ${workload.messages.length}, expected ${expected}`,
      );
    }
  }
}

async function windowComparison(effort: Effort): Promise<Comparison> {
  const large = buildHistory(100_000, "clean").messages;
  const small = buildHistory(100, "clean").messages;
  const windowed = engine(50);
  const result = await paired(
    () => do_not_optimize(windowed(large)),
    () => do_not_optimize(windowed(small)),
    effort,
  );
  return {
    subject: "engine, window 50 (clean, 100,000)",
    baseline: "window 50 (clean, 100)",
    ...result,
  };
}

function measureAllocation(quick: boolean): Measurements["bytesPerCall"] {
  const sizes = [100, 1_000, 10_000, 100_000];
  const histories = new Map<number, readonly BaseMessage[]>(
    sizes.map((size) => [size, buildHistory(size, "clean").messages]),
  );
  const calls = quick ? 200 : 2_000;
  const run = engine();
  const hook = ourHook();
  const { handler } = answeringHandler();
  return [
    {
      contender: "engine",
      bySize: new Map(
        sizes.map((size) => {
          const messages = histories.get(size) as readonly BaseMessage[];
          return [size, bytesPerCall(() => run(messages), calls, quick ? 3 : 5)];
        }),
      ),
    },
    {
      contender: "middleware",
      bySize: new Map(
        sizes.map((size) => {
          const request = requestFor(histories.get(size) as readonly BaseMessage[]);
          return [size, bytesPerCall(() => hook(request, handler), calls, quick ? 3 : 5)];
        }),
      ),
    },
  ];
}

/** The telemetry-on rows mean something only if the middleware really recorded through the SDK. */
async function checkTelemetryRecorded(metricsUrl: string): Promise<void> {
  const name = `${METRIC_MODEL_CALLS.replaceAll(".", "_")}_total`;
  if ((await scrape(metricsUrl)).sum(name) === 0)
    throw new Error(`no ${name} at ${metricsUrl}: the telemetry recorded nothing`);
}

process.exitCode = await main();
