/**
 * One harness for telemetry tests: a meter provider read through an in-memory metric reader, a
 * tracer provider that keeps finished spans in memory, and readers that find a metric's points by
 * name and attributes.
 */
import type { Attributes } from "@opentelemetry/api";
import {
  AggregationTemporality,
  type DataPoint,
  type Histogram,
  MeterProvider,
  type MetricProducer,
  MetricReader,
  type ViewOptions,
} from "@opentelemetry/sdk-metrics";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { threadMetricsProducer } from "../../src/setup/index.js";

/**
 * A metric reader that collects on demand, with cumulative sums, and the per-thread metric from
 * its producer, as `startTelemetry`'s readers have it.
 */
class OnDemandReader extends MetricReader {
  constructor(producers: MetricProducer[]) {
    super({
      aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE,
      metricProducers: producers,
    });
  }
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

/** A data point as the tests read it. */
export interface Point {
  readonly attributes: Attributes;
  readonly value: number | Histogram;
}

/** A meter provider and a reader that returns the points of a metric by name. */
export function metricsHarness(views: ViewOptions[] = []) {
  // The producer reads the store of the provider made below, once there is one.
  const producer: MetricProducer = {
    collect: (options) => threadMetricsProducer({ meterProvider }).collect(options),
  };
  const reader = new OnDemandReader([producer]);
  const meterProvider = new MeterProvider({ readers: [reader], views });
  return {
    meterProvider,
    /** Every point of a metric, or `[]` when it has none. */
    async points(name: string): Promise<Point[]> {
      const { resourceMetrics, errors } = await reader.collect();
      if (errors.length > 0) throw errors[0];
      for (const scope of resourceMetrics.scopeMetrics) {
        for (const metric of scope.metrics) {
          if (metric.descriptor.name !== name) continue;
          return (metric.dataPoints as DataPoint<number | Histogram>[]).map((point) => ({
            attributes: point.attributes,
            value: point.value,
          }));
        }
      }
      return [];
    },
    /** The descriptor of a metric, to check its unit, type and description. */
    async descriptor(name: string) {
      const { resourceMetrics } = await reader.collect();
      for (const scope of resourceMetrics.scopeMetrics) {
        const metric = scope.metrics.find((found) => found.descriptor.name === name);
        if (metric !== undefined) return { scope: scope.scope, ...metric.descriptor };
      }
      return undefined;
    },
    /** The sum of a counter over the points whose attributes include `where`. */
    async sum(name: string, where: Attributes = {}): Promise<number> {
      let total = 0;
      for (const point of await this.points(name)) {
        if (matches(point.attributes, where)) total += point.value as number;
      }
      return total;
    },
    shutdown: () => meterProvider.shutdown(),
  };
}

/** Whether `attributes` hold every entry of `where`. */
function matches(attributes: Attributes, where: Attributes): boolean {
  return Object.entries(where).every(([key, value]) => attributes[key] === value);
}

/** A tracer provider whose finished spans the test can read. */
export function tracingHarness() {
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  return {
    tracerProvider,
    exporter,
    /** The finished spans of this name. */
    spans(name: string): ReadableSpan[] {
      return exporter.getFinishedSpans().filter((span) => span.name === name);
    },
    reset: () => exporter.reset(),
    shutdown: () => tracerProvider.shutdown(),
  };
}
