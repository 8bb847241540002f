import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { bundleConfig } from "../../dashboards/generator/config.js";
import {
  OVERVIEW_DASHBOARD_UID,
  renderDashboards,
  THREADS_DASHBOARD_UID,
} from "../../dashboards/generator/dashboards.js";
import {
  instrumentSelector,
  labels,
  overflowSelector,
  SHAPES,
  series,
  seriesByShape,
} from "../../dashboards/generator/names.js";
import { isShare } from "../helpers/promql.js";
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
}
interface Panel {
  id: number;
  type: string;
  title: string;
  gridPos: GridPos;
  datasource?: { type?: string; uid?: string };
  targets?: Target[];
  fieldConfig?: { defaults?: { unit?: string } };
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
    variables: ["job", "provider", "model", "tool"],
  },
  {
    path: "grafana/tool-call-resilience-threads.json",
    uid: THREADS_DASHBOARD_UID,
    other: OVERVIEW_DASHBOARD_UID,
    variables: ["job", "provider", "model", "tool", "thread"],
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
function selectorsOf(expr: string): { metric: string; matchers: string }[] {
  return [...expr.matchAll(/([a-zA-Z_:][a-zA-Z0-9_:]*)?\{([^}]*)\}/g)].map((match) => ({
    metric: match[1] ?? "",
    matchers: match[2] ?? "",
  }));
}

/** The dashboard variables each series must be filtered by, from the attributes it records. */
const requiredFilters: Record<string, readonly string[]> = {
  [series.modelCalls]: ["provider", "model"],
  [series.toolCalls]: ["provider", "model", "tool"],
  [series.danglingToolCalls]: ["provider", "model", "tool"],
  [series.repairs]: ["provider", "model"],
  [series.threadDanglingToolCalls]: ["model", "thread"],
  [series.repairDurationBucket]: [],
};
const variableLabels: Record<string, string> = {
  provider: labels.provider,
  model: labels.model,
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

  it("has a Prometheus datasource variable and multi-value label variables", () => {
    const [first, ...rest] = dashboard.templating.list;
    expect(first).toMatchObject({ name: "datasource", type: "datasource", query: "prometheus" });
    expect(rest.map((variable) => variable.name)).toEqual(expect.arrayContaining(variables));
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

  it("queries the datasource variable in every panel and target", () => {
    for (const panel of dataPanels(dashboard)) {
      expect(panel.datasource?.uid, panel.title).toBe(DATASOURCE);
      expect(panel.targets?.length, panel.title).toBeGreaterThan(0);
    }
    for (const { panel, target } of targetsOf(dashboard)) {
      expect(target.datasource, panel).toEqual({ type: "prometheus", uid: DATASOURCE });
    }
  });

  it("names only series and labels the library emits", () => {
    const known = new Set<string>([
      ...SHAPES.flatMap((shape) => Object.values(seriesByShape[shape])),
      ...Object.values(labels),
    ]);
    for (const { panel, target } of targetsOf(dashboard)) {
      for (const [name] of target.expr.matchAll(/tool_call_resilience_[a-z_]+/g)) {
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

  it("selects no otel_scope_* label, which pushed series lack", () => {
    for (const { panel, target } of targetsOf(dashboard)) {
      expect(target.expr, panel).not.toMatch(/otel_scope_/);
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

  it("filters every selector by job, and by each variable the series has a label for", () => {
    for (const { panel, target } of targetsOf(dashboard)) {
      const selectors = selectorsOf(target.expr);
      expect(selectors.length, panel).toBeGreaterThan(0);
      for (const { metric, matchers } of selectors) {
        expect(matchers, `${panel}: ${target.expr}`).toContain('job=~"$job"');
        for (const variable of requiredFilters[metric] ?? []) {
          if (!variables.includes(variable)) continue;
          expect(matchers, `${panel}: ${metric}`).toContain(
            `${variableLabels[variable]}=~"$${variable}"`,
          );
        }
      }
    }
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
});

/** The totals tables keep a plain division: the end-to-end test compares it with ground truth. */
const TOTALS_TABLES = new Set(["Totals per model", "Totals per tool"]);

describe("the shares", () => {
  const sharePanels = dashboards.flatMap(({ dashboard }) =>
    dataPanels(dashboard).filter((panel) => panel.fieldConfig?.defaults?.unit === "percentunit"),
  );

  it("are the dangling rates (overall, per model, per tool) and the share repaired", () => {
    expect(sharePanels.map((panel) => panel.title).sort()).toEqual([
      "Dangling rate",
      "Dangling rate per model",
      "Dangling rate per tool",
      "Share of model calls repaired",
    ]);
  });

  it.each(sharePanels.map((panel) => [panel.title, panel] as const))(
    "%s is 0, not No data, without a numerator series: the recording rules' share()",
    (_title, panel) => {
      const targets = panel.targets ?? [];
      expect(targets.length).toBeGreaterThan(0);
      for (const target of targets) expect(isShare(target.expr), target.expr).toBe(true);
    },
  );

  it("leave no other division than the totals tables' ratio", () => {
    for (const { dashboard } of dashboards) {
      for (const panel of dataPanels(dashboard)) {
        if (TOTALS_TABLES.has(panel.title)) continue;
        for (const target of panel.targets ?? []) {
          if (target.expr.includes(" / ")) expect(isShare(target.expr), panel.title).toBe(true);
        }
      }
    }
  });
});

describe("the overview's Overflow series stat", () => {
  it("counts what ToolCallResilienceCardinalityOverflow counts, in the chosen jobs, 0 only where the library's series are", () => {
    const overview = dashboardAt("grafana/tool-call-resilience-overview.json");
    const panel = overview.panels.find((candidate) => candidate.title === "Overflow series");
    expect(panel?.targets?.map((target) => target.expr)).toEqual([
      `count(${overflowSelector('job=~"$job"')}) or count(${instrumentSelector('job=~"$job"')}) * 0`,
    ]);
  });
});

describe("the overview's totals tables", () => {
  const overview = dashboardAt("grafana/tool-call-resilience-overview.json");

  it.each([
    ["Totals per model", [labels.provider, labels.model]],
    ["Totals per tool", [labels.tool]],
  ])("%s sums the raw counters in three instant queries", (title, by) => {
    const panel = overview.panels.find((candidate) => candidate.title === title);
    expect(panel?.type).toBe("table");
    const targets = panel?.targets ?? [];
    expect(targets.map((target) => target.refId)).toEqual(["tool_calls", "dangling", "ratio"]);
    const [toolCalls, dangling, ratio] = targets.map((target) => target.expr);
    const sum = `sum by (${by.join(", ")}) (`;
    expect(toolCalls).toMatch(
      new RegExp(`^${escapeRegExp(sum)}${series.toolCalls}\\{[^}]*\\}\\)$`),
    );
    expect(dangling).toMatch(
      new RegExp(`^${escapeRegExp(sum)}${series.danglingToolCalls}\\{[^}]*\\}\\)$`),
    );
    expect(ratio).toBe(`${dangling} / ${toolCalls}`);
    for (const target of targets) expect(target).toMatchObject({ instant: true, range: false });
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
