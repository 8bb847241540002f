/**
 * The monitoring bundle against a real Prometheus: the demo runs a short seeded fleet with metrics
 * on a free port, Debian's `prometheus` binary scrapes it every second with the shipped rules, and
 * then every panel query of every shipped dashboard (Grafana's variables substituted) and every
 * recording rule is evaluated through the Prometheus HTTP API. Each must return data (and nothing
 * for a job that sends none), and the overview's per-model dangling ratio must equal the demo's
 * own ground truth. It runs once per shape in which series reach Prometheus (`SHAPES` in
 * `dashboards/generator/names.ts`):
 *
 * - `scrape`: Prometheus scrapes the demo's endpoint, as the README's setup does.
 * - `otlp`: the demo pushes OTLP/HTTP to a local receiver, which decodes each push and serves the
 *   series as Prometheus's OTLP receiver (or a Collector's `prometheusremotewrite` exporter)
 *   stores them: renamed by the documented OTLP translation, `job` and `instance` from the
 *   resource, `target_info`, no scope labels and no `up` for the job. Prometheus scrapes that with
 *   `honor_labels`. The push and its decoding are real; the translation is simulated
 *   (`test/helpers/otlp-translation.ts`), since neither a Collector nor a Prometheus with an OTLP
 *   receiver can be had here.
 *
 * Without a `prometheus` binary the suite is skipped, loudly; with `REQUIRE_PROMETHEUS=1` (as in
 * CI) a missing binary fails it instead.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import {
  labels,
  reportingSeries,
  SHAPES,
  type Shape,
  seriesByShape,
} from "../../dashboards/generator/names.js";
import type { GroundTruth } from "../../demo/fleet.js";
import {
  findOnPath,
  type PrometheusServer,
  SCRAPE_JOB,
  startPrometheus,
} from "../../demo/prometheus-server.js";
import { truthRows } from "../../demo/summary.js";
import { latestPoints, startOtlpReceiver } from "../helpers/otlp-receiver.js";
import { translatedExposition } from "../helpers/otlp-translation.js";
import { freePort } from "../helpers/prometheus.js";

const root = fileURLToPath(new URL("../..", import.meta.url));
const binary = findOnPath("prometheus");
const required = process.env.REQUIRE_PROMETHEUS === "1";

/**
 * The demo's run: bounded by turns, so its ground truth depends on the seed alone, and long enough
 * (a few seconds) for several scrapes to see the counters grow.
 */
const DEMO_RUN = ["--threads", "30", "--turns", "8", "--concurrency", "2", "--duration", "120"];
/** The longest the run may take, on a busy machine. */
const DEMO_LIMIT_MS = 120_000;

/** Values for Grafana's variables: every option selected, windows that span the whole run. */
const GRAFANA_VARIABLES: Readonly<Record<string, string>> = {
  __rate_interval: "1m",
  __interval: "15s",
  // Shorter than the series have existed, so a panel's `offset $__range` finds samples.
  __range: "10s",
  job: SCRAPE_JOB,
  provider: ".*",
  model: ".*",
  tool: ".*",
  agent: ".*",
  thread: ".*",
  reason: ".*",
};

/** The scrape job of the receiver that stands for Prometheus's OTLP receiver. */
const OTLP_RECEIVER_JOB = "otlp-receiver";

/** A job no process reports under. */
const SILENT_JOB = "no-such-job";

/** Replaces `$name`, `${name}` and `[[name]]` with the value of each Grafana variable. */
function substitute(expr: string, overrides: Readonly<Record<string, string>> = {}): string {
  return expr.replace(/\$\{(\w+)(?::\w+)?\}|\$(\w+)|\[\[(\w+)\]\]/g, (whole, a, b, c) => {
    const name = (a ?? b ?? c) as string;
    const value = overrides[name] ?? GRAFANA_VARIABLES[name];
    if (value === undefined) throw new Error(`no test value for Grafana variable ${whole}`);
    return value;
  });
}

interface PanelQuery {
  readonly dashboard: string;
  readonly panel: string;
  readonly refId: string;
  readonly expr: string;
}

interface GrafanaPanel {
  readonly title?: string;
  readonly targets?: readonly { readonly expr?: string; readonly refId?: string }[];
  readonly panels?: readonly GrafanaPanel[];
}

/** Every target of every panel (rows' panels included) of every shipped dashboard. */
function shippedPanelQueries(): PanelQuery[] {
  const folder = join(root, "dashboards/grafana");
  const queries: PanelQuery[] = [];
  for (const file of readdirSync(folder).filter((name) => name.endsWith(".json"))) {
    const dashboard = JSON.parse(readFileSync(join(folder, file), "utf8")) as {
      readonly panels?: readonly GrafanaPanel[];
    };
    const visit = (panels: readonly GrafanaPanel[]) => {
      for (const panel of panels) {
        for (const target of panel.targets ?? []) {
          if (target.expr === undefined) continue;
          queries.push({
            dashboard: file,
            panel: panel.title ?? "(untitled)",
            refId: target.refId ?? "?",
            expr: target.expr,
          });
        }
        visit(panel.panels ?? []);
      }
    };
    visit(dashboard.panels ?? []);
  }
  return queries;
}

interface VariableQuery {
  readonly dashboard: string;
  readonly variable: string;
  readonly selector: string;
  readonly label: string;
}

/** Every `label_values(selector, label)` query variable of every shipped dashboard. */
function shippedVariableQueries(): VariableQuery[] {
  const folder = join(root, "dashboards/grafana");
  const queries: VariableQuery[] = [];
  for (const file of readdirSync(folder).filter((name) => name.endsWith(".json"))) {
    const dashboard = JSON.parse(readFileSync(join(folder, file), "utf8")) as {
      readonly templating?: {
        readonly list?: readonly { type: string; name: string; query?: unknown }[];
      };
    };
    for (const variable of dashboard.templating?.list ?? []) {
      if (variable.type !== "query") continue;
      const text =
        typeof variable.query === "string" ? variable.query : JSON.stringify(variable.query);
      const match = /^label_values\((.*),\s*(\w+)\)$/.exec(text);
      if (match === null)
        throw new Error(`${file}: variable ${variable.name} is not label_values(...): ${text}`);
      queries.push({
        dashboard: file,
        variable: variable.name,
        selector: match[1] as string,
        label: match[2] as string,
      });
    }
  }
  return queries;
}

interface RuleFile {
  readonly groups: readonly {
    readonly rules: readonly {
      readonly record?: string;
      readonly alert?: string;
      readonly expr: string;
    }[];
  }[];
}

function shippedRules(file: string) {
  const rules = parse(readFileSync(join(root, "dashboards/prometheus", file), "utf8")) as RuleFile;
  return rules.groups.flatMap((group) => group.rules);
}

interface Sample {
  readonly metric: Readonly<Record<string, string>>;
  readonly value: readonly [number, string];
}

async function query(prometheus: PrometheusServer, expr: string): Promise<Sample[]> {
  const url = `${prometheus.url}/api/v1/query?query=${encodeURIComponent(expr)}`;
  const response = await fetch(url);
  const body = (await response.json()) as {
    status: string;
    error?: string;
    data?: { resultType: string; result: Sample[] | [number, string] };
  };
  if (body.status !== "success" || body.data === undefined) {
    throw new Error(`${expr}\n  -> ${body.error ?? response.status}`);
  }
  if (body.data.resultType === "scalar") {
    return [{ metric: {}, value: body.data.result as [number, string] }];
  }
  return body.data.result as Sample[];
}

async function until<T>(
  what: string,
  attempt: () => Promise<T | undefined>,
  ms: number,
): Promise<T> {
  const deadline = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const value = await attempt();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}: ${String(last ?? "")}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** Stops the demo by its PID: SIGTERM, then SIGKILL if it has not exited after 10 s. */
async function stopDemo(demo: ChildProcess): Promise<void> {
  if (demo.exitCode !== null || demo.signalCode !== null || demo.pid === undefined) return;
  const exited = new Promise<void>((resolve) => demo.once("exit", () => resolve()));
  process.kill(demo.pid, "SIGTERM");
  const killer = setTimeout(() => {
    if (demo.pid !== undefined && demo.exitCode === null) process.kill(demo.pid, "SIGKILL");
  }, 10_000);
  await exited;
  clearTimeout(killer);
}

if (binary === undefined && required) {
  describe("the monitoring bundle against a real Prometheus", () => {
    it("needs the prometheus binary, since REQUIRE_PROMETHEUS=1", () => {
      expect.fail("REQUIRE_PROMETHEUS=1 but no prometheus binary is on the PATH");
    });
  });
}

/**
 * Where the demo's series come from: its own endpoint, or a receiver that takes its OTLP pushes and
 * serves them as Prometheus would store them.
 */
interface SeriesSource {
  /** What Prometheus scrapes. */
  readonly target: string;
  /** The demo's options that send its series there. */
  readonly demoOptions: readonly string[];
  readonly scrape: { readonly job?: string; readonly honorLabels?: boolean };
  stop(): Promise<void>;
}

async function seriesSource(shape: Shape, metricsPort: number): Promise<SeriesSource> {
  if (shape === "scrape") {
    return {
      target: `127.0.0.1:${metricsPort}`,
      demoOptions: ["--port", String(metricsPort)],
      scrape: {},
      stop: async () => {},
    };
  }
  const receiver = await startOtlpReceiver();
  const exposition = createServer((_, response) => {
    response
      .writeHead(200, { "content-type": "text/plain; version=0.0.4" })
      .end(translatedExposition(latestPoints(receiver.requests)));
  });
  await new Promise<void>((resolve) => exposition.listen(0, "127.0.0.1", resolve));
  const { port } = exposition.address() as AddressInfo;
  return {
    target: `127.0.0.1:${port}`,
    demoOptions: ["--port", String(metricsPort), "--otlp", receiver.url],
    scrape: { job: OTLP_RECEIVER_JOB, honorLabels: true },
    async stop() {
      exposition.closeAllConnections();
      await new Promise((resolve) => exposition.close(resolve));
      await receiver.close();
      expect(receiver.refused, "pushes the receiver could not decode").toEqual([]);
    },
  };
}

for (const SHAPE of SHAPES)
  describe.skipIf(binary === undefined)(
    `the monitoring bundle against a real Prometheus, series ${SHAPE === "scrape" ? "scraped" : "pushed over OTLP"}${binary === undefined ? " (skipped: no prometheus binary on the PATH; set REQUIRE_PROMETHEUS=1 to fail instead)" : ""}`,
    () => {
      let source: SeriesSource | undefined;
      let prometheus: PrometheusServer;
      let demo: ChildProcess | undefined;
      let demoOutput = "";
      let truth: GroundTruth;
      const folder = mkdtempSync(join(tmpdir(), "tool-call-resilience-e2e-"));
      const report = join(folder, "report.json");

      beforeAll(async () => {
        const [metricsPort, prometheusPort] = [await freePort(), await freePort()];
        source = await seriesSource(SHAPE, metricsPort);
        prometheus = await startPrometheus({
          binary: binary as string,
          port: prometheusPort,
          targets: [source.target],
          ...source.scrape,
        });
        // `node --import tsx` keeps the demo in one process, whose PID the test stops.
        demo = spawn(
          process.execPath,
          [
            "--import",
            "tsx",
            "demo/main.ts",
            ...DEMO_RUN,
            ...["--interrupt-rate", "0.25", "--seed", "7", ...source.demoOptions],
            ...["--hold", "--report", report],
          ],
          { cwd: root, stdio: ["ignore", "pipe", "pipe"] },
        );
        demo.stdout?.on("data", (chunk: Buffer) => {
          demoOutput += chunk.toString();
        });
        demo.stderr?.on("data", (chunk: Buffer) => {
          demoOutput += chunk.toString();
        });
        const finished = await until(
          "the demo's report",
          async () => {
            if (demo?.exitCode !== null) throw new Error(`the demo exited:\n${demoOutput}`);
            return existsSync(report) && readFileSync(report, "utf8").endsWith("}\n")
              ? true
              : undefined;
          },
          DEMO_LIMIT_MS,
        );
        expect(finished).toBe(true);
        const written = JSON.parse(readFileSync(report, "utf8")) as {
          complete: boolean;
          figures: { toolCalls: number; dangling: number };
          truth: GroundTruth;
        };
        expect(written.complete).toBe(true);
        truth = written.truth;
        // Prometheus has the final counters once a scrape after the run agrees with the report.
        await until(
          "a scrape of the final counters",
          async () => {
            const [total] = await query(
              prometheus,
              "sum(tool_call_resilience_tool_calls_total) + sum(tool_call_resilience_dangling_tool_calls_total)",
            );
            const expected = written.figures.toolCalls + written.figures.dangling;
            return total !== undefined && Number(total.value[1]) === expected ? true : undefined;
          },
          20_000,
        );
        // ...and the recording rules have been evaluated on those samples.
        await new Promise((resolve) => setTimeout(resolve, 3_000));
      }, DEMO_LIMIT_MS + 60_000);

      afterAll(async () => {
        if (demo !== undefined) await stopDemo(demo);
        await prometheus?.stop();
        await source?.stop();
        rmSync(folder, { recursive: true, force: true });
      });

      it("the demo leaves dangling calls for every model", () => {
        const rows = truthRows(truth);
        expect(rows.models.size).toBe(3);
        for (const row of rows.models.values()) expect(row.dangling).toBeGreaterThan(0);
      });

      it("every panel query of every shipped dashboard returns data", async () => {
        const queries = shippedPanelQueries();
        expect(queries.length).toBeGreaterThan(10);
        const empty: string[] = [];
        for (const panelQuery of queries) {
          const samples = await query(prometheus, substitute(panelQuery.expr));
          const numbers = samples.filter((sample) => !Number.isNaN(Number(sample.value[1])));
          if (numbers.length === 0) {
            empty.push(
              `${panelQuery.dashboard} / ${panelQuery.panel} / ${panelQuery.refId}: ${panelQuery.expr}`,
            );
          }
        }
        expect(empty, `queries without data:\n${empty.join("\n")}`).toEqual([]);
      });

      it("the series have the shape this run stands for", async () => {
        const other = SHAPE === "scrape" ? "otlp" : "scrape";
        const count = async (selector: string) =>
          Number((await query(prometheus, `count(${selector}) or vector(0)`))[0]?.value[1]);
        expect(await count(seriesByShape[SHAPE].repairDurationBucket)).toBeGreaterThan(0);
        expect(await count(seriesByShape[other].repairDurationBucket)).toBe(0);
        expect(
          await count(`${reportingSeries.targetInfo}{${labels.job}="${SCRAPE_JOB}"}`),
        ).toBeGreaterThan(0);
        // Pushed series have no `up` of their job and no scope labels.
        const up = await count(`up{${labels.job}="${SCRAPE_JOB}"}`);
        const scoped = await count('{__name__=~"tool_call_resilience_.+", otel_scope_name!=""}');
        if (SHAPE === "otlp") {
          expect(up).toBe(0);
          expect(scoped).toBe(0);
        } else {
          expect(up).toBeGreaterThan(0);
        }
      });

      it("no panel query of any shipped dashboard shows a figure for a job that sends nothing", async () => {
        const shown: string[] = [];
        for (const panelQuery of shippedPanelQueries()) {
          const samples = await query(prometheus, substitute(panelQuery.expr, { job: SILENT_JOB }));
          if (samples.length > 0) {
            shown.push(`${panelQuery.dashboard} / ${panelQuery.panel} / ${panelQuery.refId}`);
          }
        }
        expect(shown, `queries showing a figure without telemetry:\n${shown.join("\n")}`).toEqual(
          [],
        );
      });

      it("every query variable of every shipped dashboard offers values", async () => {
        const variables = shippedVariableQueries();
        expect(variables.map((variable) => variable.variable)).toEqual(
          expect.arrayContaining(["job", "provider", "model", "tool", "thread"]),
        );
        const empty: string[] = [];
        for (const variable of variables) {
          const url = `${prometheus.url}/api/v1/label/${variable.label}/values?match[]=${encodeURIComponent(substitute(variable.selector))}`;
          const body = (await (await fetch(url)).json()) as { status: string; data?: string[] };
          expect(body.status, url).toBe("success");
          if ((body.data ?? []).length === 0)
            empty.push(`${variable.dashboard} / $${variable.variable}`);
        }
        expect(empty, `variables without values:\n${empty.join("\n")}`).toEqual([]);
      });

      it("every recording rule returns data, as its expression and as the series it records", async () => {
        const rules = shippedRules("recording-rules.yml");
        expect(rules.length).toBeGreaterThan(0);
        const empty: string[] = [];
        for (const rule of rules) {
          for (const expr of [rule.expr, rule.record as string]) {
            const samples = await query(prometheus, expr);
            if (!samples.some((sample) => !Number.isNaN(Number(sample.value[1])))) empty.push(expr);
          }
        }
        expect(empty, `rules without data:\n${empty.join("\n")}`).toEqual([]);
      });

      it("every alert expression is valid PromQL that Prometheus evaluates", async () => {
        const alerts = shippedRules("alerts.yml");
        expect(alerts.length).toBeGreaterThanOrEqual(5);
        for (const alert of alerts)
          await expect(query(prometheus, alert.expr)).resolves.toBeDefined();
      });

      it("ToolCallResilienceTelemetryMissing's condition holds nothing while the job reports", async () => {
        const alert = shippedRules("alerts.yml").find(
          (rule) => rule.alert === "ToolCallResilienceTelemetryMissing",
        );
        expect(alert).toBeDefined();
        expect(await query(prometheus, alert?.expr as string)).toEqual([]);
      });

      it("the overview's per-model dangling ratio equals the demo's ground truth", async () => {
        const ratio = shippedPanelQueries().find(
          (candidate) =>
            candidate.dashboard === "tool-call-resilience-overview.json" &&
            candidate.panel === "Totals per model" &&
            candidate.refId === "ratio",
        );
        expect(
          ratio,
          "the overview has a 'Totals per model' table with a 'ratio' query",
        ).toBeDefined();
        const samples = await query(prometheus, substitute(ratio?.expr as string));
        const measured = Object.fromEntries(
          samples.map((sample) => [sample.metric[labels.model], Number(sample.value[1])]),
        );
        const expected = Object.fromEntries(
          [...truthRows(truth).models].map(([model, row]) => [model, row.dangling / row.toolCalls]),
        );
        expect(measured).toEqual(expected);
      });
    },
  );
