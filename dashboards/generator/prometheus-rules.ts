/**
 * The Prometheus recording rules and alerts of the monitoring bundle, as data and as the two rule
 * files. Each alert carries two equivalent expressions: `expr`, which reads the recording rules
 * (cheap, and what `alerts.yml` ships), and `rawExpr`, the same condition computed from the raw
 * series, for evaluators that cannot rely on the recording rules being loaded (the Grafana-managed
 * alerts). Both are written by one function per alert, so they cannot drift apart.
 *
 * The design (see `dashboards/README.md`): an objective per model ("at most 2 % of tool calls
 * dangle"), multi-window burn-rate alerts against it that keep firing while the burn lasts, every
 * aggregation a `sum without` the labels of one process and of the library's own attributes, so
 * that every other label (`cluster`, `namespace`, an environment) stays and says where.
 */
import { stringify } from "yaml";
import { type BundleConfig, type BurnWindows, bundleConfig } from "./config.js";
import { dashboardRecordingRules } from "./dashboard-rules.js";
import {
  instrumentSeries,
  labels,
  reportingSeries,
  type SeriesKey,
  scopeLabels,
  series,
  seriesSelector,
  values,
} from "./names.js";
import { growth, share } from "./promql.js";

/** The label `ToolCallResilienceCardinalityOverflow` names the overflowing instrument with. */
const INSTRUMENT_LABEL = "instrument";

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

/** Where an expression reads a recording rule's value from. */
type Source = "recorded" | "raw";

/** A recording rule before it is written out: its expression depends on where it is read. */
interface RuleDefinition {
  readonly record: string;
  /** The expression, reading earlier rules from `source`, with `matchers` on its raw series. */
  readonly build: (source: Source, matchers: readonly string[]) => string;
}

/**
 * A recording rule's value in an expression: the recorded series (with `matchers`), or (for
 * `raw`) its expression inlined, the matchers pushed down to its raw selectors.
 */
function use(rule: RuleDefinition, source: Source, matchers: readonly string[] = []): string {
  if (source === "recorded") {
    return matchers.length === 0 ? rule.record : `${rule.record}{${matchers.join(", ")}}`;
  }
  return `(${rule.build("raw", matchers)})`;
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

/** The aggregation levels the rules record. */
export type Level = "model" | "tool" | "instance";

/** What a recorded series of a level measures. */
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
      return `${level}:${danglingMetric}_per_${toolCallsMetric.replace(/^tool_call_resilience_/, "")}:ratio_rate${window}`;
    case "burnRate":
      return `${level}:${danglingMetric}:burnrate${window}`;
  }
}

/** The name of the recorded objective of every model: the share of its tool calls that may dangle. */
export const OBJECTIVE_RECORD = `model:${danglingMetric}:objective`;

/**
 * Everything generated from one configuration: the tests generate it from a scaled copy of
 * {@link bundleConfig} to run the alerts' dynamics in minutes.
 */
export interface RuleSet {
  readonly recordingRules: readonly RecordingRule[];
  readonly alertRules: readonly AlertRule[];
  /** The windows recorded per level, shortest first. */
  readonly windows: Readonly<Record<Level, readonly string[]>>;
}

function shareText(value: number): string {
  return `${Number((value * 100).toPrecision(6))}%`;
}

function template(label: string): string {
  return `{{ $labels.${label} }}`;
}

/**
 * The labels each level of the rules sums away: those of one process (not at the instance level),
 * of the instrumentation scope, and the library's attributes the level does not keep. The
 * dashboards compute their figures from the raw series with the same lists, so that `or` joins a
 * recorded series and its raw equivalent.
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
  const selector = config.selector.trim();
  return [...(selector === "" ? [] : [selector]), `${labels.overflow}!="true"`];
}

/** Checks what PromQL cannot: every value must be usable before a rule is written from it. */
function validate(config: BundleConfig): void {
  let url: URL | undefined;
  try {
    url = new URL(config.runbookBaseUrl);
  } catch {
    url = undefined;
  }
  if (url === undefined || (url.protocol !== "https:" && url.protocol !== "http:")) {
    throw new BundleConfigError(
      `runbookBaseUrl must be an absolute http(s) URL where dashboards/runbook.md is published (a notification carries runbook_url as it is), got "${config.runbookBaseUrl}"`,
    );
  }
  const pairs = [...config.burnRate.page, ...config.burnRate.ticket];
  if (config.burnRate.page.length === 0) {
    throw new BundleConfigError("burnRate.page must hold at least one pair of windows");
  }
  const objectives: [string, number][] = [
    ["objective.default", config.objective.default],
    ...Object.entries(config.objective.models).map(([model, value]): [string, number] => [
      `objective.models["${model}"]`,
      value,
    ]),
  ];
  for (const [name, objective] of objectives) {
    if (!(objective > 0 && objective < 1)) {
      throw new BundleConfigError(`${name} must be a share between 0 and 1, got ${objective}`);
    }
    for (const pair of pairs) {
      if (pair.factor * objective >= 1) {
        throw new BundleConfigError(
          `${name} (${objective}) times the burn rate ${pair.factor} of the ${pair.long}/${pair.short} windows is a share of 100% or more, which can never be reached: lower the factor or the objective`,
        );
      }
    }
  }
  for (const pair of pairs) {
    if (seconds(pair.short) >= seconds(pair.long)) {
      throw new BundleConfigError(
        `the short window ${pair.short} must be shorter than the long window ${pair.long}`,
      );
    }
  }
  for (const duration of [
    config.burnRate.pageFor,
    config.burnRate.ticketFor,
    config.burnRate.keepFiringFor,
    config.instanceOutlier.window,
    config.instanceOutlier.for,
    config.failingOpen.window,
    config.cardinalityOverflow.window,
    config.cardinalityOverflow.for,
    config.telemetryMissing.for,
  ]) {
    seconds(duration);
  }
  for (const label of [...config.processLabels, ...config.topologyLabels]) {
    if (!/^[a-zA-Z_][a-zA-Z0-9_]*$/.test(label)) {
      throw new BundleConfigError(`"${label}" is not a Prometheus label name`);
    }
  }
}

function unique<T>(items: readonly T[]): T[] {
  return [...new Set(items)];
}

/**
 * The recording rules and alerts of a configuration.
 *
 * @throws {BundleConfigError} when a value of the configuration cannot make a working rule.
 */
export function buildRules(config: BundleConfig = bundleConfig): RuleSet {
  validate(config);
  const selector = config.selector.trim() === "" ? [] : [config.selector.trim()];
  const counterMatchers = seriesMatchersOf(config);
  const processLabels = [...config.processLabels];
  const summedAway = summedAwayOf(config);
  const byWindow = (pairs: readonly BurnWindows[]) =>
    unique(pairs.flatMap((pair) => [pair.short, pair.long])).sort(
      (a, b) => seconds(a) - seconds(b),
    );
  const windows: Record<Level, readonly string[]> = {
    model: byWindow([...config.burnRate.page, ...config.burnRate.ticket]),
    tool: byWindow(config.burnRate.page),
    instance: [config.instanceOutlier.window],
  };
  const longestModelWindow = windows.model[windows.model.length - 1] as string;

  const rate = (level: Level, key: SeriesKey, quantity: Quantity, window: string) => ({
    record: recordName(level, quantity, window),
    build: (_source: Source, matchers: readonly string[]) =>
      `sum without (${summedAway[level].join(", ")}) (rate(${seriesSelector(key, ...counterMatchers, ...matchers)}[${window}]))`,
  });

  const rules: Record<string, RuleDefinition> = {};
  const ordered: RuleDefinition[] = [];
  const add = (rule: RuleDefinition) => {
    rules[rule.record] = rule;
    ordered.push(rule);
    return rule;
  };
  const rule = (level: Level, quantity: Quantity, window: string): RuleDefinition => {
    const found = rules[recordName(level, quantity, window)];
    if (found === undefined) throw new Error(`no rule ${recordName(level, quantity, window)}`);
    return found;
  };

  for (const level of ["model", "tool", "instance"] as const) {
    for (const window of windows[level]) {
      const toolCalls = add(rate(level, "toolCalls", "toolCalls", window));
      const dangling = add(rate(level, "danglingToolCalls", "dangling", window));
      add({
        record: recordName(level, "ratio", window),
        build: (source, matchers) =>
          share(use(dangling, source, matchers), use(toolCalls, source, matchers)),
      });
    }
  }

  // One series per model with traffic over the longest window, valued with its objective: the
  // first pattern of `objective.models` it matches, else the default. `or` keeps the left side's
  // series, so a model matched by an earlier pattern keeps that one.
  const objectiveBase = rule("model", "toolCalls", longestModelWindow);
  const objective = add({
    record: OBJECTIVE_RECORD,
    build: (source) =>
      [
        ...Object.entries(config.objective.models).map(
          ([pattern, value]) =>
            `${use(objectiveBase, source, [`${labels.model}=~"${pattern}"`])} * 0 + ${value}`,
        ),
        `${use(objectiveBase, source)} * 0 + ${config.objective.default}`,
      ].join(" or "),
  });
  for (const window of windows.model) {
    add({
      record: recordName("model", "burnRate", window),
      build: (source) =>
        `${use(rule("model", "ratio", window), source)} / ${use(objective, source)}`,
    });
  }
  for (const window of windows.tool) {
    add({
      record: recordName("tool", "burnRate", window),
      build: (source) =>
        `${use(rule("tool", "ratio", window), source)} / ${config.objective.default}`,
    });
  }

  /** Both windows of each pair burn faster than its factor, with enough dangling calls. */
  const burning = (level: "model" | "tool", pairs: readonly BurnWindows[], source: Source) =>
    pairs
      .map((pair) =>
        [
          `(${use(rule(level, "burnRate", pair.long), source)} > ${pair.factor}`,
          `and ${use(rule(level, "burnRate", pair.short), source)} > ${pair.factor}`,
          `and ${use(rule(level, "dangling", pair.long), source)} * ${seconds(pair.long)} >= ${config.burnRate.minimumDanglingCalls})`,
        ].join(" "),
      )
      .join(" or ");

  const where = [labels.job, ...config.topologyLabels]
    .map((label, index) =>
      index === 0
        ? `job ${template(label)}`
        : `{{ with $labels.${label} }}, ${label} {{ . }}{{ end }}`,
    )
    .join("");
  const pairsText = (pairs: readonly BurnWindows[]) =>
    pairs.map((pair) => `${pair.factor}x over ${pair.long} and ${pair.short}`).join(", or ");
  const watched = [`${labels.job}="${config.job}"`, ...selector];
  const watchedSelector = watched.join(", ");
  const reporting = `group by (${[labels.job, labels.instance, ...config.topologyLabels].join(", ")}) (${reportingSeries.up}{${watchedSelector}} == 1 or ${reportingSeries.targetInfo}{${watchedSelector}})`;
  const process = processLabels.join(", ");
  const outlier = config.instanceOutlier;
  const failedOpen = seriesSelector(
    "modelCalls",
    ...selector,
    `${labels.outcome}="${values.outcomeFailedOpen}"`,
  );
  /**
   * How much the counters `selectorText` selects grew over `window`, summed without `without`
   * ({@link growth}): the increase of a series that existed `window` ago, and the whole value of
   * one born since (a counter appears with its first count, which `increase` cannot see), so that
   * a process's first failure counts as much as its later ones, even when the process was killed
   * since (its series stale, read over the window).
   */
  const grew = (selectorText: string, window: string, without: readonly string[]) =>
    `sum without (${without.join(", ")}) (${growth(selectorText, window)})`;
  /**
   * The growth of every instrument's overflow series, one term per series name labelled with it
   * (`instrument`): `increase` drops the name, and the overflow series of two instruments of one
   * process have the same labels otherwise, which one vector cannot hold.
   */
  const overflowGrowth = instrumentSeries
    .map(
      (name) =>
        `label_replace(${grew(`${name}{${[`${labels.overflow}="true"`, ...selector].join(", ")}}`, config.cardinalityOverflow.window, scopeLabels)}, "${INSTRUMENT_LABEL}", "${name}", "", "")`,
    )
    .join(" or ");

  interface AlertDefinition {
    readonly alert: string;
    readonly severity: Severity;
    readonly for: string;
    readonly keepFiringFor?: string;
    readonly condition: (source: Source) => string;
    readonly extraLabels?: Readonly<Record<string, string>>;
    readonly summary: string;
    readonly description: string;
  }
  const burn = config.burnRate;
  const alertDefinitions: AlertDefinition[] = [
    {
      alert: "ToolCallResilienceDanglingBudgetBurn",
      severity: "critical",
      for: burn.pageFor,
      keepFiringFor: burn.keepFiringFor,
      condition: (source) => burning("model", burn.page, source),
      summary: "A model's tool calls dangle so often that its objective's budget is burning fast.",
      description: `Model ${template(labels.model)} (provider ${template(labels.provider)}, ${where}) is spending its dangling-call budget {{ $value | humanize }} times as fast as its objective allows (${pairsText(burn.page)}, at least ${burn.minimumDanglingCalls} dangling calls): tool calls are being left without a result right now.`,
    },
    {
      alert: "ToolCallResilienceDanglingBudgetBurn",
      severity: "warning",
      for: burn.ticketFor,
      keepFiringFor: burn.keepFiringFor,
      condition: (source) => burning("model", burn.ticket, source),
      summary: "A model's tool calls dangle more often than its objective allows.",
      description: `Model ${template(labels.model)} (provider ${template(labels.provider)}, ${where}) has been spending its dangling-call budget {{ $value | humanize }} times as fast as its objective allows (${pairsText(burn.ticket)}, at least ${burn.minimumDanglingCalls} dangling calls).`,
    },
    {
      alert: "ToolCallResilienceToolDanglingBudgetBurn",
      severity: "warning",
      for: burn.pageFor,
      keepFiringFor: burn.keepFiringFor,
      condition: (source) => burning("tool", burn.page, source),
      summary: "Calls of one tool dangle far more often than the objective allows.",
      description: `Calls of tool ${template(labels.tool)} (${where}) dangle {{ $value | humanize }} times as fast as the default objective of ${shareText(config.objective.default)} allows, across every model that calls it (${pairsText(burn.page)}).`,
    },
    {
      alert: "ToolCallResilienceInstanceDanglingOutlier",
      severity: "warning",
      for: outlier.for,
      condition: (source) => {
        const ratio = use(rule("instance", "ratio", outlier.window), source);
        const others = (key: "dangling" | "toolCalls") =>
          `(${use(rule("model", key, outlier.window), source)} - ignoring (${process}) group_right () ${use(rule("instance", key, outlier.window), source)})`;
        return [
          `${ratio} > ${outlier.factor} * (${others("dangling")} / ${others("toolCalls")})`,
          `and ${ratio} > ignoring (${process}) group_left () ${outlier.minimumBurnRate} * ${use(objective, source)}`,
          `and ${use(rule("instance", "dangling", outlier.window), source)} * ${seconds(outlier.window)} >= ${outlier.minimumDanglingCalls}`,
        ].join(" ");
      },
      summary: "One process leaves far more of a model's tool calls dangling than its peers.",
      description: `{{ $value | humanizePercentage }} of the tool calls of model ${template(labels.model)} on instance ${template(labels.instance)} (${where}) dangled over the last ${outlier.window}, more than ${outlier.factor} times the share of the model's other processes: look at that process (its node, its version, its tools' connectivity).`,
    },
    {
      alert: "ToolCallResilienceFailingOpen",
      severity: "warning",
      for: "1m",
      condition: () =>
        `${grew(failedOpen, config.failingOpen.window, [...scopeLabels, labels.agent, labels.outcome])} > 0`,
      summary: "Model calls went out unrepaired because tool-call-resilience itself failed.",
      description: `On instance ${template(labels.instance)} (${where}), {{ $value | humanize }} model call(s) of ${template(labels.model)} went out unrepaired in the last ${config.failingOpen.window} because the library itself failed (outcome ${values.outcomeFailedOpen}); a call with a dangling tool call among them met the provider's error. The process's log holds the failure.`,
    },
    {
      alert: "ToolCallResilienceCardinalityOverflow",
      severity: "warning",
      for: config.cardinalityOverflow.for,
      condition: () => `(${overflowGrowth}) > 0`,
      summary:
        "An instrument of tool-call-resilience overflowed: calls were counted without their labels.",
      description: `On instance ${template(labels.instance)} (${where}), {{ $value | humanize }} call(s) counted in the last ${config.cardinalityOverflow.window} by ${template(INSTRUMENT_LABEL)} went to its overflow series (label ${labels.overflow}), without their model or tool: too many distinct label values (model names, tool names) for the instrument's cardinality limit.`,
    },
    {
      alert: "ToolCallResilienceTelemetryMissing",
      severity: "warning",
      for: config.telemetryMissing.for,
      // Three causes, one alert, on either path: a target whose scrapes fail (per target; the
      // scrape path only, where `up` exists), nothing of the job arriving at all (no scrape
      // succeeds, no push arrives), or processes that report without any model-call series (the
      // middleware is not installed, the SDK is not registered, the scrape or the push carries
      // another exporter's metrics).
      condition: () =>
        [
          `1 - ${reportingSeries.up}{${watchedSelector}} == 1`,
          `or absent(${reporting})`,
          `or (count by (${labels.job}) (${reporting}) unless on (${labels.job}) count by (${labels.job}) (${seriesSelector("modelCalls", ...watched)}))`,
        ].join(" "),
      // The absent() branch yields a sample without labels; the rule names the job it watched.
      extraLabels: { [labels.job]: config.job },
      summary:
        "Prometheus receives no tool-call-resilience telemetry from a target or the whole job.",
      description: `For ${config.telemetryMissing.for}, {{ if $labels.${labels.instance} }}every scrape of target ${template(labels.instance)} of job ${config.job}${config.topologyLabels.map((label) => `{{ with $labels.${label} }}, ${label} {{ . }}{{ end }}`).join("")} has failed{{ else if $labels.${labels.job} }}{{ $value }} process(es) of job ${config.job} have reported without counting a single model call{{ else }}nothing of job ${config.job} has arrived: no target of the job has been scraped successfully, and none of its processes has pushed any{{ end }}.`,
    },
  ];

  const recordingRules = [
    ...ordered.map((definition) => ({
      record: definition.record,
      expr: definition.build("recorded", []),
    })),
    ...dashboardRecordingRules(config),
  ];
  const alertRules: AlertRule[] = alertDefinitions.map((definition) => ({
    alert: definition.alert,
    expr: definition.condition("recorded"),
    rawExpr: definition.condition("raw"),
    for: definition.for,
    ...(definition.keepFiringFor === undefined ? {} : { keepFiringFor: definition.keepFiringFor }),
    labels: { severity: definition.severity, ...definition.extraLabels },
    annotations: {
      summary: definition.summary,
      description: definition.description,
      runbook_url: `${config.runbookBaseUrl}#${definition.alert.toLowerCase()}`,
    },
  }));
  return { recordingRules, alertRules, windows };
}

const defaultRules = buildRules();

/** The recording rules of {@link bundleConfig}, in evaluation order. */
export const recordingRules: readonly RecordingRule[] = defaultRules.recordingRules;

/** The alerting rules of {@link bundleConfig}, with both expressions. */
export const alertRules: readonly AlertRule[] = defaultRules.alertRules;

/** The windows recorded per level with {@link bundleConfig}. */
export const recordedWindows = defaultRules.windows;

/** Name of the recording rule group. */
const RECORDING_GROUP = "tool-call-resilience.rules";
/** Name of the alert group. */
export const ALERT_GROUP = "tool-call-resilience.alerts";

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
