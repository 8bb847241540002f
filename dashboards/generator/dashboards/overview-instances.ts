/**
 * The Instances row of the overview dashboard: which process misbehaves. A table of every process
 * against its peers, each process's load over time, and its dangling share per model, the figure
 * `ToolCallResilienceInstanceDanglingOutlier` watches.
 */
import * as common from "@grafana/grafana-foundation-sdk/common";
import * as table from "@grafana/grafana-foundation-sdk/table";
import { bundleConfig } from "../config.js";
import { dashboardRecords } from "../dashboard-rules.js";
import { labels } from "../names.js";
import type { Filters } from "./filters.js";
import {
  type AnyPanelBuilder,
  filteredBy,
  instantQuery,
  legend,
  percent,
  place,
  query,
  sharePanel,
  timeSeries,
} from "./panels.js";
import {
  INSTANCE_WINDOW,
  type InstanceFigure,
  instanceQueries,
  MINIMUM_TOOL_CALLS,
  OUTLIER_SHARE,
} from "./queries.js";

/** Title of the Instances row's table. */
export const INSTANCE_TABLE_TITLE = "Instance health";

/** The columns of the Instances table, by the ref id of their query, in order. */
const INSTANCE_COLUMNS = {
  reporting: "Reporting",
  last_report: "Last report",
  model_calls: "Model calls/s",
  share: "Dangling share",
  peers: "Peers' share",
  failed_open: "Failed open",
} as const satisfies Record<InstanceFigure, string>;

/**
 * One row per process, to tell which worker misbehaves: whether it is scraped and reports, its
 * load, its dangling share against its peers', and its failed-open calls, worst share first.
 */
function instancesTable(filters: Filters): table.PanelBuilder {
  const queries = instanceQueries(filters);
  const window = INSTANCE_WINDOW;
  const colorText = { id: "custom.cellOptions", value: { type: "color-text" } };
  return place(
    new table.PanelBuilder(),
    INSTANCE_TABLE_TITLE,
    `One row per process (instance) of the chosen jobs, topology and instances, whatever Provider, Model and Tool say, over the last ${window} (the window of ToolCallResilienceInstanceDanglingOutlier): Reporting, whether it reports now (where Prometheus scrapes it, whether its last scrape succeeded, its up; where it pushes OTLP, which has no up, yes while its series arrive; empty once a dropped target or a process that stopped pushing is gone from Prometheus's lookback); Last report, how long ago its newest model-call sample arrived (seconds while it reports, the time since it stopped once killed or unreachable; a process silent for longer than ${window} has no row); its model calls per second; the share of its tool calls that dangled (shown from ${MINIMUM_TOOL_CALLS} tool calls, red from ${percent(OUTLIER_SHARE)}, the least the outlier alert asks), next to the same share over every other process of its job and topology, whatever Instance says; and its failed-open model calls (red from 1). A replacement process is a new row; the one it replaced stays until the window no longer holds it. Worst share first.`,
    { width: 24, height: 8 },
  )
    .targets(Object.entries(queries).map(([refId, expr]) => instantQuery(refId, expr)))
    .withTransformation({ id: "merge", options: {} })
    .withTransformation({
      id: "organize",
      options: {
        excludeByName: { Time: true },
        renameByName: Object.fromEntries(
          Object.entries(INSTANCE_COLUMNS).map(([refId, title]) => [`Value #${refId}`, title]),
        ),
      },
    })
    .sortBy([
      new common.TableSortByFieldStateBuilder().displayName(INSTANCE_COLUMNS.share).desc(true),
    ])
    .overrideByName(INSTANCE_COLUMNS.reporting, [
      {
        id: "mappings",
        value: [
          {
            type: "value",
            options: {
              "0": { text: "down", color: "red", index: 0 },
              "1": { text: "yes", color: "green", index: 1 },
            },
          },
        ],
      },
      colorText,
    ])
    .overrideByName(INSTANCE_COLUMNS.last_report, [{ id: "unit", value: "s" }])
    .overrideByName(INSTANCE_COLUMNS.model_calls, [{ id: "unit", value: "ops" }])
    .overrideByName(INSTANCE_COLUMNS.share, [
      { id: "unit", value: "percentunit" },
      {
        id: "thresholds",
        value: {
          mode: "absolute",
          steps: [
            { value: null, color: "green" },
            { value: OUTLIER_SHARE, color: "red" },
          ],
        },
      },
      colorText,
    ])
    .overrideByName(INSTANCE_COLUMNS.peers, [{ id: "unit", value: "percentunit" }])
    .overrideByName(INSTANCE_COLUMNS.failed_open, [
      { id: "unit", value: "short" },
      {
        id: "thresholds",
        value: {
          mode: "absolute",
          steps: [
            { value: null, color: "green" },
            { value: 1, color: "red" },
          ],
        },
      },
      colorText,
    ]);
}

/**
 * The Instances row: the table, each process's model calls over time (a killed worker drops out
 * and its replacement appears under a new instance), and each process's dangling share per model,
 * the figure ToolCallResilienceInstanceDanglingOutlier watches.
 */
export function instancePanels(filters: Filters): AnyPanelBuilder[] {
  const outlier = bundleConfig.instanceOutlier;
  return [
    instancesTable(filters),
    timeSeries(
      "Model calls per instance",
      `Model calls per second of each process, whatever their model or outcome, over the last ${dashboardRecords.rateWindow}: how the fleet shares the load. A killed worker's line stops and its replacement starts a line of its own (a new instance), from 0. ${filteredBy("process")}`,
      "ops",
      [
        query(
          "A",
          filters.recorded(
            dashboardRecords.processRate("modelCalls", dashboardRecords.rateWindow),
            "process",
          ),
          legend([labels.instance]),
        ),
      ],
    ),
    sharePanel(filters, {
      title: "Dangling share per instance",
      level: "instance",
      windows: [outlier.window],
      legend: [labels.instance, labels.model],
      threshold: OUTLIER_SHARE,
      description: `Share of each model's tool calls that dangled in each process over ${outlier.window}, the window of ToolCallResilienceInstanceDanglingOutlier: a replica far above its peers is a bad node, version or connection. The dashed line, ${percent(OUTLIER_SHARE)}, is ${outlier.minimumBurnRate} times the default objective, the least the alert asks of a process. No value is drawn for a process with fewer than ${MINIMUM_TOOL_CALLS} tool calls of a model in the window. ${filteredBy("instance")}`,
    }),
  ];
}
