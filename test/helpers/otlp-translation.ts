/**
 * What Prometheus stores for OTLP metrics, simulated: the translation Prometheus documents for its
 * OTLP receiver with the default `translation_strategy` (`UnderscoreEscapingWithSuffixes`) and
 * `promote_scope_metadata` off, which a Collector's `prometheusremotewrite` exporter shares. It
 * turns the points a local receiver decoded into a Prometheus text exposition, so that a real
 * Prometheus can scrape them (with `honor_labels: true`) as if they had been pushed to it.
 *
 * Simulated, not Prometheus's code: metric names with unit and type suffixes (`s` becomes
 * `_seconds`, a `{...}` annotation adds nothing, a monotonic sum gets `_total`, a histogram its
 * `_bucket`, `_sum` and `_count`), attribute keys with `_` for every other character, `job` from
 * `service.namespace/service.name`, `instance` from `service.instance.id`, the other resource
 * attributes on `target_info`, and no `otel_scope_*` labels.
 */
import { type Attributes, type MetricPoint, TEMPORALITY } from "./otlp-receiver.js";

/** Unit suffixes of the translation, for the units the tests meet. */
const UNIT_WORDS: Readonly<Record<string, string>> = {
  s: "seconds",
  ms: "milliseconds",
  By: "bytes",
};

/** A name part with every character Prometheus does not allow replaced, runs of `_` collapsed. */
function sanitize(name: string): string {
  return name.replace(/[^a-zA-Z0-9_:]+/g, "_").replace(/_{2,}/g, "_");
}

/** The Prometheus name of a metric, before a histogram's `_bucket`, `_sum` or `_count`. */
export function translatedMetricName(point: MetricPoint): string {
  let name = sanitize(point.metric);
  const unit = point.unit.replace(/\{[^}]*\}/g, "").trim();
  const word = UNIT_WORDS[unit] ?? (unit === "" ? "" : sanitize(unit));
  if (word !== "" && !name.endsWith(`_${word}`)) name = `${name}_${word}`;
  if (point.kind === "sum" && point.monotonic && !name.endsWith("_total")) name = `${name}_total`;
  return name;
}

/** The label name of an attribute key. */
function translatedLabelName(key: string): string {
  const name = sanitize(key);
  return /^[0-9]/.test(name) ? `key_${name}` : name;
}

const IDENTIFYING = ["service.name", "service.namespace", "service.instance.id"];

/** `job` and `instance` of a resource, as the translation derives them. */
export function jobAndInstance(resource: Attributes): { job?: string; instance?: string } {
  const name = resource["service.name"];
  const namespace = resource["service.namespace"];
  const instance = resource["service.instance.id"];
  return {
    ...(name === undefined
      ? {}
      : { job: namespace === undefined ? String(name) : `${namespace}/${name}` }),
    ...(instance === undefined ? {} : { instance: String(instance) }),
  };
}

function escapeLabelValue(value: string): string {
  return value.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"');
}

function sample(name: string, labels: Readonly<Record<string, string>>, value: number): string {
  const pairs = Object.entries(labels).map(([key, v]) => `${key}="${escapeLabelValue(v)}"`);
  const number = Number.isFinite(value) ? String(value) : value > 0 ? "+Inf" : "-Inf";
  return `${name}{${pairs.join(",")}} ${number}`;
}

function labelsOf(attributes: Attributes, resource: Attributes): Record<string, string> {
  return {
    ...Object.fromEntries(
      Object.entries(attributes).map(([key, value]) => [translatedLabelName(key), String(value)]),
    ),
    ...jobAndInstance(resource),
  };
}

/**
 * The text exposition of the latest cumulative points and gauges, named and labelled as Prometheus's OTLP
 * receiver stores them, with a `target_info` series per resource. Delta points are left out, as
 * Prometheus refuses them.
 */
export function translatedExposition(points: readonly MetricPoint[]): string {
  const lines: string[] = [];
  const resources = new Map<string, Attributes>();
  for (const point of points) {
    resources.set(JSON.stringify(jobAndInstance(point.resource)), point.resource);
    // A gauge has no temporality; Prometheus stores it as it is.
    if (point.kind !== "gauge" && point.temporality !== TEMPORALITY.cumulative) continue;
    const name = translatedMetricName(point);
    const labels = labelsOf(point.attributes, point.resource);
    if (point.kind === "sum" || point.kind === "gauge") {
      lines.push(sample(name, labels, point.value));
      continue;
    }
    let cumulative = 0;
    point.bucketCounts.forEach((count, index) => {
      cumulative += count;
      const bound = point.explicitBounds[index];
      lines.push(
        sample(
          `${name}_bucket`,
          { ...labels, le: bound === undefined ? "+Inf" : String(bound) },
          cumulative,
        ),
      );
    });
    lines.push(sample(`${name}_sum`, labels, point.sum));
    lines.push(sample(`${name}_count`, labels, point.count));
  }
  for (const resource of resources.values()) {
    const rest = Object.fromEntries(
      Object.entries(resource).filter(([key]) => !IDENTIFYING.includes(key)),
    );
    if (Object.keys(rest).length > 0)
      lines.push(sample("target_info", labelsOf(rest, resource), 1));
  }
  return `${lines.join("\n")}\n`;
}
