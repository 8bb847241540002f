/**
 * A local OTLP/HTTP receiver for tests: it listens on 127.0.0.1, takes what an OpenTelemetry
 * exporter pushes to `/v1/metrics` and `/v1/traces` (protobuf or JSON, gzip or not), decodes it
 * with the OpenTelemetry project's own generated protobuf code, and keeps every request as plain
 * data: the metric points with their names, units, temporality, attributes, scope and resource, and
 * the spans. It stands where a Collector or Prometheus's OTLP receiver would.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage } from "node:http";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { gunzipSync } from "node:zlib";

/** The generated protobuf classes of the OTLP collector services (protobufjs static code). */
interface GeneratedMessage {
  decode(buffer: Uint8Array): unknown;
  toObject(message: unknown, options: Record<string, unknown>): unknown;
}
interface GeneratedRoot {
  opentelemetry: {
    proto: {
      collector: {
        metrics: { v1: { ExportMetricsServiceRequest: GeneratedMessage } };
        trace: { v1: { ExportTraceServiceRequest: GeneratedMessage } };
      };
    };
  };
}

const generated = createRequire(import.meta.url)(
  "otlp-transformer-0.57/build/src/generated/root.js",
) as GeneratedRoot;
const MESSAGES = {
  metrics: generated.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest,
  traces: generated.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest,
} as const;

/** An attribute value as OTLP carries it. */
export type AttributeValue = string | number | boolean;
/** Attributes by key. */
export type Attributes = Readonly<Record<string, AttributeValue>>;

/** `AggregationTemporality` of OTLP. */
export const TEMPORALITY = { delta: 1, cumulative: 2 } as const;

/** One data point of a sum (counter) as it arrived. */
export interface SumPoint {
  readonly kind: "sum";
  readonly value: number;
}
/** One data point of a gauge as it arrived; a gauge has no temporality (0). */
export interface GaugePoint {
  readonly kind: "gauge";
  readonly value: number;
}
/** One data point of an explicit-bucket histogram as it arrived. */
export interface HistogramPoint {
  readonly kind: "histogram";
  readonly count: number;
  readonly sum: number;
  readonly bucketCounts: readonly number[];
  readonly explicitBounds: readonly number[];
}

/** A metric data point with everything that names it. */
export type MetricPoint = (SumPoint | GaugePoint | HistogramPoint) & {
  readonly metric: string;
  readonly unit: string;
  readonly description: string;
  /** `TEMPORALITY.cumulative` or `TEMPORALITY.delta`. */
  readonly temporality: number;
  /** For a sum: whether it only goes up (a counter). */
  readonly monotonic: boolean;
  readonly attributes: Attributes;
  readonly scope: { readonly name: string; readonly version: string };
  readonly resource: Attributes;
  readonly timeUnixNano: bigint;
};

/** A span as it arrived. */
export interface ReceivedSpan {
  readonly name: string;
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string;
  readonly attributes: Attributes;
  readonly scope: { readonly name: string; readonly version: string };
  readonly resource: Attributes;
}

/** One request the receiver took. */
export interface ReceivedRequest {
  readonly signal: "metrics" | "traces";
  readonly contentType: string;
  readonly headers: IncomingHttpHeaders;
  /** The metric points of a metrics request; empty for traces. */
  readonly points: readonly MetricPoint[];
  /** The spans of a traces request; empty for metrics. */
  readonly spans: readonly ReceivedSpan[];
}

/** A running receiver. */
export interface OtlpReceiver {
  /** Base URL, as `OTEL_EXPORTER_OTLP_ENDPOINT` takes it: `http://127.0.0.1:<port>`. */
  readonly url: string;
  /** Every request taken, in order of arrival. */
  readonly requests: ReceivedRequest[];
  /** Requests answered with an error status, with what was wrong. */
  readonly refused: { readonly path: string; readonly reason: string }[];
  /** Resolves once `count` metrics requests have arrived in all. */
  metricsRequests(count: number): Promise<void>;
  /** Stops listening and closes open connections. */
  close(): Promise<void>;
}

/** Options of {@link startOtlpReceiver}. */
export interface OtlpReceiverOptions {
  /**
   * HTTP status to answer every export with, such as 401 to play a receiver that refuses, or one
   * per signal (Prometheus's OTLP receiver answers 404 to traces).
   */
  readonly status?: number | Readonly<Partial<Record<"metrics" | "traces", number>>>;
  /**
   * Milliseconds a signal's export takes to be stored and answered, to play a slow receiver: a
   * request counts among `requests` only once it has been answered.
   */
  readonly delayMs?: Readonly<Partial<Record<"metrics" | "traces", number>>>;
}

// --- Decoding ------------------------------------------------------------------------------------

type Json = Record<string, unknown>;

function list(value: unknown): Json[] {
  return Array.isArray(value) ? (value as Json[]) : [];
}

function anyValue(value: unknown): AttributeValue {
  const v = (value ?? {}) as Json;
  if (v.stringValue !== undefined) return String(v.stringValue);
  if (v.boolValue !== undefined) return Boolean(v.boolValue);
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return Number(v.doubleValue);
  return JSON.stringify(v);
}

function attributesOf(keyValues: unknown): Attributes {
  return Object.fromEntries(list(keyValues).map((kv) => [String(kv.key), anyValue(kv.value)]));
}

function scopeOf(scope: unknown): { name: string; version: string } {
  const s = (scope ?? {}) as Json;
  return { name: String(s.name ?? ""), version: String(s.version ?? "") };
}

function pointsOf(request: Json): MetricPoint[] {
  const points: MetricPoint[] = [];
  for (const resourceMetrics of list(request.resourceMetrics)) {
    const resource = attributesOf((resourceMetrics.resource as Json | undefined)?.attributes);
    for (const scopeMetrics of list(resourceMetrics.scopeMetrics)) {
      const scope = scopeOf(scopeMetrics.scope);
      for (const metric of list(scopeMetrics.metrics)) {
        const named = {
          metric: String(metric.name),
          unit: String(metric.unit ?? ""),
          description: String(metric.description ?? ""),
          scope,
          resource,
        };
        const sum = metric.sum as Json | undefined;
        const gauge = metric.gauge as Json | undefined;
        const histogram = metric.histogram as Json | undefined;
        const shape = sum ?? gauge ?? histogram;
        if (shape === undefined) throw new Error(`unexpected metric type in ${named.metric}`);
        for (const point of list(shape.dataPoints)) {
          const common = {
            ...named,
            temporality: Number(shape.aggregationTemporality ?? 0),
            monotonic: Boolean(sum?.isMonotonic),
            attributes: attributesOf(point.attributes),
            timeUnixNano: BigInt(String(point.timeUnixNano ?? 0)),
          };
          const value = Number(point.asDouble ?? point.asInt ?? 0);
          points.push(
            sum !== undefined
              ? { ...common, kind: "sum", value }
              : gauge !== undefined
                ? { ...common, kind: "gauge", value }
                : {
                    ...common,
                    kind: "histogram",
                    count: Number(point.count ?? 0),
                    sum: Number(point.sum ?? 0),
                    bucketCounts: list(point.bucketCounts).map(Number),
                    explicitBounds: list(point.explicitBounds).map(Number),
                  },
          );
        }
      }
    }
  }
  return points;
}

function spansOf(request: Json): ReceivedSpan[] {
  const spans: ReceivedSpan[] = [];
  for (const resourceSpans of list(request.resourceSpans)) {
    const resource = attributesOf((resourceSpans.resource as Json | undefined)?.attributes);
    for (const scopeSpans of list(resourceSpans.scopeSpans)) {
      const scope = scopeOf(scopeSpans.scope);
      for (const span of list(scopeSpans.spans)) {
        spans.push({
          name: String(span.name),
          traceId: String(span.traceId ?? ""),
          spanId: String(span.spanId ?? ""),
          parentSpanId: String(span.parentSpanId ?? ""),
          attributes: attributesOf(span.attributes),
          scope,
          resource,
        });
      }
    }
  }
  return spans;
}

/** The request as OTLP/JSON objects, whichever encoding it came in. */
function decode(signal: "metrics" | "traces", contentType: string, body: Buffer): Json {
  if (contentType.startsWith("application/json")) return JSON.parse(body.toString("utf8")) as Json;
  if (contentType.startsWith("application/x-protobuf")) {
    const message = MESSAGES[signal];
    return message.toObject(message.decode(body), {
      longs: String,
      enums: Number,
      bytes: String,
      defaults: false,
      arrays: true,
    }) as Json;
  }
  throw new Error(`unsupported content type "${contentType}"`);
}

async function bodyOf(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks);
  return request.headers["content-encoding"] === "gzip" ? gunzipSync(body) : body;
}

// --- Serving -------------------------------------------------------------------------------------

/**
 * Starts a receiver on a free port of 127.0.0.1. Paths may carry a prefix, as Prometheus's
 * `/api/v1/otlp/v1/metrics` does; what counts is the `/v1/metrics` or `/v1/traces` they end with.
 */
export async function startOtlpReceiver(options: OtlpReceiverOptions = {}): Promise<OtlpReceiver> {
  const requests: ReceivedRequest[] = [];
  const refused: { path: string; reason: string }[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  const metricsCount = () => requests.filter((request) => request.signal === "metrics").length;
  const server = createServer((request, response) => {
    void (async () => {
      const path = request.url ?? "";
      const signal = path.endsWith("/v1/metrics")
        ? "metrics"
        : path.endsWith("/v1/traces")
          ? "traces"
          : undefined;
      try {
        if (request.method !== "POST" || signal === undefined) {
          throw new Error(`${request.method} ${path} is not an OTLP export`);
        }
        const contentType = String(request.headers["content-type"] ?? "");
        const decoded = decode(signal, contentType, await bodyOf(request));
        const delay = options.delayMs?.[signal] ?? 0;
        if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
        requests.push({
          signal,
          contentType,
          headers: request.headers,
          points: signal === "metrics" ? pointsOf(decoded) : [],
          spans: signal === "traces" ? spansOf(decoded) : [],
        });
        for (const waiter of waiters.filter((w) => metricsCount() >= w.count)) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve();
        }
        const status =
          typeof options.status === "number" ? options.status : (options.status?.[signal] ?? 200);
        response.writeHead(status, { "content-type": contentType || "application/json" });
        response.end(contentType.startsWith("application/json") && status === 200 ? "{}" : "");
      } catch (error) {
        refused.push({ path, reason: (error as Error).message });
        response.writeHead(400, { "content-type": "text/plain" }).end((error as Error).message);
      }
    })();
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    refused,
    metricsRequests(count) {
      if (metricsCount() >= count) return Promise.resolve();
      return new Promise((resolve) => waiters.push({ count, resolve }));
    },
    close() {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

function sorted(attributes: Attributes): [string, AttributeValue][] {
  return Object.entries(attributes).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * The latest point of each series (metric, attributes, resource) across the requests: with
 * cumulative temporality, what the series stands at.
 */
export function latestPoints(requests: readonly ReceivedRequest[]): MetricPoint[] {
  const latest = new Map<string, MetricPoint>();
  for (const request of requests) {
    for (const point of request.points) {
      const key = JSON.stringify([point.metric, sorted(point.attributes), sorted(point.resource)]);
      const before = latest.get(key);
      if (before === undefined || point.timeUnixNano >= before.timeUnixNano) latest.set(key, point);
    }
  }
  return [...latest.values()];
}
