/**
 * `npm start`: the demo as a user runs it, a child process on a free port, stopped by its PID when
 * a test ends (`test/helpers/demo.ts` says how it is started).
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { scrape } from "../../demo/exposition.js";
import { FLEET_MODELS, FLEET_TOOL_NAMES, type GroundTruth } from "../../demo/fleet.js";
import { HELP } from "../../demo/options.js";
import { disagreements, type Figures, figuresFrom, formatSummary } from "../../demo/summary.js";
import { printed, runDemo, startDemo, stopDemos } from "../helpers/demo.js";
import { freePort, isListening } from "../helpers/prometheus.js";

const AGREEMENT =
  "The counters agree with the scripts' ground truth for every model and every tool.";

/** A short run: six threads of three turns; the fleet stops once they are done. */
// Bounded by turns, not by time: the outcome depends on the seed alone, however busy the machine.
const SHORT_RUN = ["--duration", "120", "--threads", "6", "--turns", "3"];

afterEach(stopDemos);

describe("npm start", () => {
  describe("a short run", () => {
    it("prints the summary per model and per tool, agrees with the scripts, writes the report and exits 0", async () => {
      const folder = mkdtempSync(join(tmpdir(), "tool-call-resilience-demo-"));
      try {
        const report = join(folder, "report.json");
        const port = await freePort();
        const { code, stdout, stderr } = await runDemo([
          ...SHORT_RUN,
          "--port",
          String(port),
          "--report",
          report,
        ]);
        expect(code, stderr).toBe(0);
        expect(stdout).toContain(`Metrics: http://127.0.0.1:${port}/metrics`);
        expect(stdout).toMatch(/^model +provider +tool calls +dangling +rate$/m);
        for (const model of FLEET_MODELS) {
          const provider = model.provider === "google_genai" ? "gcp.gemini" : model.provider;
          expect(stdout).toMatch(
            new RegExp(
              `^${model.name.replace(/\./g, "\\.")} +${provider} +\\d+ +\\d+ +\\d+\\.\\d\\d%$`,
              "m",
            ),
          );
        }
        expect(stdout).toMatch(/^tool +tool calls +dangling +rate$/m);
        for (const tool of FLEET_TOOL_NAMES) {
          expect(stdout).toMatch(new RegExp(`^${tool} +\\d+ +\\d+ +(\\d+\\.\\d\\d%|-)$`, "m"));
        }
        expect(stdout).toContain(AGREEMENT);

        const written = JSON.parse(readFileSync(report, "utf8")) as {
          options: { threads: number; turns: number; port: number };
          complete: boolean;
          figures: Figures;
          truth: GroundTruth;
        };
        expect(written.options).toMatchObject({ threads: 6, turns: 3, port });
        expect(written.complete).toBe(true);
        expect(written.truth).toMatchObject({ runs: 18, threads: 6 });
        expect(written.figures.toolCalls).toBeGreaterThan(0);
        expect(disagreements(written.figures, written.truth)).toEqual([]);
        // The status line, on stderr when it is not a terminal, ends with the final figures.
        const { modelCalls, dangling, repairs } = written.figures;
        expect(stderr).toContain(
          `[100%] 6 threads, ${modelCalls} model calls, ${dangling} dangling, ${repairs} repairs`,
        );
        // The report holds the very figures and truth the summary was printed from.
        expect(stdout).toContain(formatSummary(written.figures, written.truth));
      } finally {
        rmSync(folder, { recursive: true, force: true });
      }
    });
  });

  describe("command line", () => {
    it("--help prints the usage and exits 0", async () => {
      const { code, stdout } = await runDemo(["--help"]);
      expect(code).toBe(0);
      expect(stdout).toBe(`${HELP}\n`);
    });

    it("a bad value exits 2 with a message naming the option, before anything runs", async () => {
      const { code, stdout, stderr } = await runDemo(["--threads", "0"]);
      expect(code).toBe(2);
      expect(stderr).toContain('--threads must be an integer from 1 to 100000, got "0"');
      expect(stdout).toBe("");
    });

    it("an unknown option exits 2 with a message naming it", async () => {
      const { code, stderr } = await runDemo(["--thread", "3"]);
      expect(code).toBe(2);
      expect(stderr).toContain("'--thread'");
    });

    it("a malformed --locale exits 2 with the middleware's message about the locale", async () => {
      const { code, stdout, stderr } = await runDemo(["--locale", "not a tag!"]);
      expect(code).toBe(2);
      expect(stderr).toMatch(/locale: expected a BCP 47 language tag/);
      expect(stdout).toBe("");
    });
  });

  describe("--traces", () => {
    it("prints one line per repair_tool_calls span: one per repaired model call", async () => {
      const folder = mkdtempSync(join(tmpdir(), "tool-call-resilience-demo-"));
      try {
        const report = join(folder, "report.json");
        // Seed 4 at this rate leaves calls dangling on several threads (see fleet.long.test.ts).
        const { code, stdout, stderr } = await runDemo([
          ...SHORT_RUN,
          "--interrupt-rate",
          "0.5",
          "--seed",
          "4",
          "--traces",
          "--port",
          String(await freePort()),
          "--report",
          report,
        ]);
        expect(code, stderr).toBe(0);
        const spans = stderr.split("\n").filter((line) => line.startsWith("span "));
        const { figures } = JSON.parse(readFileSync(report, "utf8")) as { figures: Figures };
        expect(figures.repairedModelCalls).toBeGreaterThan(0);
        expect(spans).toHaveLength(figures.repairedModelCalls);
        const models = FLEET_MODELS.map((model) => model.name.replace(/\./g, "\\.")).join("|");
        const line = new RegExp(
          `^span repair_tool_calls repaired thread-\\d{4} (?:${models}) (\\d+) dangling: (\\S+) \\((\\S+)\\) \\d+ µs$`,
        );
        let dangling = 0;
        for (const span of spans) {
          const [, count, ids, tools] = line.exec(span) ?? [];
          expect(count, span).toBeDefined();
          // The ids of the repaired calls, and the tools they called.
          expect(ids?.split(",")).toHaveLength(Number(count));
          for (const tool of tools?.split(",") ?? []) expect(FLEET_TOOL_NAMES).toContain(tool);
          dangling += Number(count);
        }
        expect(dangling).toBe(figures.dangling);

        // Under the totals, why the repairs outnumber the repaired model calls.
        expect(stdout).toContain(
          `; ${figures.repairs} repairs\n${figures.repairs} repairs: ${figures.dangling} placeholder_inserted, ${figures.repairedModelCalls} turn_inserted. One model call repairs all of its thread's dangling calls at once, and with persist none is repaired twice.\n`,
        );
        // After the summary, the first repaired request as its model saw it.
        const example = stdout.slice(stdout.indexOf("The run's first repaired request, as "));
        expect(example).toMatch(
          new RegExp(
            `^The run's first repaired request, as (?:${models}) saw it on thread-\\d{4}:\nhuman {2}Message \\d+ on thread-\\d{4}\n`,
          ),
        );
        expect(example).toMatch(
          /^tool {3}answers call_\d+_\d+_\d+: \[Tool call was interrupted and did not return a result\.\]$/m,
        );
        expect(example.trimEnd()).toMatch(/\nhuman {2}Message \d+ on thread-\d{4}$/);
      } finally {
        rmSync(folder, { recursive: true, force: true });
      }
    });
  });

  describe("metrics endpoint", () => {
    it("with --hold, serves every instrument after the fleet stops; Ctrl-C exits 0 and frees the port", async () => {
      const port = await freePort();
      // Every run of gpt-4.1 and gemini-2.5-flash is interrupted, and continued on its second turn.
      const demo = startDemo([
        "--duration",
        "120",
        "--threads",
        "3",
        "--turns",
        "2",
        "--interrupt-rate",
        "1",
        "--hold",
        "--port",
        String(port),
      ]);
      await printed(demo, "Ctrl-C to exit.");
      expect(demo.stdout()).toContain(AGREEMENT);
      const exposition = await scrape(`http://127.0.0.1:${port}/metrics`);
      for (const series of [
        "tool_call_resilience_model_calls_total",
        "tool_call_resilience_tool_calls_total",
        "tool_call_resilience_dangling_tool_calls_total",
        "tool_call_resilience_repairs_total",
        "tool_call_resilience_thread_recent_dangling_tool_calls",
        "tool_call_resilience_repair_duration_bucket",
      ]) {
        expect(exposition.find(series).length, series).toBeGreaterThan(0);
      }
      // What it serves is what the summary printed.
      const figures = figuresFrom(exposition);
      expect(demo.stdout()).toContain(formatSummary(figures, undefined));

      process.kill(demo.pid, "SIGINT");
      const { code } = await demo.exited;
      expect(code, demo.stderr()).toBe(0);
      expect(demo.stderr()).toContain("SIGINT: stopping the fleet and closing every server");
      expect(await isListening(port)).toBe(false);
    });

    it("Ctrl-C during the run stops the fleet, prints the summary without comparing it, and exits 0", async () => {
      const port = await freePort();
      const demo = startDemo(["--duration", "60", "--threads", "6", "--port", String(port)]);
      await printed(demo, "Metrics: ");
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      process.kill(demo.pid, "SIGINT");
      const { code } = await demo.exited;
      expect(code, demo.stderr()).toBe(0);
      expect(demo.stdout()).toMatch(/^model +provider +tool calls +dangling +rate$/m);
      expect(demo.stdout()).toContain(
        "Stopped early: runs in flight were cancelled, so the scripts are not compared.",
      );
      expect(demo.stdout()).not.toMatch(/The counters (agree|disagree)/);
      expect(await isListening(port)).toBe(false);
    });
  });
});
