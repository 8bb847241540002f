/**
 * The Grafana dashboard provider file that loads the generated dashboards from disk into their
 * folder.
 */
import { GENERATED_NOTE, TAG } from "./dashboard-frame.js";

/** Folder the provisioning file puts the dashboards in. */
const DASHBOARD_FOLDER = "Tool-call resilience";
/** Directory the provisioning file tells Grafana to read the dashboard JSON files from. */
const PROVISIONED_DASHBOARDS_PATH = "/var/lib/grafana/dashboards/tool-call-resilience";

/** The text of the dashboard provider file, as YAML. */
export function provisioningFile(): string {
  return [
    "# Grafana dashboard provider for the tool-call-resilience dashboards.",
    "# Copy this file into Grafana's provisioning/dashboards directory, and the JSON files of",
    `# dashboards/grafana/ into ${PROVISIONED_DASHBOARDS_PATH} (or change options.path).`,
    `# ${GENERATED_NOTE}`,
    "apiVersion: 1",
    "providers:",
    `  - name: ${TAG}`,
    `    folder: ${DASHBOARD_FOLDER}`,
    "    type: file",
    "    disableDeletion: false",
    "    allowUiUpdates: false",
    "    options:",
    `      path: ${PROVISIONED_DASHBOARDS_PATH}`,
    "",
  ].join("\n");
}
