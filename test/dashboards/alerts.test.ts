/**
 * The alerts follow the monitoring-mixin conventions, query only names the library emits, link to
 * a runbook section that exists, and the Grafana-managed copy matches the Prometheus alerts.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { bundleConfig } from "../../dashboards/generator/config.js";
import {
  GRAFANA_ALERTING_PATH,
  grafanaTemplate,
  renderGrafanaAlerting,
} from "../../dashboards/generator/grafana-alerting.js";
import {
  instrumentSelector,
  instrumentSeries,
  overflowSelector,
  prometheusName,
  reportingSeries,
  SHAPES,
  seriesByShape,
} from "../../dashboards/generator/names.js";
import {
  alertRules,
  recordingRules,
  renderPrometheusRules,
} from "../../dashboards/generator/prometheus-rules.js";
import { share } from "../../dashboards/generator/promql.js";
import * as semconv from "../../src/telemetry/semconv.js";
import { isShare } from "../helpers/promql.js";
import { metricNamesIn, namesMissedIn } from "./promql-names.js";

const runbook = readFileSync(new URL("../../dashboards/runbook.md", import.meta.url), "utf8");

/** The anchor GitHub gives a Markdown heading. */
function githubAnchor(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

const runbookAnchors = runbook
  .split("\n")
  .filter((line) => /^#{1,6} /.test(line))
  .map((line) => githubAnchor(line.replace(/^#+ /, "")));

describe("alert rules", () => {
  it("are named ToolCallResilience<Something>, once each", () => {
    const names = alertRules.map((rule) => rule.alert);
    for (const name of names) expect(name).toMatch(/^ToolCallResilience[A-Z][A-Za-z]+$/);
    expect(new Set(names).size).toBe(names.length);
  });

  it.each(alertRules)("$alert has a severity of critical, warning or info", (rule) => {
    expect(["critical", "warning", "info"]).toContain(rule.labels.severity);
  });

  it.each(alertRules)("$alert has a static summary sentence", (rule) => {
    expect(rule.annotations.summary).toMatch(/^[A-Z].*\.$/);
    expect(rule.annotations.summary).not.toContain("{{");
  });

  it.each(alertRules)("$alert has a description templated with $labels and $value", (rule) => {
    expect(rule.annotations.description).toMatch(/\{\{[^}]*\$labels\.[a-z_]+[^}]*\}\}/);
    expect(rule.annotations.description).toMatch(/\{\{[^}]*\$value\b[^}]*\}\}/);
  });

  it.each(alertRules.filter((rule) => rule.expr.includes(":ratio_rate")))(
    "$alert shows its ratio as a percentage",
    (rule) => {
      expect(rule.annotations.description).toContain("{{ $value | humanizePercentage }}");
    },
  );

  it.each(alertRules)("$alert links to its section of the runbook", (rule) => {
    const anchor = rule.alert.toLowerCase();
    expect(rule.annotations.runbook_url).toBe(`${bundleConfig.runbookBaseUrl}#${anchor}`);
    expect(runbook).toContain(`\n## ${rule.alert}\n`);
    expect(runbookAnchors).toContain(anchor);
  });

  it.each(alertRules)("$alert waits before firing", (rule) => {
    expect(rule.for).toMatch(/^[1-9]\d*[smh]$/);
  });
});

describe("recording rules", () => {
  it("are named level:metric:operation, once each", () => {
    const names = recordingRules.map((rule) => rule.record);
    for (const name of names) expect(name).toMatch(/^[a-z_]+:[a-z_]+:[a-z0-9_]+$/);
    expect(new Set(names).size).toBe(names.length);
  });

  it("keep the job in every aggregation", () => {
    for (const rule of recordingRules) {
      const groupings = [...rule.expr.matchAll(/\bby \(([^)]*)\)/g)].map((match) => match[1]);
      for (const grouping of groupings) expect(grouping?.split(", ")).toContain("job");
    }
  });

  it("read only recording rules defined before them", () => {
    const recorded = recordingRules.map((rule) => rule.record);
    recordingRules.forEach((rule, index) => {
      const used = metricNamesIn(rule.expr).filter((name) => name.includes(":"));
      for (const name of used) expect(recorded.slice(0, index)).toContain(name);
    });
  });
});

describe("expressions", () => {
  const known = new Set<string>([
    ...SHAPES.flatMap((shape) => Object.values(seriesByShape[shape])),
    ...recordingRules.map((rule) => rule.record),
    // Whether the watched job reports at all, for the telemetry-missing alert.
    ...Object.values(reportingSeries),
  ]);
  const expressions = [
    ...recordingRules.map((rule) => ({ name: rule.record, expr: rule.expr })),
    ...alertRules.map((rule) => ({ name: rule.alert, expr: rule.expr })),
    ...alertRules.map((rule) => ({ name: `${rule.alert} (raw)`, expr: rule.rawExpr })),
  ];

  it.each(expressions)(
    "$name selects only series the library emits or the rules record",
    ({ expr }) => {
      const names = metricNamesIn(expr);
      expect(names.length).toBeGreaterThan(0);
      expect(names.filter((name) => !known.has(name))).toEqual([]);
    },
  );

  it.each(expressions)("$name reads each series under its name on both paths", ({ expr }) => {
    expect(namesMissedIn(expr)).toEqual([]);
  });

  it.each(expressions)(
    "$name selects no otel_scope_* label, which pushed series lack",
    ({ expr }) => {
      expect(expr).not.toMatch(/otel_scope_/);
    },
  );

  it.each(alertRules)("$alert computes its raw expression from raw series only", (rule) => {
    expect(metricNamesIn(rule.rawExpr).filter((name) => name.includes(":"))).toEqual([]);
  });

  it("tells an expression that reads the histogram under one name only", () => {
    const scraped = seriesByShape.scrape.repairDurationBucket;
    const pushed = seriesByShape.otlp.repairDurationBucket;
    expect(namesMissedIn(`sum by (le) (rate(${scraped}[5m]))`)).toEqual([pushed]);
    expect(namesMissedIn(`sum by (le) (rate({__name__=~"${scraped}|${pushed}"}[5m]))`)).toEqual([]);
  });

  it("finds the names in a selector, a regex matcher, and after an offset", () => {
    expect(
      metricNamesIn(
        'sum by (job) (rate(a_total{x="y"}[5m] offset 5m)) / b:c:d offset 5m and on (job) {__name__=~"e|f"}',
      ).sort(),
    ).toEqual(["a_total", "b:c:d", "e", "f"]);
  });
});

describe("rule files", () => {
  const files = renderPrometheusRules();

  it("are the recording rules and the alerts, each marked as generated", () => {
    expect(Object.keys(files).sort()).toEqual([
      "prometheus/alerts.yml",
      "prometheus/recording-rules.yml",
    ]);
    for (const text of Object.values(files)) {
      expect(text.split("\n")[0]).toMatch(/^# Generated by `npm run dashboards`.*do not edit/);
    }
  });

  it("hold every rule of the data, unchanged", () => {
    const recording = parse(files["prometheus/recording-rules.yml"] ?? "");
    const alerts = parse(files["prometheus/alerts.yml"] ?? "");
    expect(recording.groups[0].rules).toEqual(recordingRules);
    expect(alerts.groups[0].rules).toEqual(
      alertRules.map(({ rawExpr: _raw, ...rule }) => ({
        alert: rule.alert,
        expr: rule.expr,
        for: rule.for,
        labels: rule.labels,
        annotations: rule.annotations,
      })),
    );
  });
});

describe("Grafana-managed alerts", () => {
  const file = renderGrafanaAlerting();
  const document = parse(file[GRAFANA_ALERTING_PATH] ?? "");
  const prometheusAlerts: {
    alert: string;
    for: string;
    labels: Record<string, string>;
    annotations: Record<string, string>;
  }[] = parse(renderPrometheusRules()["prometheus/alerts.yml"] ?? "").groups[0].rules;
  const group = document.groups[0];
  const rules: {
    uid: string;
    title: string;
    condition: string;
    for: string;
    labels: Record<string, string>;
    annotations: Record<string, string>;
    noDataState: string;
    execErrState: string;
    data: {
      refId: string;
      datasourceUid: string;
      model: { expr?: string; instant?: boolean; expression?: string; type?: string };
    }[];
  }[] = group.rules;

  it("is one provisioning file of one rule group", () => {
    expect(Object.keys(file)).toEqual([GRAFANA_ALERTING_PATH]);
    expect(file[GRAFANA_ALERTING_PATH]?.split("\n")[0]).toMatch(/^# Generated by/);
    expect(document.apiVersion).toBe(1);
    expect(document.groups).toHaveLength(1);
    expect(group).toMatchObject({
      orgId: bundleConfig.grafana.orgId,
      name: bundleConfig.grafana.group,
      folder: bundleConfig.grafana.folder,
      interval: bundleConfig.grafana.interval,
    });
  });

  it("has one rule per Prometheus alert, with its labels, annotations and for", () => {
    expect(rules.map((rule) => rule.title)).toEqual(prometheusAlerts.map((alert) => alert.alert));
    rules.forEach((rule, index) => {
      const alert = prometheusAlerts[index];
      expect(rule.labels).toEqual(alert?.labels);
      expect(rule.for).toBe(alert?.for);
      expect(rule.annotations).toEqual({
        summary: alert?.annotations.summary,
        description: grafanaTemplate(alert?.annotations.description ?? ""),
        runbook_url: alert?.annotations.runbook_url,
      });
    });
  });

  it("reads the query's value where Prometheus reads $value", () => {
    expect(grafanaTemplate("{{ $value | humanizePercentage }} of {{ $labels.job }}")).toBe(
      "{{ $values.A.Value | humanizePercentage }} of {{ $labels.job }}",
    );
    for (const rule of rules) expect(rule.annotations.description).not.toMatch(/\$value\b/);
  });

  it("queries the raw expressions on the Prometheus data source named by the environment", () => {
    rules.forEach((rule, index) => {
      const [query, ...expressions] = rule.data;
      expect(query?.refId).toBe("A");
      expect(query?.datasourceUid).toBe(`\${PROMETHEUS_DATASOURCE_UID}`);
      expect(query?.model.expr).toBe(alertRules[index]?.rawExpr);
      expect(query?.model.instant).toBe(true);
      for (const expression of expressions) expect(expression.datasourceUid).toBe("__expr__");
      expect(rule.data.map((step) => step.refId)).toContain(rule.condition);
      expect(expressions.find((step) => step.refId === rule.condition)?.model).toMatchObject({
        type: "threshold",
        expression: "A",
      });
    });
  });

  it("treats no data as OK, since the queries return only breaching series", () => {
    for (const rule of rules) expect(rule).toMatchObject({ noDataState: "OK" });
  });

  it("has unique uids Grafana accepts", () => {
    const uids = rules.map((rule) => rule.uid);
    for (const uid of uids) expect(uid).toMatch(/^[a-zA-Z0-9_-]{1,40}$/);
    expect(new Set(uids).size).toBe(uids.length);
  });

  it("leaves nothing for provisioning to interpolate in labels and annotations", () => {
    // Grafana expands $NAME in labels and ${NAME} in annotations when it reads the file.
    for (const rule of rules) {
      for (const value of Object.values(rule.labels)) expect(value).not.toContain("$");
      for (const value of Object.values(rule.annotations)) expect(value).not.toContain("${");
    }
  });
});

describe("shares", () => {
  it("are written numerator or denominator * 0, over the denominator", () => {
    expect(share("a", "b")).toBe("(a or b * 0) / b");
    expect(isShare(share("sum by (job) (x)", "sum by (job) (y)"))).toBe(true);
    expect(isShare("sum by (job) (x) / sum by (job) (y)")).toBe(false);
  });

  const ratios = recordingRules.filter((rule) => /:\w*ratio_rate\w+$/.test(rule.record));

  it("cover the dangling ratios per model and per tool and the repaired share", () => {
    expect(ratios.map((rule) => rule.record).sort()).toEqual([
      "model:tool_call_resilience_dangling_tool_calls:ratio_rate1h",
      "model:tool_call_resilience_dangling_tool_calls:ratio_rate5m",
      "model:tool_call_resilience_model_calls:repaired_ratio_rate5m",
      "tool:tool_call_resilience_dangling_tool_calls:ratio_rate1h",
      "tool:tool_call_resilience_dangling_tool_calls:ratio_rate5m",
    ]);
  });

  it.each(ratios)("$record is 0, not missing, without a numerator series", (rule) => {
    expect(isShare(rule.expr), rule.expr).toBe(true);
  });
});

describe("cardinality overflow", () => {
  const alert = alertRules.find((rule) => rule.alert === "ToolCallResilienceCardinalityOverflow");

  it.each(SHAPES)(
    "counts one series per instrument on the %s path: each counter's, and the histogram's _count",
    (shape) => {
      const names = seriesByShape[shape];
      const instruments = Object.entries(semconv)
        .filter(([name]) => name.startsWith("METRIC_"))
        .map(([, instrument]) => prometheusName(String(instrument)));
      expect(instruments.length).toBeGreaterThan(0);
      const counted = instrumentSeries.filter((name) => Object.values(names).includes(name));
      expect(counted).toHaveLength(instruments.length);
      for (const instrument of instruments) {
        const own = counted.filter((name) => name.startsWith(`${instrument}_`));
        expect(own, instrument).toHaveLength(1);
        expect(own[0], instrument).toMatch(/_(total|count)$/);
      }
      expect(counted).toContain(names.repairDurationCount);
    },
  );

  it("selects the library's series by their names, not by otel_scope_name, with extra matchers last", () => {
    expect(instrumentSelector('job=~"$job"')).toBe(
      `{__name__=~"${instrumentSeries.join("|")}", job=~"$job"}`,
    );
    expect(overflowSelector('job=~"$job"')).toBe(
      `{__name__=~"${instrumentSeries.join("|")}", otel_metric_overflow="true", job=~"$job"}`,
    );
  });

  it("alerts on that selector, in both expressions", () => {
    expect(alert?.expr).toBe(`count by (job) (${overflowSelector()})`);
    expect(alert?.rawExpr).toBe(alert?.expr);
  });

  it("is investigated in the runbook with the same selector", () => {
    expect(runbook).toContain(`count by (__name__, instance) (${overflowSelector()})`);
  });
});
