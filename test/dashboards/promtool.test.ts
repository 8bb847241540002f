/**
 * The Prometheus rules pass Prometheus's own tool: `promtool check rules` lints the shipped files,
 * and `promtool test rules` runs the hand-written unit tests against them, and again against the
 * alerts' raw expressions (the ones the Grafana-managed rules query), which must behave the same.
 *
 * Without promtool on the PATH the tests are skipped, and say so in their names; with
 * `REQUIRE_PROMETHEUS=1` (CI) a missing promtool fails them instead.
 */
import { type ExecFileException, execFile } from "node:child_process";
import { copyFile, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ALERT_GROUP,
  alertRules,
  recordingRules,
  renderPrometheusRules,
  toYaml,
} from "../../dashboards/generator/prometheus-rules.js";
import { findOnPath } from "../../demo/prometheus-server.js";

const prometheusDirectory = fileURLToPath(new URL("../../dashboards/prometheus/", import.meta.url));
const recordingFile = join(prometheusDirectory, "recording-rules.yml");
const alertsFile = join(prometheusDirectory, "alerts.yml");
const unitTestsFile = join(prometheusDirectory, "rules.test.yml");

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

/** Runs promtool, resolving with its exit code and output whatever the code. */
function runPromtool(args: readonly string[]): Promise<Outcome> {
  if (promtool === undefined) {
    throw new Error("REQUIRE_PROMETHEUS=1, but promtool is not on the PATH");
  }
  return new Promise((resolve) => {
    execFile(promtool, args, { timeout: 60_000 }, (error, stdout, stderr) => {
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

  it.skipIf(skip)(`passes the unit tests of rules.test.yml${skipNote}`, async () => {
    const outcome = await runPromtool(["test", "rules", unitTestsFile]);
    expect(outcome.code, report(outcome)).toBe(0);
    expect(outcome.stdout).toContain("SUCCESS");
  });

  describe("with the raw expressions the Grafana-managed alerts query", () => {
    let directory = "";

    beforeAll(async () => {
      directory = await mkdtemp(join(tmpdir(), "tool-call-resilience-rules-"));
      // rules.test.yml names its rule files relative to itself: the same names, other contents.
      const recording = renderPrometheusRules()["prometheus/recording-rules.yml"];
      if (recording === undefined) throw new Error("no recording rules rendered");
      const rawAlerts = {
        groups: [
          {
            name: ALERT_GROUP,
            rules: alertRules.map((rule) => ({
              alert: rule.alert,
              expr: rule.rawExpr,
              for: rule.for,
              labels: rule.labels,
              annotations: rule.annotations,
            })),
          },
        ],
      };
      await writeFile(join(directory, "recording-rules.yml"), recording);
      await writeFile(join(directory, "alerts.yml"), toYaml(rawAlerts));
      await copyFile(unitTestsFile, join(directory, "rules.test.yml"));
    });

    afterAll(async () => {
      if (directory !== "") await rm(directory, { recursive: true, force: true });
    });

    it.skipIf(skip)(`lints them${skipNote}`, async () => {
      const outcome = await runPromtool(["check", "rules", join(directory, "alerts.yml")]);
      expect(outcome.code, report(outcome)).toBe(0);
      expect(outcome.stdout).toContain(`SUCCESS: ${alertRules.length} rules found`);
    });

    it.skipIf(skip)(`fires exactly as the recorded ones do${skipNote}`, async () => {
      const outcome = await runPromtool(["test", "rules", join(directory, "rules.test.yml")]);
      expect(outcome.code, report(outcome)).toBe(0);
    });
  });
});
