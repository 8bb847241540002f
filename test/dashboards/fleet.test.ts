/**
 * Many worker processes behind one model: every rule, alert, panel and runbook query must add the
 * processes up without counting anything twice, and without a dead or replaced process skewing
 * the figure. Checked here on the text of every expression the bundle ships; the promtool
 * scenarios of `dashboards/prometheus/rules.test.yml` (three instances sharing a model, an instance
 * killed and replaced mid-incident, a thread split over instances, a killed target) check the
 * values, and the last tests here tie those scenarios to the dashboards' own queries.
 *
 * - Across processes, only `sum without` every process label (`bundleConfig.processLabels`), so
 *   that each process counts once and every other label stays; never a maximum, a minimum or an
 *   average of processes, which would report one process as the fleet.
 * - Counters are turned into per-series rates or increases before any sum across processes: a
 *   sum of counters taken before `rate()` drops when a process dies and starts again from 0 under
 *   a new instance, which `rate()` takes for a reset and turns into a spike. Within one process,
 *   whose counters all start from 0 together, they may be summed first.
 * - The per-thread gauge is summed over the processes before `topk`, so a thread whose turns
 *   landed on three workers ranks by its total, once.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { bundleConfig } from "../../dashboards/generator/config.js";
import { renderDashboards } from "../../dashboards/generator/dashboards.js";
import { series } from "../../dashboards/generator/names.js";
import { alertRules, recordingRules } from "../../dashboards/generator/prometheus-rules.js";
import {
  aggregationsIn,
  closingParenthesis,
  enclosing,
  keepsProcesses,
  selectorsIn,
  sumsOverProcesses,
} from "./promql-aggregations.js";

const processLabels = bundleConfig.processLabels;

interface Expression {
  readonly where: string;
  readonly expr: string;
  /** The panel type, for a dashboard's query. */
  readonly panelType?: string;
}

interface Panel {
  readonly type: string;
  readonly title: string;
  readonly targets?: readonly { readonly refId: string; readonly expr: string }[];
}

const dashboards = Object.entries(renderDashboards())
  .filter(([path]) => path.endsWith(".json"))
  .map(([path, text]) => ({ path, panels: (JSON.parse(text) as { panels: Panel[] }).panels }));

const panelExpressions: Expression[] = dashboards.flatMap(({ path, panels }) =>
  panels.flatMap((panel) =>
    (panel.targets ?? []).map((target) => ({
      where: `${path} / ${panel.title} / ${target.refId}`,
      expr: target.expr,
      panelType: panel.type,
    })),
  ),
);

const runbook = readFileSync(new URL("../../dashboards/runbook.md", import.meta.url), "utf8");

/** Every ```promql block of the runbook, its lines joined. */
const runbookExpressions: Expression[] = [
  ...runbook.matchAll(/^\s*```promql\s*\n([\s\S]*?)\n\s*```\s*$/gm),
].map((match, index) => ({
  where: `runbook query ${index + 1}`,
  expr: (match[1] ?? "")
    .split("\n")
    .map((line) => line.trim())
    .join(""),
}));

const expressions: Expression[] = [
  ...recordingRules.map((rule) => ({ where: rule.record, expr: rule.expr })),
  ...alertRules.map((rule) => ({
    where: `${rule.alert} (${rule.labels.severity})`,
    expr: rule.expr,
  })),
  ...panelExpressions,
  ...runbookExpressions,
];

/**
 * The sums over everything chosen that are not `sum without` the process labels, each with why it
 * counts nothing twice: the overview's stats are one number for the whole selection, a sum of
 * recorded per-process figures; the heatmap needs one series per bucket, a sum of recorded rates
 * already summed over the processes.
 */
function isWholeSelectionSum(expression: Expression, text: string): boolean {
  return (
    (expression.panelType === "stat" && text.startsWith("sum(")) ||
    (expression.panelType === "heatmap" && /^sum by \(le\) \([a-z_]+:/.test(text))
  );
}

/** The library's counters, as a selector names them (a histogram's series are counters too). */
function isCounter(name: string): boolean {
  return name
    .split("|")
    .some((part) => /^tool_call_resilience_\w+_(total|bucket|count|sum)$/.test(part));
}

/** Aggregations that report one process as the fleet: a maximum, minimum or average of them. */
function extremesOfProcesses({ expr }: Expression): string[] {
  return aggregationsIn(expr)
    .filter((aggregation) =>
      ["max", "min", "avg", "stddev", "stdvar", "quantile"].includes(aggregation.operator),
    )
    .filter((aggregation) => !keepsProcesses(aggregation, processLabels))
    .map((aggregation) => aggregation.text);
}

/** Sums over processes other than `sum without` every process label (or a whole-selection stat). */
function sumsThatMissAProcessLabel(expression: Expression): string[] {
  return aggregationsIn(expression.expr)
    .filter(
      (aggregation) =>
        aggregation.operator === "sum" &&
        !keepsProcesses(aggregation, processLabels) &&
        !sumsOverProcesses(aggregation, processLabels) &&
        !isWholeSelectionSum(expression, aggregation.text),
    )
    .map((aggregation) => aggregation.text);
}

/** Rates and increases taken of anything but a plain range selector (of a sum, a subquery). */
function ratesOfNonSelectors({ expr }: Expression): string[] {
  return [...expr.matchAll(/\b(rate|irate|increase|resets|last_over_time)\(/g)]
    .map((match) => {
      const open = (match.index ?? 0) + match[0].length - 1;
      return expr.slice(open + 1, closingParenthesis(expr, open));
    })
    .filter(
      (argument) =>
        !/^(?:[a-zA-Z_:][a-zA-Z0-9_:]*)?(?:\{[^}]*\})?\[[^\]]+\](?: offset \w+)?$/.test(argument),
    );
}

/**
 * Counters read for their raw value: anything but through a rate, an increase, their last value
 * or timestamp, as the presence test of an `offset`, among series merely counted, or summed within
 * each process (a sum that keeps every process label apart).
 */
function rawCounterReads({ expr }: Expression): string[] {
  const aggregations = aggregationsIn(expr);
  return selectorsIn(expr)
    .filter((found) => isCounter(found.name))
    .filter((selector) => {
      const before = expr.slice(0, selector.index);
      const after = expr.slice(selector.index + selector.text.length);
      const [nearest] = enclosing(aggregations, selector.index);
      return !(
        /\b(rate|irate|increase|resets|last_over_time|timestamp)\($/.test(before) ||
        /^ offset [$\w]+/.test(after) ||
        // Counting series (processes, label values) counts no call.
        nearest?.operator === "count" ||
        nearest?.operator === "group" ||
        (nearest?.operator === "sum" &&
          expr.slice(nearest.from, nearest.to).trim() === selector.text &&
          keepsProcesses(nearest, processLabels))
      );
    })
    .map((selector) => selector.text);
}

/**
 * Per-thread gauges not summed over every process first: the gauge must be the very argument of
 * a `sum without` every process label (not a maximum over time of each process's, which counts a
 * thread that moved between workers once per worker), and no `topk` may rank before that sum.
 */
function threadsNotSummedFirst({ expr }: Expression): string[] {
  const aggregations = aggregationsIn(expr);
  return selectorsIn(expr)
    .filter((found) => found.name === series.threadRecentDanglingToolCalls)
    .filter((gauge) => {
      // The innermost aggregation around the gauge, so any topk ranks after the sum.
      const [innermost] = enclosing(aggregations, gauge.index);
      return (
        innermost === undefined ||
        !sumsOverProcesses(innermost, processLabels) ||
        expr.slice(innermost.from, innermost.to).trim() !== gauge.text
      );
    })
    .map((gauge) => gauge.text);
}

describe("across many processes, every expression of the bundle", () => {
  it("reads every rule, alert, panel and runbook query", () => {
    expect(runbookExpressions.length).toBeGreaterThan(10);
    expect(panelExpressions.length).toBeGreaterThan(20);
  });

  it.each(expressions)("$where never takes a maximum, minimum or average of processes", (e) => {
    expect(extremesOfProcesses(e)).toEqual([]);
  });

  it.each(expressions)("$where sums processes only with sum without every process label", (e) => {
    expect(sumsThatMissAProcessLabel(e)).toEqual([]);
  });

  it.each(expressions)(
    "$where takes rates and increases of plain selectors, never of a sum",
    (e) => {
      expect(ratesOfNonSelectors(e)).toEqual([]);
    },
  );

  it.each(expressions)(
    "$where reads a counter only per series: through a rate, an increase, its last value or timestamp, or to test its presence",
    (e) => {
      expect(rawCounterReads(e)).toEqual([]);
    },
  );

  const threadQueries = expressions.filter(({ expr }) =>
    expr.includes(series.threadRecentDanglingToolCalls),
  );

  it("rank threads in both dashboards and in the runbook", () => {
    expect(threadQueries.length).toBeGreaterThanOrEqual(4);
  });

  it.each(threadQueries)(
    "$where sums each thread over every process, and ranks threads only after that sum",
    (e) => {
      expect(threadsNotSummedFirst(e)).toEqual([]);
    },
  );
});

describe("the checks above", () => {
  const gauge = `${series.threadRecentDanglingToolCalls}{job="a"}`;
  const counter = `${series.danglingToolCalls}{job="a"}`;
  const fleet = `sum without (${processLabels.join(", ")})`;

  const checks = {
    extremesOfProcesses,
    sumsThatMissAProcessLabel,
    ratesOfNonSelectors,
    rawCounterReads,
    threadsNotSummedFirst,
  };

  it.each([
    ["extremesOfProcesses", `max without (instance, pod) (rate(${counter}[5m]))`],
    ["extremesOfProcesses", `max by (job) (rate(${counter}[5m]))`],
    ["sumsThatMissAProcessLabel", `sum without (instance) (rate(${counter}[5m]))`],
    ["sumsThatMissAProcessLabel", `sum by (job) (rate(${counter}[5m]))`],
    ["ratesOfNonSelectors", `rate(${fleet} (${counter})[5m:1m])`],
    ["rawCounterReads", `${fleet} (${counter})`],
    ["threadsNotSummedFirst", `topk(10, ${gauge})`],
    ["threadsNotSummedFirst", `${fleet} (topk(10, ${gauge}))`],
    ["threadsNotSummedFirst", `topk(10, sum without (instance) (${gauge}))`],
    // The runbook's ranking before this check: each process's largest value, added up.
    ["threadsNotSummedFirst", `topk(10, ${fleet} (max_over_time(${gauge}[1h])))`],
  ] as const)("%s finds what is wrong in %s", (check, expr) => {
    expect(checks[check]({ where: "example", expr }).length).toBeGreaterThan(0);
  });

  it.each([
    ["extremesOfProcesses", `max without (otel_scope_name) (timestamp(${counter}))`],
    ["sumsThatMissAProcessLabel", `${fleet} (rate(${counter}[5m]))`],
    ["ratesOfNonSelectors", `rate(${counter}[5m])`],
    ["rawCounterReads", `${fleet} (increase(${counter}[1h]))`],
    ["rawCounterReads", `sum without (otel_scope_name) (${counter})`],
    ["threadsNotSummedFirst", `topk(10, ${fleet} (${gauge}))`],
    ["threadsNotSummedFirst", `topk(10, max_over_time((${fleet} (${gauge}))[1h:]))`],
  ] as const)("%s accepts %s", (check, expr) => {
    expect(checks[check]({ where: "example", expr })).toEqual([]);
  });
});

describe("the fleet scenarios of rules.test.yml", () => {
  interface UnitTestGroup {
    readonly name: string;
    readonly promql_expr_test?: readonly {
      readonly expr: string;
      readonly exp_samples: unknown[];
    }[];
  }
  const unitTests = (
    parse(
      readFileSync(new URL("../../dashboards/prometheus/rules.test.yml", import.meta.url), "utf8"),
    ) as { tests: UnitTestGroup[] }
  ).tests;
  const evaluated = unitTests.flatMap((group) =>
    (group.promql_expr_test ?? [])
      .filter((test) => test.exp_samples.length > 0)
      .map((test) => ({ group: group.name, expr: test.expr })),
  );

  /** A query with every Grafana variable at All, as the scenarios write it. */
  const allChosen = (expr: string) => expr.replace(/\$\{?(\w+)\}?/g, ".*");

  const tied = [
    ...panelExpressions.filter(
      ({ where }) => where.includes("/ Top threads now /") || where.includes("/ Instance health /"),
    ),
    ...runbookExpressions.filter(
      ({ expr }) => expr.includes(series.threadRecentDanglingToolCalls) && expr.includes("topk("),
    ),
  ];

  it("cover the top threads of both dashboards and of the runbook, and every column of the Instances table", () => {
    expect(tied.filter(({ where }) => where.includes("Top threads now"))).toHaveLength(2);
    expect(
      tied.filter(({ where }) => where.includes("/ Instance health /")).length,
    ).toBeGreaterThan(4);
    expect(tied.filter(({ where }) => where.startsWith("runbook"))).toHaveLength(1);
  });

  it.each(tied)("evaluate $where as it is shipped, with every variable at All", ({ expr }) => {
    const found = evaluated.filter((test) => test.expr === allChosen(expr));
    expect(found.length, allChosen(expr)).toBeGreaterThan(0);
  });
});
