/**
 * What the installed `@opentelemetry/sdk-node` brings, for tests that run against either end of
 * the peer range (CI runs the setup suites once more with the lowest and the newest release).
 */
import { createRequire } from "node:module";
import { manifestAbove } from "../../src/setup/sdk.js";
import { INSTRUMENTATION_SCOPE_NAME } from "../../src/telemetry/semconv.js";
import { PACKAGE_VERSION } from "../../src/version.js";
import range from "../sdk-range.json" with { type: "json" };

/** An end of the `@opentelemetry/sdk-node` peer range, with the API and Node.js it needs. */
export interface SdkRangeEnd {
  readonly "@opentelemetry/sdk-node": string;
  readonly "@opentelemetry/api": string;
  /** The oldest Node.js it runs on. */
  readonly node: string;
}

/**
 * The two ends of the `@opentelemetry/sdk-node` peer range that CI runs the setup entry point
 * against (`test/sdk-range.json`, which `.ci/run` reads too): the lowest release the range admits
 * and the newest one published.
 */
export const SDK_RANGE: Readonly<{ lowest: SdkRangeEnd; newest: SdkRangeEnd }> = range;

/** The version of a package as `@opentelemetry/sdk-node` resolves it (the copy it runs with). */
function sdkPackageVersion(name: string): string {
  const fromSdk = createRequire(createRequire(import.meta.url).resolve("@opentelemetry/sdk-node"));
  const version = manifestAbove(fromSdk.resolve(name), name)?.version;
  if (version === undefined) throw new Error(`no package.json of ${name} above its entry point`);
  return version;
}

/**
 * The labels the Prometheus exporter adds to every sample of a meter (by default the library's):
 * `otel_scope_name` (and `otel_scope_version`, unless `version` is `null` for a meter without one) since
 * `@opentelemetry/exporter-prometheus` 0.209, none before (the lowest `@opentelemetry/sdk-node` of
 * the peer range, 0.204, brings 0.204).
 */
export function exporterScopeLabels(
  name: string = INSTRUMENTATION_SCOPE_NAME,
  version: string | null = PACKAGE_VERSION,
): Readonly<Record<string, string>> {
  const [major, minor] = sdkPackageVersion("@opentelemetry/exporter-prometheus")
    .split(".")
    .map(Number);
  if ((major ?? 0) === 0 && (minor ?? 0) < 209) return {};
  return version === null
    ? { otel_scope_name: name }
    : { otel_scope_name: name, otel_scope_version: version };
}
