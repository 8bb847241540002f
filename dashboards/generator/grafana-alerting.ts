/**
 * The alerts as Grafana-managed alert rules, for users who alert from Grafana rather than from
 * Prometheus and Alertmanager: a file-provisioning file (`apiVersion: 1`, `groups`) generated
 * from the same definitions as `alerts.yml`. Each rule queries the alert's expression, which reads
 * the recording rules: the Prometheus that Grafana queries must load `recording-rules.yml`.
 *
 * Each rule is an instant query `A` that, like the Prometheus alert, returns only the breaching
 * series, each with a value above 0, and a threshold expression `B` (`A > 0`) as the condition. No
 * reduce step: an instant query already gives one number per series (Grafana flags a reduce of it
 * as not needed), and reducing a range query would keep a series that breached minutes ago.
 *
 * Provisioning-time interpolation: Grafana replaces `$NAME` and `${NAME}` with environment variables
 * in most fields of this file, notably `datasourceUid` (hence `${PROMETHEUS_DATASOURCE_UID}`) and
 * labels, but not in a query's `model` (the PromQL) nor in annotations, whose `{{ $labels.x }}`
 * templates therefore reach the alert templating intact. Annotations only expand the braced
 * `${NAME}` form in recent versions, so none of ours contains `${`.
 */
import { bundleConfig } from "./config.js";
import { type AlertRule, alertRules, toYaml } from "./prometheus-rules.js";

/** Ref id of the Prometheus query. */
const QUERY = "A";
/** Ref id of the threshold expression, the rule's condition. */
const CONDITION = "B";
/** Uid (and type) Grafana gives its server-side expressions. */
const EXPRESSION_DATASOURCE = "__expr__";

/** Path of the provisioning file, relative to `dashboards/`. */
export const GRAFANA_ALERTING_PATH = "grafana/provisioning/alerting/tool-call-resilience.yml";

/**
 * An annotation template rewritten for Grafana: Prometheus's `$value` is the alert's value, while
 * Grafana's `$value` is a string describing every query; the query's number is
 * `$values.A.Value`.
 */
export function grafanaTemplate(text: string): string {
  return text.replace(/\$value\b/g, () => `$values.${QUERY}.Value`);
}

/** Whether another rule of the bundle has this rule's alert name (at another severity). */
function shared(rule: AlertRule): boolean {
  return alertRules.filter((other) => other.alert === rule.alert).length > 1;
}

/**
 * Uid of an alert's Grafana rule: its name lowercased without the common prefix, after `tcr-`,
 * and its severity where two rules share the name (at most 40 characters, as Grafana wants).
 */
function grafanaRuleUid(rule: AlertRule): string {
  const name = rule.alert.replace(/^ToolCallResilience/, "").toLowerCase();
  return shared(rule) ? `tcr-${name}-${rule.labels.severity}` : `tcr-${name}`;
}

/**
 * Title of an alert's Grafana rule, which Grafana makes its `alertname`: the Prometheus alert's
 * name, with its severity in parentheses where two rules share the name, since Grafana wants the
 * titles of a folder unique.
 */
export function grafanaRuleTitle(rule: AlertRule): string {
  return shared(rule) ? `${rule.alert} (${rule.labels.severity})` : rule.alert;
}

function grafanaRule(rule: AlertRule) {
  const expressionDatasource = { type: EXPRESSION_DATASOURCE, uid: EXPRESSION_DATASOURCE };
  return {
    uid: grafanaRuleUid(rule),
    title: grafanaRuleTitle(rule),
    condition: CONDITION,
    data: [
      {
        refId: QUERY,
        // The query's own windows (5 minutes to a day) decide what it reads; an instant query is
        // evaluated at the end of this range.
        relativeTimeRange: { from: 600, to: 0 },
        datasourceUid: bundleConfig.grafana.datasourceUid,
        model: {
          refId: QUERY,
          editorMode: "code",
          expr: rule.expr,
          instant: true,
          range: false,
          intervalMs: 60000,
          maxDataPoints: 43200,
        },
      },
      {
        refId: CONDITION,
        datasourceUid: EXPRESSION_DATASOURCE,
        model: {
          refId: CONDITION,
          type: "threshold",
          expression: QUERY,
          conditions: [{ evaluator: { type: "gt", params: [0] } }],
          datasource: expressionDatasource,
        },
      },
    ],
    // The query returns nothing while all is well, so no data means OK; an absence that matters
    // (ToolCallResilienceTelemetryMissing) is turned into a series by absent() in the query.
    noDataState: "OK",
    // A failing query is an error, reported as such (Grafana's DatasourceError), not this alert.
    execErrState: "Error",
    for: rule.for,
    // Grafana's "keep firing for" (file provisioning's `keepFiringFor`), as Prometheus's
    // keep_firing_for.
    ...(rule.keepFiringFor === undefined ? {} : { keepFiringFor: rule.keepFiringFor }),
    labels: rule.labels,
    annotations: {
      summary: rule.annotations.summary,
      description: grafanaTemplate(rule.annotations.description),
      runbook_url: rule.annotations.runbook_url,
    },
    isPaused: false,
  };
}

/** The Grafana alerting provisioning file, by path relative to `dashboards/`. */
export function renderGrafanaAlerting(): Record<string, string> {
  const settings = bundleConfig.grafana;
  const document = {
    apiVersion: 1,
    groups: [
      {
        orgId: settings.orgId,
        name: settings.group,
        folder: settings.folder,
        interval: settings.interval,
        rules: alertRules.map(grafanaRule),
      },
    ],
  };
  return { [GRAFANA_ALERTING_PATH]: toYaml(document) };
}
