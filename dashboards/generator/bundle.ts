/**
 * The whole monitoring bundle as files: every generated file's path (relative to `dashboards/`)
 * and its text. `write.ts` writes them; a test compares them with the committed files.
 */
import { renderAlertmanager } from "./alertmanager.js";
import { renderDashboards } from "./dashboards.js";
import { renderGrafanaAlerting } from "./grafana-alerting.js";
import { renderPrometheusRules } from "./prometheus-rules.js";

/** Generated files by path relative to `dashboards/`, in a stable order. */
export function renderBundle(): ReadonlyMap<string, string> {
  const files = {
    ...renderDashboards(),
    ...renderPrometheusRules(),
    ...renderGrafanaAlerting(),
    ...renderAlertmanager(),
  };
  return new Map(Object.entries(files).sort(([a], [b]) => a.localeCompare(b)));
}
