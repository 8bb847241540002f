/**
 * The Threads dashboard: which thread leaves tool calls dangling, why, what the repairs did about
 * it, and how long they took. Its rows, top to bottom: the threads with the most dangling calls,
 * the dangling calls and repairs per model, the model calls by outcome, and the repair duration.
 */
import * as common from "@grafana/grafana-foundation-sdk/common";
import type * as dashboard from "@grafana/grafana-foundation-sdk/dashboard";
import * as heatmap from "@grafana/grafana-foundation-sdk/heatmap";
import * as prometheus from "@grafana/grafana-foundation-sdk/prometheus";
import * as table from "@grafana/grafana-foundation-sdk/table";
import type * as timeseries from "@grafana/grafana-foundation-sdk/timeseries";
import { dashboardRecords } from "../dashboard-rules.js";
import { labels } from "../names.js";
import {
  buildDashboard,
  OVERVIEW_DASHBOARD_UID,
  THREADS_DASHBOARD_UID,
} from "./dashboard-frame.js";
import type { Filters } from "./filters.js";
import {
  THREAD_FIELD,
  THREAD_SERIES_LABEL,
  threadDashboardLink,
  threadTracesLink,
} from "./links.js";
import {
  type AnyPanelBuilder,
  filteredBy,
  instantQuery,
  largestFirst,
  legend,
  place,
  quantileTargets,
  query,
  RECENT_WINDOW_TEXT,
  timeSeries,
} from "./panels.js";
import { repairDurationQuantiles, topThreads } from "./queries.js";

function threadPanels(filters: Filters): AnyPanelBuilder[] {
  return [
    place(
      new table.PanelBuilder(),
      "Top threads now",
      `The twenty threads with the most dangling calls now: ${RECENT_WINDOW_TEXT}. Select a thread to show it alone here, or its repair_tool_calls spans in Tempo. ${filteredBy("thread")}`,
      { width: 12, height: 8 },
    )
      .withTarget(instantQuery("A", topThreads(filters, 20)))
      .withTransformation(largestFirst)
      .withTransformation({
        id: "organize",
        options: { excludeByName: { Time: true }, renameByName: { Value: "Dangling calls" } },
      })
      .dataLinks([threadDashboardLink(THREAD_FIELD), threadTracesLink(THREAD_FIELD)]),
    timeSeries(
      "Dangling calls per thread",
      `Over time, ${RECENT_WINDOW_TEXT}: a thread rises with each new dangling call and falls back 15 minutes later. The twenty highest at each moment; pick a thread in Thread to follow it alone. Select a series for the thread's repair_tool_calls spans in Tempo. ${filteredBy("thread")}`,
      "short",
      [query("A", topThreads(filters, 20), legend([labels.thread, labels.model]))],
    )
      .lineInterpolation(common.LineInterpolation.StepAfter)
      .dataLinks([threadTracesLink(THREAD_SERIES_LABEL)]),
  ];
}

function causePanels(filters: Filters): timeseries.PanelBuilder[] {
  return [
    timeSeries(
      "Dangling calls by reason",
      `Dangling tool calls per second, per model and reason: interrupted runs, or arguments that could not be parsed. ${filteredBy("model")}`,
      "ops",
      [
        query(
          "A",
          filters.recorded(dashboardRecords.danglingByReason, "model"),
          legend([labels.model, labels.reason]),
        ),
      ],
    ),
    timeSeries(
      "Repairs by kind per model",
      `Repairs applied to requests, per second, per model and kind. ${filteredBy("model")}`,
      "ops",
      [
        query(
          "A",
          filters.recorded(dashboardRecords.repairsByKind, "model"),
          legend([labels.model, labels.provider, labels.repairKind]),
        ),
      ],
    ),
  ];
}

function modelCallPanels(filters: Filters): timeseries.PanelBuilder[] {
  return [
    timeSeries(
      "Model calls by outcome",
      `Model calls per second, per agent, model and outcome: clean, repaired, or failed open (the repair failed and the request went through unrepaired). ${filteredBy("agent")}`,
      "ops",
      [
        query(
          "A",
          filters.recorded(dashboardRecords.modelCallsByOutcome, "agent"),
          legend([labels.agent, labels.model, labels.outcome]),
        ),
      ],
      24,
    ),
  ];
}

function durationPanels(filters: Filters): AnyPanelBuilder[] {
  return [
    place(
      new heatmap.PanelBuilder(),
      "Repair duration",
      `Inspections of a request per duration bucket. The histogram records only the outcome: ${filteredBy("job")}`,
      { width: 12, height: 8 },
    )
      .withTarget(
        query(
          "A",
          `sum by (le) (${filters.recorded(dashboardRecords.durationBuckets, "job")})`,
          "{{le}}",
        ).format(prometheus.PromQueryFormat.Heatmap),
      )
      .calculate(false)
      .yAxis(new heatmap.YAxisConfigBuilder().unit("s"))
      .cellValues(new heatmap.CellValuesBuilder().unit("ops")),
    timeSeries(
      "Repair duration by outcome",
      `p50, p95 and p99 of the time spent inspecting and repairing a request, per outcome. ${filteredBy("job")}`,
      "s",
      quantileTargets(repairDurationQuantiles(filters, true), [labels.outcome]),
    ),
  ];
}

/** The per-thread dashboard, filtered by provider, model, agent, tool and thread. */
export function threadsDashboard(): dashboard.Dashboard {
  return buildDashboard({
    uid: THREADS_DASHBOARD_UID,
    title: "Tool-call resilience / Threads",
    attributes: ["provider", "model", "agent", "tool", "thread"],
    link: { title: "Overview", uid: OVERVIEW_DASHBOARD_UID },
    sections: (filters) => [
      { title: "Threads", panels: threadPanels(filters) },
      { title: "Dangling calls and repairs", panels: causePanels(filters) },
      { title: "Model calls", panels: modelCallPanels(filters) },
      { title: "Repair duration", panels: durationPanels(filters) },
    ],
  });
}
