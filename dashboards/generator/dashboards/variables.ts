/**
 * The template variables of the dashboards: the Prometheus and Tempo data sources, then one
 * multi-value variable per process label and per attribute a dashboard filters on, each read from
 * the library's own series and narrowed by the variables before it.
 */
import type * as cog from "@grafana/grafana-foundation-sdk/cog";
import type * as common from "@grafana/grafana-foundation-sdk/common";
import * as dashboard from "@grafana/grafana-foundation-sdk/dashboard";
import { bundleConfig, selectorOf } from "../config.js";
import { type SeriesKey, seriesSelector } from "../names.js";
import {
  ATTRIBUTE_LABEL,
  type Attribute,
  filtersOf,
  matchesVariable,
  PROCESS_VARIABLES,
} from "./filters.js";

/**
 * Grafana's `${...}` interpolation. Written in a template literal because in a plain string the
 * linter would take it for a template literal written with the wrong quotes.
 */
export function interpolate(expression: string): string {
  return `\${${expression}}`;
}

/** The Prometheus data source variable every query reads from. */
export const DATASOURCE_VARIABLE = "datasource";
/** The Tempo data source variable the trace links open. */
export const TEMPO_VARIABLE = "tempo";

/** The Prometheus data source of every panel, query and variable: the chosen one. */
export const datasource: common.DataSourceRef = {
  type: "prometheus",
  uid: interpolate(DATASOURCE_VARIABLE),
};

const variableTitle: Record<string, string> = {
  job: "Job",
  instance: "Instance",
  provider: "Provider",
  model: "Model",
  agent: "Agent",
  tool: "Tool",
  thread: "Thread",
};

/** A variable's title: `Job`, `Instance`, `Cluster`. */
export function titleOf(variable: string): string {
  return variableTitle[variable] ?? `${variable.charAt(0).toUpperCase()}${variable.slice(1)}`;
}

/** The label a variable filters: a process variable is named after its label. */
function labelOf(variable: string): string {
  return ATTRIBUTE_LABEL[variable as Attribute] ?? variable;
}

function datasourceVariable(): dashboard.DatasourceVariableBuilder {
  return new dashboard.DatasourceVariableBuilder(DATASOURCE_VARIABLE)
    .label("Data source")
    .type("prometheus");
}

/** The Tempo data source of the trace links; empty where Grafana has none, which breaks nothing else. */
function tempoVariable(): dashboard.DatasourceVariableBuilder {
  return new dashboard.DatasourceVariableBuilder(TEMPO_VARIABLE)
    .label("Traces")
    .description("The Tempo data source the links to a thread's repair_tool_calls spans open.")
    .type("tempo");
}

/** A multi-value variable of a label's values, narrowed by the variables chosen before it. */
function labelVariable(name: string, selector: string): dashboard.QueryVariableBuilder {
  const definition = `label_values(${selector}, ${labelOf(name)})`;
  return new dashboard.QueryVariableBuilder(name)
    .label(titleOf(name))
    .datasource(datasource)
    .query(definition)
    .definition(definition)
    .refresh(dashboard.VariableRefresh.OnTimeRangeChanged)
    .sort(dashboard.VariableSort.AlphabeticalAsc)
    .multi(true)
    .includeAll(true)
    .allValue(".*")
    .current({ selected: true, text: ["All"], value: ["$__all"] });
}

/** The series each attribute variable reads its values from. */
const valuesFrom: Record<Attribute, SeriesKey> = {
  provider: "modelCalls",
  model: "modelCalls",
  agent: "modelCalls",
  tool: "toolCalls",
  thread: "threadRecentDanglingToolCalls",
};

/**
 * The data source variables, then `job`, the topology labels and `instance`, then the attributes,
 * each variable's values read with the ones before it as matchers.
 */
export function variables(
  attributes: readonly Attribute[],
): cog.Builder<dashboard.VariableModel>[] {
  const processVariables = PROCESS_VARIABLES.map((variable, index) => {
    const before = PROCESS_VARIABLES.slice(0, index).map((v) => matchesVariable(v, v));
    return labelVariable(
      variable,
      seriesSelector("modelCalls", ...selectorOf(bundleConfig), ...before),
    );
  });
  return [
    datasourceVariable(),
    tempoVariable(),
    ...processVariables,
    ...attributes.map((attribute, index) =>
      labelVariable(attribute, filtersOf(attributes.slice(0, index)).raw(valuesFrom[attribute])),
    ),
  ];
}
