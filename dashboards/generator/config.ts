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
   * Where `dashboards/runbook.md` is published: the dashboards' *Runbook* link, and the base of
   * every alert's `runbook_url`, which is `${runbookBaseUrl}#<lowercased alert name>` (the GitHub
   * anchor of the alert's heading in the runbook).
   *
   * The default, the relative `runbook.md`, only resolves where the files sit next to each other
   * (a repository browser): Grafana resolves it against its own address, and an Alertmanager or
   * Grafana notification carries it as is, so neither opens the runbook. Operators should set an
   * absolute URL, for example
   * `https://github.com/<owner>/<repository>/blob/main/dashboards/runbook.md`, then run
   * `npm run dashboards` and update the `runbook_url` expectations in
   * `dashboards/prometheus/rules.test.yml`.
   */
  runbookBaseUrl: "runbook.md",

  /** `ToolCallResilienceDanglingRatioHigh`: too many of a model's tool calls dangle. */
  danglingRatio: Object.freeze({
    /**
     * Share of a model's tool calls left without a result over 5 minutes above which it warns.
     * User cancellations alone rarely reach 1 to 2 %; a sustained 5 % means calls are being lost
     * systematically (tools timing out, runs dying, interrupts left unanswered).
     */
    threshold: 0.05,
    /**
     * Tool calls per second (over 5 minutes) a model must issue for its share to count: at 0.1/s
     * (30 calls in 5 minutes) a 5 % share is at least two dangling calls, not one unlucky
     * cancellation among a handful of calls.
     */
    minimumToolCallRate: 0.1,
    /** How long the share must stay above the threshold: two whole 5-minute windows. */
    for: "10m",
  }),

  /**
   * `ToolCallResilienceDanglingSpike` (per model, critical) and
   * `ToolCallResilienceToolDanglingSpike` (per tool, warning): the dangling share jumps against
   * its own past. The share, not the count of dangling calls, is compared, so that more traffic
   * alone does not page, and a baseline computed over a short history (a new model, a fresh
   * Prometheus) is not biased: both counts of the share cover the same window.
   */
  danglingSpike: Object.freeze({
    /**
     * How many times its own share over the hour before (see {@link baselineOffset}) the 5-minute
     * share must be. 3x stays clear of the ordinary swings of a share measured over a few hundred
     * calls.
     */
    factor: 3,
    /**
     * How long ago the baseline hour ends: the 5-minute window plus {@link for}, so that a spike
     * has entirely left the baseline until the alert has had time to fire. With the baseline
     * ending only 5 minutes ago, a spike raises its own baseline while `for` runs, and with a
     * short history (a fresh Prometheus, the demo) it can cancel itself out before it fires.
     * Raise it with `for`.
     */
    baselineOffset: "10m",
    /**
     * Dangling calls per second (over 5 minutes) below which no spike pages: 0.05/s is 15 calls in
     * 5 minutes. Below that a quiet model going from one dangling call to four triples its share
     * without anything worth waking someone for; the dashboards still show it.
     */
    minimumDanglingRate: 0.05,
    /** How long the spike must last. */
    for: "5m",
  }),

  /** `ToolCallResilienceCardinalityOverflow`: an instrument hit its cardinality limit. */
  cardinalityOverflow: Object.freeze({
    /**
     * How long an overflow series must be present. It stays until the process restarts, so this
     * only skips a scrape that flickers.
     */
    for: "5m",
  }),

  /** `ToolCallResilienceTelemetryMissing`: the job's metrics stopped reaching Prometheus. */
  telemetryMissing: Object.freeze({
    /**
     * How long nothing of {@link bundleConfig.job} may arrive (no successful scrape, no push), or
     * its processes may report without any model-call series, before it warns. Long enough to
     * ride out a rolling deploy and the first minutes of a restarted process that has not served a
     * model call yet. On the OTLP path the alert fires this long after Prometheus's lookback (5
     * minutes) has passed since the last push.
     */
    for: "15m",
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
