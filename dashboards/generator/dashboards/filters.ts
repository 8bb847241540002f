/**
 * What every dashboard query is filtered by: the label variables a dashboard can have (one per
 * process label, one per attribute of the library), and the variables each kind of recorded
 * series can be filtered by, which are the labels it keeps.
 */
import { bundleConfig, selectorOf } from "../config.js";
import { labels, type SeriesKey, seriesSelector } from "../names.js";

/**
 * The variables of one process's labels, outermost first: `job`, every topology label, `instance`.
 * Every raw series carries them (or carries them empty).
 */
export const PROCESS_VARIABLES: readonly string[] = Object.freeze([
  labels.job,
  ...bundleConfig.topologyLabels,
  labels.instance,
]);

/** The variables of the library's attributes. */
export type Attribute = "provider" | "model" | "agent" | "tool" | "thread";

/** The label each attribute variable filters. */
export const ATTRIBUTE_LABEL: Readonly<Record<Attribute, string>> = {
  provider: labels.provider,
  model: labels.model,
  agent: labels.agent,
  tool: labels.tool,
  thread: labels.thread,
};

/** Where the processes run: the process variables but `instance`, which every series keeps. */
const WHERE = PROCESS_VARIABLES.filter((variable) => variable !== labels.instance);

/**
 * The kinds of recorded series by the labels they keep, each with the variables that filter it:
 * summed over processes per model, per tool, per thread, per model and agent, or per job only;
 * kept per process (`instance`) and model, or per process alone.
 */
export const LEVEL_VARIABLES = {
  model: [...WHERE, "provider", "model"],
  tool: [...WHERE, "tool"],
  thread: [...WHERE, "model", "thread"],
  agent: [...WHERE, "provider", "model", "agent"],
  job: WHERE,
  instance: [...PROCESS_VARIABLES, "provider", "model"],
  process: PROCESS_VARIABLES,
} as const satisfies Record<string, readonly string[]>;

/** A kind of recorded series, by the labels it keeps. */
export type FilterLevel = keyof typeof LEVEL_VARIABLES;

/** The matcher of `label` against the chosen values of `variable` (a regular expression). */
export function matchesVariable(label: string, variable: string): string {
  return `${label}=~"$${variable}"`;
}

/** The matcher of `label` against one exact value. */
export function equals(label: string, value: string): string {
  return `${label}="${value}"`;
}

/** The attributes each raw series records, which the variables' queries filter it by. */
const attributesOf: Partial<Record<SeriesKey, readonly Attribute[]>> = {
  modelCalls: ["provider", "model", "agent"],
  toolCalls: ["provider", "model", "tool"],
  threadRecentDanglingToolCalls: ["model", "thread"],
};

/** Builds the selectors of a dashboard, filtered by the variables it has. */
export interface Filters {
  /** A recorded series, filtered by the variables of its level that the dashboard has. */
  readonly recorded: (name: string, level: FilterLevel, ...matchers: string[]) => string;
  /** A raw series for a variable's values, filtered by the process and attribute variables. */
  readonly raw: (key: SeriesKey) => string;
}

/** The selectors of a dashboard whose attribute variables are `attributes`. */
export function filtersOf(attributes: readonly Attribute[]): Filters {
  const matcher = (variable: string) =>
    matchesVariable(ATTRIBUTE_LABEL[variable as Attribute] ?? variable, variable);
  const has = (variable: string) =>
    PROCESS_VARIABLES.includes(variable) || attributes.includes(variable as Attribute);
  return {
    recorded: (name, level, ...matchers) =>
      `${name}{${[...LEVEL_VARIABLES[level].filter(has).map(matcher), ...matchers].join(", ")}}`,
    raw: (key) =>
      seriesSelector(
        key,
        ...selectorOf(bundleConfig),
        ...[...PROCESS_VARIABLES, ...(attributesOf[key] ?? [])].filter(has).map(matcher),
      ),
  };
}
