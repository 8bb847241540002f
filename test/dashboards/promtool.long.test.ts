/**
 * The Prometheus rules pass Prometheus's own tool: `promtool check rules` lints the shipped files,
 * and `promtool test rules` runs the hand-written unit tests against them, every
 * `dashboards/prometheus/*.test.yml` file its own test. Together the unit tests exercise every rule
 * and alert on both shapes of series the bundle reads.
 *
 * Without promtool on the PATH the tests that run it are skipped, and say so in their names; with
 * `REQUIRE_PROMETHEUS=1` (CI) a missing promtool fails them instead.
 */
import { type ExecFileException, execFile } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import {
  namesOf,
  type SeriesKey,
  SHAPES,
  type Shape,
  series,
} from "../../dashboards/generator/names.js";
import { alertRules, recordingRules } from "../../dashboards/generator/prometheus-rules.js";
import { findOnPath } from "../../demo/prometheus-server.js";
import { INSTRUMENTATION_SCOPE_NAME } from "../../src/telemetry/semconv.js";

const prometheusDirectory = fileURLToPath(new URL("../../dashboards/prometheus/", import.meta.url));
const recordingFile = join(prometheusDirectory, "recording-rules.yml");
const alertsFile = join(prometheusDirectory, "alerts.yml");
/** The unit-test files, `rules.test.yml` and any other `*.test.yml` beside it, in name order. */
const unitTestFiles = readdirSync(prometheusDirectory)
  .filter((name) => name.endsWith(".test.yml"))
  .sort();

const promtool = findOnPath("promtool");
const required = process.env.REQUIRE_PROMETHEUS === "1";
// Skipped only when nobody asked for promtool; when required, the tests run and fail loudly.
const skip = promtool === undefined && !required;
const skipNote = skip ? " (skipped: promtool not on PATH)" : "";

interface Outcome {
  readonly code: number | string;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * The longest a promtool run of one file may take: its scenarios span a day of minutes or more,
 * every rule evaluated at each of them (rules.test.yml takes one to two minutes).
 */
const PROMTOOL_LIMIT_MS = 300_000;

/** Runs promtool, resolving with its exit code and output whatever the code. */
function runPromtool(args: readonly string[]): Promise<Outcome> {
  if (promtool === undefined) {
    throw new Error("REQUIRE_PROMETHEUS=1, but promtool is not on the PATH");
  }
  return new Promise((resolve) => {
    execFile(promtool, args, { timeout: PROMTOOL_LIMIT_MS }, (error, stdout, stderr) => {
      const failure = error as (ExecFileException & { code?: number | string }) | null;
      resolve({ code: failure === null ? 0 : (failure.code ?? String(failure)), stdout, stderr });
    });
  });
}

function report(outcome: Outcome): string {
  return `exit ${outcome.code}\n${outcome.stdout}\n${outcome.stderr}`;
}

describe("promtool", () => {
  it.skipIf(skip)(`lints both rule files without a warning${skipNote}`, async () => {
    const outcome = await runPromtool(["check", "rules", recordingFile, alertsFile]);
    expect(outcome.code, report(outcome)).toBe(0);
    expect(outcome.stderr, report(outcome)).toBe("");
    expect(outcome.stdout).not.toMatch(/warning|failed|error/i);
    expect(outcome.stdout).toContain(`SUCCESS: ${recordingRules.length} rules found`);
    expect(outcome.stdout).toContain(`SUCCESS: ${alertRules.length} rules found`);
  });

  it("finds the unit-test files, rules.test.yml among them", () => {
    expect(unitTestFiles).toContain("rules.test.yml");
  });

  for (const file of unitTestFiles) {
    it.skipIf(skip)(
      `passes the unit tests of ${file}${skipNote}`,
      async () => {
        const outcome = await runPromtool(["test", "rules", join(prometheusDirectory, file)]);
        expect(outcome.code, report(outcome)).toBe(0);
        expect(outcome.stdout).toContain("SUCCESS");
      },
      PROMTOOL_LIMIT_MS,
    );
  }
});

interface UnitTestGroup {
  readonly name: string;
  readonly input_series: readonly { readonly series: string }[];
  readonly promql_expr_test?: readonly { readonly expr: string; readonly exp_samples: unknown[] }[];
  readonly alert_rule_test?: readonly {
    readonly alertname: string;
    readonly exp_alerts: unknown[];
  }[];
}

/** The test groups of every unit-test file, which the checks below take together. */
const unitTests = unitTestFiles.flatMap(
  (file) =>
    (parse(readFileSync(join(prometheusDirectory, file), "utf8")) as { tests: UnitTestGroup[] })
      .tests,
);

interface InputSeries {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
}

function parseSeries(text: string): InputSeries {
  const name = text.slice(0, text.indexOf("{")).trim();
  const labels = Object.fromEntries(
    [...text.matchAll(/(\w+)="([^"]*)"/g)].map((match) => [match[1], match[2]]),
  );
  return { name, labels };
}

/** The names of the library's series that only one path writes (the histogram's). */
const namesOnlyOf = (shape: Shape): Set<string> =>
  new Set(
    (Object.keys(series) as SeriesKey[])
      .filter((key) => namesOf(key).length > 1)
      .map((key) => (shape === "scrape" ? namesOf(key)[0] : namesOf(key)[1]) as string),
  );

/**
 * The shape of a test group's series, or `undefined` when they mix both. Scraped: the library's
 * series carry `otel_scope_name`, the histogram has no unit suffix, targets may have `up`. Pushed:
 * no `otel_scope_*` label, the histogram is `_seconds`, and no `up` at all.
 */
function shapeOf(group: UnitTestGroup): Shape | undefined {
  const input = group.input_series.map((entry) => parseSeries(entry.series));
  const library = input.filter((entry) => entry.name.startsWith("tool_call_resilience_"));
  const scoped = library.filter(
    (entry) => entry.labels.otel_scope_name === INSTRUMENTATION_SCOPE_NAME,
  );
  const hasUp = input.some((entry) => entry.name === "up");
  const uses = (names: Set<string>) => library.some((entry) => names.has(entry.name));
  if (
    (library.length > 0 || hasUp) &&
    scoped.length === library.length &&
    !uses(namesOnlyOf("otlp"))
  ) {
    return "scrape";
  }
  const unscoped = library.every(
    (entry) => !Object.keys(entry.labels).some((label) => label.startsWith("otel_scope_")),
  );
  if (!hasUp && unscoped && !uses(namesOnlyOf("scrape"))) return "otlp";
  return undefined;
}

describe("the unit tests of the *.test.yml files", () => {
  it.each(unitTests.map((group) => [group.name, group] as const))(
    "%s is named after the shape of its series",
    (name, group) => {
      const shape = shapeOf(group);
      expect(shape, `${name} mixes scraped and pushed series`).toBeDefined();
      expect(name.startsWith(`${shape} / `), name).toBe(true);
    },
  );

  it.each(recordingRules.map((rule) => rule.record))("evaluate %s", (record) => {
    const checked = unitTests.flatMap((group) =>
      (group.promql_expr_test ?? []).filter(
        (test) => test.expr.split(/[^a-z0-9_:]/i).includes(record) && test.exp_samples.length > 0,
      ),
    );
    expect(checked.length, `no test group evaluates ${record}`).toBeGreaterThan(0);
  });

  it.each(SHAPES)("evaluate the recording rules on %s series too", (shape) => {
    const groups = unitTests.filter(
      (group) => shapeOf(group) === shape && (group.promql_expr_test ?? []).length > 0,
    );
    expect(groups.length).toBeGreaterThan(0);
  });

  // Every alert, on scraped series; on pushed series, those whose reading differs there: the
  // burn, whose series lack the scope labels; the outlier, whose instance is a
  // service.instance.id; failing open, whose first failure is a new series; and telemetry
  // missing, which has no up to read.
  const onBothShapes = new Set([
    "ToolCallResilienceDanglingBudgetBurn",
    "ToolCallResilienceInstanceDanglingOutlier",
    "ToolCallResilienceFailingOpen",
    "ToolCallResilienceTelemetryMissing",
  ]);
  const cases = SHAPES.flatMap((shape) =>
    [...new Set(alertRules.map((rule) => rule.alert))]
      .filter((alert) => shape === "scrape" || onBothShapes.has(alert))
      .map((alert) => [alert, shape] as const),
  );

  it.each(cases)("see %s not firing and firing on %s series", (alert, shape) => {
    const tests = unitTests
      .filter((group) => shapeOf(group) === shape)
      .flatMap((group) => (group.alert_rule_test ?? []).filter((test) => test.alertname === alert));
    expect(
      tests.some((test) => test.exp_alerts.length === 0),
      `no ${shape} test where ${alert} does not fire`,
    ).toBe(true);
    expect(
      tests.some((test) => test.exp_alerts.length > 0),
      `no ${shape} test where ${alert} fires`,
    ).toBe(true);
  });

  it.each(alertRules.map((rule) => [rule.alert, rule.labels.severity] as const))(
    "see %s fire at severity %s",
    (alert, severity) => {
      const fired = unitTests.flatMap((group) =>
        (group.alert_rule_test ?? [])
          .filter((test) => test.alertname === alert)
          .flatMap((test) => test.exp_alerts as { exp_labels: Record<string, string> }[]),
      );
      expect(fired.some((expected) => expected.exp_labels.severity === severity)).toBe(true);
    },
  );

  it.each([
    "a sustained rise",
    "burst",
    "rolling deploy",
    "bad replica",
    "quiet model",
    "two environments",
    "targets down",
    "failing open",
    "+Inf",
    // Fleets of workers, killed and replaced.
    "three instances sharing a model's traffic page once",
    "an instance killed mid-incident and replaced",
    "split over three instances",
    "moved between workers",
    "stops once service discovery drops it",
    "killed a minute after failing open",
    "Instance health table",
  ])("hold the incident scenario: %s", (scenario) => {
    expect(unitTests.some((group) => group.name.includes(scenario))).toBe(true);
  });
});
