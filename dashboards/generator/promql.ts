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
 * The share `numerator / denominator`, where a missing numerator counts as 0. A counter appears
 * with its first increment, so a model or tool that never had a dangling call (or a model never
 * repaired) has no numerator series at all: a plain division would return nothing for it (an
 * alert baseline that is missing instead of 0, a panel showing "No data" for the healthiest
 * model), where this returns 0 for every series of the denominator. Both operands must be
 * aggregated by the same labels.
 */
export function share(numerator: string, denominator: string): string {
  return `(${orZero(numerator, denominator)}) / ${denominator}`;
}
