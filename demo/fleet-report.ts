/**
 * The fleet of workers, checked: each worker's own counters (its scrape) against what the scripts
 * say that worker did, the killed worker's increments that no scrape saw, and, without `persist`,
 * how much more than happened the fleet's counters count.
 */
import { labels, series } from "../dashboards/generator/names.js";
import {
  REASON_VALUE_INTERRUPTED,
  REPAIR_KIND_VALUE_PLACEHOLDER_INSERTED,
} from "../src/telemetry/semconv.js";
import type { Exposition } from "./exposition.js";
import { type GroundTruth, totalOf } from "./fleet.js";
import { disagreements, type Figures, figuresFrom, truthRows } from "./summary.js";

/** A worker as the report needs it. */
export interface ReportedWorker {
  readonly name: string;
  readonly pid: number;
  /** Seconds into the run at which it was killed, or `undefined` if it lived to the end. */
  readonly killedAt: number | undefined;
  /** What the scripts say it did. */
  readonly truth: GroundTruth;
  /** Its last scrape: at the end, or the last one before it was killed. */
  readonly exposition: Exposition | undefined;
}

/** The counts the report compares, for a worker or the fleet. */
export interface Tally {
  readonly toolCalls: number;
  readonly dangling: number;
  /**
   * Repairs that answered a dangling call: those of kind `placeholder_inserted`, one per dangling
   * call repaired. The other kinds (the synthetic turns a repair writes to keep the order of turns,
   * say) are not repairs of a dangling call, so they are not compared with the dangling calls.
   */
  readonly repairs: number;
  /** Dangling calls by thread, from the per-thread metric. */
  readonly byThread: Readonly<Record<string, number>>;
  /** Dangling calls by reason. */
  readonly byReason: Readonly<Record<string, number>>;
}

/** One worker's line of the report. */
export interface WorkerRow {
  readonly name: string;
  readonly pid: number;
  readonly killedAt: number | undefined;
  readonly runs: number;
  readonly counted: Tally;
  readonly truth: { readonly toolCalls: number; readonly dangling: number };
}

/** The whole check. */
export interface FleetCheck {
  readonly persist: boolean;
  readonly workers: readonly WorkerRow[];
  /** What the killed workers counted that no scrape saw: the scripts' figures less their last scrape. */
  readonly lost: { readonly toolCalls: number; readonly dangling: number };
  /**
   * What the fleet counted beyond what happened, after adding back what was lost: 0 everywhere
   * with `persist`.
   */
  readonly overcount: {
    readonly dangling: number;
    readonly repairs: number;
    /** Over every thread, the per-thread metric's count beyond the thread's dangling calls. */
    readonly threadDangling: number;
  };
  /** Where a count is off in a way the design does not allow, one line each; empty when none. */
  readonly problems: readonly string[];
}

/** The per-thread metric and the reasons, summed over a scrape's series. */
function tallyOf(exposition: Exposition | undefined): Tally {
  const byThread: Record<string, number> = {};
  const byReason: Record<string, number> = {};
  let figures: Figures | undefined;
  if (exposition !== undefined) {
    figures = figuresFrom(exposition);
    for (const sample of exposition.find(series.threadRecentDanglingToolCalls)) {
      const thread = sample.labels[labels.thread] ?? "";
      byThread[thread] = (byThread[thread] ?? 0) + sample.value;
    }
    for (const sample of exposition.find(series.danglingToolCalls)) {
      const reason = sample.labels[labels.reason] ?? "";
      byReason[reason] = (byReason[reason] ?? 0) + sample.value;
    }
  }
  return {
    toolCalls: figures?.toolCalls ?? 0,
    dangling: figures?.dangling ?? 0,
    repairs:
      exposition?.sum(series.repairs, {
        [labels.repairKind]: REPAIR_KIND_VALUE_PLACEHOLDER_INSERTED,
      }) ?? 0,
    byThread,
    byReason,
  };
}

/** Threads whose per-thread count differs from the scripts', as `thread: counted vs truth`. */
function threadDifferences(counted: Tally, truth: GroundTruth): string[] {
  const threads = new Set([
    ...Object.keys(counted.byThread),
    ...Object.keys(truth.danglingByThread),
  ]);
  return [...threads]
    .filter((thread) => (counted.byThread[thread] ?? 0) !== (truth.danglingByThread[thread] ?? 0))
    .map(
      (thread) =>
        `${thread}: ${counted.byThread[thread] ?? 0} counted, ${truth.danglingByThread[thread] ?? 0} happened`,
    );
}

/**
 * Checks each worker's counters against what the scripts say it did. A worker that lived to the
 * end must agree exactly on tool calls, per model and per tool; with `persist` on dangling calls,
 * repairs, threads and reasons too. A killed worker may have counted less than it did (what its
 * last scrape missed, reported as lost), never more.
 */
export function checkFleet(workers: readonly ReportedWorker[], persist: boolean): FleetCheck {
  const problems: string[] = [];
  const rows: WorkerRow[] = [];
  const lost = { toolCalls: 0, dangling: 0 };
  const overcount = { dangling: 0, repairs: 0, threadDangling: 0 };
  for (const worker of workers) {
    const counted = tallyOf(worker.exposition);
    const truth = {
      toolCalls: totalOf(worker.truth.toolCalls),
      dangling: totalOf(worker.truth.dangling),
    };
    rows.push({
      name: worker.name,
      pid: worker.pid,
      killedAt: worker.killedAt,
      runs: worker.truth.runs,
      counted,
      truth,
    });
    const figures = worker.exposition === undefined ? undefined : figuresFrom(worker.exposition);
    for (const [reason, count] of Object.entries(counted.byReason)) {
      if (reason !== REASON_VALUE_INTERRUPTED && count > 0) {
        problems.push(`${worker.name}: ${count} dangling calls counted with reason "${reason}"`);
      }
    }
    if (worker.killedAt !== undefined) {
      // What it did and no scrape saw is lost; more than it did would be a bug.
      const expected = truthRows(worker.truth);
      for (const [kind, rowsCounted, scripted] of [
        ["model", figures?.models ?? [], expected.models],
        ["tool", figures?.tools ?? [], expected.tools],
      ] as const) {
        for (const row of rowsCounted) {
          const script = scripted.get(row.name) ?? { toolCalls: 0, dangling: 0 };
          if (row.toolCalls > script.toolCalls || (persist && row.dangling > script.dangling)) {
            problems.push(
              `${worker.name} (killed): ${kind} ${row.name} counted ${row.toolCalls} / ${row.dangling}, more than the ${script.toolCalls} tool calls / ${script.dangling} dangling calls it saw`,
            );
          }
        }
      }
      lost.toolCalls += Math.max(0, truth.toolCalls - counted.toolCalls);
      lost.dangling += Math.max(0, truth.dangling - counted.dangling);
      overcount.dangling += Math.max(0, counted.dangling - truth.dangling);
      overcount.repairs += Math.max(0, counted.repairs - truth.dangling);
      continue;
    }
    const off = figures === undefined ? ["no scrape"] : disagreements(figures, worker.truth);
    // Per worker, so that one worker's excess cannot hide behind another's shortfall.
    overcount.dangling += Math.max(0, counted.dangling - truth.dangling);
    overcount.repairs += Math.max(0, counted.repairs - truth.dangling);
    const threads = threadDifferences(counted, worker.truth);
    overcount.threadDangling += Object.keys(counted.byThread).reduce(
      (sum, thread) =>
        sum +
        Math.max(0, (counted.byThread[thread] ?? 0) - (worker.truth.danglingByThread[thread] ?? 0)),
      0,
    );
    if (persist) {
      problems.push(...off.map((line) => `${worker.name}: ${line}`));
      if (counted.repairs !== truth.dangling) {
        problems.push(
          `${worker.name}: ${counted.repairs} repairs counted for ${truth.dangling} dangling calls`,
        );
      }
      problems.push(...threads.map((line) => `${worker.name}: thread ${line}`));
    } else {
      // Without persist only the tool calls must be exact; the rest is the overcount measured.
      problems.push(...off.filter(toolCallsDiffer).map((line) => `${worker.name}: ${line}`));
    }
  }
  return { persist, workers: rows, lost, overcount, problems };
}

/** True when a {@link disagreements} line has the tool calls themselves differ. */
function toolCallsDiffer(line: string): boolean {
  const match = /counted (\d+) tool calls \/ \d+ dangling, the scripts say (\d+) \//.exec(line);
  return match === null || match[1] !== match[2];
}

function percent(part: number, whole: number): string {
  return whole === 0 ? "-" : `${((part / whole) * 100).toFixed(1)}%`;
}

/** The check as text: a line per worker, what was lost, the overcount, and the verdict. */
export function formatFleetCheck(check: FleetCheck, fleetTruth: GroundTruth): string {
  const happened = totalOf(fleetTruth.dangling);
  const lines = [
    "worker     PID      runs  tool calls (counted/happened)  dangling (counted/happened)  placeholders",
    ...check.workers.map((row) =>
      [
        `${row.name}${row.killedAt === undefined ? "" : "†"}`.padEnd(10),
        String(row.pid).padEnd(7),
        String(row.runs).padStart(5),
        `${row.counted.toolCalls}/${row.truth.toolCalls}`.padStart(30),
        `${row.counted.dangling}/${row.truth.dangling}`.padStart(28),
        String(row.counted.repairs).padStart(13),
      ].join(" "),
    ),
  ];
  for (const row of check.workers.filter((worker) => worker.killedAt !== undefined)) {
    lines.push(
      `† killed with SIGKILL at ${row.killedAt?.toFixed(1)} s: its last scrape missed ${row.truth.toolCalls - row.counted.toolCalls} tool calls and ${row.truth.dangling - row.counted.dangling} dangling calls, lost with the process.`,
    );
  }
  lines.push("");
  if (check.persist) {
    lines.push(
      `With persist: ${check.overcount.dangling} dangling calls counted twice, ${check.overcount.repairs} repairs beyond one per dangling call, over ${happened} dangling calls.`,
    );
  } else {
    lines.push(
      `Without persist, over ${happened} dangling calls: ${check.overcount.dangling} counted more than once (${percent(check.overcount.dangling, happened)}), ${check.overcount.repairs} repairs beyond one per dangling call (${percent(check.overcount.repairs, happened)}: each later model call of a thread repairs its calls again), per-thread metric ${check.overcount.threadDangling} over.`,
    );
  }
  lines.push(
    check.problems.length === 0
      ? check.persist
        ? "Every worker's counters agree exactly with what it did: per model, tool, thread and reason."
        : "Every worker's tool calls agree exactly with what it did; the rest is the overcount above."
      : `Counters that disagree:\n  ${check.problems.join("\n  ")}`,
  );
  return lines.join("\n");
}
