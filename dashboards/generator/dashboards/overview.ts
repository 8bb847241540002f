/**
 * The overview dashboard: which model, tool or instance leaves tool calls dangling, since when,
 * and whether it is getting worse. Its rows, top to bottom: the time range's totals as stats, the
 * traffic, the dangling shares and burn rates the alerts evaluate, the instances, the threads with
 * the most dangling calls, the repairs, and the totals per model and per tool.
 */
import * as bargauge from "@grafana/grafana-foundation-sdk/bargauge";
import * as common from "@grafana/grafana-foundation-sdk/common";
import type * as dashboard from "@grafana/grafana-foundation-sdk/dashboard";
import type * as stat from "@grafana/grafana-foundation-sdk/stat";
import * as table from "@grafana/grafana-foundation-sdk/table";
import type * as timeseries from "@grafana/grafana-foundation-sdk/timeseries";
import { bundleConfig } from "../config.js";
import { dashboardRecords } from "../dashboard-rules.js";
import { labels, values } from "../names.js";
import { OBJECTIVE_RECORD, recordedWindows, recordName, seconds } from "../prometheus-rules.js";
import {
  buildDashboard,
  OVERVIEW_DASHBOARD_UID,
  THREADS_DASHBOARD_UID,
} from "./dashboard-frame.js";
import type { Filters } from "./filters.js";
import { THREAD_FIELD, threadDashboardLink, threadTracesLink } from "./links.js";
import { instancePanels } from "./overview-instances.js";
import {
  dashedThresholds,
  filteredBy,
  instantQuery,
  largestFirst,
  legend,
  OVER_RANGE,
  percent,
  place,
  quantileTargets,
  query,
  RECENT_WINDOW_TEXT,
  redFromOne,
  sharePanel,
  statRow,
  thresholds,
  timeSeries,
} from "./panels.js";
import {
  MINIMUM_TOOL_CALLS,
  PANEL_WINDOWS,
  ratePerModel,
  repairDurationQuantiles,
  summaryQueries,
  topThreads,
  totalsQueries,
} from "./queries.js";

const windowsText = PANEL_WINDOWS.join(" and ");
const guardText = (level: string) =>
  `No value is drawn for a ${level} with fewer than ${MINIMUM_TOOL_CALLS} tool calls in the window (${PANEL_WINDOWS.map((window) => `${Number((MINIMUM_TOOL_CALLS / seconds(window)).toPrecision(2))} per second over ${window}`).join(", ")}), where one dangling call would make the share.`;
const modelText = filteredBy("model");

function summaryStats(filters: Filters): stat.PanelBuilder[] {
  const queries = summaryQueries(filters);
  return statRow([
    {
      title: "Tool calls",
      description: `Tool calls the models issued, ${OVER_RANGE}. ${modelText}`,
      unit: "short",
      expr: queries.toolCalls,
    },
    {
      title: "Dangling tool calls",
      description: `Tool calls left without a result, each once, ${OVER_RANGE}. ${modelText}`,
      unit: "short",
      expr: queries.dangling,
    },
    {
      title: "Dangling share",
      description: `Dangling tool calls per tool call issued, ${OVER_RANGE}: the two stats before it, divided. ${modelText}`,
      unit: "percentunit",
      expr: { numerator: queries.dangling, denominator: `${queries.toolCalls} > 0` },
    },
    {
      title: "Failed-open model calls",
      description: `Model calls whose repair itself failed, so the original request went to the model unrepaired, ${OVER_RANGE}. Red from 1: see the runbook (ToolCallResilienceFailingOpen). ${modelText}`,
      unit: "short",
      expr: queries.failedOpen,
      alarm: redFromOne,
    },
    {
      title: "Overflow series",
      description: `Overflow series of this library now, one per instrument and process that passed its cardinality limit (the series ToolCallResilienceCardinalityOverflow watches): that instrument's per-model and per-tool numbers are incomplete. Red from 1: see the runbook. ${filteredBy("process")}`,
      unit: "short",
      expr: queries.overflowSeries,
      alarm: redFromOne,
    },
  ]);
}

function trafficPanels(filters: Filters): timeseries.PanelBuilder[] {
  return [
    timeSeries(
      "Tool calls per model",
      `Tool calls the models issued, per second, per model, over the last ${PANEL_WINDOWS[0]}: the traffic the shares below are taken of. ${modelText}`,
      "ops",
      [query("A", ratePerModel(filters, "toolCalls"), legend([labels.model, labels.provider]))],
    ),
    timeSeries(
      "Dangling tool calls per model",
      `Tool calls left without a result, per second, per model, over the last ${PANEL_WINDOWS[0]}. A call is counted dangling when it is first seen without a result, which can be a few turns after it was issued. ${modelText}`,
      "ops",
      [query("A", ratePerModel(filters, "dangling"), legend([labels.model, labels.provider]))],
    ),
  ];
}

/**
 * Burn rates per model over every window the alerts evaluate, with a threshold at every alert's
 * factor, and no traffic guard beyond the alerts' own: this is the figure they page on.
 */
function burnRatePanel(filters: Filters): timeseries.PanelBuilder {
  const factors = [
    ...bundleConfig.burnRate.page.map((pair) => ({ pair, color: "red" })),
    ...bundleConfig.burnRate.ticket.map((pair) => ({ pair, color: "orange" })),
  ].sort((a, b) => a.pair.factor - b.pair.factor);
  const lines = factors
    .map(
      ({ pair, color }) =>
        `${pair.factor}x (${color === "red" ? "pages" : "warns"} when both ${pair.long} and ${pair.short} are above it)`,
    )
    .join(", ");
  return timeSeries(
    "Burn rate per model",
    `How many times faster than its objective allows each model spends its dangling-call budget, over every window the alerts evaluate (${recordedWindows.model.join(", ")}): 1 spends it exactly. Each model's objective is recorded as ${OBJECTIVE_RECORD}. The dashed lines are the ToolCallResilienceDanglingBudgetBurn thresholds: ${lines}. Drawn wherever the window holds a tool call, as the alerts see it (they also ask for ${bundleConfig.burnRate.minimumDanglingCalls} dangling calls in the long window). ${modelText}`,
    "suffix:x",
    recordedWindows.model.map((window) =>
      query(
        window,
        filters.recorded(recordName("model", "burnRate", window), "model"),
        legend([labels.model, labels.provider], window),
      ),
    ),
  )
    .thresholds(
      thresholds(
        { value: null, color: "green" },
        ...factors.map(({ pair, color }) => ({ value: pair.factor, color })),
      ),
    )
    .thresholdsStyle(dashedThresholds);
}

function danglingSharePanels(filters: Filters): timeseries.PanelBuilder[] {
  const objective = percent(bundleConfig.objective.default);
  return [
    sharePanel(filters, {
      title: "Dangling share per model",
      level: "model",
      windows: PANEL_WINDOWS,
      legend: [labels.model, labels.provider],
      threshold: bundleConfig.objective.default,
      description: `Share of each model's tool calls that dangled, over ${windowsText}, the windows of the fastest page. The dashed line is the default objective, ${objective}. ${guardText("model")} ${modelText}`,
    }),
    burnRatePanel(filters),
    sharePanel(filters, {
      title: "Dangling share per tool",
      level: "tool",
      windows: PANEL_WINDOWS,
      legend: [labels.tool],
      threshold: bundleConfig.objective.default,
      description: `Share of each tool's calls that dangled, across every model, over ${windowsText}: what ToolCallResilienceToolDanglingBudgetBurn watches, against the default objective (${objective}, the dashed line). ${values.otherTool} stands for tools the request did not offer. ${guardText("tool")} ${filteredBy("tool")}`,
      width: 24,
    }),
  ];
}

function topThreadsBarGauge(filters: Filters): bargauge.PanelBuilder {
  return (
    place(
      new bargauge.PanelBuilder(),
      "Top threads now",
      `The ten threads with the most dangling calls now: ${RECENT_WINDOW_TEXT}. Select a thread to open it in the Threads dashboard, or its repair_tool_calls spans in Tempo. ${filteredBy("thread")}`,
      { width: 24, height: 8 },
    )
      .withTarget(instantQuery("A", topThreads(filters, 10)))
      .withTransformation(largestFirst)
      .unit("short")
      .min(0)
      .orientation(common.VizOrientation.Horizontal)
      .displayMode(common.BarGaugeDisplayMode.Basic)
      // One bar per table row (thread and model), not one per column.
      .reduceOptions(new common.ReduceDataOptionsBuilder().values(true).calcs([]))
      .dataLinks([threadDashboardLink(THREAD_FIELD), threadTracesLink(THREAD_FIELD)])
  );
}

function repairPanels(filters: Filters): timeseries.PanelBuilder[] {
  return [
    timeSeries(
      "Share of model calls repaired",
      `Model calls whose request needed a repair before the model saw it, per model. Without persist, a thread with a dangling call is repaired again on every later call. ${modelText}`,
      "percentunit",
      [
        query(
          "A",
          filters.recorded(dashboardRecords.repairedRatio, "model"),
          legend([labels.model, labels.provider]),
        ),
      ],
      8,
    ),
    timeSeries(
      "Repairs by kind",
      `Repairs applied to requests, per second, by kind: placeholders inserted, results moved, orphans dropped, ids assigned. ${modelText}`,
      "ops",
      [
        query(
          "A",
          `sum without (${labels.provider}, ${labels.model}) (${filters.recorded(dashboardRecords.repairsByKind, "model")})`,
          legend([labels.repairKind]),
        ),
      ],
      8,
    ),
    timeSeries(
      "Repair latency",
      `Time spent inspecting (and repairing) each request, clean ones included. The histogram records no provider or model: ${filteredBy("job")}`,
      "s",
      quantileTargets(repairDurationQuantiles(filters, false), []),
      8,
    ),
  ];
}

/**
 * A table of three instant queries (tool calls, dangling calls and their share) per model or per
 * tool, over the dashboard's time range.
 */
function totalsTable(title: string, filters: Filters, level: "model" | "tool"): table.PanelBuilder {
  const queries = totalsQueries(filters, level);
  return place(
    new table.PanelBuilder(),
    title,
    `Tool calls, dangling tool calls and their share, ${OVER_RANGE}: what the processes counted in the range, not since they started. ${filteredBy(level)}`,
    { width: 12, height: 8 },
  )
    .targets([
      instantQuery("tool_calls", queries.toolCalls),
      instantQuery("dangling", queries.dangling),
      instantQuery("ratio", queries.ratio),
    ])
    .withTransformation({ id: "merge", options: {} })
    .withTransformation({
      id: "organize",
      options: {
        excludeByName: { Time: true },
        renameByName: {
          "Value #tool_calls": "Tool calls",
          "Value #dangling": "Dangling calls",
          "Value #ratio": "Dangling share",
        },
      },
    })
    .overrideByName("Dangling share", [{ id: "unit", value: "percentunit" }]);
}

function totalsTables(filters: Filters): table.PanelBuilder[] {
  return [
    totalsTable("Totals per model", filters, "model"),
    totalsTable("Totals per tool", filters, "tool"),
  ];
}

/** The overview dashboard, filtered by provider, model and tool. */
export function overviewDashboard(): dashboard.Dashboard {
  return buildDashboard({
    uid: OVERVIEW_DASHBOARD_UID,
    title: "Tool-call resilience / Overview",
    attributes: ["provider", "model", "tool"],
    link: { title: "Threads", uid: THREADS_DASHBOARD_UID },
    sections: (filters) => [
      { title: "Over the time range", panels: summaryStats(filters) },
      { title: "Traffic", panels: trafficPanels(filters) },
      { title: "Dangling tool calls", panels: danglingSharePanels(filters) },
      { title: "Instances", panels: instancePanels(filters) },
      { title: "Threads", panels: [topThreadsBarGauge(filters)] },
      { title: "Repairs", panels: repairPanels(filters) },
      { title: "Totals over the time range", panels: totalsTables(filters) },
    ],
  });
}
