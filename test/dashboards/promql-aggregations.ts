/**
 * The aggregations of a PromQL expression and where they apply, for the tests that check how the
 * bundle sums over processes: every aggregation operator written prefix-style
 * (`sum without (a, b) (expr)`, `topk(10, expr)`), as the generator and the runbook write them.
 */

/** PromQL's aggregation operators. */
const OPERATORS = [
  "sum",
  "min",
  "max",
  "avg",
  "group",
  "stddev",
  "stdvar",
  "count",
  "count_values",
  "bottomk",
  "topk",
  "quantile",
] as const;

/** One aggregation of an expression. */
export interface Aggregation {
  readonly operator: (typeof OPERATORS)[number];
  /** `by` or `without`, when it has a label list. */
  readonly modifier?: "by" | "without";
  /** The labels of its `by` or `without` list. */
  readonly labels: readonly string[];
  /** Its text, from the operator to the parenthesis that closes its argument. */
  readonly text: string;
  /** Where its argument starts (after the opening parenthesis) and ends (at the closing one). */
  readonly from: number;
  readonly to: number;
}

/** The index of the parenthesis that closes the one at `open`, outside strings. */
export function closingParenthesis(expr: string, open: number): number {
  let depth = 0;
  let quoted = false;
  for (let index = open; index < expr.length; index++) {
    const character = expr[index];
    if (character === '"' && expr[index - 1] !== "\\") quoted = !quoted;
    if (quoted) continue;
    if (character === "(") depth++;
    if (character === ")" && --depth === 0) return index;
  }
  throw new Error(`unbalanced parentheses in ${expr}`);
}

/** Every aggregation of `expr`, outermost first. */
export function aggregationsIn(expr: string): Aggregation[] {
  const pattern = new RegExp(
    `\\b(${OPERATORS.join("|")})\\s*(?:(by|without)\\s*\\(([^)]*)\\)\\s*)?\\(`,
    "g",
  );
  return [...expr.matchAll(pattern)].map((match) => {
    const open = (match.index ?? 0) + match[0].length - 1;
    const close = closingParenthesis(expr, open);
    return {
      operator: match[1] as Aggregation["operator"],
      ...(match[2] === undefined ? {} : { modifier: match[2] as "by" | "without" }),
      labels: (match[3] ?? "")
        .split(",")
        .map((label) => label.trim())
        .filter((label) => label !== ""),
      text: expr.slice(match.index ?? 0, close + 1),
      from: open + 1,
      to: close,
    };
  });
}

/** The aggregations whose argument holds the position `index`, innermost first. */
export function enclosing(aggregations: readonly Aggregation[], index: number): Aggregation[] {
  return aggregations
    .filter((aggregation) => aggregation.from <= index && index < aggregation.to)
    .sort((a, b) => b.from - a.from);
}

/** Each selector of `expr` (`name{matchers}` or `{__name__=~"...", ...}`), with its position. */
export function selectorsIn(
  expr: string,
): { readonly text: string; readonly name: string; readonly index: number }[] {
  return [...expr.matchAll(/([a-zA-Z_:][a-zA-Z0-9_:]*)?\{([^}]*)\}/g)].map((match) => ({
    text: match[0],
    name: match[1] ?? /__name__=~"([^"]*)"/.exec(match[2] ?? "")?.[1] ?? "",
    index: match.index ?? 0,
  }));
}

/**
 * Whether an aggregation keeps each process apart: a `by` list with `instance`, or a `without`
 * list with none of the process labels.
 */
export function keepsProcesses(
  aggregation: Aggregation,
  processLabels: readonly string[],
): boolean {
  if (aggregation.modifier === "by") return aggregation.labels.includes("instance");
  if (aggregation.modifier === "without") {
    return !aggregation.labels.some((label) => processLabels.includes(label));
  }
  return aggregation.operator === "topk" || aggregation.operator === "bottomk";
}

/** Whether an aggregation is a `sum without` every process label: one series for the fleet. */
export function sumsOverProcesses(
  aggregation: Aggregation,
  processLabels: readonly string[],
): boolean {
  return (
    aggregation.operator === "sum" &&
    aggregation.modifier === "without" &&
    processLabels.every((label) => aggregation.labels.includes(label))
  );
}
