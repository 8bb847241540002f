/**
 * The short workloads measured in fresh processes, one after another, and their results combined
 * by the median across processes: a process's compiled code is one draw, and one draw was what
 * turned a quick run's verdict (see `Effort.processes`).
 */
import { spawn } from "node:child_process";
import { SHAPES } from "./histories.js";
import { median } from "./measure.js";
import type { WorkloadComparison } from "./targets.js";

/** What one process measured: the short workloads' comparisons. */
export interface ProcessResult {
  readonly engineVsFloor: readonly WorkloadComparison[];
  readonly middlewareVsPeer: readonly WorkloadComparison[];
}

/** The flag that makes `bench/main.ts` measure the short workloads alone and print them as JSON. */
export const SHORT_ONLY_FLAG = "--short-workloads-only";

/**
 * Runs this script again in `count` fresh processes, one at a time, each with
 * {@link SHORT_ONLY_FLAG} (and `--quick` when given), and reads what each printed.
 */
export async function measureInProcesses(
  count: number,
  quick: boolean,
  onDone: (index: number) => void,
): Promise<ProcessResult[]> {
  const results: ProcessResult[] = [];
  for (let index = 0; index < count; index++) {
    const args = [...process.execArgv, process.argv[1] as string, SHORT_ONLY_FLAG];
    if (quick) args.push("--quick");
    results.push(await runChild(args));
    onDone(index);
  }
  return results;
}

function runChild(args: readonly string[]): Promise<ProcessResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "inherit"] });
    let output = "";
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => {
      output += chunk;
    });
    child.on("error", reject);
    child.on("close", (code) => {
      if (code !== 0) {
        reject(new Error(`a bench process for the short workloads exited with ${code}`));
        return;
      }
      try {
        resolve(JSON.parse(output) as ProcessResult);
      } catch (error) {
        reject(new Error(`a bench process printed no result: ${(error as Error).message}`));
      }
    });
  });
}

/**
 * One comparison per workload from several processes' comparisons of it: the median of their
 * ratios (and of their times), with the lowest and highest ratio as the spread.
 *
 * @example
 * ```ts
 * combine([[w(1.6)], [w(2.4)], [w(1.7)]]); // [{ ..., ratio: 1.7, spread: [1.6, 2.4] }]
 * ```
 */
export function combine(
  perProcess: readonly (readonly WorkloadComparison[])[],
): WorkloadComparison[] {
  // In the table's order, sizes then shapes, whatever order the first process measured them in.
  const first = [...(perProcess[0] ?? [])].sort(
    (a, b) => a.size - b.size || SHAPES.indexOf(a.shape) - SHAPES.indexOf(b.shape),
  );
  return first.map((comparison) => {
    const same = perProcess.flatMap((list) =>
      list.filter((other) => other.shape === comparison.shape && other.size === comparison.size),
    );
    const ratios = same.map((other) => other.ratio);
    return {
      ...comparison,
      subjectNs: median(same.map((other) => other.subjectNs)),
      baselineNs: median(same.map((other) => other.baselineNs)),
      ratio: median(ratios),
      spread: [Math.min(...ratios), Math.max(...ratios)] as const,
      processes: same.length,
    };
  });
}
