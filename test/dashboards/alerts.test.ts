/**
 * The alerts follow the monitoring-mixin conventions, query only names the library emits, link to
 * a runbook section that exists, and the Grafana-managed copy matches the Prometheus alerts.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { bundleConfig } from "../../dashboards/generator/config.js";
import { dashboardRecordingRules } from "../../dashboards/generator/dashboard-rules.js";
import {
  GRAFANA_ALERTING_PATH,
  grafanaRuleTitle,
  grafanaTemplate,
  renderGrafanaAlerting,
} from "../../dashboards/generator/grafana-alerting.js";
import {
  INSTRUMENT_SERIES_PATTERN,
  labels,
  overflowSelector,
  prometheusName,
  reportingSeries,
  SHAPES,
  scopeLabels,
  seriesByShape,
} from "../../dashboards/generator/names.js";
import {
  alertRules,
  BundleConfigError,
  buildRules,
  OVERFLOW_RECORD,
  REPORTING_RECORD,
  recordingRules,
  renderPrometheusRules,
} from "../../dashboards/generator/prometheus-rules.js";
import { growth, share } from "../../dashboards/generator/promql.js";
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
  it("are named ToolCallResilience<Something>, one rule per name and severity", () => {
    const names = alertRules.map((rule) => rule.alert);
    for (const name of names) expect(name).toMatch(/^ToolCallResilience[A-Z][A-Za-z]+$/);
    const keys = alertRules.map((rule) => `${rule.alert}/${rule.labels.severity}`);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it("page only on a model's dangling calls, its budget burning fast or its share spiking; everything else is a ticket", () => {
    const critical = alertRules.filter((rule) => rule.labels.severity === "critical");
    expect(critical.map((rule) => rule.alert)).toEqual([
      "ToolCallResilienceDanglingBudgetBurn",
      "ToolCallResilienceDanglingSpike",
    ]);
  });

  it.each(alertRules.filter((rule) => /BudgetBurn|Spike/.test(rule.alert)))(
    "$alert ($labels.severity) keeps firing for a while once its windows clear",
    (rule) => {
      expect(rule.keepFiringFor).toBe(
        rule.alert.endsWith("Spike")
          ? bundleConfig.spike.keepFiringFor
          : bundleConfig.burnRate.keepFiringFor,
      );
    },
  );

  it.each([...alertRules.map((rule) => ({ name: rule.alert, expr: rule.expr }))])(
    "$name reads in one breath: at most 300 characters",
    ({ expr }) => {
      expect(expr.length).toBeLessThanOrEqual(300);
    },
  );

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

/** The alerts' own recording rules: those of the dashboards are checked in dashboard-rules.test.ts. */
const alertRecordingRules = recordingRules.filter(
  (rule) => !dashboardRecordingRules(bundleConfig).some((other) => other.record === rule.record),
);

describe("recording rules", () => {
  it("are named level:metric:operation, once each", () => {
    const names = recordingRules.map((rule) => rule.record);
    for (const name of names) expect(name).toMatch(/^[a-z_]+:[a-z_]+:[a-z0-9_]+$/);
    expect(new Set(names).size).toBe(names.length);
  });

  it.each(recordingRules)("$record reads in one breath: at most 300 characters", (rule) => {
    expect(rule.expr.length).toBeLessThanOrEqual(300);
  });

  it("sum away only the labels of a process, of the scope and of the library's own attributes, so job, cluster, namespace and any other label stay", () => {
    const removable = new Set<string>([
      ...bundleConfig.processLabels,
      ...scopeLabels,
      labels.provider,
      labels.model,
      labels.tool,
      labels.reason,
      // Counted per process whatever the agent, for the failing-open alert.
      labels.agent,
      labels.outcome,
    ]);
    // The reporting processes are one series per process: a `group by` of them, not a sum.
    for (const rule of alertRecordingRules.filter((rule) => rule.record !== REPORTING_RECORD)) {
      expect(rule.expr, rule.record).not.toMatch(/\bby \(/);
      for (const [, list] of rule.expr.matchAll(/\bwithout \(([^)]*)\)/g)) {
        const summed = (list ?? "").split(", ");
        expect(
          summed.filter((label) => !removable.has(label)),
          rule.record,
        ).toEqual([]);
        expect(summed).not.toContain(labels.job);
      }
    }
  });

  it("keep the model, the tool or the process the level names", () => {
    for (const rule of alertRecordingRules) {
      const [level] = rule.record.split(":");
      const kept = {
        model: [labels.provider, labels.model],
        tool: [labels.tool],
        instance: [...bundleConfig.processLabels, labels.model],
      }[level as "model" | "tool" | "instance"];
      expect(kept, rule.record).toBeDefined();
      for (const [, list] of rule.expr.matchAll(/\bwithout \(([^)]*)\)/g)) {
        for (const label of kept ?? [])
          expect((list ?? "").split(", "), rule.record).not.toContain(label);
      }
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
    "$name matches on no otel_scope_* label, which pushed series lack",
    ({ expr }) => {
      const matchers = [...expr.matchAll(/\{([^}]*)\}/g)].map((match) => match[1]);
      for (const matcher of matchers) expect(matcher).not.toMatch(/otel_scope_/);
      expect(expr).not.toMatch(/\b(?:by|on) \([^)]*otel_scope_/);
    },
  );

  it.each(alertRules.filter((rule) => rule.alert !== "ToolCallResilienceTelemetryMissing"))(
    "$alert reads recorded series only, so its logic is in the recording rules",
    (rule) => {
      expect(metricNamesIn(rule.expr).filter((name) => !name.includes(":"))).toEqual([]);
    },
  );

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
      alertRules.map((rule) => ({
        alert: rule.alert,
        expr: rule.expr,
        for: rule.for,
        ...(rule.keepFiringFor === undefined ? {} : { keep_firing_for: rule.keepFiringFor }),
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
    keep_firing_for?: string;
    labels: Record<string, string>;
    annotations: Record<string, string>;
  }[] = parse(renderPrometheusRules()["prometheus/alerts.yml"] ?? "").groups[0].rules;
  const group = document.groups[0];
  const rules: {
    uid: string;
    title: string;
    condition: string;
    for: string;
    keepFiringFor?: string;
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
    expect(rules.map((rule) => rule.title)).toEqual(alertRules.map(grafanaRuleTitle));
    expect(rules.map((rule) => rule.title.split(" ")[0])).toEqual(
      prometheusAlerts.map((alert) => alert.alert),
    );
    expect(new Set(rules.map((rule) => rule.title)).size).toBe(rules.length);
    rules.forEach((rule, index) => {
      const alert = prometheusAlerts[index];
      expect(rule.labels).toEqual(alert?.labels);
      expect(rule.for).toBe(alert?.for);
      // Grafana's provisioning reads `keepFiringFor` and silently drops any other spelling.
      expect(rule.keepFiringFor).toBe(alert?.keep_firing_for);
      expect(rule).not.toHaveProperty("keep_firing_for");
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

  it("queries the alerts' expressions on the Prometheus data source named by the environment", () => {
    rules.forEach((rule, index) => {
      const [query, ...expressions] = rule.data;
      expect(query?.refId).toBe("A");
      expect(query?.datasourceUid).toBe(`\${PROMETHEUS_DATASOURCE_UID}`);
      expect(query?.model.expr).toBe(alertRules[index]?.expr);
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
  it("are numerator or denominator * 0, over a denominator above 0, at most 1", () => {
    expect(share("a", "b")).toBe("clamp_max((a or b * 0) / (b > 0), 1)");
    expect(isShare(share("sum by (job) (x)", "sum by (job) (y)"))).toBe(true);
    expect(isShare("sum by (job) (x) / sum by (job) (y)")).toBe(false);
  });

  const ratios = alertRecordingRules.filter((rule) =>
    /:\w*ratio_rate\d+[smhd](_peers)?$/.test(rule.record),
  );

  it("name their denominator, and cover every window of every level", () => {
    expect(ratios.map((rule) => rule.record).sort()).toEqual(
      [
        ...["5m", "30m", "1h", "2h", "6h", "1d"].map((window) => `model:%s:ratio_rate${window}`),
        ...["5m", "30m", "1h", "6h", "1d"].map((window) => `tool:%s:ratio_rate${window}`),
        "instance:%s:ratio_rate30m",
        "instance:%s:ratio_rate30m_peers",
      ]
        .map((name) =>
          name.replace("%s", "tool_call_resilience_dangling_tool_calls_per_tool_calls"),
        )
        .sort(),
    );
  });

  it.each(ratios)("$record is 0, not missing, without a numerator series", (rule) => {
    expect(isShare(rule.expr), rule.expr).toBe(true);
  });
});

describe("the configuration", () => {
  const withChange = (change: Record<string, unknown>) => ({ ...bundleConfig, ...change });

  it("requires an absolute runbook URL, since notifications carry it as it is", () => {
    for (const runbookBaseUrl of [
      "runbook.md",
      "/dashboards/runbook.md",
      "ftp://host/runbook.md",
    ]) {
      expect(() => buildRules(withChange({ runbookBaseUrl }) as typeof bundleConfig)).toThrow(
        BundleConfigError,
      );
    }
    expect(() =>
      buildRules(withChange({ runbookBaseUrl: "runbook.md" }) as typeof bundleConfig),
    ).toThrow(/runbookBaseUrl must be an absolute http\(s\) URL/);
  });

  it("refuses an objective that no share can burn through", () => {
    const objective = { ...bundleConfig.objective, default: 0.1 };
    expect(() => buildRules(withChange({ objective }) as typeof bundleConfig)).toThrow(
      /objective.default \(0.1\) times the burn rate 14.4 is a share of 100%/,
    );
    expect(() =>
      buildRules(withChange({ objective: { default: 0, models: {} } }) as typeof bundleConfig),
    ).toThrow(/between 0 and 1/);
  });

  it("refuses a spike that no burn-rate alert of its severity would take over, or whose baseline takes in the window it is compared with", () => {
    const spike = (change: Record<string, unknown>) =>
      withChange({ spike: { ...bundleConfig.spike, ...change } }) as typeof bundleConfig;
    expect(() => buildRules(spike({ page: { factor: 5, floor: 4 } }))).toThrow(
      /spike.page.floor \(4\) must be at least the lowest burn rate of the burn-rate pairs of its severity \(6\)/,
    );
    expect(() => buildRules(spike({ warn: { factor: 3, floor: 2 } }))).toThrow(BundleConfigError);
    expect(() => buildRules(spike({ warn: { factor: 1, floor: 3 } }))).toThrow(
      /spike.warn.factor must be above 1/,
    );
    expect(() => buildRules(spike({ baselineEndsBefore: "10m" }))).toThrow(
      /must not take in the window it is compared with/,
    );
    expect(() => buildRules(spike({ short: "30m" }))).toThrow(
      /must be shorter than the long window/,
    );
  });

  it("refuses a duration Prometheus would not read, naming it", () => {
    const failingOpen = { window: "15 minutes" };
    expect(() => buildRules(withChange({ failingOpen }) as typeof bundleConfig)).toThrow(
      /"15 minutes" is not a duration/,
    );
  });

  it("gives each listed model its own objective, the first match winning, the rest the default", () => {
    const objective = { default: 0.02, models: { "gpt-4o-mini.*": 0.05, "gpt-4o.*": 0.01 } };
    const rules = buildRules(withChange({ objective }) as typeof bundleConfig);
    const recorded = rules.recordingRules.find((rule) => rule.record.endsWith(":objective"));
    expect(recorded?.expr).toBe(
      [
        'model:tool_call_resilience_tool_calls:rate1d{gen_ai_request_model=~"gpt-4o-mini.*"} * 0 + 0.05',
        'model:tool_call_resilience_tool_calls:rate1d{gen_ai_request_model=~"gpt-4o.*"} * 0 + 0.01',
        "model:tool_call_resilience_tool_calls:rate1d * 0 + 0.02",
      ].join(" or "),
    );
  });

  it("adds its selector to every series the rules read", () => {
    const rules = buildRules(withChange({ selector: 'env="prod"' }) as typeof bundleConfig);
    for (const rule of rules.recordingRules.filter((rule) => rule.expr.includes("rate("))) {
      expect(rule.expr).toContain('env="prod"');
    }
    for (const rule of rules.recordingRules.filter((rule) =>
      /\b(up|target_info|tool_call_resilience_\w+_total)\{/.test(rule.expr),
    )) {
      expect(rule.expr).toContain('env="prod"');
    }
  });
});

/** One series name per instrument and path: each counter's `_total`, the histogram's `_count`. */
const instrumentSeries = [
  ...new Set(
    SHAPES.flatMap((shape) =>
      (
        ["modelCalls", "toolCalls", "danglingToolCalls", "repairs", "repairDurationCount"] as const
      ).map((key) => seriesByShape[shape][key]),
    ),
  ),
];

describe("cardinality overflow", () => {
  const alert = alertRules.find((rule) => rule.alert === "ToolCallResilienceCardinalityOverflow");
  // The per-thread gauge is reported by the library's own producer, not an SDK instrument: it has
  // no overflow series.
  const sdkInstruments = Object.entries(semconv)
    .filter(
      ([name]) => name.startsWith("METRIC_") && name !== "METRIC_THREAD_RECENT_DANGLING_TOOL_CALLS",
    )
    .map(([, instrument]) => prometheusName(String(instrument)));

  it.each(SHAPES)(
    "counts one series per instrument on the %s path: each counter's, and the histogram's _count",
    (shape) => {
      const names = seriesByShape[shape];
      expect(sdkInstruments.length).toBeGreaterThan(0);
      const counted = instrumentSeries.filter((name) => Object.values(names).includes(name));
      expect(counted).toHaveLength(sdkInstruments.length);
      for (const instrument of sdkInstruments) {
        const own = counted.filter((name) => name.startsWith(`${instrument}_`));
        expect(own, instrument).toHaveLength(1);
        expect(own[0], instrument).toMatch(/_(total|count)$/);
      }
      expect(counted).toContain(names.repairDurationCount);
    },
  );

  it("selects the library's instrument series by a pattern of their names, not by otel_scope_name, with extra matchers last", () => {
    const every = [...new Set(SHAPES.flatMap((shape) => Object.values(seriesByShape[shape])))];
    const pattern = new RegExp(`^(?:${INSTRUMENT_SERIES_PATTERN})$`);
    expect(every.filter((name) => pattern.test(name)).sort()).toEqual([...instrumentSeries].sort());
    expect(overflowSelector('job=~"$job"')).toBe(
      `{__name__=~"${INSTRUMENT_SERIES_PATTERN}", otel_metric_overflow="true", job=~"$job"}`,
    );
  });

  it("alerts on what each process counted lately in its overflow series, per instrument", () => {
    const recorded = recordingRules.find((rule) => rule.record === OVERFLOW_RECORD);
    expect(recorded?.expr).toContain(overflowSelector());
    expect(recorded?.expr).toContain('"instrument", "$1", "__name__", "(.+)"');
    // A series born in the window counts whole, even once its process is gone.
    expect(alert?.expr).toBe(`${growth(OVERFLOW_RECORD, "30m")} > 0`);
  });

  it("is investigated in the runbook with the same selector", () => {
    expect(runbook).toContain(overflowSelector());
  });
});
