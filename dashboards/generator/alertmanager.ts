/**
 * The Alertmanager side of the alerts: a fragment of an Alertmanager configuration, a `route` to
 * add under the root route's `routes` and `inhibit_rules` to append to the configuration's own,
 * so that one incident makes one page.
 *
 * - **Grouping.** Every alert of the bundle is grouped by `alertname`, `job` and the topology
 *   labels (`bundleConfig.topologyLabels`), never by model, tool or instance: three models burning
 *   their budget in one deploy are one notification listing the three, not three pages. A child
 *   route per severity keeps pages and tickets apart (each can get its own `receiver`).
 * - **Inhibition.** A firing page silences what it already explains: the critical
 *   `ToolCallResilienceDanglingBudgetBurn` of a model inhibits the warning of the same alert for
 *   that model (same `job`, provider, model and topology), and the per-tool and per-instance
 *   warnings of the same job and topology (a tool or a replica failing is what the page is about).
 *   `ToolCallResilienceTelemetryMissing` for a whole job (no `instance`: nothing arrives, or nothing
 *   counts model calls) inhibits the job's other warnings, computed from telemetry that is not
 *   there, but never a page: a page must not be hidden by a ticket.
 *
 * Every label name comes from `names.ts` and the configuration, every alert name from the rules.
 */
import { type BundleConfig, bundleConfig } from "./config.js";
import { labels } from "./names.js";
import { type AlertRule, alertRules, type Severity, toYaml } from "./prometheus-rules.js";

/** Path of the fragment, relative to `dashboards/`. */
export const ALERTMANAGER_PATH = "alertmanager/tool-call-resilience.yml";

/** The labels Prometheus and Alertmanager themselves give every alert. */
const ALERTNAME = "alertname";
/** The label every rule of the bundle sets. */
const SEVERITY = "severity";

/** How long Alertmanager waits before the first notification of a group, and between later ones. */
export interface GroupTimings {
  /** Before the first notification of a new group: alerts arriving together are sent together. */
  readonly groupWait: string;
  /** Before notifying again about a group that changed (a new alert, a resolved one). */
  readonly groupInterval: string;
  /** Before notifying again about a group that did not change, while it fires. */
  readonly repeatInterval: string;
}

/** The timings of each severity's route. Alertmanager durations (`500ms`, `30s`, `4h`, `1d`). */
export type AlertmanagerTimings = Readonly<Record<"critical" | "warning", GroupTimings>>;

/**
 * The default timings. Pages: 30 s for the alerts of one incident to arrive together (the models
 * of a deploy cross their thresholds within the rules' `for` of each other), 5 minutes between
 * updates, and a reminder every 4 hours while unresolved. Tickets: a minute of wait, so that a
 * page raised with them (the same `for`) is there to inhibit them first, then updates every 30
 * minutes and a reminder a day.
 */
export const alertmanagerTimings: AlertmanagerTimings = Object.freeze({
  critical: Object.freeze({ groupWait: "30s", groupInterval: "5m", repeatInterval: "4h" }),
  warning: Object.freeze({ groupWait: "1m", groupInterval: "30m", repeatInterval: "1d" }),
});

/** An Alertmanager route, as the configuration file spells it. */
export interface AlertmanagerRoute {
  readonly receiver?: string;
  readonly matchers?: readonly string[];
  readonly group_by?: readonly string[];
  readonly group_wait?: string;
  readonly group_interval?: string;
  readonly repeat_interval?: string;
  readonly routes?: readonly AlertmanagerRoute[];
}

/** An Alertmanager inhibition rule, as the configuration file spells it. */
export interface InhibitRule {
  /** Matchers an alert must satisfy to inhibit. */
  readonly source_matchers: readonly string[];
  /** Matchers an alert must satisfy to be inhibited. */
  readonly target_matchers: readonly string[];
  /** Labels whose values must be equal (or missing on both) on the source and the target. */
  readonly equal: readonly string[];
}

/** The fragment: a route for the bundle's alerts and the inhibition rules among them. */
export interface AlertmanagerFragment {
  readonly route: AlertmanagerRoute;
  readonly inhibit_rules: readonly InhibitRule[];
}

/** A matcher as Alertmanager parses it; the value is a Go string literal. */
function matcher(label: string, operator: "=" | "=~" | "!=", value: string): string {
  return `${label}${operator}${JSON.stringify(value)}`;
}

/** An alternation of literal names, as a Prometheus regular expression (anchored by Alertmanager). */
function alternation(names: readonly string[]): string {
  return [...new Set(names)].map((name) => name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|");
}

/**
 * The Alertmanager fragment of a configuration and its rules.
 *
 * @param config the bundle's configuration (its topology labels)
 * @param rules the alert rules built from it (their names and severities)
 * @param timings each severity's group timings
 */
export function buildAlertmanagerFragment(
  config: BundleConfig = bundleConfig,
  rules: readonly AlertRule[] = alertRules,
  timings: AlertmanagerTimings = alertmanagerTimings,
): AlertmanagerFragment {
  const topology = [...config.topologyLabels];
  const [budgetBurn, spike] = [
    "ToolCallResilienceDanglingBudgetBurn",
    "ToolCallResilienceDanglingSpike",
  ];
  const toolAlerts = [
    "ToolCallResilienceToolDanglingBudgetBurn",
    "ToolCallResilienceToolDanglingSpike",
  ];
  const outlier = "ToolCallResilienceInstanceDanglingOutlier";
  const missing = "ToolCallResilienceTelemetryMissing";
  const severities = [...new Set(rules.map((rule) => rule.labels.severity))];
  const bySeverity = (severity: Exclude<Severity, "info">): AlertmanagerRoute => ({
    matchers: [matcher(SEVERITY, "=", severity)],
    // A page is the incident of a job and place, whichever alert carries it: the spike and the
    // burn rate that takes over from it are one group, so the second updates the page.
    ...(severity === "critical" ? { group_by: [labels.job, ...topology] } : {}),
    group_wait: timings[severity].groupWait,
    group_interval: timings[severity].groupInterval,
    repeat_interval: timings[severity].repeatInterval,
  });
  const route: AlertmanagerRoute = {
    matchers: [matcher(ALERTNAME, "=~", alternation(rules.map((rule) => rule.alert)))],
    group_by: [ALERTNAME, labels.job, ...topology],
    group_wait: timings.critical.groupWait,
    group_interval: timings.critical.groupInterval,
    repeat_interval: timings.critical.repeatInterval,
    routes: (["critical", "warning"] as const)
      .filter((severity) => severities.includes(severity))
      .map(bySeverity),
  };
  const modelAlerts = matcher(ALERTNAME, "=~", alternation([budgetBurn, spike]));
  const page = [modelAlerts, matcher(SEVERITY, "=", "critical")];
  const warnings = rules
    .filter((rule) => rule.labels.severity === "warning" && rule.alert !== missing)
    .map((rule) => rule.alert);
  const wholeJob = [matcher(ALERTNAME, "=", missing), matcher(labels.instance, "=", "")];
  const inhibitRules: InhibitRule[] = [
    // A model's page (its budget burning, or its spike) holds back the model's warnings.
    {
      source_matchers: page,
      target_matchers: [modelAlerts, matcher(SEVERITY, "=", "warning")],
      equal: [labels.job, labels.provider, labels.model, ...topology],
    },
    // The tools of a paging model: the tool alerts carry no model, so the page holds back those of
    // its job and place (copies: the YAML would otherwise alias the lists).
    {
      source_matchers: [...page],
      target_matchers: [
        matcher(ALERTNAME, "=~", alternation(toolAlerts)),
        matcher(SEVERITY, "=", "warning"),
      ],
      equal: [labels.job, ...topology],
    },
    // The replica of a paging model that makes it page: the same model, not another one's.
    {
      source_matchers: [...page],
      target_matchers: [matcher(ALERTNAME, "=", outlier), matcher(SEVERITY, "=", "warning")],
      equal: [labels.job, labels.provider, labels.model, ...topology],
    },
    // Nothing of the job arrives anywhere (`absent()`), or its processes report without counting
    // a single model call: the alert names the job alone, so it holds back the job's warnings
    // everywhere, its per-target TelemetryMissing alerts included.
    {
      source_matchers: [...wholeJob, ...topology.map((label) => matcher(label, "=", ""))],
      target_matchers: [
        matcher(ALERTNAME, "=~", alternation([...warnings, missing])),
        matcher(SEVERITY, "=", "warning"),
      ],
      equal: [labels.job],
    },
  ];
  return { route, inhibit_rules: inhibitRules };
}

/** How to merge the fragment, at the top of the generated file. */
const USAGE = `# An Alertmanager configuration fragment for the tool-call-resilience alerts. Merge it into your
# alertmanager.yml: add \`route\` as the first entry of your root route's \`routes\` (set a
# \`receiver\` on it, or on its severity routes: your pager for critical, your ticket queue for
# warning; without one they use the root route's), and append \`inhibit_rules\` to yours. Check the
# result with \`amtool check-config alertmanager.yml\`. See dashboards/README.md (Alertmanager).
`;

/**
 * The fragment as a file, by path relative to `dashboards/`.
 *
 * @param fragment the fragment to write; default: the one of {@link bundleConfig}
 */
export function renderAlertmanager(
  fragment: AlertmanagerFragment = buildAlertmanagerFragment(),
): Record<string, string> {
  const text = toYaml(fragment);
  const [header, ...rest] = text.split("\n");
  return { [ALERTMANAGER_PATH]: [header, USAGE.trimEnd(), ...rest].join("\n") };
}
