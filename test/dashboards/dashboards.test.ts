import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { bundleConfig } from "../../dashboards/generator/config.js";
import { dashboardRecords } from "../../dashboards/generator/dashboard-rules.js";
import {
  INSTANCE_TABLE_TITLE,
  INSTANCE_WINDOW,
  MINIMUM_TOOL_CALLS,
  OVERVIEW_DASHBOARD_UID,
  PANEL_WINDOWS,
  PROCESS_VARIABLES,
  renderDashboards,
  THREADS_DASHBOARD_UID,
  threadTraceQuery,
} from "../../dashboards/generator/dashboards.js";
import { labels, series } from "../../dashboards/generator/names.js";
import {
  alertRules,
  recordedWindows,
  recordingRules,
  recordName,
  seconds,
} from "../../dashboards/generator/prometheus-rules.js";
import { aggregationsIn, keepsProcesses, sumsOverProcesses } from "./promql-aggregations.js";
import { metricNamesIn, namesMissedIn } from "./promql-names.js";

interface GridPos {
  x: number;
  y: number;
  w: number;
  h: number;
}
interface Target {
  refId: string;
  expr: string;
  range?: boolean;
  datasource?: { type?: string; uid?: string };
  instant?: boolean;
  format?: string;
}
interface Panel {
  id: number;
  panels?: Panel[];
  type: string;
  title: string;
  description?: string;
  gridPos: GridPos;
  datasource?: { type?: string; uid?: string };
  targets?: Target[];
  transformations?: { id: string; options: Record<string, unknown> }[];
  options?: { sortBy?: { displayName: string; desc: boolean }[] };
  fieldConfig?: {
    defaults?: {
      unit?: string;
      links?: { title: string; url: string }[];
      thresholds?: { steps: { value: number | null; color: string }[] };
      custom?: { thresholdsStyle?: { mode?: string } };
    };
    overrides?: {
      matcher: { id: string; options: string };
      properties: { id: string; value: unknown }[];
    }[];
  };
}
interface Variable {
  name: string;
  type: string;
  query?: string;
  definition?: string;
  multi?: boolean;
  includeAll?: boolean;
  allValue?: string;
}
interface Dashboard {
  uid: string;
  description: string;
  panels: Panel[];
  templating: { list: Variable[] };
  links: { title: string; url: string }[];
  annotations: { list: { name: string; expr?: string; datasource?: { uid?: string } }[] };
}

const files = renderDashboards();

function dashboardAt(path: string): Dashboard {
  const text = files[path];
  if (text === undefined) throw new Error(`renderDashboards() renders no ${path}`);
  return JSON.parse(text) as Dashboard;
}

const dashboards = [
  {
    path: "grafana/tool-call-resilience-overview.json",
    uid: OVERVIEW_DASHBOARD_UID,
    other: THREADS_DASHBOARD_UID,
    variables: [...PROCESS_VARIABLES, "provider", "model", "tool"],
  },
  {
    path: "grafana/tool-call-resilience-threads.json",
    uid: THREADS_DASHBOARD_UID,
    other: OVERVIEW_DASHBOARD_UID,
    variables: [...PROCESS_VARIABLES, "provider", "model", "agent", "tool", "thread"],
  },
].map((expected) => ({ ...expected, dashboard: dashboardAt(expected.path) }));

const DATASOURCE = `\${datasource}`;

function dataPanels(dashboard: Dashboard): Panel[] {
  return dashboard.panels.filter((panel) => panel.type !== "row");
}

function targetsOf(dashboard: Dashboard): { panel: string; target: Target }[] {
  return dataPanels(dashboard).flatMap((panel) =>
    (panel.targets ?? []).map((target) => ({ panel: panel.title, target })),
  );
}

/** Each `metric{matchers}` selector of an expression, with the metric name if there is one. */
function selectorsOf(expr: string): { metric: string; matchers: string; index: number }[] {
  return [...expr.matchAll(/([a-zA-Z_:][a-zA-Z0-9_:]*)?\{([^}]*)\}/g)].map((match) => ({
    metric: match[1] ?? "",
    matchers: match[2] ?? "",
    index: match.index ?? 0,
  }));
}

/** Every recorded series (`level:metric:operation`). */
const recorded = new Set(recordingRules.map((rule) => rule.record));
const RECORDED_NAME = /\b[a-z_]+:[a-z_]+:[a-z0-9_]+/g;

/** The attribute variables each recorded series keeps the labels of, by its level's prefix. */
const KEPT: readonly [RegExp, readonly string[]][] = [
  [/^(model|model_reason|model_kind):/, ["provider", "model"]],
  [/^model_agent_outcome:/, ["provider", "model", "agent"]],
  [/^tool:/, ["tool"]],
  [/^thread:/, ["model", "thread"]],
  [/^instance:/, ["provider", "model"]],
  [/^(process|outcome_le):/, []],
];
function keptVariables(name: string): readonly string[] {
  const found = KEPT.find(([prefix]) => prefix.test(name));
  if (found === undefined) throw new Error(`no level known for ${name}`);
  return found[1];
}
const variableLabels: Record<string, string> = {
  provider: labels.provider,
  model: labels.model,
  agent: labels.agent,
  tool: labels.tool,
  thread: labels.thread,
};

function overlaps(a: GridPos, b: GridPos): boolean {
  return a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
}

describe.each(dashboards)("the dashboard $path", ({ uid, other, variables, dashboard }) => {
  it("has its uid and says it is generated", () => {
    expect(dashboard.uid).toBe(uid);
    expect(dashboard.description).toMatch(/npm run dashboards/);
  });

  it("has a Prometheus and a Tempo data source variable, then multi-value label variables", () => {
    const [first, second, ...rest] = dashboard.templating.list;
    expect(first).toMatchObject({ name: "datasource", type: "datasource", query: "prometheus" });
    expect(second).toMatchObject({ name: "tempo", type: "datasource", query: "tempo" });
    expect(rest.map((variable) => variable.name)).toEqual(variables);
    for (const variable of rest) {
      expect(variable).toMatchObject({
        type: "query",
        multi: true,
        includeAll: true,
        allValue: ".*",
      });
      expect(variable.query).toMatch(/^label_values\(tool_call_resilience_\w+\{?.*, \w+\)$/);
    }
  });

  it("offers job, every topology label and instance, each narrowed by the ones before it", () => {
    expect(PROCESS_VARIABLES).toEqual(["job", ...bundleConfig.topologyLabels, "instance"]);
    const queries = new Map(dashboard.templating.list.map((v) => [v.name, v.query ?? ""]));
    variables.forEach((name, index) => {
      for (const before of variables.slice(0, index)) {
        if (!PROCESS_VARIABLES.includes(before)) continue;
        expect(queries.get(name), `$${name}`).toContain(`${before}=~"$${before}"`);
      }
    });
  });

  it("queries the datasource variable in every panel and target", () => {
    for (const panel of dataPanels(dashboard)) {
      expect(panel.datasource?.uid, panel.title).toBe(DATASOURCE);
      expect(panel.targets?.length, panel.title).toBeGreaterThan(0);
    }
    for (const { panel, target } of targetsOf(dashboard)) {
      expect(target.datasource, panel).toEqual({ type: "prometheus", uid: DATASOURCE });
    }
  });

  it("reads recorded series only (and up), each of them recorded by the rules", () => {
    for (const { panel, target } of targetsOf(dashboard)) {
      const names = metricNamesIn(target.expr);
      expect(names.length, panel).toBeGreaterThan(0);
      for (const name of names)
        expect(name === "up" || recorded.has(name), `${panel}: ${name}`).toBe(true);
    }
  });

  it("reads each series under its name on both paths, in every panel and variable", () => {
    const queries = [
      ...targetsOf(dashboard).map(({ panel, target }) => ({ where: panel, expr: target.expr })),
      ...dashboard.templating.list.map((variable) => ({
        where: `$${variable.name}`,
        expr: variable.query ?? "",
      })),
    ];
    for (const { where, expr } of queries) expect(namesMissedIn(expr), where).toEqual([]);
  });

  it("selects on no otel_scope_* label, which pushed series lack", () => {
    for (const { panel, target } of targetsOf(dashboard)) {
      for (const { matchers } of selectorsOf(target.expr)) {
        expect(matchers, panel).not.toMatch(/otel_scope_/);
      }
    }
    for (const variable of dashboard.templating.list) {
      expect(variable.query ?? "", variable.name).not.toMatch(/otel_scope_/);
    }
  });

  it("shows 0 only where the job's telemetry is there: no vector() fallback", () => {
    for (const { panel, target } of targetsOf(dashboard)) {
      expect(target.expr, panel).not.toMatch(/\bvector\(/);
    }
  });

  it("filters every recorded series it selects by the variables of the labels the series keeps", () => {
    for (const { panel, target } of targetsOf(dashboard)) {
      const selectors = selectorsOf(target.expr);
      expect(selectors.length, panel).toBeGreaterThan(0);
      for (const { metric, matchers } of selectors) {
        const keepsInstance = metric === "up" || /^(instance|process):/.test(metric);
        for (const variable of PROCESS_VARIABLES) {
          const matcher = `${variable}=~"$${variable}"`;
          if (variable !== "instance" || keepsInstance) {
            expect(matchers, `${panel}: ${metric}`).toContain(matcher);
          } else {
            expect(matchers, `${panel}: ${metric}`).not.toContain(matcher);
          }
        }
        const kept = metric === "up" ? [] : keptVariables(metric);
        for (const variable of Object.keys(variableLabels)) {
          const matcher = `${variableLabels[variable]}=~"$${variable}"`;
          // A per-process figure of the Instances row ignores the attribute variables.
          const wanted =
            kept.includes(variable) &&
            variables.includes(variable) &&
            !panel.startsWith(INSTANCE_TABLE_TITLE);
          expect(matchers.includes(matcher), `${panel}: ${metric} ${matcher}`).toBe(wanted);
        }
      }
    }
  });

  it("joins an unfiltered recorded series only to a filtered one, with and or a division", () => {
    for (const { panel, target } of targetsOf(dashboard)) {
      for (const match of target.expr.matchAll(RECORDED_NAME)) {
        const after = target.expr.slice((match.index ?? 0) + match[0].length);
        if (after.startsWith("{")) continue;
        const before = target.expr.slice(0, match.index);
        expect(before, `${panel}: ${match[0]}`).toMatch(/( and |\/ \(sum_over_time\()$/);
      }
    }
  });

  it("marks every ToolCallResilience alert firing in the chosen jobs", () => {
    const [annotation] = dashboard.annotations.list;
    expect(annotation?.datasource?.uid).toBe(DATASOURCE);
    expect(annotation?.expr).toMatch(
      /^ALERTS\{alertname=~"ToolCallResilience\.\*", alertstate="firing", job=~"\$job"/,
    );
    for (const rule of alertRules) expect(rule.alert).toMatch(/^ToolCallResilience/);
  });

  it("links to the runbook and to the other dashboard", () => {
    expect(dashboard.links).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ title: "Runbook", url: bundleConfig.runbookBaseUrl }),
        expect.objectContaining({ url: `/d/${other}` }),
      ]),
    );
  });

  it("gives every panel a unique id and a place of its own in the grid", () => {
    const ids = dashboard.panels.map((panel) => panel.id);
    expect(new Set(ids).size).toBe(ids.length);
    dashboard.panels.forEach((panel, index) => {
      expect(panel.gridPos.x + panel.gridPos.w, panel.title).toBeLessThanOrEqual(24);
      for (const later of dashboard.panels.slice(index + 1)) {
        expect(overlaps(panel.gridPos, later.gridPos), `${panel.title} / ${later.title}`).toBe(
          false,
        );
      }
    });
  });

  it("counts over the time range what each evaluation of the rules recorded, never since the processes started", () => {
    for (const { panel, target } of targetsOf(dashboard)) {
      for (const [read] of target.expr.matchAll(/sum_over_time\(([a-z_]+:[a-z_]+:[a-z0-9_]+)/g)) {
        expect(read, panel).toMatch(/:increase$/);
      }
      expect(target.expr, panel).not.toMatch(/\b(increase|last_over_time)\(|offset /);
    }
  });

  it("keeps every expression short enough to read: at most 300 characters", () => {
    const expressions = [
      ...allPanels(dashboard.panels).flatMap((panel) =>
        (panel.targets ?? []).map((target) => ({ where: panel.title, expr: target.expr })),
      ),
      ...dashboard.annotations.list.map((annotation) => ({
        where: annotation.name,
        expr: annotation.expr ?? "",
      })),
      ...dashboard.templating.list.map((variable) => ({
        where: `$${variable.name}`,
        expr: `${variable.query ?? ""}`,
      })),
    ];
    expect(expressions.length).toBeGreaterThan(10);
    for (const { where, expr } of expressions) {
      expect(expr.length, `${where}: ${expr}`).toBeLessThanOrEqual(300);
    }
  });
});

const overview = dashboardAt("grafana/tool-call-resilience-overview.json");
const threads = dashboardAt("grafana/tool-call-resilience-threads.json");

function panelOf(dashboard: Dashboard, title: string): Panel {
  const panel = dashboard.panels.find((candidate) => candidate.title === title);
  if (panel === undefined) throw new Error(`no panel ${title}`);
  return panel;
}

describe("the shares and burn rates", () => {
  const percentPanels = [overview, threads].flatMap((dashboard) =>
    dataPanels(dashboard).filter((panel) => panel.fieldConfig?.defaults?.unit === "percentunit"),
  );

  it("are the dangling shares (overall, per model, per tool, per instance) and the share repaired", () => {
    expect(percentPanels.map((panel) => panel.title).sort()).toEqual([
      "Dangling share",
      "Dangling share per instance",
      "Dangling share per model",
      "Dangling share per tool",
      "Share of model calls repaired",
    ]);
  });

  it("divide only in the totals' share over the range, at most 1 and none without a tool call", () => {
    for (const dashboard of [overview, threads]) {
      for (const { panel, target } of targetsOf(dashboard)) {
        if (!target.expr.includes(" / ")) continue;
        expect(panel, target.expr).toMatch(/^Totals per /);
        expect(target.expr).toMatch(
          /^clamp_max\(sum_over_time\(.*\) \/ \(sum_over_time\(.*\) > 0\), 1\)$/,
        );
      }
    }
  });

  it("Burn rate per model reads the recorded burn rates of every window the alerts evaluate, as they do", () => {
    const panel = panelOf(overview, "Burn rate per model");
    expect(panel.targets?.map((target) => target.refId)).toEqual([...recordedWindows.model]);
    for (const [index, window] of recordedWindows.model.entries()) {
      const expr = panel.targets?.[index]?.expr ?? "";
      expect(expr.startsWith(`${recordName("model", "burnRate", window)}{`), expr).toBe(true);
      // No guard of its own: drawn wherever the alerts see a burn rate.
      expect(expr).not.toContain(">=");
    }
    const steps = panel.fieldConfig?.defaults?.thresholds?.steps ?? [];
    expect(steps.map((step) => step.value)).toEqual([
      null,
      ...[...bundleConfig.burnRate.page, ...bundleConfig.burnRate.ticket]
        .map((pair) => pair.factor)
        .sort((a, b) => a - b),
    ]);
  });

  it.each([
    ["Dangling share per model", "model", "ratio", PANEL_WINDOWS],
    ["Dangling share per tool", "tool", "ratio", PANEL_WINDOWS],
    ["Dangling share per instance", "instance", "ratio", [bundleConfig.instanceOutlier.window]],
  ] as const)(
    "%s reads the recorded %s %s series of the alerts' windows, with a minimum of traffic",
    (title, level, quantity, windows) => {
      const panel = panelOf(overview, title);
      expect(panel.targets?.map((target) => target.refId)).toEqual([...windows]);
      for (const [index, window] of windows.entries()) {
        const expr = panel.targets?.[index]?.expr ?? "";
        expect(expr.startsWith(`${recordName(level, quantity, window)}{`), expr).toBe(true);
        expect(
          expr.endsWith(
            `} and ${recordName(level, "toolCalls", window)} * ${seconds(window)} >= ${MINIMUM_TOOL_CALLS}`,
          ),
          expr,
        ).toBe(true);
      }
      expect(panel.description).toContain(`fewer than ${MINIMUM_TOOL_CALLS} tool calls`);
      expect(panel.fieldConfig?.defaults?.custom?.thresholdsStyle?.mode).toBe("dashed");
    },
  );

  it("uses the first paging pair's windows", () => {
    const [pair] = bundleConfig.burnRate.page;
    expect(PANEL_WINDOWS).toEqual([pair?.short, pair?.long]);
  });

  it("draws the default objective on the per-model and per-tool shares", () => {
    for (const title of ["Dangling share per model", "Dangling share per tool"]) {
      const steps = panelOf(overview, title).fieldConfig?.defaults?.thresholds?.steps ?? [];
      expect(steps.map((step) => step.value)).toEqual([null, bundleConfig.objective.default]);
    }
  });

  it("draws every paging and ticket factor on the burn rate", () => {
    const steps = panelOf(overview, "Burn rate per model").fieldConfig?.defaults?.thresholds?.steps;
    const factors = [...bundleConfig.burnRate.page, ...bundleConfig.burnRate.ticket]
      .map((pair) => pair.factor)
      .sort((a, b) => a - b);
    expect(steps?.map((step) => step.value)).toEqual([null, ...factors]);
  });
});

describe("the overview's Overflow series stat", () => {
  it("sums the recorded overflow series of the chosen processes, 0 only where the library's series are", () => {
    const chosen = PROCESS_VARIABLES.map((variable) => `${variable}=~"$${variable}"`);
    expect(panelOf(overview, "Overflow series").targets?.map((target) => target.expr)).toEqual([
      `sum(${dashboardRecords.overflowSeries}{${chosen.join(", ")}})`,
    ]);
  });
});

describe("the overview's totals", () => {
  it.each([
    ["Totals per model", "model"],
    ["Totals per tool", "tool"],
  ] as const)(
    "%s counts tool calls, dangling calls and their share over the range",
    (title, level) => {
      const panel = panelOf(overview, title);
      expect(panel.type).toBe("table");
      const targets = panel.targets ?? [];
      expect(targets.map((target) => target.refId)).toEqual(["tool_calls", "dangling", "ratio"]);
      const [toolCalls, dangling, ratio] = targets.map((target) => target.expr);
      expect(toolCalls).toMatch(
        new RegExp(
          `^sum_over_time\\(${escapeRegExp(dashboardRecords.increase(level, "toolCalls"))}\\{.*\\}\\[\\$__range\\]\\)$`,
        ),
      );
      expect(dangling).toBe(
        toolCalls?.replace(
          dashboardRecords.increase(level, "toolCalls"),
          dashboardRecords.increase(level, "danglingToolCalls"),
        ),
      );
      expect(ratio).toBe(
        `clamp_max(${dangling} / (sum_over_time(${dashboardRecords.increase(level, "toolCalls")}[$__range]) > 0), 1)`,
      );
      for (const target of targets) expect(target).toMatchObject({ instant: true, range: false });
    },
  );

  it.each(["Tool calls", "Dangling tool calls", "Failed-open model calls"])(
    "the %s stat sums the model-level increases over the range",
    (title) => {
      const expr = panelOf(overview, title).targets?.[0]?.expr ?? "";
      expect(expr).toMatch(/^sum\(sum_over_time\(model:[a-z_]+:increase\{.*\}\[\$__range\]\)\)$/);
    },
  );

  it("the Dangling share stat divides the Dangling tool calls stat by the Tool calls stat", () => {
    const panel = panelOf(overview, "Dangling share");
    const exprOf = (title: string) => panelOf(overview, title).targets?.[0]?.expr;
    expect(panel.targets?.map((target) => [target.refId, target.expr])).toEqual([
      ["numerator", exprOf("Dangling tool calls")],
      ["denominator", `${exprOf("Tool calls")} > 0`],
    ]);
    expect(panel.transformations).toEqual([
      { id: "merge", options: {} },
      {
        id: "calculateField",
        options: {
          mode: "binary",
          binary: { left: "Value #numerator", operator: "/", right: "Value #denominator" },
          alias: "Dangling share",
          replaceFields: true,
        },
      },
    ]);
  });
});

describe("the threads", () => {
  const gauge = series.threadRecentDanglingToolCalls;

  it.each([
    [overview, "Top threads now", 10],
    [threads, "Top threads now", 20],
  ] as const)(
    "%#: %s ranks the recorded threads, summed over the processes",
    (dashboard, title, count) => {
      const expr = panelOf(dashboard, title).targets?.[0]?.expr ?? "";
      expect(expr).toMatch(
        new RegExp(`^topk\\(${count}, ${dashboardRecords.threads}\\{[^}]*\\}\\)$`),
      );
      const rule = recordingRules.find(
        (candidate) => candidate.record === dashboardRecords.threads,
      );
      expect(rule?.expr).toMatch(
        new RegExp(
          `^sum without \\(${bundleConfig.processLabels.join(", ")}, otel_scope_name, otel_scope_version, otel_scope_schema_url\\) \\(${gauge}\\{[^}]*\\}\\)$`,
        ),
      );
    },
  );

  it("shows a thread's dangling calls over time", () => {
    const panel = panelOf(threads, "Dangling calls per thread");
    expect(panel.type).toBe("timeseries");
    expect(panel.targets?.[0]?.expr).toContain(`${labels.thread}=~"$thread"`);
  });

  it.each([
    [overview, "Top threads now", `__data.fields.${labels.thread}`],
    [threads, "Top threads now", `__data.fields.${labels.thread}`],
    [threads, "Dangling calls per thread", `__field.labels.${labels.thread}`],
  ] as const)(
    "%#: %s links a thread to its repair_tool_calls spans in Tempo",
    (dashboard, title, field) => {
      const links = panelOf(dashboard, title).fieldConfig?.defaults?.links ?? [];
      const explore = links.find((link) => link.url.startsWith("/explore?"));
      expect(explore).toBeDefined();
      const panes = new URL(explore?.url ?? "", "http://grafana").searchParams.get("panes");
      const pane = Object.values(JSON.parse(panes ?? "{}") as Record<string, unknown>)[0];
      const thread = `\${${field}:percentencode}`;
      expect(pane).toMatchObject({
        datasource: `\${tempo}`,
        queries: [
          {
            datasource: { type: "tempo", uid: `\${tempo}` },
            queryType: "traceql",
            query: threadTraceQuery(thread),
          },
        ],
      });
      expect(threadTraceQuery("t-1")).toBe(
        '{ name = "repair_tool_calls" && span."gen_ai.conversation.id" = "t-1" }',
      );
    },
  );

  it("the overview's ranking opens a thread in the Threads dashboard with the chosen processes", () => {
    const links = panelOf(overview, "Top threads now").fieldConfig?.defaults?.links ?? [];
    const url = links.find((link) => link.url.startsWith(`/d/${THREADS_DASHBOARD_UID}`))?.url;
    for (const variable of ["datasource", "tempo", ...PROCESS_VARIABLES]) {
      expect(url).toContain(`\${${variable}:queryparam}`);
    }
  });
});

/** Every panel, and the panels of collapsed rows. */
function allPanels(panels: readonly Panel[]): Panel[] {
  return panels.flatMap((panel) => [panel, ...allPanels(panel.panels ?? [])]);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

describe("the dashboard provisioning file", () => {
  it("is a file provider of the dashboards' folder", () => {
    const text = files["grafana/provisioning/dashboards/tool-call-resilience.yml"];
    expect(parse(text ?? "")).toMatchObject({
      apiVersion: 1,
      providers: [
        {
          folder: "Tool-call resilience",
          type: "file",
          options: { path: expect.stringMatching(/^\//) },
        },
      ],
    });
  });
});

/** The panels of a dashboard's row, in order. */
function rowOf(dashboard: Dashboard, title: string): Panel[] {
  const start = dashboard.panels.findIndex(
    (panel) => panel.type === "row" && panel.title === title,
  );
  if (start === -1) throw new Error(`no row ${title}`);
  const end = dashboard.panels.findIndex((panel, index) => index > start && panel.type === "row");
  return dashboard.panels.slice(start + 1, end === -1 ? undefined : end);
}

describe("the overview's Instances row", () => {
  const table = panelOf(overview, INSTANCE_TABLE_TITLE);
  const targets = table.targets ?? [];
  const exprOf = (refId: string) => targets.find((target) => target.refId === refId)?.expr ?? "";
  const processLabels = bundleConfig.processLabels;

  it("holds the table, the model calls of each process, and its dangling share per model", () => {
    expect(rowOf(overview, "Instances").map((panel) => [panel.type, panel.title])).toEqual([
      ["table", INSTANCE_TABLE_TITLE],
      ["timeseries", "Model calls per instance"],
      ["timeseries", "Dangling share per instance"],
    ]);
  });

  it("is one row per process: instant queries merged, named, worst share first", () => {
    expect(table.type).toBe("table");
    expect(targets.map((target) => target.refId)).toEqual([
      "reporting",
      "last_report",
      "model_calls",
      "share",
      "peers",
      "failed_open",
    ]);
    for (const target of targets) expect(target).toMatchObject({ instant: true, format: "table" });
    expect(table.transformations?.map((transformation) => transformation.id)).toEqual([
      "merge",
      "organize",
    ]);
    expect(table.transformations?.[1]?.options).toMatchObject({
      excludeByName: { Time: true },
      renameByName: {
        "Value #reporting": "Reporting",
        "Value #last_report": "Last report",
        "Value #model_calls": "Model calls/s",
        "Value #share": "Dangling share",
        "Value #peers": "Peers' share",
        "Value #failed_open": "Failed open",
      },
    });
    expect(table.options?.sortBy).toEqual([{ displayName: "Dangling share", desc: true }]);
  });

  it("reads every figure over the window of ToolCallResilienceInstanceDanglingOutlier", () => {
    expect(INSTANCE_WINDOW).toBe(bundleConfig.instanceOutlier.window);
    for (const target of targets) {
      for (const [range] of target.expr.matchAll(/\[[^\]]*\]/g)) {
        expect([`[${INSTANCE_WINDOW}]`, `[${INSTANCE_WINDOW}:1m]`], target.refId).toContain(range);
      }
    }
  });

  it("keeps each process apart, and reads its peers' share from a rule that sums every process of the job", () => {
    for (const target of targets) {
      const fleets = aggregationsIn(target.expr).filter(
        (aggregation) => !keepsProcesses(aggregation, processLabels),
      );
      expect(
        fleets.map((aggregation) => aggregation.text),
        target.refId,
      ).toEqual([]);
    }
    const peers = recordingRules.find(
      (rule) => rule.record === dashboardRecords.peersRatio(INSTANCE_WINDOW),
    );
    expect(exprOf("peers").startsWith(`${peers?.record}{`)).toBe(true);
    // The job's dangling calls and tool calls, each less the process's own, matched on
    // everything but the process.
    const figures = recordingRules.filter(
      (rule) => rule.record.endsWith("_peers") && peers?.expr.includes(rule.record),
    );
    expect(figures).toHaveLength(2);
    for (const figure of figures) {
      const fleets = aggregationsIn(figure.expr).filter((aggregation) =>
        sumsOverProcesses(aggregation, processLabels),
      );
      expect(fleets).toHaveLength(1);
      expect(figure.expr).toContain(`- ignoring (${processLabels.join(", ")}) group_right () `);
    }
  });

  it("compares with the peers the share of each process's tool calls that dangled, with the dashboards' minimum of traffic", () => {
    expect(exprOf("share")).toBe(
      `${dashboardRecords.processRatio(INSTANCE_WINDOW)}{${PROCESS_VARIABLES.map((v) => `${v}=~"$${v}"`).join(", ")}} and ${dashboardRecords.processRate("toolCalls", INSTANCE_WINDOW)} * ${seconds(INSTANCE_WINDOW)} >= ${MINIMUM_TOOL_CALLS}`,
    );
  });

  it("says whether each process reports on both paths, how old its newest sample is, and counts failed-open calls whole", () => {
    // `up` where Prometheus scrapes the process, else the presence of its own series (pushed);
    // `== bool 1` and `> bool 0` drop the metric name, which the other columns do not carry.
    expect(exprOf("reporting")).toMatch(
      new RegExp(`^up\\{.*\\} == bool 1 or ${dashboardRecords.lastSample}\\{.*\\} > bool 0$`),
    );
    expect(exprOf("last_report")).toMatch(
      new RegExp(`^time\\(\\) - max_over_time\\(${dashboardRecords.lastSample}\\{`),
    );
    expect(exprOf("failed_open")).toContain(`tool_call_resilience_outcome="failed_open"`);
    expect(exprOf("failed_open")).toContain(
      `sum_over_time(${dashboardRecords.increase("instance", "modelCalls")}{`,
    );
  });

  it("colours the share from the least the outlier alert asks, failed-open calls from 1, and a process not reporting", () => {
    const overrides = new Map(
      (table.fieldConfig?.overrides ?? []).map((override) => [
        override.matcher.options,
        Object.fromEntries(override.properties.map((property) => [property.id, property.value])),
      ]),
    );
    const outlierShare =
      bundleConfig.instanceOutlier.minimumBurnRate * bundleConfig.objective.default;
    expect(overrides.get("Dangling share")).toMatchObject({
      unit: "percentunit",
      thresholds: { steps: [{ value: null }, { value: outlierShare, color: "red" }] },
    });
    expect(overrides.get("Failed open")).toMatchObject({
      thresholds: { steps: [{ value: null }, { value: 1, color: "red" }] },
    });
    expect(JSON.stringify(overrides.get("Reporting"))).toContain(
      '"0":{"text":"down","color":"red"',
    );
    expect(overrides.get("Last report")).toMatchObject({ unit: "s" });
  });
});
