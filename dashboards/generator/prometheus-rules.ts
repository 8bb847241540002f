/**
 * The Prometheus recording rules and alerts of the monitoring bundle, as data and as the two rule
 * files. Each alert carries two equivalent expressions: `expr`, which reads the recording rules
 * (cheap, and what `alerts.yml` ships), and `rawExpr`, the same condition computed from the raw
 * series, for evaluators that cannot rely on the recording rules being loaded (the Grafana-managed
 * alerts). Both are written by one function per alert, so they cannot drift apart.
 */
import { stringify } from "yaml";
import { bundleConfig } from "./config.js";
import {
  labels,
  overflowSelector,
  reportingSeries,
  type SeriesKey,
  series,
  seriesSelector,
  values,
} from "./names.js";
import { share } from "./promql.js";

/** Severity of an alert, as the `severity` label carries it. */
export type Severity = "critical" | "warning" | "info";

/** A recording rule as it appears in `recording-rules.yml`. */
export interface RecordingRule {
  /** Name of the recorded series, `level:metric:operation`. */
  readonly record: string;
  /** PromQL computing it; may read recording rules listed before it. */
  readonly expr: string;
}

/** An alerting rule, with both of its expressions. */
export interface AlertRule {
  /** PascalCase name with the `ToolCallResilience` prefix. */
  readonly alert: string;
  /**
   * PromQL reading the recording rules. Like {@link rawExpr} it returns only the breaching series,
   * each with a value above 0 (Grafana's threshold relies on that).
   */
  readonly expr: string;
  /** The same condition computed from the raw series only. */
  readonly rawExpr: string;
  /** How long the condition must hold before the alert fires. */
  readonly for: string;
  /** `severity`, and for an alert whose result may have no labels, the `job` it concerns. */
  readonly labels: Readonly<{ severity: Severity } & Record<string, string>>;
  /** `summary` (a static sentence), `description` (a template) and `runbook_url`. */
  readonly annotations: Readonly<{ summary: string; description: string; runbook_url: string }>;
}

/** The window of the current rates. */
const SHORT_WINDOW = "5m";
/** The window of the baseline. */
const LONG_WINDOW = "1h";

/** Where an expression reads a recording rule's value from. */
type Source = "recorded" | "raw";

/** How a recording rule's expression is being written: its source and a time shift. */
interface Context {
  readonly source: Source;
  readonly offset?: string;
}

/** A recording rule before it is written out: its expression depends on the context. */
interface RuleDefinition {
  readonly record: string;
  readonly build: (context: Context) => string;
}

function offsetModifier(offset: string | undefined): string {
  return offset === undefined ? "" : ` offset ${offset}`;
}

function by(grouping: readonly string[]): string {
  return `by (${grouping.join(", ")})`;
}

/**
 * A recording rule's value in an expression: the recorded series, or (for `raw`) its expression
 * inlined. An offset is pushed down to the selectors, since PromQL only shifts selectors.
 */
function use(rule: RuleDefinition, context: Context): string {
  if (context.source === "recorded") return `${rule.record}${offsetModifier(context.offset)}`;
  return `(${rule.build(context)})`;
}

/** The rate of the series `selector` selects, summed by `grouping`. */
function sumRate(
  grouping: readonly string[],
  selector: string,
  window: string,
  offset: string | undefined,
): string {
  return `sum ${by(grouping)} (rate(${selector}[${window}]${offsetModifier(offset)}))`;
}

/** The metric part of a recording rule's name: the series name without its type suffix. */
function metricOf(seriesName: string): string {
  return seriesName.replace(/_(total|bucket)$/, "");
}

/** The rates, dangling ratios and baselines of one aggregation level (per model, per tool). */
function levelRules(level: string, grouping: readonly string[]) {
  const dangling = metricOf(series.danglingToolCalls);
  const rate = (key: SeriesKey, window: string): RuleDefinition => ({
    record: `${level}:${metricOf(series[key])}:rate${window}`,
    build: ({ offset }) => sumRate(grouping, seriesSelector(key), window, offset),
  });
  // A model or tool that never had a dangling call has no dangling series at all: its share is
  // 0, not missing, so that a spike from a clean baseline is still a spike.
  const ratio = (numerator: RuleDefinition, denominator: RuleDefinition, window: string) => ({
    record: `${level}:${dangling}:ratio_rate${window}`,
    build: (context: Context) => share(use(numerator, context), use(denominator, context)),
  });
  const toolCallsShort = rate("toolCalls", SHORT_WINDOW);
  const danglingShort = rate("danglingToolCalls", SHORT_WINDOW);
  const toolCallsLong = rate("toolCalls", LONG_WINDOW);
  const danglingLong = rate("danglingToolCalls", LONG_WINDOW);
  return {
    grouping,
    toolCallsShort,
    danglingShort,
    ratioShort: ratio(danglingShort, toolCallsShort, SHORT_WINDOW),
    toolCallsLong,
    danglingLong,
    ratioLong: ratio(danglingLong, toolCallsLong, LONG_WINDOW),
  };
}

const modelGrouping = [labels.job, labels.provider, labels.model] as const;
const model = levelRules("model", modelGrouping);
const tool = levelRules("tool", [labels.job, labels.tool]);

const repairedRatio: RuleDefinition = {
  record: `model:${metricOf(series.modelCalls)}:repaired_ratio_rate${SHORT_WINDOW}`,
  // A model never repaired has no repaired series: its share is 0, not missing.
  build: ({ offset }) =>
    share(
      sumRate(
        modelGrouping,
        seriesSelector("modelCalls", `${labels.outcome}="${values.outcomeRepaired}"`),
        SHORT_WINDOW,
        offset,
      ),
      sumRate(modelGrouping, seriesSelector("modelCalls"), SHORT_WINDOW, offset),
    ),
};

// Named after the scraped histogram; it reads the pushed one (`_seconds`) too.
const repairDurationP99: RuleDefinition = {
  record: `job:${metricOf(series.repairDurationBucket)}:p99_rate${SHORT_WINDOW}`,
  build: ({ offset }) =>
    `histogram_quantile(0.99, ${sumRate([labels.job, "le"], seriesSelector("repairDurationBucket"), SHORT_WINDOW, offset)})`,
};

/** Every recording rule, each after the rules it reads. */
const ruleDefinitions: readonly RuleDefinition[] = [
  ...[model, tool].flatMap((level) => [
    level.toolCallsShort,
    level.danglingShort,
    level.ratioShort,
    level.toolCallsLong,
    level.danglingLong,
    level.ratioLong,
  ]),
  repairedRatio,
  repairDurationP99,
];

/** The recording rules, in evaluation order. */
export const recordingRules: readonly RecordingRule[] = ruleDefinitions.map((rule) => ({
  record: rule.record,
  expr: rule.build({ source: "recorded" }),
}));

/** `runbook_url` of an alert: the runbook's heading for it, as a GitHub anchor. */
export function runbookUrl(alertName: string): string {
  return `${bundleConfig.runbookBaseUrl}#${alertName.toLowerCase()}`;
}

/** A share as a percentage for a sentence: 0.05 becomes "5%". */
function percent(share: number): string {
  return `${Number((share * 100).toPrecision(6))}%`;
}

function template(label: string): string {
  return `{{ $labels.${label} }}`;
}

/** An alert before it is written out: its condition depends on where recorded values come from. */
interface AlertDefinition {
  readonly alert: string;
  readonly severity: Severity;
  readonly for: string;
  readonly condition: (source: Source) => string;
  readonly extraLabels?: Readonly<Record<string, string>>;
  readonly summary: string;
  readonly description: string;
}

const ratioSettings = bundleConfig.danglingRatio;
const spikeSettings = bundleConfig.danglingSpike;

/**
 * The spike condition of one level: its 5-minute dangling share above `factor` times its share
 * over the hour that ended `baselineOffset` ago (so the spike does not raise its own baseline),
 * and its dangling calls above the floor.
 */
function spikeCondition(level: ReturnType<typeof levelRules>, source: Source): string {
  return [
    `${use(level.ratioShort, { source })}`,
    `> ${spikeSettings.factor} * ${use(level.ratioLong, { source, offset: spikeSettings.baselineOffset })}`,
    `and on (${level.grouping.join(", ")})`,
    `${use(level.danglingShort, { source })} > ${spikeSettings.minimumDanglingRate}`,
  ].join(" ");
}

const spikeTail = `dangled over the last 5 minutes, more than ${spikeSettings.factor} times its share over the hour before the last ${spikeSettings.baselineOffset}, at over ${spikeSettings.minimumDanglingRate} dangling calls per second.`;

const watchedJob = `${labels.job}="${bundleConfig.job}"`;

/**
 * The processes of the watched job that report, one series per `job` and `instance`, on either
 * path: a scrape that succeeds (`up`, scrape path only), or a resource that arrives (`target_info`,
 * which the Prometheus exporter exposes and Prometheus writes with every OTLP push). A failed
 * scrape marks `target_info` stale at once; a push that stops leaves it for Prometheus's lookback
 * (5 minutes), after which it is gone too.
 */
const reportingProcesses = `group by (${labels.job}, ${labels.instance}) (${reportingSeries.up}{${watchedJob}} == 1 or ${reportingSeries.targetInfo}{${watchedJob}})`;

const alertDefinitions: readonly AlertDefinition[] = [
  {
    alert: "ToolCallResilienceDanglingRatioHigh",
    severity: "warning",
    for: ratioSettings.for,
    condition: (source) =>
      [
        `${use(model.ratioShort, { source })} > ${ratioSettings.threshold}`,
        `and on (${modelGrouping.join(", ")})`,
        `${use(model.toolCallsShort, { source })} > ${ratioSettings.minimumToolCallRate}`,
      ].join(" "),
    summary: "Many tool calls of a model are left without a result.",
    description: `{{ $value | humanizePercentage }} of the tool calls of model ${template(labels.model)} (provider ${template(labels.provider)}, job ${template(labels.job)}) dangled over the last 5 minutes, above the ${percent(ratioSettings.threshold)} threshold.`,
  },
  {
    alert: "ToolCallResilienceDanglingSpike",
    severity: "critical",
    for: spikeSettings.for,
    condition: (source) => spikeCondition(model, source),
    summary: "The share of dangling tool calls of a model jumped far above its own baseline.",
    description: `{{ $value | humanizePercentage }} of the tool calls of model ${template(labels.model)} (provider ${template(labels.provider)}, job ${template(labels.job)}) ${spikeTail}`,
  },
  {
    alert: "ToolCallResilienceToolDanglingSpike",
    severity: "warning",
    for: spikeSettings.for,
    condition: (source) => spikeCondition(tool, source),
    summary: "The share of dangling calls of a tool jumped far above its own baseline.",
    description: `{{ $value | humanizePercentage }} of the calls of tool ${template(labels.tool)} (job ${template(labels.job)}) ${spikeTail}`,
  },
  {
    alert: "ToolCallResilienceCardinalityOverflow",
    severity: "info",
    for: bundleConfig.cardinalityOverflow.for,
    condition: () => `count by (${labels.job}) (${overflowSelector()})`,
    summary: "A tool-call-resilience instrument reached its cardinality limit.",
    description: `Job ${template(labels.job)} has {{ $value }} overflow series (${labels.overflow}="true") of tool-call-resilience: new attribute sets, usually threads, are counted there without their labels until the process restarts.`,
  },
  {
    alert: "ToolCallResilienceTelemetryMissing",
    severity: "warning",
    for: bundleConfig.telemetryMissing.for,
    // Two causes, one alert, on either path: nothing of the job arrives (no scrape succeeds, no
    // push arrives), or its processes report but none has ever counted a model call (the
    // middleware is not installed, the SDK is not registered, the scrape or the push carries
    // another exporter's metrics). `model_calls` is the series every model call creates, so a job
    // that serves traffic always has it. `up` alone would page forever on the OTLP path, which
    // has none.
    condition: () =>
      `absent(${reportingProcesses}) or (count by (${labels.job}) (${reportingProcesses}) unless on (${labels.job}) count by (${labels.job}) (${seriesSelector("modelCalls", watchedJob)}))`,
    // The absent() branch yields a sample without labels; the rule names the job it watched.
    extraLabels: { [labels.job]: bundleConfig.job },
    summary: "Prometheus receives no tool-call-resilience telemetry.",
    description: `For ${bundleConfig.telemetryMissing.for}, {{ if $labels.${labels.job} }}{{ $value }} process(es) of job ${bundleConfig.job} have reported without counting a single model call{{ else }}nothing of job ${bundleConfig.job} has arrived: no target of the job has been scraped successfully, and none of its processes has pushed any{{ end }}.`,
  },
];

/** The alerting rules, with both expressions. */
export const alertRules: readonly AlertRule[] = alertDefinitions.map((definition) => ({
  alert: definition.alert,
  expr: definition.condition("recorded"),
  rawExpr: definition.condition("raw"),
  for: definition.for,
  labels: { severity: definition.severity, ...definition.extraLabels },
  annotations: {
    summary: definition.summary,
    description: definition.description,
    runbook_url: runbookUrl(definition.alert),
  },
}));

/** Name of the recording rule group. */
export const RECORDING_GROUP = "tool-call-resilience.rules";
/** Name of the alert group. */
export const ALERT_GROUP = "tool-call-resilience.alerts";

/** The comment every generated YAML file starts with. */
export const GENERATED_HEADER =
  "# Generated by `npm run dashboards` from dashboards/generator; do not edit by hand.\n";

/** YAML as the bundle writes it: never folded, so every expression stays on one line. */
export function toYaml(document: unknown): string {
  return `${GENERATED_HEADER}${stringify(document, { lineWidth: 0 })}`;
}

/**
 * The Prometheus rule files, by path relative to `dashboards/`. The alerts read the recording
 * rules, so Prometheus must load both files.
 */
export function renderPrometheusRules(): Record<string, string> {
  const recording = { groups: [{ name: RECORDING_GROUP, rules: recordingRules }] };
  const alerts = {
    groups: [
      {
        name: ALERT_GROUP,
        rules: alertRules.map((rule) => ({
          alert: rule.alert,
          expr: rule.expr,
          for: rule.for,
          labels: rule.labels,
          annotations: rule.annotations,
        })),
      },
    ],
  };
  return {
    "prometheus/recording-rules.yml": toYaml(recording),
    "prometheus/alerts.yml": toYaml(alerts),
  };
}
