/**
 * Fleet throughput by number of workers: the fleet demo (`npm start -- --workers n`, worker
 * processes over one PostgreSQL checkpointer, a throwaway local cluster each run) with 1, 2 and 4
 * workers, everything else the same (`--concurrency` included), in rounds that alternate the
 * order of the worker counts. Not part of `npm run bench`: it takes minutes.
 *
 * For each run it reads the demo's JSON report (`truth.runs`, the figures), times the fleet's run
 * from the demo's own output (from the line it prints right before the first turn to the first
 * line of its summary, so neither PostgreSQL's `initdb` nor the workers' start counts), and reads
 * the CPU time of every process of the run from `/proc` over the same window: the coordinator, each
 * worker, PostgreSQL's processes, and, from `/proc/stat`, what the rest of the machine used.
 *
 *   node --import tsx bench/fleet-scaling.ts [--workers 1,2,4] [--rounds 3] [--duration 45] ...
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { CONVERSATION_TURNS, FLEET_MODELS, type FleetModel, planTurn } from "../demo/fleet.js";
import { median } from "./measure.js";
import { ratio, table } from "./report.js";

const USAGE = `Usage: node --import tsx bench/fleet-scaling.ts [options]

Runs the fleet demo (npm start -- --workers n) once per worker count and round, and prints its
throughput (runs, that is turns, per second of the fleet's run), its ratio to 1 worker in the
same round, and the CPU each kind of process used meanwhile.

  --workers <list>        worker counts, comma-separated (default 1,2,4)
  --rounds <n>            rounds; each runs every worker count, in alternating order (default 3)
  --threads <n>           the demo's --threads (default 64)
  --turns <n>             the demo's --turns: every thread has n turns, then the run ends (default 6)
  --duration <s>          instead of --turns: the demo's --duration, conversations of 12 turns
                          each replaced by a new one, new turns for s seconds (a steady state: the
                          histories do not keep growing)
  --concurrency <n>       the demo's --concurrency, the same for every worker count (default 32)
  --interrupt-rate <r>    the demo's --interrupt-rate (default 0.04)
  --seed <n>              the demo's --seed (default 1)
  --quiet <cores>         before each run, wait (up to 2 minutes) until the machine has used less
                          than this many cores for 2 s; run again (see --attempts) a run during
                          which other processes used more than this on average (default 0.25)
  --raw <file>            also write every run (times, CPU by process) as JSON to this file
  --attempts <n>          runs at most per worker count and round; the one with the least CPU
                          used by other processes counts (default 3)
  --help                  this text

The machine is shared: runs during which other processes used more CPU than --quiet are marked.`;

/** The repository's folder: the demo runs from there, as `npm start` runs it. */
const REPOSITORY = fileURLToPath(new URL("..", import.meta.url));

/** How often the processes' CPU times are read, in milliseconds. */
const SAMPLE_EVERY_MS = 100;
/** Clock ticks per second of `/proc/<pid>/stat` and `/proc/stat` (USER_HZ: 100 on Linux). */
const TICKS_PER_SECOND = 100;

interface Settings {
  readonly workers: readonly number[];
  readonly rounds: number;
  readonly threads: number;
  /** Turns per thread, or `undefined` with `duration`. */
  readonly turns: number | undefined;
  /** Seconds of new turns, with conversations of 12 turns, or `undefined` with `turns`. */
  readonly duration: number | undefined;
  readonly concurrency: number;
  readonly interruptRate: number;
  readonly seed: number;
  readonly quiet: number;
  readonly attempts: number;
  readonly raw: string | undefined;
}

/** CPU seconds of the run's window, by kind of process. */
interface CpuSeconds {
  readonly coordinator: number;
  /** Each worker's, by PID. */
  readonly workers: readonly number[];
  readonly postgres: number;
  /** Every process of the machine, from `/proc/stat` (busy time: not idle, not waiting for I/O). */
  readonly machine: number;
  /** Time the hypervisor gave the machine's CPUs to someone else (`steal`). */
  readonly steal: number;
  /** This script's own (reading `/proc` every {@link SAMPLE_EVERY_MS}). */
  readonly sampler: number;
}

/** CPU seconds per second that processes outside the fleet used during the run. */
function otherCores(run: FleetRun): number {
  const fleet =
    run.cpu.coordinator + run.cpu.workers.reduce((sum, value) => sum + value, 0) + run.cpu.postgres;
  return Math.max(0, run.cpu.machine - fleet) / run.seconds;
}

/** One run of the demo. */
interface FleetRun {
  readonly round: number;
  readonly workers: number;
  readonly runs: number;
  readonly modelCalls: number;
  /** The fleet's run: from its first turn to its summary. */
  readonly seconds: number;
  readonly cpu: CpuSeconds;
  readonly exitCode: number | null;
  /** Which attempt of this worker count and round this was (from 1), and how many there were. */
  readonly attempt: number;
  readonly attempts: number;
  /** What the demo's own check found wrong, if anything. */
  readonly problems: readonly string[];
}

function parse(): Settings | "help" {
  const { values } = parseArgs({
    options: {
      workers: { type: "string", default: "1,2,4" },
      rounds: { type: "string", default: "3" },
      threads: { type: "string", default: "64" },
      turns: { type: "string" },
      duration: { type: "string" },
      concurrency: { type: "string", default: "32" },
      "interrupt-rate": { type: "string", default: "0.04" },
      seed: { type: "string", default: "1" },
      quiet: { type: "string", default: "0.25" },
      attempts: { type: "string", default: "3" },
      raw: { type: "string" },
      help: { type: "boolean" },
    },
    strict: true,
  });
  if (values.help === true) return "help";
  const integer = (name: string, raw: string) => {
    const value = Number(raw);
    if (!Number.isInteger(value) || value < 1) throw new Error(`--${name} must be an integer >= 1`);
    return value;
  };
  const rate = Number(values["interrupt-rate"]);
  if (!(rate >= 0 && rate <= 1)) throw new Error("--interrupt-rate must be from 0 to 1");
  if (values.turns !== undefined && values.duration !== undefined) {
    throw new Error("--turns and --duration contradict each other; give one");
  }
  const quiet = Number(values.quiet);
  if (!(quiet > 0)) throw new Error("--quiet must be a number of cores > 0");
  return {
    workers: values.workers.split(",").map((part) => integer("workers", part.trim())),
    rounds: integer("rounds", values.rounds),
    threads: integer("threads", values.threads),
    turns: values.duration === undefined ? integer("turns", values.turns ?? "6") : undefined,
    duration: values.duration === undefined ? undefined : integer("duration", values.duration),
    concurrency: integer("concurrency", values.concurrency),
    interruptRate: rate,
    seed: Number(values.seed),
    quiet,
    attempts: integer("attempts", values.attempts),
    raw: values.raw,
  };
}

/** A process's CPU time so far (user and system, its own, not its children's), in ticks. */
interface ProcessSample {
  readonly pid: number;
  readonly ppid: number;
  readonly name: string;
  readonly ticks: number;
}

function readProcesses(): Map<number, ProcessSample> {
  const processes = new Map<number, ProcessSample>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue; // It ended meanwhile.
    }
    // `pid (name) state ppid ...`: the name may hold spaces and parentheses; it ends at the last ')'.
    const close = stat.lastIndexOf(")");
    const name = stat.slice(stat.indexOf("(") + 1, close);
    const fields = stat.slice(close + 2).split(" ");
    // After the name: state(0) ppid(1) ... utime(11) stime(12).
    processes.set(Number(entry), {
      pid: Number(entry),
      ppid: Number(fields[1]),
      name,
      ticks: Number(fields[11]) + Number(fields[12]),
    });
  }
  return processes;
}

/** The machine's busy and stolen CPU time so far, in ticks (`/proc/stat`, every CPU). */
function readMachine(): { busy: number; steal: number } {
  const line = readFileSync("/proc/stat", "utf8").split("\n")[0] as string;
  // cpu user nice system idle iowait irq softirq steal guest guest_nice
  const [user, nice, system, , , irq, softirq, steal] = line
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number) as number[];
  return {
    busy: (user ?? 0) + (nice ?? 0) + (system ?? 0) + (irq ?? 0) + (softirq ?? 0),
    steal: steal ?? 0,
  };
}

/**
 * Waits until the whole machine has used less than `cores` over 2 s, or for at most 2 minutes;
 * resolves with the cores it used over the last 2 s.
 */
async function machineQuiet(cores: number): Promise<number> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const before = readMachine().busy;
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const used = (readMachine().busy - before) / TICKS_PER_SECOND / 2;
    if (used < cores || Date.now() > deadline) return used;
  }
}

type Kind = "coordinator" | "worker" | "postgres" | "other";

/**
 * The kind of a process of the run, given its parent's: the workers are the Node processes the
 * coordinator forks; PostgreSQL is what it starts as `postgres` (and `initdb` before it), with
 * every process those fork; anything else (`id`, `esbuild`) is neither.
 */
function kindOf(entry: ProcessSample, parent: Kind | undefined): Kind | undefined {
  if (parent === "postgres" || parent === "other" || parent === "worker") {
    return parent === "worker" ? "other" : parent;
  }
  if (parent !== "coordinator") return undefined;
  if (entry.name === "node") return "worker";
  return entry.name.startsWith("postgres") || entry.name === "initdb" ? "postgres" : "other";
}

/**
 * Follows the processes of one demo run: the coordinator (`root`), its workers (the Node
 * processes it forks), and PostgreSQL (the server it starts and every process that one forks),
 * sampled every {@link SAMPLE_EVERY_MS} so that a process that ends is counted up to its last
 * sample. `mark()` starts the window, `cpu()` ends it.
 */
function followProcesses(root: number) {
  const kinds = new Map<number, Kind>();
  const last = new Map<number, number>();
  const atMark = new Map<number, number>();
  let machineAtMark: { busy: number; steal: number } | undefined;
  let ownAtMark = process.cpuUsage();
  let marked = false;
  const sample = () => {
    const processes = readProcesses();
    // Parents are classified before their children: repeat until nothing new is found. A child
    // is classified again at every sample: between fork and exec it still bears its parent's name.
    const seen = new Set<number>();
    for (let changed = true; changed; ) {
      changed = false;
      for (const entry of processes.values()) {
        if (seen.has(entry.pid)) continue;
        let kind: Kind | undefined;
        if (entry.pid === root) kind = "coordinator";
        else if (!seen.has(entry.ppid)) continue;
        else kind = kindOf(entry, kinds.get(entry.ppid));
        if (kind === undefined) continue;
        seen.add(entry.pid);
        changed = true;
        // Born after the window started: all of its time is the window's.
        if (marked && !kinds.has(entry.pid)) atMark.set(entry.pid, 0);
        kinds.set(entry.pid, kind);
      }
    }
    for (const pid of kinds.keys()) {
      const entry = processes.get(pid);
      if (entry !== undefined) last.set(pid, entry.ticks);
    }
    return processes;
  };
  const timer = setInterval(sample, SAMPLE_EVERY_MS);
  sample();
  return {
    mark() {
      // Only the processes alive now, and those born later, belong to the window.
      const alive = sample();
      for (const [pid, ticks] of last) if (alive.has(pid)) atMark.set(pid, ticks);
      machineAtMark = readMachine();
      ownAtMark = process.cpuUsage();
      marked = true;
    },
    cpu(): CpuSeconds {
      sample();
      const machine = readMachine();
      const own = process.cpuUsage(ownAtMark);
      const seconds = (pid: number) =>
        ((last.get(pid) ?? 0) - (atMark.get(pid) ?? last.get(pid) ?? 0)) / TICKS_PER_SECOND;
      const ofKind = (kind: Kind) =>
        [...kinds]
          .filter(([pid, other]) => other === kind && atMark.has(pid))
          .map(([pid]) => seconds(pid));
      return {
        coordinator: seconds(root),
        workers: ofKind("worker"),
        postgres: ofKind("postgres").reduce((sum, value) => sum + value, 0),
        machine: (machine.busy - (machineAtMark?.busy ?? machine.busy)) / TICKS_PER_SECOND,
        steal: (machine.steal - (machineAtMark?.steal ?? machine.steal)) / TICKS_PER_SECOND,
        sampler: (own.user + own.system) / 1e6,
      };
    },
    stop() {
      clearInterval(timer);
    },
  };
}

/** A base port with `count` free ports from it on 127.0.0.1, for the workers' metrics. */
async function freePorts(count: number): Promise<number> {
  const free = (port: number) =>
    new Promise<boolean>((resolve) => {
      const server = createServer();
      server.once("error", () => resolve(false));
      server.listen({ host: "127.0.0.1", port }, () => server.close(() => resolve(true)));
    });
  for (let attempt = 0; attempt < 200; attempt++) {
    const base = 20_000 + Math.floor(Math.random() * 20_000);
    let all = true;
    for (let port = base; port < base + count && all; port++) all = await free(port);
    if (all) return base;
  }
  throw new Error(`no ${count} free ports in a row on 127.0.0.1`);
}

let running: ChildProcess | undefined;

/** Runs the demo once with `workers` workers and measures it. */
async function runFleet(settings: Settings, workers: number, round: number): Promise<FleetRun> {
  const folder = mkdtempSync(join(tmpdir(), "fleet-scaling-"));
  const reportFile = join(folder, "report.json");
  const port = await freePorts(workers);
  const args = [
    "--import",
    "tsx",
    "demo/main.ts",
    "--workers",
    String(workers),
    "--threads",
    String(settings.threads),
    // With --turns, a duration long enough that the turns, not the clock, end the run.
    ...(settings.turns === undefined
      ? ["--duration", String(settings.duration)]
      : ["--turns", String(settings.turns), "--duration", "3600"]),
    "--concurrency",
    String(settings.concurrency),
    "--interrupt-rate",
    String(settings.interruptRate),
    "--seed",
    String(settings.seed),
    "--no-kill",
    "--port",
    String(port),
    "--report",
    reportFile,
  ];
  // The demo as `npm start` runs it: tsx with the project's tsconfig, not the bench's.
  const env = { ...process.env };
  delete env.TSX_TSCONFIG_PATH;
  const child = spawn(process.execPath, args, {
    cwd: REPOSITORY,
    stdio: ["ignore", "pipe", "pipe"],
    env,
  });
  running = child;
  const followed = followProcesses(child.pid as number);
  let startedAt: number | undefined;
  let endedAt: number | undefined;
  let cpu: CpuSeconds | undefined;
  let output = "";
  let pending = "";
  child.stdout.setEncoding("utf8").on("data", (text: string) => {
    output += text;
    pending += text;
    const lines = pending.split("\n");
    pending = lines.pop() ?? "";
    for (const line of lines) {
      // Printed right before the fleet's first turn, once every worker is ready.
      if (startedAt === undefined && line.startsWith("Middleware: persist")) {
        followed.mark();
        startedAt = performance.now();
      }
      // The summary's first line, printed once the last turn is done.
      if (startedAt !== undefined && endedAt === undefined && /^\d+ model calls/.test(line)) {
        endedAt = performance.now();
        cpu = followed.cpu();
      }
    }
  });
  let errors = "";
  child.stderr.setEncoding("utf8").on("data", (text: string) => {
    errors += text;
  });
  const exitCode = await new Promise<number | null>((resolve) => child.once("close", resolve));
  followed.stop();
  running = undefined;
  try {
    if (startedAt === undefined || endedAt === undefined || cpu === undefined) {
      throw new Error(
        `the demo with ${workers} workers exited (${exitCode}) before its summary\n${output}\n${errors.slice(-4_000)}`,
      );
    }
    const report = JSON.parse(readFileSync(reportFile, "utf8")) as {
      complete: boolean;
      truth: { runs: number };
      figures: { modelCalls: number };
      problems?: string[];
    };
    if (!report.complete) throw new Error(`the demo with ${workers} workers did not complete`);
    return {
      round,
      workers,
      runs: report.truth.runs,
      modelCalls: report.figures.modelCalls,
      seconds: (endedAt - startedAt) / 1000,
      cpu,
      exitCode,
      attempt: 1,
      attempts: 1,
      problems: report.problems ?? [],
    };
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

/**
 * The fleet's turns as the scripts plan them, and how long the tools' simulated sleeps keep each
 * one waiting at least: per round of calls the longest call (calls of a round run together), and
 * for a stop or a timeout the user's patience before it. Without any CPU cost, `concurrency`
 * turns at a time could not finish faster than this allows.
 */
function sleepBound(settings: Settings): { turns: number; sleepSeconds: number } {
  let sleepMs = 0;
  let turns = 0;
  for (let index = 0; index < settings.threads; index++) {
    const model = FLEET_MODELS[index % FLEET_MODELS.length] as FleetModel;
    // With --duration, each conversation has CONVERSATION_TURNS turns: those are planned alike.
    for (let turn = 0; turn < (settings.turns ?? CONVERSATION_TURNS); turn++) {
      const planned = planTurn(
        settings.seed,
        { id: `thread-${index}`, index, model, turn, dangling: [] },
        settings.interruptRate,
      );
      for (const round of planned.rounds) {
        sleepMs += Math.max(...round.map((call) => call.latency));
      }
      if (planned.interruption !== undefined && planned.interruption.kind !== "interrupt") {
        sleepMs += planned.patience;
      }
      turns += 1;
    }
  }
  return { turns, sleepSeconds: sleepMs / 1000 };
}

function format(settings: Settings, runs: readonly FleetRun[]): string {
  const cores = cpus().length;
  const bound = sleepBound(settings);
  const boundRate = (bound.turns / bound.sleepSeconds) * settings.concurrency;
  const sum = (values: readonly number[]) => values.reduce((total, value) => total + value, 0);
  const lines = runs.map((run) => {
    const inCores = (seconds: number) => (seconds / run.seconds).toFixed(2);
    const workers = sum(run.cpu.workers);
    const fleet = run.cpu.coordinator + workers + run.cpu.postgres;
    const baseline = runs.find((other) => other.round === run.round && other.workers === 1);
    const rate = run.runs / run.seconds;
    return [
      `${run.round + 1}`,
      `${run.workers}`,
      `${run.runs}`,
      `${run.seconds.toFixed(1)} s`,
      rate.toFixed(1),
      baseline === undefined ? "" : ratio(rate / (baseline.runs / baseline.seconds)),
      inCores(run.cpu.coordinator),
      run.cpu.workers.length === 1
        ? inCores(workers)
        : `${inCores(workers)} (${run.cpu.workers.map(inCores).join(" + ")})`,
      inCores(run.cpu.postgres),
      inCores(fleet),
      `${otherCores(run).toFixed(2)}${otherCores(run) >= settings.quiet ? " (busy)" : ""}`,
      inCores(run.cpu.steal),
      `${run.attempt} of ${run.attempts}`,
    ];
  });
  // The summary reads the runs that had the machine to themselves, where there are any.
  const quiet = (run: FleetRun) => otherCores(run) < settings.quiet;
  const medians = settings.workers.map((workers) => {
    const all = runs.filter((run) => run.workers === workers);
    const same = all.some(quiet) ? all.filter(quiet) : all;
    const ratios = same.flatMap((run) => {
      const baseline = runs.find(
        (other) => other.round === run.round && other.workers === 1 && quiet(other),
      );
      return baseline === undefined
        ? []
        : [run.runs / run.seconds / (baseline.runs / baseline.seconds)];
    });
    const fleetCpuPerRun = same.map(
      (run) =>
        ((run.cpu.coordinator +
          run.cpu.workers.reduce((total, value) => total + value, 0) +
          run.cpu.postgres) /
          run.runs) *
        1000,
    );
    return [
      `${workers}`,
      `${same.length} of ${all.length}`,
      median(same.map((run) => run.runs / run.seconds)).toFixed(1),
      ratios.length === 0 ? "" : ratio(median(ratios)),
      median(same.map((run) => run.modelCalls / run.seconds)).toFixed(1),
      `${median(fleetCpuPerRun).toFixed(1)} ms`,
    ];
  });
  const notes = runs
    .filter((run) => run.exitCode !== 0 || run.problems.length > 0)
    .map(
      (run) =>
        `round ${run.round + 1}, ${run.workers} workers: the demo exited with ${run.exitCode} after its report${run.problems.length > 0 ? `; its check: ${run.problems.join("; ")}` : ""}`,
    );
  return [
    `Node ${process.version}, ${cores} cores (${cpus()[0]?.model.trim() ?? "unknown CPU"}); --threads ${settings.threads} ${settings.turns === undefined ? `--duration ${settings.duration}` : `--turns ${settings.turns}`} --concurrency ${settings.concurrency} --interrupt-rate ${settings.interruptRate} --seed ${settings.seed} --no-kill`,
    `The tools' sleeps alone allow at most ${boundRate.toFixed(1)} runs/s at concurrency ${settings.concurrency} (${bound.turns} turns, ${bound.sleepSeconds.toFixed(1)} s of sleeps).`,
    "",
    `CPU in cores: CPU seconds per second of the fleet's run (the machine has ${cores}); "rest of machine" is every other process's but this script's; "tries": which run of how many counts (the one with the least CPU used by other processes).`,
    "",
    table(
      [
        "round",
        "workers",
        "runs",
        "time",
        "runs/s",
        "vs 1 worker",
        "coordinator",
        "workers (each)",
        "PostgreSQL",
        "fleet",
        "rest of machine",
        "steal",
        "tries",
      ],
      lines,
    ),
    "",
    table(
      [
        "workers",
        "quiet runs",
        "runs/s (median)",
        "vs 1 worker (median of rounds)",
        "model calls/s",
        "fleet CPU per run",
      ],
      medians,
    ),
    ...(notes.length === 0 ? [] : ["", ...notes]),
  ].join("\n");
}

async function main(): Promise<number> {
  let settings: Settings | "help";
  try {
    settings = parse();
  } catch (error) {
    console.error(`${(error as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (settings === "help") {
    console.log(USAGE);
    return 0;
  }
  process.on("SIGINT", () => {
    // The demo stops its workers and its PostgreSQL on SIGINT.
    running?.kill("SIGINT");
    process.exit(130);
  });
  const runs: FleetRun[] = [];
  for (let round = 0; round < settings.rounds; round++) {
    const order = round % 2 === 0 ? settings.workers : [...settings.workers].reverse();
    for (const workers of order) {
      let best: FleetRun | undefined;
      let attempts = 0;
      while (attempts < settings.attempts) {
        attempts += 1;
        const before = await machineQuiet(settings.quiet);
        const run = await runFleet(settings, workers, round);
        process.stderr.write(
          `round ${round + 1}, ${workers} workers: ${run.runs} runs in ${run.seconds.toFixed(1)} s, ${(run.runs / run.seconds).toFixed(1)} runs/s; other processes ${otherCores(run).toFixed(2)} cores (${before.toFixed(2)} before)\n`,
        );
        if (best === undefined || otherCores(run) < otherCores(best)) {
          best = { ...run, attempt: attempts };
        }
        if (otherCores(run) < settings.quiet) break;
      }
      runs.push({ ...(best as FleetRun), attempts });
    }
  }
  runs.sort((a, b) => a.round - b.round || a.workers - b.workers);
  console.log(format(settings, runs));
  if (settings.raw !== undefined) {
    writeFileSync(settings.raw, `${JSON.stringify({ settings, runs }, null, 2)}\n`);
  }
  return 0;
}

process.exitCode = await main();
