/**
 * PromQL shapes shared by the dashboards and the Prometheus rules, so that a panel and the rule
 * behind an alert compute the same figure the same way.
 */

/**
 * The share `numerator / denominator`, at most 1, where a missing numerator counts as 0 and a
 * denominator of 0 gives no share at all. A counter appears with its first increment, so a model
 * or tool that never had a dangling call has no numerator series: a plain division would return
 * nothing for it (a panel showing "No data" for the healthiest model), where this returns 0 for
 * every series of the denominator, and stays missing without it (not `or vector(0)`, a reassuring
 * 0 with no telemetry at all). A window without a single tool call of a model has no share rather
 * than `+Inf` (dangling calls of earlier turns counted now over no new call): no alert fires on
 * it. Dangling calls found now of calls made before the window can exceed the window's calls; the
 * share stops at 1. Both operands must be aggregated by the same labels.
 */
export function share(numerator: string, denominator: string): string {
  return `clamp_max((${numerator} or ${denominator} * 0) / (${denominator} > 0), 1)`;
}

/**
 * What each counter `selector` selects grew by over `window`, one value per series: `increase()`
 * for a series that was there `window` ago, and the last value of one born since, counted whole
 * (a counter appears with its first count, which `increase()` cannot see).
 *
 * The born series are read with `last_over_time()`, not as they are now, so that a process that
 * started, counted and died inside the window (a worker killed with SIGKILL a minute after it
 * failed open, a short-lived replica) still counts: its series went stale when it died, and an
 * instant selector would no longer see it. Per series, so a sum of it over processes adds each
 * process's own growth: a replacement process whose counters start again from 0 under a new
 * `instance` is never taken for a reset of the one it replaced.
 *
 * @example
 * ```ts
 * growth('c_total{job="a"}', "15m");
 * // ((last_over_time(c_total{job="a"}[15m]) unless c_total{job="a"} offset 15m) or increase(c_total{job="a"}[15m]))
 * ```
 */
export function growth(selector: string, window: string): string {
  return `((last_over_time(${selector}[${window}]) unless ${selector} offset ${window}) or increase(${selector}[${window}]))`;
}
