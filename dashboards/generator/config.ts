/**
 * The tunables of the monitoring bundle's rules and alerts, in one place. Change a value here and
 * run `npm run dashboards`: the Prometheus rules, the Grafana-managed alerts, the dashboards and
 * their texts are regenerated from it. The promtool unit tests
 * (`dashboards/prometheus/rules.test.yml`) are written by hand for these defaults, so they fail
 * when a threshold or the runbook's URL changes and must be updated with it.
 *
 * Nothing here (nor anywhere in the generator) reads the environment: the generated files depend
 * on this file alone, so they regenerate identically on every machine.
 */

// Grafana expands `${...}` when it reads a provisioning file; escaped here so TypeScript does not.
const PROMETHEUS_DATASOURCE_UID = `\${PROMETHEUS_DATASOURCE_UID}`;

/** One pair of windows of a multi-window burn-rate alert, and the burn rate both must exceed. */
export interface BurnWindows {
  /** The long window: how much budget must have burned, so that a short burst does not alert. */
  readonly long: string;
  /**
   * The short window, a twelfth of the long one: the burn must still be going on, so the alert
   * resolves within this window after the incident ends instead of hours later.
   */
  readonly short: string;
  /** How many times faster than the objective allows the budget must burn in both windows. */
  readonly factor: number;
}

/** A level of the spike alerts: how far above its baseline, and above the objective, a share is. */
export interface SpikeLevel {
  /** The share over the long window must exceed the baseline this many times. */
  readonly factor: number;
  /** Both windows must burn faster than this many times the objective, the spike's floor. */
  readonly floor: number;
}

/** The bundle's tunables. Every duration is a Prometheus duration string. */
export const bundleConfig = Object.freeze({
  /**
   * The `job` of the applications using the middleware. Only `ToolCallResilienceTelemetryMissing`
   * selects on it; every other rule, and the dashboards, keep whatever `job` the series carry.
   *
   * Where Prometheus scrapes the applications, it is the scrape configuration's `job_name`. Where
   * they push OTLP (to Prometheus's OTLP receiver, or through an OpenTelemetry Collector), it is
   * the `service.name` of the resource they push (`OTEL_SERVICE_NAME`), or
   * `<service.namespace>/<service.name>` when the resource has a `service.namespace`: Prometheus
   * makes `job` of them.
   */
  job: "tool-call-resilience",

  /**
   * Extra label matchers every rule and panel adds to the library's series, comma-separated, as in
   * a selector: `env="prod"` keeps one Prometheus's rules to one environment. Empty: every series
   * of the library's names.
   */
  selector: "",

  /**
   * The labels that name one process (a scrape target, or a pushing `service.instance.id`). Every
   * rule sums them away (`sum without`), so a fleet's model is one series however many replicas
   * serve it, and a restarted pod (a new `instance`) continues it; only the per-instance outlier
   * alert keeps them. Add the label your service discovery gives each replica (`pod` on
   * Kubernetes) if it is not here.
   */
  processLabels: Object.freeze(["instance", "pod"]),

  /**
   * The labels that say where a process runs, outermost first, as the kubernetes-mixin's
   * `clusterLabel`. The rules keep every label they do not sum away, these included (so staging
   * and prod, or two clusters, are never merged); these are also shown in every alert's
   * description, grouped by in `ToolCallResilienceTelemetryMissing`, and offered as variables by
   * the dashboards. A label that a series does not carry is simply empty.
   */
  topologyLabels: Object.freeze(["cluster", "namespace"]),

  /**
   * Where `dashboards/runbook.md` is published: an absolute http(s) URL, required, since
   * notifications (Alertmanager, Grafana) carry the `runbook_url` as it is and a relative one
   * opens nothing. Every alert's `runbook_url` is `${runbookBaseUrl}#<lowercased alert name>`
   * (the anchor of the alert's heading in the runbook), and the dashboards link to it. Point it at
   * your own copy when you change the runbook, then run `npm run dashboards` and update the
   * `runbook_url` expectations in `dashboards/prometheus/rules.test.yml`.
   */
  runbookBaseUrl:
    "https://github.com/tool-call-resilience/tool-call-resilience/blob/main/dashboards/runbook.md",

  /**
   * The objective the dangling alerts defend: at most this share of a model's tool calls may be
   * left without a result. Its complement is the error budget that the burn-rate alerts watch.
   */
  objective: Object.freeze({
    /**
     * For every model not listed in {@link models}: 0.5 %, one tool call in 200. A healthy agent
     * loses fewer (users pressing stop, the odd timeout). The figure also sets what pages: with
     * the burn-rate pairs below, a sustained 3 % (6x) pages within 6 hours and 7.2 % (14.4x)
     * within the hour, and 1.5 % (3x) opens a ticket within a day. At the 2 % this used to be, a
     * model losing one tool call in ten (an incident for any agent product) never paged.
     */
    default: 0.005,
    /**
     * Objectives of particular models: a regular expression, matched against the whole
     * `gen_ai_request_model` as Prometheus does (`gpt-4o(-.*)?`), to the share. The first match
     * wins. Example: `{ "claude-3-5-haiku.*": 0.02 }`.
     */
    models: Object.freeze({}) as Readonly<Record<string, number>>,
  }),

  /**
   * The dangling-call burn-rate alert, `ToolCallResilienceDanglingBudgetBurn`: the multi-window,
   * multi-burn-rate alerts of the SRE workbook. A burn rate of 1 spends the budget exactly; 14.4
   * over one hour spends 2 % of a 30-day budget. It pages while both windows of a pair burn faster
   * than their factor, so it keeps firing as long as the incident lasts (the short window) and a
   * burst too short to matter never pages (the long window).
   */
  burnRate: Object.freeze({
    /** Pairs that page (`severity: critical`): a fast burn, or a slower one that lasts. */
    page: Object.freeze([
      Object.freeze({ long: "1h", short: "5m", factor: 14.4 }),
      Object.freeze({ long: "6h", short: "30m", factor: 6 }),
    ]) as readonly BurnWindows[],
    /**
     * Pairs that warn (`severity: warning`, a ticket): a slow burn over a day, which also catches
     * a model too quiet for the paging windows to hold enough calls.
     */
    ticket: Object.freeze([
      Object.freeze({ long: "1d", short: "2h", factor: 3 }),
    ]) as readonly BurnWindows[],
    /**
     * Dangling calls the long window of a pair (the spike's too) must hold before it counts: a
     * burn computed over a handful of calls (one of three) is chance, not an incident, and a
     * single dangling call never alerts. Kept low so that a quiet model whose every call dangles
     * still alerts: at 0.04 tool calls per second it has 144 an hour.
     */
    minimumDanglingCalls: 10,
    /**
     * How long a paging pair must hold. `ToolCallResilienceToolDanglingBudgetBurn` (warning) uses
     * the paging pairs and this too, per tool and against the default objective, so that a page
     * says which tool, and a tool failing in every model is seen as one.
     */
    pageFor: "2m",
    /** How long a ticket pair must hold. */
    ticketFor: "1h",
    /**
     * How long an alert keeps firing once its condition no longer holds, so that a short window
     * dipping for a minute mid-incident does not resolve the page and raise a new one.
     */
    keepFiringFor: "10m",
  }),

  /**
   * `ToolCallResilienceDanglingSpike` (per model) and `ToolCallResilienceToolDanglingSpike` (per
   * tool, a warning): the share of tool calls that dangle jumped far above its own recent level.
   * Budget burn alone cannot see a jump that stays under the burn rates' factors (0.5 % to 2 % is
   * 4x the objective), and sees a larger one only once enough budget has burned.
   *
   * The baseline is the lowest share of a whole day ({@link baselineWindow}) among those that ended
   * between a day and {@link baselineEndsBefore} ago, so the incident's own calls do not lift it
   * for a day. It resolves once either window falls back under the level's figures.
   */
  spike: Object.freeze({
    /** The window whose share is compared with the baseline; it must hold enough dangling calls. */
    long: "30m",
    /** The spike must still be going on over this window too, so a burst of a minute never fires. */
    short: "5m",
    /** The window of each daily share the baseline is the lowest of. */
    baselineWindow: "1d",
    /** The baseline's shares end at least this long ago, after the current windows. */
    baselineEndsBefore: "1h",
    /**
     * Pages (`severity: critical`, per model): the long window's share is {@link SpikeLevel.factor}
     * times the baseline, and both windows burn at least {@link SpikeLevel.floor} times the
     * objective. The floor is the lowest burn rate of a paging pair, so a spike that goes on is
     * bound to meet a paging burn-rate pair before its baseline catches up, a day later.
     */
    page: Object.freeze({ factor: 5, floor: 6 }) as SpikeLevel,
    /**
     * Warns (`severity: warning`, per model): as {@link page}, at the ticket's burn rate, so that
     * a sustained spike meets the ticket pair within a day.
     */
    warn: Object.freeze({ factor: 3, floor: 3 }) as SpikeLevel,
    /** How long the condition must hold. */
    for: "10m",
    /** How long it keeps firing after, so that one quiet evaluation does not resolve it. */
    keepFiringFor: "10m",
  }),

  /**
   * `ToolCallResilienceInstanceDanglingOutlier` (warning): one process's share of a model's tool
   * calls that dangle, over {@link window}, is far above its peers': a bad replica, a node, a
   * version being rolled out.
   */
  instanceOutlier: Object.freeze({
    /** Window of the comparison. */
    window: "30m",
    /** How many times the share of the model's other processes this one's must be. */
    factor: 3,
    /**
     * And how many times the model's objective, so that a replica at 0.4 % among peers at 0.1 %
     * does not warn.
     */
    minimumBurnRate: 3,
    /** Dangling calls the process must have counted in the window. */
    minimumDanglingCalls: 10,
    /** How long it must hold. */
    for: "10m",
  }),

  /**
   * `ToolCallResilienceFailingOpen` (warning): the library itself failed on a model call and let the
   * history through unrepaired (`outcome="failed_open"`), so that call may have reached the
   * provider broken. It fires for {@link window} after each failure.
   */
  failingOpen: Object.freeze({ window: "15m" }),

  /**
   * `ToolCallResilienceCardinalityOverflow` (warning): an instrument counted new attribute sets in its
   * overflow series over {@link window}, so those calls are counted without their model or tool.
   * It follows the overflow counting, not the overflow series' presence, so it clears once nothing
   * new overflows.
   */
  cardinalityOverflow: Object.freeze({ window: "30m", for: "5m" }),

  /** `ToolCallResilienceTelemetryMissing`: the job's metrics stopped reaching Prometheus. */
  telemetryMissing: Object.freeze({
    /**
     * How long a target of {@link bundleConfig.job} may fail its scrapes, nothing of the job may
     * arrive at all (no successful scrape, no push), or its processes may report without any
     * model-call series, before it warns. Long enough to ride out a rolling deploy and the first
     * minutes of a restarted process that has not served a model call yet. On the OTLP path
     * Prometheus keeps a stopped push for its lookback (5 minutes), so it fires that much later.
     */
    for: "10m",
  }),

  /** Grafana-managed alerting (`grafana/provisioning/alerting/tool-call-resilience.yml`). */
  grafana: Object.freeze({
    /** Organization the rules are provisioned into. */
    orgId: 1,
    /** Folder title the rule group is stored in; Grafana creates it when missing. */
    folder: "Tool-call resilience",
    /** Name of the rule group. */
    group: "tool-call-resilience",
    /** How often Grafana evaluates the group, like Prometheus's usual `evaluation_interval`. */
    interval: "1m",
    /**
     * UID of the Prometheus data source the rules query. Grafana replaces `${...}` with the
     * environment variable when it reads the provisioning file, so one file serves every Grafana:
     * set `PROMETHEUS_DATASOURCE_UID` in Grafana's environment.
     */
    datasourceUid: PROMETHEUS_DATASOURCE_UID,
  }),
});

/** The type of {@link bundleConfig}. */
export type BundleConfig = typeof bundleConfig;

/** The configuration's `selector` as a list of matchers: empty when it is blank. */
export function selectorOf(config: BundleConfig): string[] {
  return config.selector.trim() === "" ? [] : [config.selector.trim()];
}
