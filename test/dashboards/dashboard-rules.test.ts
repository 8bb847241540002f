/**
 * The recording rules the dashboards read (`dashboards/generator/dashboard-rules.ts`): recorded
 * with the alerts' own, reading the library's series as the alerts' rules do, and keeping each
 * process apart wherever their level names one. Their values are checked by the promtool
 * scenarios of `dashboards/prometheus/rules.test.yml`, and against a real Prometheus by the
 * end-to-end test.
 */
import { describe, expect, it } from "vitest";
import { bundleConfig } from "../../dashboards/generator/config.js";
import {
  dashboardRecordingRules,
  dashboardRecords,
} from "../../dashboards/generator/dashboard-rules.js";
import { labels, scopeLabels, series } from "../../dashboards/generator/names.js";
import {
  recordingRules,
  seriesMatchersOf,
  summedAwayOf,
} from "../../dashboards/generator/prometheus-rules.js";
import { aggregationsIn, keepsProcesses, selectorsIn } from "./promql-aggregations.js";

const rules = dashboardRecordingRules(bundleConfig);
const processLabels = bundleConfig.processLabels;

describe("the dashboards' recording rules", () => {
  it("are recorded after the alerts' own, each once", () => {
    expect(recordingRules.slice(-rules.length)).toEqual(rules);
    expect(new Set(recordingRules.map((rule) => rule.record)).size).toBe(recordingRules.length);
  });

  it.each(rules)("$record reads the library's series with the alerts' rules' matchers", (rule) => {
    const library = selectorsIn(rule.expr).filter(({ name }) =>
      name.startsWith("tool_call_resilience_"),
    );
    for (const { text } of library) {
      if (rule.record === dashboardRecords.overflowSeries) {
        expect(text).toContain(`${labels.overflow}="true"`);
        continue;
      }
      for (const matcher of seriesMatchersOf(bundleConfig)) expect(text).toContain(matcher);
    }
  });

  it.each(rules.filter((rule) => /^(instance|process):/.test(rule.record)))(
    "$record keeps each process apart",
    (rule) => {
      for (const aggregation of aggregationsIn(rule.expr)) {
        // A process's peers are the job's figure less its own: summed over every process.
        if (rule.record.endsWith("_peers")) continue;
        expect(keepsProcesses(aggregation, processLabels), aggregation.text).toBe(true);
      }
    },
  );

  it("count the dangling calls per the labels the alerts' model and tool levels keep", () => {
    const away = (record: string) =>
      aggregationsIn(rules.find((rule) => rule.record === record)?.expr ?? "").flatMap(
        (aggregation) => aggregation.labels,
      );
    const perProcess = [...away(`instance:${series.danglingToolCalls}:sum`)];
    for (const level of ["model", "tool"] as const) {
      const summed = [
        ...perProcess,
        ...away(dashboardRecords.increase(level, "danglingToolCalls")),
      ];
      expect(new Set(summed)).toEqual(new Set(summedAwayOf(bundleConfig)[level]));
    }
    expect(perProcess).toEqual([labels.reason, ...scopeLabels]);
  });

  it.each(["toolCalls", "danglingToolCalls", "modelCalls"] as const)(
    "count each process's %s by comparing its sum with the one recorded an evaluation before",
    (key) => {
      const total = `instance:${series[key]}:sum`;
      const name = dashboardRecords.increase("instance", key);
      // Where zeros are added, the difference is recorded first, as `…:increase_counted`.
      const increase =
        rules.find((rule) => rule.record === `${name}_counted`) ??
        rules.find((rule) => rule.record === name);
      expect(rules.findIndex((rule) => rule.record === total)).toBe(
        rules.indexOf(increase as (typeof rules)[number]) - 1,
      );
      expect(increase?.expr).toContain(
        `(${total} - last_over_time(${total}[1h] offset 1ms)) >= 0 or ${total}`,
      );
    },
  );
});
