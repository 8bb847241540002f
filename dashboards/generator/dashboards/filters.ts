/**
 * What every dashboard query is filtered by: the label variables a dashboard can have (one per
 * process label, one per attribute of the library), the matchers they make, and the selectors of
 * the raw and recorded series filtered by them.
 */
import { bundleConfig } from "../config.js";
import { labels, type SeriesKey, scopeLabels, seriesSelector } from "../names.js";
import {
  type Level,
  OBJECTIVE_RECORD,
  type Quantity,
  recordName,
  seriesMatchersOf,
  summedAwayOf,
} from "../prometheus-rules.js";
import { share } from "../promql.js";

/**
 * The variables of one process's labels, outermost first: `job`, every topology label, `instance`.
 * Every series carries them (or carries them empty), so every query filters on all of them.
 */
export const PROCESS_VARIABLES: readonly string[] = Object.freeze([
  labels.job,
  ...bundleConfig.topologyLabels,
  labels.instance,
]);

/** The variables of the library's attributes; a query filters on those its series carry. */
export type Attribute = "provider" | "model" | "agent" | "tool" | "thread";

/** The label each attribute variable filters. */
export const ATTRIBUTE_LABEL: Readonly<Record<Attribute, string>> = {
  provider: labels.provider,
  model: labels.model,
  agent: labels.agent,
  tool: labels.tool,
  thread: labels.thread,
};

/**
 * The attributes each series records. A matcher on a label the series lacks would only match its
 * empty value, so it is left out, not added.
 */
const attributesOf: Record<SeriesKey, readonly Attribute[]> = {
  modelCalls: ["provider", "model", "agent"],
  toolCalls: ["provider", "model", "tool"],
  danglingToolCalls: ["provider", "model", "tool"],
  repairs: ["provider", "model"],
  threadRecentDanglingToolCalls: ["model", "thread"],
  repairDurationBucket: [],
  repairDurationSum: [],
  repairDurationCount: [],
};

/** The attributes each level of recorded series keeps. */
const recordedAttributes: Record<Level, readonly Attribute[]> = {
  model: ["provider", "model"],
  tool: ["tool"],
  instance: ["provider", "model"],
};

/**
 * The labels each level of the recording rules sums away (`buildRules()`'s own lists): the
 * recorded series and the same figure computed here from the raw series have the same labels, so
 * `or` joins them.
 */
export const summedAway = summedAwayOf(bundleConfig);

/** The labels of one process and of the instrumentation scope: what every fleet-wide sum drops. */
export const perProcess: readonly string[] = [...bundleConfig.processLabels, ...scopeLabels];

/** The matcher of `label` against the chosen values of `variable` (a regular expression). */
export function matchesVariable(label: string, variable: string): string {
  return `${label}=~"$${variable}"`;
}

/** The matcher of `label` against one exact value. */
export function equals(label: string, value: string): string {
  return `${label}="${value}"`;
}

/** The configuration's selector as a list of matchers: empty when it is blank. */
export const configSelector: readonly string[] =
  bundleConfig.selector.trim() === "" ? [] : [bundleConfig.selector.trim()];

/**
 * The configuration's selector and a matcher of every process variable: the processes the
 * dashboard's choices select, for series that record none of the library's attributes.
 */
export function chosenProcessMatchers(): string[] {
  return [...configSelector, ...PROCESS_VARIABLES.map((v) => matchesVariable(v, v))];
}

/**
 * The matchers of the library's counters in every figure but the overflow stat: the rules' own
 * (the configuration's selector, and no overflow series, which would draw a model or a tool
 * without a name).
 */
const counterMatchers = seriesMatchersOf(bundleConfig);

/** Builds the selectors of a dashboard, filtered by the variables it has. */
export interface Filters {
  /** A raw series, filtered by every process variable and by each attribute variable it records. */
  readonly select: (key: SeriesKey, ...matchers: string[]) => string;
  /**
   * A raw series of every process of the chosen jobs and topology, whatever Instance says: the
   * fleet a chosen instance is compared with. Only ever summed over every process.
   */
  readonly selectEveryInstance: (key: SeriesKey, ...matchers: string[]) => string;
  /**
   * A recorded series of `level`. Model and tool series have no `instance`: their `instance`
   * matcher matches only while Instance is All (`.*` matches the empty value), which is what
   * {@link Filters.recorded} relies on.
   */
  readonly selectRecorded: (level: Level, name: string, withInstance?: boolean) => string;
  /**
   * A recorded quantity, or where it is not there (an instance is chosen, or the recording rules
   * are not loaded) the same figure from the raw series, filtered alike.
   */
  readonly recorded: (level: Level, quantity: Quantity, window: string) => string;
}

/** The selectors of a dashboard whose attribute variables are `attributes`. */
export function filtersOf(attributes: readonly Attribute[]): Filters {
  const processMatchers = (withInstance: boolean) =>
    PROCESS_VARIABLES.filter((variable) => withInstance || variable !== labels.instance).map(
      (variable) => matchesVariable(variable, variable),
    );
  const attributeMatchers = (carried: readonly Attribute[]) =>
    carried
      .filter((attribute) => attributes.includes(attribute))
      .map((attribute) => matchesVariable(ATTRIBUTE_LABEL[attribute], attribute));
  const selectOnly = (
    key: SeriesKey,
    carried: readonly Attribute[],
    withInstance: boolean,
    ...matchers: string[]
  ) =>
    seriesSelector(
      key,
      ...counterMatchers,
      ...processMatchers(withInstance),
      ...attributeMatchers(carried.filter((attribute) => attributesOf[key].includes(attribute))),
      ...matchers,
    );
  const select = (key: SeriesKey, ...matchers: string[]) =>
    selectOnly(key, attributesOf[key], true, ...matchers);
  const selectEveryInstance = (key: SeriesKey, ...matchers: string[]) =>
    selectOnly(key, attributesOf[key], false, ...matchers);
  const selectRecorded = (level: Level, name: string, withInstance = true) =>
    `${name}{${[...processMatchers(withInstance), ...attributeMatchers(recordedAttributes[level])].join(", ")}}`;
  // Filtered only by what the recorded series can be filtered by, so that both sides of `or` are
  // the same figure.
  const rawRate = (level: Level, key: SeriesKey, window: string) =>
    `sum without (${summedAway[level].join(", ")}) (rate(${selectOnly(key, recordedAttributes[level], true)}[${window}]))`;
  const rawRatio = (level: Level, window: string) =>
    share(rawRate(level, "danglingToolCalls", window), rawRate(level, "toolCalls", window));
  const raw = (level: Level, quantity: Quantity, window: string): string => {
    switch (quantity) {
      case "toolCalls":
        return rawRate(level, "toolCalls", window);
      case "dangling":
        return rawRate(level, "danglingToolCalls", window);
      case "ratio":
        return rawRatio(level, window);
      case "burnRate":
        return level === "model"
          ? `${rawRatio(level, window)} / ${selectRecorded(level, OBJECTIVE_RECORD, false)}`
          : `${rawRatio(level, window)} / ${bundleConfig.objective.default}`;
    }
  };
  const recorded = (level: Level, quantity: Quantity, window: string) =>
    `(${selectRecorded(level, recordName(level, quantity, window))} or ${raw(level, quantity, window)})`;
  return { select, selectEveryInstance, selectRecorded, recorded };
}
