import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { bundleConfig } from "../../dashboards/generator/config.js";
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
import {
  instrumentSelector,
  labels,
  overflowSelector,
  SHAPES,
  series,
  seriesByShape,
} from "../../dashboards/generator/names.js";
import {
  alertRules,
  OBJECTIVE_RECORD,
  recordedWindows,
  recordingRules,
  recordName,
  seconds,
} from "../../dashboards/generator/prometheus-rules.js";
import {
  aggregationsIn,
  enclosing,
  keepsProcesses,
  sumsOverProcesses,
} from "./promql-aggregations.js";
import { namesMissedIn } from "./promql-names.js";

interface GridPos {
  x: number;
  y: number;
  w: number;
  h: number;
}
interface Target {
  refId: string;
  expr: string;
  datasource?: { type?: string; uid?: string };
  instant?: boolean;
  format?: string;
}
interface Panel {
  id: number;
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

/** The attribute variables each raw series must be filtered by, from the attributes it records. */
const requiredFilters: Record<string, readonly string[]> = {
  [series.modelCalls]: ["provider", "model", "agent"],
  [series.toolCalls]: ["provider", "model", "tool"],
  [series.danglingToolCalls]: ["provider", "model", "tool"],
  [series.repairs]: ["provider", "model"],
  [series.threadRecentDanglingToolCalls]: ["model", "thread"],
  [series.repairDurationBucket]: [],
};
const variableLabels: Record<string, string> = {
  provider: labels.provider,
  model: labels.model,
  agent: labels.agent,
  tool: labels.tool,
  thread: labels.thread,
};

/** Every recorded series (`level:metric:operation`) and the attribute variables its level keeps. */
const recorded = new Set(recordingRules.map((rule) => rule.record));
function recordedFilters(name: string): readonly string[] {
  if (name.startsWith("tool:")) return ["tool"];
  return ["provider", "model"];
}
const RECORDED_NAME = /\b[a-z]+:[a-z_]+:[a-z0-9_]+/g;

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

  it("names only series the library emits and series the recording rules record", () => {
    const known = new Set<string>([
      ...SHAPES.flatMap((shape) => Object.values(seriesByShape[shape])),
      ...Object.values(labels),
    ]);
    for (const { panel, target } of targetsOf(dashboard)) {
      for (const [name] of target.expr.matchAll(RECORDED_NAME)) {
        expect(recorded.has(name), `${panel}: ${name}`).toBe(true);
      }
      const raw = target.expr.replace(RECORDED_NAME, "");
      for (const [name] of raw.matchAll(/tool_call_resilience_[a-z_]+/g)) {
        expect(known.has(name), `${panel}: ${name}`).toBe(true);
      }
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

  it("filters every selector by every process variable, and by each attribute variable the series has", () => {
    for (const { panel, target } of targetsOf(dashboard)) {
      const selectors = selectorsOf(target.expr);
      expect(selectors.length, panel).toBeGreaterThan(0);
      // Next to a recorded series, the raw series compute the same figure: filtered alike.
      const reads = [...target.expr.matchAll(RECORDED_NAME)].map(([name]) => name);
      const level = reads.find((name) => name !== OBJECTIVE_RECORD);
      const aggregations = aggregationsIn(target.expr);
      for (const { metric, matchers, index } of selectors) {
        for (const variable of PROCESS_VARIABLES) {
          // The objective is one per model, whatever the instance; and the fleet a chosen
          // instance is compared with is every process, summed over them all.
          if (variable === "instance") {
            const fleet = enclosing(aggregations, index).some((aggregation) =>
              sumsOverProcesses(aggregation, bundleConfig.processLabels),
            );
            if (metric === OBJECTIVE_RECORD) continue;
            if (fleet && !matchers.includes(`instance=~"$instance"`)) continue;
          }
          expect(matchers, `${panel}: ${metric}`).toContain(`${variable}=~"$${variable}"`);
        }
        const wanted = recorded.has(metric)
          ? recordedFilters(metric)
          : (requiredFilters[metric] ?? []).filter(
              (variable) => level === undefined || recordedFilters(level).includes(variable),
            );
        for (const variable of Object.keys(variableLabels)) {
          const matcher = `${variableLabels[variable]}=~"$${variable}"`;
          if (wanted.includes(variable) && variables.includes(variable)) {
            expect(matchers, `${panel}: ${metric}`).toContain(matcher);
          } else {
            expect(matchers, `${panel}: ${metric}`).not.toContain(matcher);
          }
        }
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

  it("counts over the time range, never since the processes started", () => {
    for (const panel of dataPanels(dashboard)) {
      for (const target of panel.targets ?? []) {
        for (const [selector] of target.expr.matchAll(/tool_call_resilience_\w+_total\{[^}]*\}/g)) {
          // Every counter is read by rate() or increase() over a window, or by its last value in
          // it against its value at the window's start, or for the time of its newest sample.
          const escaped = escapeRegExp(selector);
          const read = new RegExp(
            `(rate|increase|last_over_time)\\(${escaped}\\[|unless ${escaped} offset|timestamp\\(${escaped}\\)`,
          );
          expect(target.expr, `${panel.title}: ${selector}`).toMatch(read);
        }
      }
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

/** Each occurrence of `share()`: `clamp_max((a or b * 0) / (b > 0), 1)`, with its operands. */
function withoutShares(expr: string): string {
  let rest = expr;
  for (;;) {
    const start = rest.indexOf("clamp_max((");
    if (start === -1) return rest;
    let depth = 0;
    let end = start + "clamp_max".length;
    for (; end < rest.length; end++) {
      if (rest[end] === "(") depth++;
      if (rest[end] === ")" && --depth === 0) break;
    }
    const inner = rest.slice(start, end + 1);
    expect(inner, expr).toMatch(/ \* 0\) \/ \(.* > 0\), 1\)$/);
    rest = `${rest.slice(0, start)}SHARE${rest.slice(end + 1)}`;
  }
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

  it("divide only in share() (0 without a numerator, nothing without a denominator) or by the objective", () => {
    const objective = `/ ${OBJECTIVE_RECORD}{`;
    const defaultObjective = `/ ${bundleConfig.objective.default}`;
    for (const dashboard of [overview, threads]) {
      for (const { panel, target } of targetsOf(dashboard)) {
        const rest = withoutShares(target.expr)
          .replaceAll(objective, "")
          .replaceAll(defaultObjective, "");
        expect(rest, panel).not.toContain(" / ");
      }
    }
  });

  it("Burn rate per model reads the recorded burn rates of every window the alerts evaluate, as they do", () => {
    const panel = panelOf(overview, "Burn rate per model");
    expect(panel.targets?.map((target) => target.refId)).toEqual([...recordedWindows.model]);
    for (const [index, window] of recordedWindows.model.entries()) {
      const expr = panel.targets?.[index]?.expr ?? "";
      expect(expr.startsWith(`(${recordName("model", "burnRate", window)}{`), expr).toBe(true);
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
        expect(expr.startsWith(`(${recordName(level, quantity, window)}{`), expr).toBe(true);
        expect(expr).toContain(` and (${recordName(level, "toolCalls", window)}{`);
        expect(expr.endsWith(`) * ${seconds(window)} >= ${MINIMUM_TOOL_CALLS}`), expr).toBe(true);
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

  it.each([
    ["model", "ToolCallResilienceDanglingBudgetBurn"],
    ["tool", "ToolCallResilienceToolDanglingBudgetBurn"],
  ] as const)(
    "compute the %s level from raw series as the recording rules behind %s do",
    (level, alert) => {
      const title = level === "model" ? "Dangling share per model" : "Dangling share per tool";
      const expr = panelOf(overview, title).targets?.[1]?.expr ?? "";
      expect(alertRules.map((rule) => rule.alert)).toContain(alert);
      const strip = (text: string) => text.replace(/\{[^}]*\}/g, "");
      const recorded = strip(recordingRules.map((rule) => rule.expr).join("\n"));
      const sums = [...strip(expr).matchAll(/sum without \([^)]*\) \(rate\([^)]*\)\)/g)];
      expect(sums.length).toBeGreaterThan(0);
      for (const [sum] of sums) expect(recorded).toContain(sum);
    },
  );
});

describe("the overview's Overflow series stat", () => {
  it("counts what ToolCallResilienceCardinalityOverflow counts, in the chosen processes, 0 only where the library's series are", () => {
    const chosen = PROCESS_VARIABLES.map((variable) => `${variable}=~"$${variable}"`);
    expect(panelOf(overview, "Overflow series").targets?.map((target) => target.expr)).toEqual([
      `count(${overflowSelector(...chosen)}) or count(${instrumentSelector(...chosen)}) * 0`,
    ]);
  });
});

describe("the overview's totals", () => {
  it.each([
    ["Totals per model", labels.tool],
    ["Totals per tool", labels.model],
  ])("%s counts tool calls, dangling calls and their share over the range", (title, summed) => {
    const panel = panelOf(overview, title);
    expect(panel.type).toBe("table");
    const targets = panel.targets ?? [];
    expect(targets.map((target) => target.refId)).toEqual(["tool_calls", "dangling", "ratio"]);
    const [toolCalls, dangling, ratio] = targets.map((target) => target.expr);
    expect(toolCalls).toMatch(/^sum without \(/);
    expect(toolCalls).toContain(`${summed},`);
    expect(toolCalls).toContain("[$__range])");
    expect(dangling).toContain(series.danglingToolCalls);
    expect(ratio?.startsWith("clamp_max(")).toBe(true);
    for (const target of targets) expect(target).toMatchObject({ instant: true, range: false });
  });

  it.each(["Tool calls", "Dangling tool calls", "Dangling share", "Failed-open model calls"])(
    "the %s stat counts over the range",
    (title) => {
      const expr = panelOf(overview, title).targets?.[0]?.expr ?? "";
      expect(expr).toContain("[$__range])");
      expect(expr).toContain("offset $__range");
    },
  );
});

describe("the threads", () => {
  const gauge = series.threadRecentDanglingToolCalls;

  it.each([
    [overview, "Top threads now", 10],
    [threads, "Top threads now", 20],
  ] as const)("%#: %s ranks the gauge summed over the processes", (dashboard, title, count) => {
    const expr = panelOf(dashboard, title).targets?.[0]?.expr ?? "";
    expect(expr).toMatch(
      new RegExp(
        `^topk\\(${count}, sum without \\(${bundleConfig.processLabels.join(", ")}, otel_scope_name, otel_scope_version, otel_scope_schema_url\\) \\(${gauge}\\{[^}]*\\}\\)\\)$`,
      ),
    );
  });

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
      "up",
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
        "Value #up": "Up",
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

  it("keeps each process apart, but for the peers' fleet, a sum without every process label that Instance does not filter", () => {
    for (const target of targets) {
      const aggregations = aggregationsIn(target.expr);
      const fleets = aggregations.filter(
        (aggregation) => !keepsProcesses(aggregation, processLabels),
      );
      if (target.refId !== "peers") {
        expect(
          fleets.map((aggregation) => aggregation.text),
          target.refId,
        ).toEqual([]);
        expect(target.expr, target.refId).not.toMatch(/\b(sum|max|min|avg|count) by \(/);
        continue;
      }
      // The fleet's dangling calls and tool calls (the latter twice, in share()).
      expect(fleets.length).toBe(3);
      for (const fleet of fleets) {
        expect(sumsOverProcesses(fleet, processLabels), fleet.text).toBe(true);
        expect(fleet.text).toMatch(/^sum without \([^)]*\) \(rate\(/);
        expect(fleet.text).not.toContain(`instance=~"$instance"`);
      }
      // Each fleet figure less the process's own, matched on everything but the process.
      expect(
        target.expr.split(`- ignoring (${processLabels.join(", ")}) group_right () `),
      ).toHaveLength(4);
    }
  });

  it("compares with the peers the share of each process's tool calls that dangled, with the dashboards' minimum of traffic", () => {
    expect(exprOf("share")).toMatch(
      new RegExp(
        `^clamp_max\\(.*\\) and .* \\* ${seconds(INSTANCE_WINDOW)} >= ${MINIMUM_TOOL_CALLS}$`,
      ),
    );
    expect(exprOf("peers").startsWith("clamp_max(")).toBe(true);
    for (const refId of ["share", "peers"]) {
      expect(exprOf(refId)).toContain(series.danglingToolCalls);
      expect(exprOf(refId)).toContain(series.toolCalls);
    }
  });

  it("says whether the last scrape succeeded, how old the newest sample is, and counts failed-open calls whole", () => {
    // `== bool 1` drops the metric name, which the other columns do not carry: the rows merge.
    expect(exprOf("up")).toMatch(/^up\{.*\} == bool 1$/);
    expect(exprOf("last_report")).toMatch(/^time\(\) - max without \(/);
    expect(exprOf("failed_open")).toContain(`tool_call_resilience_outcome="failed_open"`);
    expect(exprOf("failed_open")).toContain("last_over_time(");
  });

  it("colours the share from the least the outlier alert asks, failed-open calls from 1, and a failed scrape", () => {
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
    expect(JSON.stringify(overrides.get("Up"))).toContain('"0":{"text":"down","color":"red"');
    expect(overrides.get("Last report")).toMatchObject({ unit: "s" });
  });
});
