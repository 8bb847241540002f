/**
 * The panel helpers the dashboards share: Prometheus targets and their legends, the placement of a
 * panel on the grid, the time series, stat and dangling-share shapes, thresholds, and the phrases
 * several panel descriptions repeat.
 */
import type * as bargauge from "@grafana/grafana-foundation-sdk/bargauge";
import * as common from "@grafana/grafana-foundation-sdk/common";
import * as dashboard from "@grafana/grafana-foundation-sdk/dashboard";
import type * as heatmap from "@grafana/grafana-foundation-sdk/heatmap";
import * as prometheus from "@grafana/grafana-foundation-sdk/prometheus";
import * as stat from "@grafana/grafana-foundation-sdk/stat";
import type * as table from "@grafana/grafana-foundation-sdk/table";
import * as timeseries from "@grafana/grafana-foundation-sdk/timeseries";
import { bundleConfig } from "../config.js";
import type { Level } from "../prometheus-rules.js";
import { type FilterLevel, type Filters, LEVEL_VARIABLES } from "./filters.js";
import { guardedShare, type QuantileQuery } from "./queries.js";
import { datasource, titleOf } from "./variables.js";

/** The description's phrase for a figure counted over the dashboard's time range. */
export const OVER_RANGE =
  "counted over the dashboard's time range (a process that started in it, with all it counted)";

/**
 * The description's sentence naming the variables that filter a panel reading the recorded series
 * of `level`: those of the labels the series keeps.
 */
export function filteredBy(level: FilterLevel): string {
  const titles = LEVEL_VARIABLES[level].map(titleOf);
  return `${titles.slice(0, -1).join(", ")} and ${titles.at(-1)} apply; the other variables do not, the recorded series being summed over their labels.`;
}

/** The description's phrase for what the per-thread gauge holds. */
export const RECENT_WINDOW_TEXT =
  "the dangling calls each thread had in the last 15 minutes (the library's window), summed over the processes that report it; only threads with one are reported, at most 100 per process, the most first";

/**
 * A legend of label values, then `text` (a window, a quantile), then the topology labels where a
 * series has them, so two clusters' series of one model are told apart.
 */
export function legend(names: readonly string[], text?: string): string {
  const parts = names.map((name) => `{{${name}}}`);
  if (text !== undefined) parts.push(text);
  return [parts.join(" · "), ...bundleConfig.topologyLabels.map((label) => `{{${label}}}`)].join(
    " ",
  );
}

/** A Prometheus target on the chosen data source, with a legend if given. */
export function query(
  refId: string,
  expr: string,
  legendFormat?: string,
): prometheus.DataqueryBuilder {
  const builder = new prometheus.DataqueryBuilder().datasource(datasource).refId(refId).expr(expr);
  return legendFormat === undefined ? builder : builder.legendFormat(legendFormat);
}

/** One value per series at the end of the range, as table rows. */
export function instantQuery(refId: string, expr: string): prometheus.DataqueryBuilder {
  return query(refId, expr).instant().format(prometheus.PromQueryFormat.Table);
}

/** One target per quantile, its legend the labels of `keep` and the quantile's name. */
export function quantileTargets(
  quantiles: readonly QuantileQuery[],
  keep: readonly string[],
): prometheus.DataqueryBuilder[] {
  return quantiles.map(({ name, expr }) => query(name, expr, legend(keep, name)));
}

/** Panel builders share these setters; the SDK gives each panel type its own class. */
export type AnyPanelBuilder =
  | timeseries.PanelBuilder
  | stat.PanelBuilder
  | table.PanelBuilder
  | bargauge.PanelBuilder
  | heatmap.PanelBuilder;

/** Gives a panel its title, description, data source and size on the 24-column grid. */
export function place<T extends AnyPanelBuilder>(
  panel: T,
  title: string,
  description: string,
  size: { width: number; height: number },
): T {
  panel
    .title(title)
    .description(description)
    .datasource(datasource)
    .span(size.width)
    .height(size.height);
  return panel;
}

/**
 * A time series panel from 0, half a row wide unless said, with a table legend of each series'
 * last and highest value and a tooltip of every series, highest first.
 */
export function timeSeries(
  title: string,
  description: string,
  unit: string,
  targets: prometheus.DataqueryBuilder[],
  width = 12,
): timeseries.PanelBuilder {
  return place(new timeseries.PanelBuilder(), title, description, { width, height: 8 })
    .unit(unit)
    .min(0)
    .targets(targets)
    .legend(
      new common.VizLegendOptionsBuilder()
        .showLegend(true)
        .displayMode(common.LegendDisplayMode.Table)
        .placement(common.LegendPlacement.Bottom)
        .calcs(["lastNotNull", "max"]),
    )
    .tooltip(
      new common.VizTooltipOptionsBuilder()
        .mode(common.TooltipDisplayMode.Multi)
        .sort(common.SortOrder.Descending),
    );
}

/** Absolute thresholds of these steps. */
export function thresholds(...steps: dashboard.Threshold[]): dashboard.ThresholdsConfigBuilder {
  return new dashboard.ThresholdsConfigBuilder()
    .mode(dashboard.ThresholdsMode.Absolute)
    .steps(steps);
}

/** Draws a panel's thresholds as dashed lines. */
export const dashedThresholds = new common.GraphThresholdsStyleConfigBuilder().mode(
  common.GraphThresholdsStyleMode.Dashed,
);

/** Green while zero, red from one: a count that should stay at zero. */
export const redFromOne = thresholds({ value: null, color: "green" }, { value: 1, color: "red" });

/** A share written as a percentage for a description (`2 %`). */
export function percent(value: number): string {
  return `${Number((value * 100).toPrecision(6))} %`;
}

/** One stat of a {@link statRow}. */
export interface StatSpec {
  /** The panel's title. */
  readonly title: string;
  /** The panel's description. */
  readonly description: string;
  /** The unit of the value. */
  readonly unit: string;
  /**
   * The PromQL of the value, or of a share's numerator and denominator, which Grafana divides:
   * each figure summed over every series chosen is too long a query to take both at once.
   */
  readonly expr: string | { readonly numerator: string; readonly denominator: string };
  /** Thresholds that colour the stat; without them it is a plain number. */
  readonly alarm?: dashboard.ThresholdsConfigBuilder;
}

/** Stats sharing one grid row of 24 columns, the first ones a column wider when it does not divide. */
export function statRow(specs: readonly StatSpec[]): stat.PanelBuilder[] {
  const width = Math.floor(24 / specs.length);
  const wider = 24 % specs.length;
  return specs.map((spec, index) => {
    const size = { width: index < wider ? width + 1 : width, height: 4 };
    const panel = place(new stat.PanelBuilder(), spec.title, spec.description, size).unit(
      spec.unit,
    );
    if (typeof spec.expr === "string") panel.withTarget(query("A", spec.expr));
    else {
      panel
        .targets([
          instantQuery("numerator", spec.expr.numerator),
          instantQuery("denominator", spec.expr.denominator),
        ])
        .withTransformation({ id: "merge", options: {} })
        .withTransformation({
          id: "calculateField",
          options: {
            mode: "binary",
            binary: { left: "Value #numerator", operator: "/", right: "Value #denominator" },
            alias: spec.title,
            replaceFields: true,
          },
        });
    }
    panel
      .reduceOptions(new common.ReduceDataOptionsBuilder().calcs(["lastNotNull"]).values(false))
      .graphMode(common.BigValueGraphMode.Area);
    return spec.alarm === undefined
      ? panel.colorMode(common.BigValueColorMode.None)
      : panel.thresholds(spec.alarm).colorMode(common.BigValueColorMode.Background);
  });
}

/** Sorts a table's rows by value, largest first: instant results come back in no particular order. */
export const largestFirst: dashboard.DataTransformerConfig = {
  id: "sortBy",
  options: { fields: {}, sort: [{ field: "Value", desc: true }] },
};

/** The options of a {@link sharePanel}. */
export interface SharePanelOptions {
  /** The panel's title. */
  readonly title: string;
  /** The level of recorded series the share is read from. */
  readonly level: Level;
  /** One line per window. */
  readonly windows: readonly string[];
  /** The labels the legend names a series by. */
  readonly legend: readonly string[];
  /** The share the dashed red line is drawn at. */
  readonly threshold: number;
  /** The panel's description. */
  readonly description: string;
  /** Grid columns, of 24; half the row unless said. */
  readonly width?: number;
}

/** The dangling share of a level over the panel windows, with a line at `threshold`. */
export function sharePanel(filters: Filters, options: SharePanelOptions): timeseries.PanelBuilder {
  return timeSeries(
    options.title,
    options.description,
    "percentunit",
    options.windows.map((window) =>
      query(window, guardedShare(filters, options.level, window), legend(options.legend, window)),
    ),
    options.width,
  )
    .thresholds(
      thresholds({ value: null, color: "green" }, { value: options.threshold, color: "red" }),
    )
    .thresholdsStyle(dashedThresholds);
}
