import { share } from "../../dashboards/generator/promql.js";

/**
 * Whether a PromQL expression is `share(numerator, denominator)` from the dashboards' generator,
 * whatever its operands: a share that is 0, not missing, where the numerator has no series, and
 * none at all where the denominator is 0.
 *
 * @example
 * isShare("clamp_max((a or b * 0) / (b > 0), 1)"); // true
 * isShare("a / b"); // false
 */
export function isShare(expr: string): boolean {
  const match = /^clamp_max\(\((.+) or (.+) \* 0\) \/ \(\2 > 0\), 1\)$/.exec(expr);
  return match !== null && share(match[1] ?? "", match[2] ?? "") === expr;
}
