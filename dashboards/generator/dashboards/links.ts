/**
 * The data links from a thread on a panel: to the Threads dashboard filtered on it, keeping the
 * dashboard's choices, and to its `repair_tool_calls` spans in Tempo.
 */
import * as dashboard from "@grafana/grafana-foundation-sdk/dashboard";
import {
  ATTR_GEN_AI_CONVERSATION_ID,
  SPAN_REPAIR_TOOL_CALLS,
} from "../../../src/telemetry/semconv.js";
import { labels } from "../names.js";
import { THREADS_DASHBOARD_UID } from "./dashboard-frame.js";
import { PROCESS_VARIABLES } from "./filters.js";
import { DATASOURCE_VARIABLE, interpolate, TEMPO_VARIABLE } from "./variables.js";

/** The thread's label, as a data link reads it from a table row. */
export const THREAD_FIELD = `__data.fields.${labels.thread}`;
/** The thread's label, as a data link reads it from a series. */
export const THREAD_SERIES_LABEL = `__field.labels.${labels.thread}`;

/** A variable's current value as URL parameters, for links that keep the dashboard's choices. */
function carried(variables: readonly string[]): string[] {
  return [DATASOURCE_VARIABLE, TEMPO_VARIABLE, ...variables].map((variable) =>
    interpolate(`${variable}:queryparam`),
  );
}

/** A data link from a thread to the Threads dashboard, filtered on that thread. */
export function threadDashboardLink(thread: string): dashboard.DashboardLinkBuilder {
  const url = [
    `/d/${THREADS_DASHBOARD_UID}?var-thread=${interpolate(`${thread}:percentencode`)}`,
    ...carried(PROCESS_VARIABLES),
    interpolate("__url_time_range"),
  ].join("&");
  return new dashboard.DashboardLinkBuilder("Show this thread").url(url);
}

/**
 * The TraceQL query of a thread's repairs: the `repair_tool_calls` spans whose
 * `gen_ai.conversation.id` is the thread (the same value, mapped or hashed alike, as the metric's
 * label).
 */
export function threadTraceQuery(thread: string): string {
  return `{ name = "${SPAN_REPAIR_TOOL_CALLS}" && span."${ATTR_GEN_AI_CONVERSATION_ID}" = "${thread}" }`;
}

/**
 * A data link from a thread to its repairs in Grafana Explore, on the Tempo data source variable,
 * over the dashboard's time range. The JSON is URL-encoded; Grafana fills in the `${...}` parts.
 */
export function threadTracesLink(thread: string): dashboard.DashboardLinkBuilder {
  const tokens = {
    THREAD: interpolate(`${thread}:percentencode`),
    TEMPO: interpolate(TEMPO_VARIABLE),
    FROM: interpolate("__from"),
    TO: interpolate("__to"),
  };
  const pane = {
    datasource: "__TEMPO__",
    queries: [
      {
        refId: "A",
        datasource: { type: "tempo", uid: "__TEMPO__" },
        queryType: "traceql",
        query: threadTraceQuery("__THREAD__"),
        limit: 20,
      },
    ],
    range: { from: "__FROM__", to: "__TO__" },
  };
  let panes = encodeURIComponent(JSON.stringify({ repairs: pane }));
  for (const [token, value] of Object.entries(tokens)) {
    panes = panes.replaceAll(`__${token}__`, value);
  }
  return new dashboard.DashboardLinkBuilder("Repairs of this thread in Tempo")
    .url(`/explore?schemaVersion=1&panes=${panes}`)
    .targetBlank(true);
}
