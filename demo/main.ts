/**
 * The demo: `npm start`. A simulated fleet of agents whose runs are interrupted the way production
 * runs are, repaired by the middleware and measured through OpenTelemetry and Prometheus. See
 * `npm start -- --help`.
 */
import { writeFileSync } from "node:fs";
import { danglingToolCallMiddleware, ToolCallResilienceError } from "tool-call-resilience";
import { type ServedTelemetryHandle, startTelemetry } from "tool-call-resilience/setup";
import { redactMessage } from "../src/cli/connection-string.js";
import { scrape } from "./exposition.js";
import { createFleet } from "./fleet.js";
import { DemoOptionsError, HELP, interruptRateAt, parseDemoOptions } from "./options.js";
import { isPortInUse, portInUseMessage, suggestPort } from "./port-in-use.js";
import { type PrometheusServer, SCRAPE_JOB, startDemoPrometheus } from "./prometheus-server.js";
import {
  formatRepairedExample,
  type RepairedExample,
  repairedExample,
} from "./repaired-example.js";
import { spanPrinter } from "./span-printer.js";
import { burstNotice, startStatusDisplay } from "./status.js";
import { disagreements, type Figures, figuresFrom, formatSummary } from "./summary.js";
import { runWorkersDemo } from "./workers-demo.js";

const STATUS_EVERY_MS = 1_000;

function fail(message: string, code: number): never {
  process.stderr.write(`${message}\n`);
  process.exit(code);
}

let options: ReturnType<typeof parseDemoOptions>;
try {
  options = parseDemoOptions(process.argv.slice(2));
} catch (error) {
  if (error instanceof DemoOptionsError) fail(error.message, 2);
  throw error;
}
if (options === "help") {
  process.stdout.write(`${HELP}\n`);
  process.exit(0);
}
const settings = options;

// Ctrl-C (or SIGTERM) stops the fleet and every server; a second one leaves at once (Prometheus
// is stopped on the way out all the same: see startPrometheus).
const cancel = new AbortController();
const noMoreRuns = new AbortController();
const onSignal = (signal: NodeJS.Signals) => {
  if (cancel.signal.aborted) process.exit(130);
  process.stderr.write(`\n${signal}: stopping the fleet and closing every server...\n`);
  cancel.abort(new Error(`stopped by ${signal}`));
  noMoreRuns.abort();
};
process.on("SIGINT", onSignal);
process.on("SIGTERM", onSignal);

let middleware: ReturnType<typeof danglingToolCallMiddleware>;
try {
  // persist: the repair is written to the thread, so each dangling call is repaired once.
  middleware = danglingToolCallMiddleware({
    persist: true,
    locale: settings.locale,
    logger: false,
  });
} catch (error) {
  if (error instanceof ToolCallResilienceError) fail(`--locale: ${error.message}`, 2);
  throw error;
}

if (settings.workers !== undefined) {
  // The fleet of worker processes: each worker builds its own middleware (the one above checked
  // the options) and telemetry.
  let code: number;
  try {
    code = await runWorkersDemo({
      settings: { ...settings, workers: settings.workers },
      display: startStatusDisplay(process.stderr),
      cancel: cancel.signal,
      noMoreRuns,
    });
  } catch (error) {
    if (error instanceof DemoOptionsError) fail(error.message, 2);
    if (cancel.signal.aborted) process.exit(130);
    const text = `The demo failed: ${(error as Error).stack ?? String(error)}`;
    const given = settings.postgres;
    fail(given === undefined ? text : redactMessage(text, given), 1);
  }
  process.exit(code);
}

const display = startStatusDisplay(process.stderr);
let telemetry: ServedTelemetryHandle;
try {
  telemetry = await startTelemetry({
    prometheus: true,
    port: settings.port,
    // The job the monitoring bundle watches: over OTLP, service.name becomes the job.
    serviceName: SCRAPE_JOB,
    ...(settings.otlp === undefined
      ? {}
      : { otlp: { endpoint: settings.otlp, exportIntervalMillis: 1000 } }),
    ...(settings.traces ? { spanProcessors: [spanPrinter((line) => display.log(line))] } : {}),
  });
} catch (error) {
  display.stop();
  if (isPortInUse(error)) {
    const suggestion = await suggestPort(settings.port);
    fail(portInUseMessage({ taken: settings.port, suggestion }), 1);
  }
  fail(`Cannot start telemetry: ${(error as Error).message}`, 1);
}

let prometheus: PrometheusServer | undefined;
let exitCode = 0;
try {
  console.log(`Metrics: ${telemetry.metricsUrl}`);
  if (settings.otlp !== undefined) console.log(`OTLP: pushing the metrics to ${settings.otlp}`);
  prometheus = await startDemoPrometheus(
    settings,
    [new URL(telemetry.metricsUrl).host],
    cancel.signal,
  );

  const startedAt = Date.now();
  const elapsed = () => (Date.now() - startedAt) / 1000;
  // The first request a model received repaired: shown after the summary.
  let example: RepairedExample | undefined;
  const fleet = createFleet({
    threads: settings.threads,
    concurrency: settings.concurrency,
    turns: settings.turns,
    seed: settings.seed,
    interruptRate: () => interruptRateAt(settings, elapsed()),
    middleware: [middleware],
    onModelRequest: (request) => {
      example ??= repairedExample(request);
    },
  });
  const totalRuns = settings.turns === undefined ? undefined : settings.turns * settings.threads;
  const progress = () =>
    Math.max(
      elapsed() / settings.duration,
      totalRuns === undefined ? 0 : fleet.truth.runs / totalRuns,
    );
  let latest: Figures | undefined;
  const noticeBurst = burstNotice(settings, display);
  const refresh = async () => {
    noticeBurst(elapsed());
    latest = figuresFrom(await scrape(telemetry.metricsUrl));
    display.update(progress(), {
      threads: fleet.truth.threads,
      modelCalls: latest.modelCalls,
      dangling: latest.dangling,
      repairs: latest.repairs,
    });
  };
  const ticker = setInterval(() => {
    refresh().catch((error: unknown) => display.log(`status: ${(error as Error).message}`));
  }, STATUS_EVERY_MS);
  const deadline = setTimeout(() => noMoreRuns.abort(), settings.duration * 1000);
  try {
    await fleet.run({ noMoreRuns: noMoreRuns.signal, cancel: cancel.signal });
  } finally {
    clearInterval(ticker);
    clearTimeout(deadline);
  }
  await refresh();
  display.stop();

  const figures = figuresFrom(await scrape(telemetry.metricsUrl));
  const complete = !cancel.signal.aborted;
  console.log("");
  console.log(formatSummary(figures, complete ? fleet.truth : undefined));
  if (!complete)
    console.log("Stopped early: runs in flight were cancelled, so the scripts are not compared.");
  console.log("");
  console.log(formatRepairedExample(example));
  if (complete && disagreements(figures, fleet.truth).length > 0) exitCode = 1;
  if (settings.report !== undefined) {
    writeFileSync(
      settings.report,
      `${JSON.stringify({ options: settings, complete, figures, truth: fleet.truth }, null, 2)}\n`,
    );
  }
  if (settings.hold && !cancel.signal.aborted) {
    console.log(
      `\nServing ${telemetry.metricsUrl}${prometheus ? ` to ${prometheus.url}` : ""}; Ctrl-C to exit.`,
    );
    await new Promise<void>((resolve) => cancel.signal.addEventListener("abort", () => resolve()));
  }
} catch (error) {
  display.stop();
  if (error instanceof DemoOptionsError) {
    process.stderr.write(`${error.message}\n`);
    exitCode = 2;
  } else if (!cancel.signal.aborted) {
    process.stderr.write(`The demo failed: ${(error as Error).stack ?? String(error)}\n`);
    exitCode = 1;
  }
} finally {
  await prometheus?.stop();
  await telemetry.shutdown();
}
process.exit(exitCode);
