/**
 * Bytes allocated per call: the heap's growth over many calls, plus what each garbage collection
 * in between freed (read from V8's GC profiler), so that a collection during the run cannot hide
 * an allocation. Needs `--expose-gc`, to start each run from a settled heap.
 */
import { GCProfiler, getHeapStatistics } from "node:v8";

interface GcStatistics {
  readonly statistics: readonly {
    readonly beforeGC: { readonly heapStatistics: { readonly usedHeapSize: number } };
    readonly afterGC: { readonly heapStatistics: { readonly usedHeapSize: number } };
  }[];
}

/** Throws unless the process runs with `--expose-gc`. */
export function collectGarbage(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error("run with node --expose-gc (npm run bench does)");
  gc();
}

/**
 * The fewest bytes allocated per call of `run` in any of `trials` runs of `calls` calls. The
 * least, not the median: whatever else allocates while a run goes on (the compiler, timers, a
 * telemetry export) can only add to a run's figure, never take from it.
 */
export function bytesPerCall(run: () => unknown, calls: number, trials: number): number {
  for (let warmUp = 0; warmUp < Math.min(calls, 200); warmUp++) run();
  const results: number[] = [];
  const kept: unknown[] = new Array(calls);
  for (let trial = 0; trial < trials; trial++) {
    collectGarbage();
    collectGarbage();
    const profiler = new GCProfiler();
    profiler.start();
    const before = getHeapStatistics().used_heap_size;
    for (let call = 0; call < calls; call++) kept[call] = run();
    const after = getHeapStatistics().used_heap_size;
    const { statistics } = profiler.stop() as unknown as GcStatistics;
    let freed = 0;
    for (const gc of statistics) {
      freed += gc.beforeGC.heapStatistics.usedHeapSize - gc.afterGC.heapStatistics.usedHeapSize;
    }
    results.push((after - before + freed) / calls);
    kept.fill(undefined);
  }
  return Math.min(...results);
}
