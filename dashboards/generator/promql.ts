/**
 * PromQL shapes shared by the dashboards and the Prometheus rules, so that a panel and the rule
 * behind an alert compute the same figure the same way.
 */

/**
 * `expr`, or 0 where `presence` has a value. A counter appears with its first increment, so a count
 * of something that never happened has no series: this turns it into 0 as long as the telemetry it
 * would come from is there (`presence`, aggregated by the same labels as `expr`), and leaves it
 * missing when that telemetry is missing, so that a panel shows *No data* rather than a reassuring
 * 0 (which `or vector(0)` would show even with no telemetry at all).
 */
export function orZero(expr: string, presence: string): string {
  return `${expr} or ${presence} * 0`;
}

/**
 * The share `numerator / denominator`, at most 1, where a missing numerator counts as 0 and a
 * denominator of 0 gives no share at all. A counter appears with its first increment, so a model
 * or tool that never had a dangling call has no numerator series: a plain division would return
 * nothing for it (a panel showing "No data" for the healthiest model), where this returns 0 for
 * every series of the denominator. A window without a single tool call of a model has no share
 * rather than `+Inf` (dangling calls of earlier turns counted now over no new call): no alert
 * fires on it. Dangling calls found now of calls made before the window can exceed the window's
 * calls; the share stops at 1. Both operands must be aggregated by the same labels.
 */
export function share(numerator: string, denominator: string): string {
  return `clamp_max((${orZero(numerator, denominator)}) / (${denominator} > 0), 1)`;
}
