import { share } from "../../dashboards/generator/promql.js";

/**
 * Whether a PromQL expression is `share(numerator, denominator)` from the dashboards' generator,
 * whatever its operands: a share that is 0, not missing, where the numerator has no series.
 *
 * @example
 * isShare("(a or b * 0) / b"); // true
 * isShare("a / b"); // false
 */
export function isShare(expr: string): boolean {
  const match = /^\((.+) or (.+) \* 0\) \/ \2$/.exec(expr);
  return match !== null && share(match[1] ?? "", match[2] ?? "") === expr;
}
