/**
 * Time compression for the alerting tests: a copy of the bundle's configuration, and of the
 * Alertmanager timings, with every duration divided by the same factor, so that an incident whose
 * alerts take hours to unfold plays out in minutes against the same rules.
 */
import type { AlertmanagerTimings } from "../../dashboards/generator/alertmanager.js";
import type { BundleConfig } from "../../dashboards/generator/config.js";
import { seconds } from "../../dashboards/generator/prometheus-rules.js";

/** A Prometheus duration such as `5m`, as every duration of the configuration is written. */
const DURATION = /^\d+[smhdw]$/;

/**
 * A Prometheus duration divided by `factor`, in whole seconds: `1h` by 60 is `60s`.
 *
 * @throws {Error} when the result is not a whole number of seconds
 */
function scaleDuration(duration: string, factor: number): string {
  const scaled = seconds(duration) / factor;
  if (!Number.isInteger(scaled)) {
    throw new Error(`${duration} divided by ${factor} is not a whole number of seconds`);
  }
  return `${scaled}s`;
}

function scaleValue(value: unknown, factor: number): unknown {
  if (typeof value === "string") return DURATION.test(value) ? scaleDuration(value, factor) : value;
  if (Array.isArray(value)) return value.map((item) => scaleValue(item, factor));
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, scaleValue(item, factor)]),
    );
  }
  return value;
}

/**
 * The configuration with every duration (windows, `for`, `keep_firing_for`...) divided by
 * `factor`; everything else (thresholds, burn-rate factors, labels) unchanged.
 */
export function scaleConfig(config: BundleConfig, factor: number): BundleConfig {
  return scaleValue(config, factor) as BundleConfig;
}

/** An Alertmanager duration (`30s`, `4h`, `1d`) divided by `factor`, in milliseconds. */
function scaleAlertmanagerDuration(duration: string, factor: number): string {
  const match = /^(\d+)(ms|s|m|h|d|w)$/.exec(duration);
  const units: Record<string, number> = {
    ms: 1,
    s: 1_000,
    m: 60_000,
    h: 3_600_000,
    d: 86_400_000,
    w: 604_800_000,
  };
  if (match === null) throw new Error(`"${duration}" is not an Alertmanager duration`);
  return `${Math.max(1, Math.round((Number(match[1]) * (units[match[2] as string] ?? 0)) / factor))}ms`;
}

/** The Alertmanager timings with every duration divided by `factor`. */
export function scaleTimings(timings: AlertmanagerTimings, factor: number): AlertmanagerTimings {
  const scale = (group: AlertmanagerTimings["critical"]) => ({
    groupWait: scaleAlertmanagerDuration(group.groupWait, factor),
    groupInterval: scaleAlertmanagerDuration(group.groupInterval, factor),
    repeatInterval: scaleAlertmanagerDuration(group.repeatInterval, factor),
  });
  return { critical: scale(timings.critical), warning: scale(timings.warning) };
}
