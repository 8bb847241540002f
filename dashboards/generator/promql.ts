/**
 * PromQL shapes shared by the dashboards and the Prometheus rules, so that a panel and the rule
 * behind an alert compute the same figure the same way.
 */

/**
 * The share `numerator / denominator`, where a missing numerator counts as 0. A counter appears
 * with its first increment, so a model or tool that never had a dangling call (or a model never
 * repaired) has no numerator series at all: a plain division would return nothing for it (an
 * alert baseline that is missing instead of 0, a panel showing "No data" for the healthiest
 * model), where this returns 0 for every series of the denominator. Both operands must be
 * aggregated by the same labels.
 */
export function share(numerator: string, denominator: string): string {
  return `(${numerator} or ${denominator} * 0) / ${denominator}`;
}
