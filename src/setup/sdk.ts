/**
 * The OpenTelemetry SDK packages the setup entry point builds on, loaded from the application's
 * `@opentelemetry/sdk-node` when first needed.
 *
 * Each package the SDK depends on is required from where `@opentelemetry/sdk-node` itself finds
 * it, so the views, readers and exporters handed to its `NodeSDK` come from the very copies it runs
 * with, whichever release of the SDK the application installed: the 0.2xx line, whose entry point
 * also exports these packages as namespaces, and the 0.3xx line, whose entry point no longer does.
 * A package the SDK does not depend on is looked up from the application.
 */
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import type { Attributes } from "@opentelemetry/api";
import type { PrometheusExporter } from "@opentelemetry/exporter-prometheus";
import type {
  AggregationTemporality,
  AggregationType,
  createAllowListAttributesProcessor,
  DataPointType,
  PeriodicExportingMetricReader,
  PushMetricExporter,
} from "@opentelemetry/sdk-metrics";
import type { NodeSDK } from "@opentelemetry/sdk-node";
import type { SpanExporter, SpanProcessor } from "@opentelemetry/sdk-trace-base";
import { ToolCallResilienceSetupError } from "./errors.js";

/** The one peer dependency the setup entry point needs. */
const SDK_NODE_PACKAGE = "@opentelemetry/sdk-node";

const requireFromHere = createRequire(import.meta.url);
const loaded = new Map<string, unknown>();

/**
 * The command that installs the SDK. Below Node.js 22.15 npm picks 0.223, which refuses the API
 * 1.10 an app that names `@opentelemetry/api` has saved, so the API it admits goes with it there.
 */
export function sdkInstallCommand(nodeVersion = process.versions.node): string {
  const [major = 0, minor = 0] = nodeVersion.split(".").map(Number);
  const newestRuns = major > 22 || (major === 22 && minor >= 15);
  return newestRuns
    ? `npm install ${SDK_NODE_PACKAGE}`
    : `npm install ${SDK_NODE_PACKAGE} (if npm answers ERESOLVE because your package.json names @opentelemetry/api 1.10: npm install ${SDK_NODE_PACKAGE}@0.223 @opentelemetry/api@1.9)`;
}

/** A package that neither `@opentelemetry/sdk-node` nor the application could provide. */
function missing(name: string, purpose: string, cause?: unknown): ToolCallResilienceSetupError {
  return new ToolCallResilienceSetupError(
    name === SDK_NODE_PACKAGE
      ? `${purpose} needs the optional peer dependency ${SDK_NODE_PACKAGE}; install it: ${sdkInstallCommand()}`
      : `${purpose} needs ${name}, which the installed ${SDK_NODE_PACKAGE} does not bring; install it: npm install ${name}`,
    cause === undefined ? undefined : { cause },
  );
}

/** Whether `error` says that `name` itself, not something it requires, cannot be found. */
function isNotFound(error: unknown, name: string): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return (
    (code === "MODULE_NOT_FOUND" || code === "ERR_MODULE_NOT_FOUND") &&
    typeof message === "string" &&
    message.includes(`'${name}'`)
  );
}

/** The application's `@opentelemetry/sdk-node`: `require` as seen from it, and what it depends on. */
interface SdkNodeInstall {
  readonly require: NodeJS.Require;
  /** The packages its manifest lists as dependencies; `undefined` when it cannot be read. */
  readonly dependencies: ReadonlySet<string> | undefined;
}

let sdkNodeInstall: SdkNodeInstall | undefined;

/** Finds the application's `@opentelemetry/sdk-node`, once per process. */
function findSdkNode(purpose: string): SdkNodeInstall {
  if (sdkNodeInstall !== undefined) return sdkNodeInstall;
  let entry: string;
  try {
    entry = requireFromHere.resolve(SDK_NODE_PACKAGE);
  } catch (error) {
    throw missing(SDK_NODE_PACKAGE, purpose, error);
  }
  const dependencies = manifestAbove(entry, SDK_NODE_PACKAGE)?.dependencies;
  sdkNodeInstall = {
    require: createRequire(entry),
    dependencies: dependencies === undefined ? undefined : new Set(Object.keys(dependencies)),
  };
  return sdkNodeInstall;
}

/** What the setup entry point reads of a package's manifest. */
export interface PackageManifest {
  readonly version?: string;
  readonly dependencies?: Readonly<Record<string, unknown>>;
}

/**
 * The manifest of the package `name`, found above one of its files (such as its entry point):
 * packages whose `exports` do not let `package.json` be required still have one there.
 * `undefined` when there is none, or it cannot be read.
 */
export function manifestAbove(file: string, name: string): PackageManifest | undefined {
  for (let dir = dirname(file); dir !== dirname(dir); dir = dirname(dir)) {
    const path = join(dir, "package.json");
    if (!existsSync(path)) continue;
    try {
      const manifest = JSON.parse(readFileSync(path, "utf8")) as PackageManifest & {
        name?: unknown;
      };
      if (manifest.name === name) return manifest;
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/**
 * Loads the first of `names` that `@opentelemetry/sdk-node` depends on, from where it finds it, or
 * else the first that the application has, once per process.
 *
 * @param names - packages that serve the same purpose, the preferred first
 * @param purpose - what needs it, for the error, such as `"startTelemetry({ otlp })"`
 * @throws {ToolCallResilienceSetupError} when none of them can be found, or one fails to load
 */
export function loadSdkPackage<T>(names: readonly [string, ...string[]], purpose: string): T {
  for (const name of names) {
    const cached = loaded.get(name);
    if (cached !== undefined) return cached as T;
  }
  const sdk = findSdkNode(purpose);
  const ownNames = names.filter((name) => sdk.dependencies?.has(name) ?? true);
  const attempts = [
    ...ownNames.map((name) => [sdk.require, name] as const),
    ...names.map((name) => [requireFromHere, name] as const),
  ];
  for (const [load, name] of attempts) {
    try {
      const module = load(name) as T;
      loaded.set(name, module);
      return module;
    } catch (error) {
      if (isNotFound(error, name)) continue;
      throw new ToolCallResilienceSetupError(
        `${purpose} could not load ${name}: ${(error as Error)?.message ?? String(error)}`,
        { cause: error },
      );
    }
  }
  throw missing(names[0], purpose);
}

/** What the setup entry point uses of `@opentelemetry/sdk-node`. */
export interface SdkNodePackage {
  readonly NodeSDK: typeof NodeSDK;
}

/** What the setup entry point uses of `@opentelemetry/sdk-metrics`. */
export interface SdkMetricsPackage {
  readonly AggregationTemporality: typeof AggregationTemporality;
  readonly AggregationType: typeof AggregationType;
  readonly DataPointType: typeof DataPointType;
  readonly createAllowListAttributesProcessor: typeof createAllowListAttributesProcessor;
  readonly PeriodicExportingMetricReader: typeof PeriodicExportingMetricReader;
}

/** A resource of `@opentelemetry/resources`, as far as the setup entry point uses one. */
export interface SdkResource {
  merge(other: SdkResource | null): SdkResource;
}

/** What the setup entry point uses of `@opentelemetry/core`. */
export interface CorePackage {
  /** Epoch milliseconds as OpenTelemetry's `[seconds, nanoseconds]`. */
  millisToHrTime(epochMillis: number): [number, number];
  /** The codes of an exporter's result. */
  readonly ExportResultCode: { readonly SUCCESS: number; readonly FAILED: number };
}

/** What the setup entry point uses of `@opentelemetry/resources`. */
export interface ResourcesPackage {
  defaultResource(): SdkResource;
  emptyResource(): SdkResource;
  resourceFromAttributes(attributes: Attributes): SdkResource;
}

/** What the setup entry point uses of `@opentelemetry/exporter-prometheus`. */
export interface PrometheusExporterPackage {
  readonly PrometheusExporter: typeof PrometheusExporter;
}

/** The configuration every OTLP/HTTP exporter takes, as far as the setup entry point sets it. */
export interface OtlpHttpExporterConfig {
  url?: string;
  headers?: Record<string, string>;
  /** How long one export may take, its retries included; over the `OTEL_*` variables. */
  timeoutMillis?: number;
}

/** What the setup entry point uses of an OTLP metric exporter package. */
export interface OtlpMetricExporterPackage {
  readonly OTLPMetricExporter: new (config?: OtlpHttpExporterConfig) => PushMetricExporter;
}

/** What the setup entry point uses of an OTLP trace exporter package. */
export interface OtlpTraceExporterPackage {
  readonly OTLPTraceExporter: new (config?: OtlpHttpExporterConfig) => SpanExporter;
}

/** `@opentelemetry/sdk-trace`, which takes its exporter among its options. */
interface TraceSdkPackage {
  readonly BatchSpanProcessor: new (options: { exporter: SpanExporter }) => SpanProcessor;
}

/** `@opentelemetry/sdk-trace-base`, which takes its exporter first. */
interface TraceBaseSdkPackage {
  readonly BatchSpanProcessor: new (exporter: SpanExporter) => SpanProcessor;
}

/** `@opentelemetry/sdk-node`, whose `NodeSDK` runs everything. */
export function loadSdkNode(purpose: string): SdkNodePackage {
  return loadSdkPackage<SdkNodePackage>([SDK_NODE_PACKAGE], purpose);
}

/** `@opentelemetry/sdk-metrics`: views, attribute processors and the periodic reader. */
export function loadSdkMetrics(purpose: string): SdkMetricsPackage {
  return loadSdkPackage<SdkMetricsPackage>(["@opentelemetry/sdk-metrics"], purpose);
}

/** `@opentelemetry/core`: the time conversions the SDK's own data use. */
export function loadCore(purpose: string): CorePackage {
  return loadSdkPackage<CorePackage>(["@opentelemetry/core"], purpose);
}

/** `@opentelemetry/resources`. */
export function loadResources(purpose: string): ResourcesPackage {
  return loadSdkPackage<ResourcesPackage>(["@opentelemetry/resources"], purpose);
}

/** `@opentelemetry/exporter-prometheus`. */
export function loadPrometheusExporter(purpose: string): PrometheusExporterPackage {
  return loadSdkPackage<PrometheusExporterPackage>(["@opentelemetry/exporter-prometheus"], purpose);
}

/**
 * A batch span processor for `exporter`, from `@opentelemetry/sdk-trace` where the SDK depends on
 * it (its later releases), else from `@opentelemetry/sdk-trace-base`, which takes its exporter
 * otherwise.
 */
export function batchSpanProcessor(exporter: SpanExporter, purpose: string): SpanProcessor {
  const TRACE = "@opentelemetry/sdk-trace";
  const TRACE_BASE = "@opentelemetry/sdk-trace-base";
  const sdk = loadSdkPackage<TraceSdkPackage | TraceBaseSdkPackage>([TRACE, TRACE_BASE], purpose);
  return loaded.get(TRACE) === sdk
    ? new (sdk as TraceSdkPackage).BatchSpanProcessor({ exporter })
    : new (sdk as TraceBaseSdkPackage).BatchSpanProcessor(exporter);
}
