/**
 * The Grafana dashboards of the monitoring bundle, listed: each is built in its own module under
 * `dashboards/` with the Grafana Foundation SDK and written here as classic dashboard JSON (the
 * format Grafana's import screen and file provisioning read), next to the provisioning file that
 * loads them. Every query is assembled in `dashboards/queries.ts` from the recorded series of
 * `prometheus-rules.ts` and `dashboard-rules.ts`, named after the instruments in
 * `src/telemetry/semconv.ts`, so the dashboards show the figures the alerts evaluate.
 *
 * They answer three questions: which model, tool, instance or thread leaves tool calls dangling,
 * since when (the alerts' own windows, and their firing as annotations), and whether it is getting
 * worse (the burn rate against each paging and ticket threshold).
 */
import { overviewDashboard } from "./dashboards/overview.js";
import { provisioningFile } from "./dashboards/provisioning.js";
import { threadsDashboard } from "./dashboards/threads.js";

export { OVERVIEW_DASHBOARD_UID, THREADS_DASHBOARD_UID } from "./dashboards/dashboard-frame.js";
export { PROCESS_VARIABLES } from "./dashboards/filters.js";
export { threadTraceQuery } from "./dashboards/links.js";
export { INSTANCE_TABLE_TITLE } from "./dashboards/overview-instances.js";
export { INSTANCE_WINDOW, MINIMUM_TOOL_CALLS, PANEL_WINDOWS } from "./dashboards/queries.js";

function json(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

/**
 * Renders the dashboards and their provisioning file.
 *
 * @returns File text by path relative to `dashboards/`: the classic dashboard JSON of the overview
 * and the per-thread dashboard under `grafana/`, and the dashboard provider under
 * `grafana/provisioning/dashboards/`.
 */
export function renderDashboards(): Record<string, string> {
  return {
    "grafana/tool-call-resilience-overview.json": json(overviewDashboard()),
    "grafana/tool-call-resilience-threads.json": json(threadsDashboard()),
    "grafana/provisioning/dashboards/tool-call-resilience.yml": provisioningFile(),
  };
}
