/**
 * The Prometheus recording rules and alerts of the monitoring bundle, as data and as the two rule
 * files. The logic lives in the recording rules, each a short step on the ones before it, named
 * `level:metric:operation` as in the Prometheus mixins; every alert reads a few recorded series
 * against its thresholds, so an on-call can read what it tests in one breath. Prometheus, and the
 * Grafana-managed alerts, need both files loaded.
 *
 * The design (see `dashboards/README.md`): an objective per model ("at most 0.5 % of tool calls
 * dangle"); multi-window burn-rate alerts against it, which keep firing while the burn lasts; spike
 * alerts against each model's and tool's own recent share, which page on a sudden rise long before
 * the budget notices and keep firing until the burn rate takes over. Every aggregation is a `sum
 * without` the labels of one process and of the library's own attributes, so that every other label
 * (`cluster`, `namespace`, an environment) stays and says where.
 */
import { stringify } from "yaml";
import { type BundleConfig, type BurnWindows, bundleConfig, selectorOf } from "./config.js";
import { dashboardRecordingRules, dashboardRecords } from "./dashboard-rules.js";
import {
  labels,
  overflowSelector,
  reportingSeries,
  scopeLabels,
  series,
  seriesSelector,
  values,
} from "./names.js";
import { growth, share } from "./promql.js";

/** Severity of an alert, as the `severity` label carries it. */
export type Severity = "critical" | "warning" | "info";

/** A recording rule as it appears in `recording-rules.yml`. */
export interface RecordingRule {
  /** Name of the recorded series, `level:metric:operation`. */
  readonly record: string;
  /** PromQL computing it; may read recording rules listed before it. */
  readonly expr: string;
}

/** An alerting rule. */
export interface AlertRule {
  /** PascalCase name with the `ToolCallResilience` prefix. */
  readonly alert: string;
  /**
   * PromQL reading the recording rules. It returns only the breaching series, each with a value
   * above 0 (Grafana's threshold relies on that).
   */
  readonly expr: string;
  /** How long the condition must hold before the alert fires. */
  readonly for: string;
  /** How long the alert keeps firing once the condition no longer holds, if at all. */
  readonly keepFiringFor?: string;
  /** `severity`, and for an alert whose result may have no labels, the `job` it concerns. */
  readonly labels: Readonly<{ severity: Severity } & Record<string, string>>;
  /** `summary` (a static sentence), `description` (a template) and `runbook_url`. */
  readonly annotations: Readonly<{ summary: string; description: string; runbook_url: string }>;
}

/** The configuration is unusable: a value the rules cannot be generated from. */
export class BundleConfigError extends Error {
  override readonly name = "BundleConfigError";
}

/** A Prometheus duration in seconds: `5m` is 300. Only the units the bundle uses. */
export function seconds(duration: string): number {
  const units: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400, w: 604_800 };
  const match = /^(\d+)([smhdw])$/.exec(duration);
  const unit = match === null ? undefined : units[match[2] as string];
  if (match === null || unit === undefined) {
    throw new BundleConfigError(`"${duration}" is not a duration such as 5m, 1h or 1d`);
  }
  return Number(match[1]) * unit;
}

/** The metric part of a recording rule's name: the series name without its type suffix. */
function metricOf(seriesName: string): string {
  return seriesName.replace(/_(total|bucket)$/, "");
}

const toolCallsMetric = metricOf(series.toolCalls);
const danglingMetric = metricOf(series.danglingToolCalls);
const ratioMetric = `${danglingMetric}_per_${toolCallsMetric.replace(/^tool_call_resilience_/, "")}`;

/** The aggregation levels the rules record. */
export type Level = "model" | "tool" | "instance";

/** What a recorded series of a level measures over a window. */
export type Quantity = "toolCalls" | "dangling" | "ratio" | "burnRate";

/**
 * The name of a recorded series: `model:tool_call_resilience_dangling_tool_calls_per_tool_calls:ratio_rate5m`
 * and its siblings. The dashboards read the rules by these names.
 */
export function recordName(level: Level, quantity: Quantity, window: string): string {
  switch (quantity) {
    case "toolCalls":
      return `${level}:${toolCallsMetric}:rate${window}`;
    case "dangling":
      return `${level}:${danglingMetric}:rate${window}`;
    case "ratio":
      return `${level}:${ratioMetric}:ratio_rate${window}`;
    case "burnRate":
      return `${level}:${danglingMetric}:burnrate${window}`;
  }
}

/**
 * The burn rate of a pair of windows: the lower of its two windows' burn rates (so above a factor
 * only where both are), recorded only where the long window holds enough dangling calls.
 */
function pairRecordName(level: "model" | "tool", pair: Omit<BurnWindows, "factor">): string {
  return `${level}:${danglingMetric}:burnrate${pair.long}_${pair.short}`;
}

/** The lowest daily share of a model's or tool's tool calls that dangled over the day before. */
export function baselineRecordName(level: "model" | "tool"): string {
  return `${level}:${ratioMetric}:ratio_baseline`;
}

/** How many times its baseline a model's or tool's share is over the spike's long window. */
export function spikeRecordName(level: "model" | "tool", window: string): string {
  return `${level}:${danglingMetric}:spike${window}`;
}

/** The name of the recorded objective of every model: the share of its tool calls that may dangle. */
export const OBJECTIVE_RECORD = `model:${danglingMetric}:objective`;

/** Each process's calls counted in an instrument's overflow series, labelled `instrument`. */
export const OVERFLOW_RECORD = "instance:tool_call_resilience_overflow_calls:sum";

/** One series per process of the job that reports: scraped successfully, or pushing. */
export const REPORTING_RECORD = "instance:tool_call_resilience_reporting:present";

/** The label `ToolCallResilienceCardinalityOverflow` names the overflowing instrument with. */
const INSTRUMENT_LABEL = "instrument";

/**
 * Everything generated from one configuration (the windows recorded per level, shortest first):
 * the tests generate it from a scaled copy of {@link bundleConfig} to run the alerts in minutes.
 */
export type RuleSet = ReturnType<typeof buildRules>;

/**
 * The labels each level of the rules sums away: those of one process (not at the instance level),
 * of the instrumentation scope, and the library's attributes the level does not keep.
 */
export function summedAwayOf(
  config: BundleConfig = bundleConfig,
): Record<Level, readonly string[]> {
  const processLabels = [...config.processLabels];
  return {
    model: [...processLabels, labels.tool, labels.reason, ...scopeLabels],
    tool: [...processLabels, labels.provider, labels.model, labels.reason, ...scopeLabels],
    instance: [labels.tool, labels.reason, ...scopeLabels],
  };
}

/**
 * The matchers every rule adds to the library's counters: the configuration's `selector`, and no
 * overflow series (the SDK's, which carries none of the attributes a level keeps, and would make
 * a model or a tool without a name; `ToolCallResilienceCardinalityOverflow` watches them).
 */
export function seriesMatchersOf(config: BundleConfig = bundleConfig): readonly string[] {
  return [...selectorOf(config), `${labels.overflow}!="true"`];
}

/** Checks what PromQL cannot: every value must be usable before a rule is written from it. */
function validate(config: BundleConfig): void {
  const fail = (message: string) => {
    throw new BundleConfigError(message);
  };
  const url = URL.canParse(config.runbookBaseUrl) ? new URL(config.runbookBaseUrl) : undefined;
  if (url?.protocol !== "https:" && url?.protocol !== "http:") {
    fail(
      `runbookBaseUrl must be an absolute http(s) URL where dashboards/runbook.md is published (a notification carries runbook_url as it is), got "${config.runbookBaseUrl}"`,
    );
  }
  const { burnRate, spike } = config;
  if (burnRate.page.length === 0) fail("burnRate.page must hold at least one pair of windows");
  const pairs = [...burnRate.page, ...burnRate.ticket];
  const objectives = [
    ["objective.default", config.objective.default] as const,
    ...Object.entries(config.objective.models).map(
      ([model, value]) => [`objective.models["${model}"]`, value] as const,
    ),
  ];
  const factors = [...pairs.map((pair) => pair.factor), spike.page.floor, spike.warn.floor];
  for (const [name, objective] of objectives) {
    if (!(objective > 0 && objective < 1)) {
      fail(`${name} must be a share between 0 and 1, got ${objective}`);
    }
    const highest = Math.max(...factors);
    if (highest * objective >= 1) {
      fail(
        `${name} (${objective}) times the burn rate ${highest} is a share of 100% or more, which can never be reached: lower the factor or the objective`,
      );
    }
  }
  for (const pair of [...pairs, spike]) {
    if (seconds(pair.short) >= seconds(pair.long)) {
      fail(`the short window ${pair.short} must be shorter than the long window ${pair.long}`);
    }
  }
  if (seconds(spike.baselineEndsBefore) < seconds(spike.long)) {
    fail(
      `spike.baselineEndsBefore (${spike.baselineEndsBefore}) must be at least spike.long (${spike.long}): the baseline must not take in the window it is compared with`,
    );
  }
  const lowest = (levelPairs: readonly BurnWindows[]) =>
    Math.min(...levelPairs.map((pair) => pair.factor));
  for (const [name, level, levelPairs] of [
    ["page", spike.page, burnRate.page],
    ["warn", spike.warn, burnRate.ticket.length > 0 ? burnRate.ticket : burnRate.page],
  ] as const) {
    if (!(level.factor > 1)) fail(`spike.${name}.factor must be above 1, got ${level.factor}`);
    if (level.floor < lowest(levelPairs)) {
      fail(
        `spike.${name}.floor (${level.floor}) must be at least the lowest burn rate of the burn-rate pairs of its severity (${lowest(levelPairs)}), so that a spike that goes on is taken over by one`,
      );
    }
  }
  // Every string of these sections is a duration.
  const timed = [burnRate, spike, config.instanceOutlier, config.failingOpen];
  for (const section of [...timed, config.cardinalityOverflow, config.telemetryMissing]) {
    for (const value of Object.values(section)) if (typeof value === "string") seconds(value);
  }
  for (const label of [...config.processLabels, ...config.topologyLabels]) {
    if (!/^[a-zA-Z_][a-zA-Z0-9_]*$/.test(label)) fail(`"${label}" is not a Prometheus label name`);
  }
}

/** Windows of pairs and extra windows, each once, shortest first. */
function windowsOf(pairs: readonly Omit<BurnWindows, "factor">[], ...extra: string[]): string[] {
  const all = [...pairs.flatMap((pair) => [pair.short, pair.long]), ...extra];
  return [...new Set(all)].sort((a, b) => seconds(a) - seconds(b));
}

function template(label: string): string {
  return `{{ $labels.${label} }}`;
}

/**
 * The recording rules and alerts of a configuration.
 *
 * @throws {BundleConfigError} when a value of the configuration cannot make a working rule.
 */
export function buildRules(config: BundleConfig = bundleConfig) {
  validate(config);
  const { burnRate, spike, instanceOutlier: outlier } = config;
  const selector = selectorOf(config);
  const counterMatchers = seriesMatchersOf(config);
  const summedAway = summedAwayOf(config);
  const process = config.processLabels.join(", ");
  const spikePair = { long: spike.long, short: spike.short };
  const windows: Record<Level, readonly string[]> = {
    model: windowsOf([...burnRate.page, ...burnRate.ticket, spikePair], spike.baselineWindow),
    tool: windowsOf([...burnRate.page, spikePair], spike.baselineWindow),
    instance: [outlier.window],
  };
  const rules: RecordingRule[] = [];
  const record = (name: string, expr: string) => {
    rules.push({ record: name, expr });
    return name;
  };
  const name = recordName;

  for (const level of ["model", "tool", "instance"] as const) {
    for (const window of windows[level]) {
      const rate = (key: "toolCalls" | "danglingToolCalls") =>
        `sum without (${summedAway[level].join(", ")}) (rate(${seriesSelector(key, ...counterMatchers)}[${window}]))`;
      const toolCalls = record(name(level, "toolCalls", window), rate("toolCalls"));
      const dangling = record(name(level, "dangling", window), rate("danglingToolCalls"));
      record(name(level, "ratio", window), share(dangling, toolCalls));
    }
  }

  // One series per model with traffic over a day, valued with its objective: the first pattern of
  // `objective.models` it matches, else the default (`or` keeps the left side's series).
  const traffic = name("model", "toolCalls", spike.baselineWindow);
  const objective = record(
    OBJECTIVE_RECORD,
    [
      ...Object.entries(config.objective.models).map(
        ([pattern, value]) => `${traffic}{${labels.model}=~"${pattern}"} * 0 + ${value}`,
      ),
      `${traffic} * 0 + ${config.objective.default}`,
    ].join(" or "),
  );
  for (const window of windows.model) {
    record(name("model", "burnRate", window), `${name("model", "ratio", window)} / ${objective}`);
  }
  for (const window of windows.tool) {
    record(
      name("tool", "burnRate", window),
      `${name("tool", "ratio", window)} / ${config.objective.default}`,
    );
  }

  const levelPairs = {
    model: [...burnRate.page, ...burnRate.ticket, spikePair],
    tool: [...burnRate.page, spikePair],
  };
  const enoughCalls = Math.ceil(burnRate.minimumDanglingCalls / config.objective.default);
  for (const level of ["model", "tool"] as const) {
    for (const pair of levelPairs[level]) {
      const [long, short] = [
        name(level, "burnRate", pair.long),
        name(level, "burnRate", pair.short),
      ];
      const enough = `${name(level, "dangling", pair.long)} * ${seconds(pair.long)} >= ${burnRate.minimumDanglingCalls}`;
      record(pairRecordName(level, pair), `(${long} < ${short} or ${short}) and ${enough}`);
    }
    // A day's share is a baseline only over enough calls that the objective would be 10 dangling
    // calls: the first minutes of a model, with none dangling yet, would make a baseline of 0.
    const window = spike.baselineWindow;
    const daily = record(
      `${name(level, "ratio", window)}_with_enough_calls`,
      `${name(level, "ratio", window)} and ${name(level, "toolCalls", window)} * ${seconds(window)} >= ${enoughCalls}`,
    );
    const baseline = record(
      baselineRecordName(level),
      `min_over_time(${daily}[${window}] offset ${spike.baselineEndsBefore})`,
    );
    record(spikeRecordName(level, spike.long), `${name(level, "ratio", spike.long)} / ${baseline}`);
  }

  // The instance outlier: each process's share against its peers' (the rest of its model).
  const w = outlier.window;
  const peers = (quantity: "toolCalls" | "dangling", own: string) =>
    record(
      `${name("instance", quantity, w)}_peers`,
      `${name("model", quantity, w)} - ignoring (${process}) group_right () ${own}`,
    );
  const peersToolCalls = peers("toolCalls", name("instance", "toolCalls", w));
  const ownDangling = `(${name("instance", "dangling", w)} or ${name("instance", "toolCalls", w)} * 0)`;
  const peersDangling = peers("dangling", ownDangling);
  const peersRatio = record(
    `${name("instance", "ratio", w)}_peers`,
    share(peersDangling, peersToolCalls),
  );
  const instanceBurn = record(
    name("instance", "burnRate", w),
    `${name("instance", "ratio", w)} / ignoring (${process}) group_left () ${objective}`,
  );
  const outlierRecord = record(
    `instance:${danglingMetric}:outlier${w}`,
    `${name("instance", "ratio", w)} / ${peersRatio}`,
  );

  // The overflow counters summed within each process, per instrument, for growth().
  const scope = scopeLabels.join(", ");
  const overflowSeries = overflowSelector(...selector);
  const overflow = record(
    OVERFLOW_RECORD,
    `sum without (${scope}) (label_replace(${overflowSeries}, "${INSTRUMENT_LABEL}", "$1", "__name__", "(.+)"))`,
  );
  const watched = [`${labels.job}="${config.job}"`, ...selector].join(", ");
  const reporting = record(
    REPORTING_RECORD,
    `group by (${[labels.job, labels.instance, ...config.topologyLabels].join(", ")}) (${reportingSeries.up}{${watched}} == 1 or ${reportingSeries.targetInfo}{${watched}})`,
  );

  const topology = config.topologyLabels
    .map((label) => `{{ with $labels.${label} }}, ${label} {{ . }}{{ end }}`)
    .join("");
  const where = `job ${template(labels.job)}${topology}`;
  const pairsText = (pairs: readonly BurnWindows[]) =>
    pairs.map((pair) => `${pair.factor}x over ${pair.long} and ${pair.short}`).join(", or ");
  const over = (level: "model" | "tool", pairs: readonly BurnWindows[]) =>
    pairs.map((pair) => `${pairRecordName(level, pair)} > ${pair.factor}`).join(" or ");
  const spiking = (level: "model" | "tool", at: { factor: number; floor: number }) =>
    `${spikeRecordName(level, spike.long)} > ${at.factor} and ${pairRecordName(level, spikePair)} > ${at.floor}`;
  const spikeText = (at: { factor: number; floor: number }, objectiveText: string, verb: string) =>
    `is {{ $value | humanize }} times its baseline, the lowest share of a whole ${spike.baselineWindow} in the ${spike.baselineWindow} before the last ${spike.baselineEndsBefore} (${verb} from ${at.factor} times, while the last ${spike.long} and ${spike.short} both dangle at least ${at.floor} times ${objectiveText}, with at least ${burnRate.minimumDanglingCalls} dangling calls)`;
  const objectiveText = `${Number((config.objective.default * 100).toPrecision(6))}%`;
  const model = `model ${template(labels.model)} (provider ${template(labels.provider)}, ${where})`;

  /** An alert from its definition: `severity` and any `extraLabels` become its labels. */
  type AlertDefinition = Omit<AlertRule, "labels" | "annotations"> &
    Pick<AlertRule["annotations"], "summary" | "description"> & {
      readonly severity: Severity;
      readonly extraLabels?: Readonly<Record<string, string>>;
    };
  const alertDefinitions: AlertDefinition[] = [
    {
      alert: "ToolCallResilienceDanglingBudgetBurn",
      severity: "critical",
      for: burnRate.pageFor,
      keepFiringFor: burnRate.keepFiringFor,
      expr: over("model", burnRate.page),
      summary: "A model's tool calls dangle so often that its objective's budget is burning fast.",
      description: `The tool calls of ${model} dangle {{ $value | humanize }} times as often as its objective allows (${pairsText(burnRate.page)}, at least ${burnRate.minimumDanglingCalls} dangling calls): tool calls are being left without a result right now.`,
    },
    {
      alert: "ToolCallResilienceDanglingBudgetBurn",
      severity: "warning",
      for: burnRate.ticketFor,
      keepFiringFor: burnRate.keepFiringFor,
      expr: over("model", burnRate.ticket),
      summary: "A model's tool calls dangle more often than its objective allows.",
      description: `The tool calls of ${model} have dangled {{ $value | humanize }} times as often as its objective allows (${pairsText(burnRate.ticket)}, at least ${burnRate.minimumDanglingCalls} dangling calls).`,
    },
    {
      alert: "ToolCallResilienceDanglingSpike",
      severity: "critical",
      for: spike.for,
      keepFiringFor: spike.keepFiringFor,
      expr: spiking("model", spike.page),
      summary: "A model's tool calls suddenly dangle far more often than they did the day before.",
      description: `The share of the tool calls of ${model} that dangled over the last ${spike.long} ${spikeText(spike.page, "its objective", "pages")}: tool calls are being left without a result right now.`,
    },
    {
      alert: "ToolCallResilienceDanglingSpike",
      severity: "warning",
      for: spike.for,
      keepFiringFor: spike.keepFiringFor,
      expr: spiking("model", spike.warn),
      summary: "A model's tool calls dangle several times more often than they did the day before.",
      description: `The share of the tool calls of ${model} that dangled over the last ${spike.long} ${spikeText(spike.warn, "its objective", "warns")}.`,
    },
    {
      alert: "ToolCallResilienceToolDanglingBudgetBurn",
      severity: "warning",
      for: burnRate.pageFor,
      keepFiringFor: burnRate.keepFiringFor,
      expr: over("tool", burnRate.page),
      summary: "Calls of one tool dangle far more often than the objective allows.",
      description: `Calls of tool ${template(labels.tool)} (${where}) dangle {{ $value | humanize }} times as often as the default objective of ${objectiveText} allows, across every model that calls it (${pairsText(burnRate.page)}).`,
    },
    {
      alert: "ToolCallResilienceToolDanglingSpike",
      severity: "warning",
      for: spike.for,
      keepFiringFor: spike.keepFiringFor,
      expr: spiking("tool", spike.page),
      summary: "Calls of one tool suddenly dangle far more often than they did the day before.",
      description: `The share of the calls of tool ${template(labels.tool)} (${where}) that dangled over the last ${spike.long}, across every model that calls it, ${spikeText(spike.page, `the default objective of ${objectiveText}`, "warns")}.`,
    },
    {
      alert: "ToolCallResilienceInstanceDanglingOutlier",
      severity: "warning",
      for: outlier.for,
      expr: `${outlierRecord} > ${outlier.factor} and ${instanceBurn} > ${outlier.minimumBurnRate} and ${name("instance", "dangling", w)} * ${seconds(w)} >= ${outlier.minimumDanglingCalls}`,
      summary: "One process leaves far more of a model's tool calls dangling than its peers.",
      description: `The share of the tool calls of model ${template(labels.model)} that dangled on instance ${template(labels.instance)} (${where}) over the last ${w} is {{ $value | humanize }} times that of the model's other processes, and at least ${outlier.minimumBurnRate} times its objective: look at that process (its node, its version, its tools' connectivity).`,
    },
    {
      alert: "ToolCallResilienceFailingOpen",
      severity: "warning",
      for: "1m",
      // What each process counted since the previous evaluation (`dashboard-rules.ts`), added up.
      expr: `sum_over_time(${dashboardRecords.increase("instance", "modelCalls")}{${labels.outcome}="${values.outcomeFailedOpen}"}[${config.failingOpen.window}]) > 0`,
      summary: "Model calls went out unrepaired because tool-call-resilience itself failed.",
      description: `On instance ${template(labels.instance)} (${where}), {{ $value | humanize }} model call(s) of ${template(labels.model)} went out unrepaired in the last ${config.failingOpen.window} because the library itself failed (outcome ${values.outcomeFailedOpen}); a call with a dangling tool call among them met the provider's error. The process's log holds the failure.`,
    },
    {
      alert: "ToolCallResilienceCardinalityOverflow",
      severity: "warning",
      for: config.cardinalityOverflow.for,
      expr: `${growth(overflow, config.cardinalityOverflow.window)} > 0`,
      summary:
        "An instrument of tool-call-resilience overflowed: calls were counted without their labels.",
      description: `On instance ${template(labels.instance)} (${where}), {{ $value | humanize }} call(s) counted in the last ${config.cardinalityOverflow.window} by ${template(INSTRUMENT_LABEL)} went to its overflow series (label ${labels.overflow}), without their model or tool: too many distinct label values (model names, tool names) for the instrument's cardinality limit.`,
    },
    {
      alert: "ToolCallResilienceTelemetryMissing",
      severity: "warning",
      for: config.telemetryMissing.for,
      // Three causes, one alert, on either path: a target whose scrapes fail (the scrape path
      // only, where `up` exists), nothing of the job arriving at all, or processes that report
      // without any model-call series (the middleware or the SDK is not installed).
      expr: [
        `1 - ${reportingSeries.up}{${watched}} == 1`,
        `or absent(${reporting})`,
        `or (count by (${labels.job}) (${reporting}) unless on (${labels.job}) count by (${labels.job}) (${seriesSelector("modelCalls", watched)}))`,
      ].join(" "),
      // The absent() branch yields a sample without labels; the rule names the job it watched.
      extraLabels: { [labels.job]: config.job },
      summary:
        "Prometheus receives no tool-call-resilience telemetry from a target or the whole job.",
      description: `For ${config.telemetryMissing.for}, {{ if $labels.${labels.instance} }}every scrape of target ${template(labels.instance)} of job ${config.job}${topology} has failed{{ else if $labels.${labels.job} }}{{ $value }} process(es) of job ${config.job} have reported without counting a single model call{{ else }}nothing of job ${config.job} has arrived: no target of the job has been scraped successfully, and none of its processes has pushed any{{ end }}.`,
    },
  ];

  const alertRules = alertDefinitions.map(
    ({ severity, extraLabels, summary, description, ...rule }): AlertRule => ({
      ...rule,
      labels: { severity, ...extraLabels },
      annotations: {
        summary,
        description,
        runbook_url: `${config.runbookBaseUrl}#${rule.alert.toLowerCase()}`,
      },
    }),
  );
  return { recordingRules: [...rules, ...dashboardRecordingRules(config)], alertRules, windows };
}

const defaultRules = buildRules();

/** The recording rules of {@link bundleConfig}, in evaluation order. */
export const recordingRules: readonly RecordingRule[] = defaultRules.recordingRules;

/** The alerting rules of {@link bundleConfig}. */
export const alertRules: readonly AlertRule[] = defaultRules.alertRules;

/** The windows recorded per level with {@link bundleConfig}. */
export const recordedWindows = defaultRules.windows;

/** Name of the recording rule group. */
const RECORDING_GROUP = "tool-call-resilience.rules";
/** Name of the alert group. */
const ALERT_GROUP = "tool-call-resilience.alerts";

/** The comment every generated YAML file starts with. */
const GENERATED_HEADER =
  "# Generated by `npm run dashboards` from dashboards/generator; do not edit by hand.\n";

/** YAML as the bundle writes it: never folded, so every expression stays on one line. */
export function toYaml(document: unknown): string {
  return `${GENERATED_HEADER}${stringify(document, { lineWidth: 0 })}`;
}

/**
 * The Prometheus rule files, by path relative to `dashboards/`. The alerts read the recording
 * rules, so Prometheus must load both files.
 */
export function renderPrometheusRules(rules: RuleSet = defaultRules): Record<string, string> {
  const recording = { groups: [{ name: RECORDING_GROUP, rules: rules.recordingRules }] };
  const alerts = {
    groups: [
      {
        name: ALERT_GROUP,
        rules: rules.alertRules.map((rule) => ({
          alert: rule.alert,
          expr: rule.expr,
          for: rule.for,
          ...(rule.keepFiringFor === undefined ? {} : { keep_firing_for: rule.keepFiringFor }),
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
