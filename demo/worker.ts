/**
 * A worker of the demo's fleet (`npm start -- --workers n`): a process of its own that runs the
 * turns a coordinator hands it, on agents whose threads live in a shared PostgreSQL checkpointer,
 * and serves its own metrics endpoint. The coordinator forks it and talks to it over the IPC
 * channel (the messages below); the connection string comes that way too, never on a command line
 * another user could read. When the coordinator goes away, the worker goes too.
 */
import { setMaxListeners } from "node:events";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { danglingToolCallMiddleware } from "tool-call-resilience";
import { type ServedTelemetryHandle, startTelemetry } from "tool-call-resilience/setup";
import { redactMessage } from "../src/cli/connection-string.js";
import { createTurnRunner, FLEET_MODELS, type PlannedTurn, type TurnOutcome } from "./fleet.js";
import { isPortInUse } from "./port-in-use.js";
import { SCRAPE_JOB } from "./prometheus-server.js";
import { type RepairedExample, repairedExample } from "./repaired-example.js";
import { checkpointerPool } from "./workers.js";

/** How a worker is set up: the first message it gets. */
export interface WorkerStart {
  readonly type: "start";
  /** The checkpointer's database; it has the tables already (the coordinator set them up). */
  readonly postgresUrl: string;
  /** The middleware's `persist` option. */
  readonly persist: boolean;
  readonly locale: string;
  /** Port of its metrics endpoint on 127.0.0.1. */
  readonly port: number;
  /** Threads the per-thread metric reports at most: enough for every thread of the run. */
  readonly threadSeriesLimit: number;
  /** Base URL of an OTLP/HTTP receiver to push the metrics to as well, if any. */
  readonly otlp: string | undefined;
}

/** What the coordinator sends a worker. */
export type ToWorker =
  | WorkerStart
  | {
      readonly type: "turn";
      /** Names the turn in the answer. */
      readonly request: number;
      readonly thread: { readonly id: string; readonly model: string };
      readonly turn: PlannedTurn;
    }
  /** Abort every turn in flight (Ctrl-C). */
  | { readonly type: "cancel" }
  /** Close the checkpointer and the telemetry, then exit. */
  | { readonly type: "stop" };

/** What a worker sends the coordinator. */
export type FromWorker =
  | { readonly type: "ready"; readonly metricsUrl: string }
  | { readonly type: "turn-done"; readonly request: number; readonly outcome: TurnOutcome }
  /** The turn was cancelled before it ended. */
  | { readonly type: "turn-cancelled"; readonly request: number }
  | { readonly type: "turn-failed"; readonly request: number; readonly message: string }
  /** The first request one of its models received repaired; sent once. */
  | { readonly type: "repaired-example"; readonly example: RepairedExample }
  /** The worker could not start; `portInUse` when its metrics port was taken. */
  | { readonly type: "failed"; readonly message: string; readonly portInUse?: number };

function send(message: FromWorker): void {
  process.send?.(message);
}

/** The message of a failure, with the connection string's password blotted out. */
function messageOf(error: unknown, postgresUrl: string | undefined): string {
  const text = error instanceof Error ? (error.stack ?? error.message) : String(error);
  return postgresUrl === undefined ? text : redactMessage(text, postgresUrl);
}

if (process.send === undefined) {
  process.stderr.write("demo/worker.ts is started by the demo's coordinator (--workers)\n");
  process.exit(2);
}
// No coordinator, no worker: a worker whose coordinator died must not run on unattended.
process.on("disconnect", () => process.exit(0));

let started:
  | {
      readonly runner: ReturnType<typeof createTurnRunner>;
      readonly saver: PostgresSaver;
      readonly telemetry: ServedTelemetryHandle;
      readonly postgresUrl: string;
    }
  | undefined;
let cancel = cancellable();

/** A signal every turn in flight listens to, more of them than Node's warning threshold. */
function cancellable(): AbortController {
  const controller = new AbortController();
  setMaxListeners(10_000, controller.signal);
  return controller;
}

async function start(message: WorkerStart): Promise<void> {
  try {
    const saver = new PostgresSaver(checkpointerPool(message.postgresUrl));
    const telemetry = await startTelemetry({
      prometheus: true,
      port: message.port,
      serviceName: SCRAPE_JOB,
      ...(message.otlp === undefined
        ? {}
        : { otlp: { endpoint: message.otlp, exportIntervalMillis: 1000 } }),
    });
    const middleware = danglingToolCallMiddleware({
      persist: message.persist,
      locale: message.locale,
      logger: false,
      threadSeriesLimit: message.threadSeriesLimit,
    });
    let example: RepairedExample | undefined;
    // "sync": each step's checkpoint is stored before the next step starts, so a worker killed
    // mid-run leaves its threads at their last finished step.
    const runner = createTurnRunner({
      checkpointer: saver,
      middleware: [middleware],
      durability: "sync",
      onModelRequest: (request) => {
        if (example !== undefined) return;
        example = repairedExample(request);
        if (example !== undefined) send({ type: "repaired-example", example });
      },
    });
    started = { runner, saver, telemetry, postgresUrl: message.postgresUrl };
    send({ type: "ready", metricsUrl: telemetry.metricsUrl });
  } catch (error) {
    const failed: FromWorker = isPortInUse(error)
      ? { type: "failed", message: `port ${message.port} is in use`, portInUse: message.port }
      : { type: "failed", message: messageOf(error, message.postgresUrl) };
    // Once the message is on its way: an exit right after a send may lose it.
    if (process.send === undefined) process.exit(1);
    process.send(failed, () => process.exit(1));
  }
}

async function runTurn(message: Extract<ToWorker, { type: "turn" }>): Promise<void> {
  if (started === undefined) {
    send({ type: "turn-failed", request: message.request, message: "the worker has not started" });
    return;
  }
  const model = FLEET_MODELS.find((candidate) => candidate.name === message.thread.model);
  try {
    if (model === undefined) throw new Error(`no model named ${message.thread.model}`);
    const outcome = await started.runner.runTurn(
      { id: message.thread.id, model },
      message.turn,
      cancel.signal,
    );
    send(
      outcome === undefined
        ? { type: "turn-cancelled", request: message.request }
        : { type: "turn-done", request: message.request, outcome },
    );
  } catch (error) {
    send({
      type: "turn-failed",
      request: message.request,
      message: messageOf(error, started.postgresUrl),
    });
  }
}

async function stop(): Promise<void> {
  cancel.abort(new Error("the worker is stopping"));
  await started?.saver.end().catch(() => undefined);
  await started?.telemetry.shutdown().catch(() => undefined);
  process.exit(0);
}

process.on("message", (message: ToWorker) => {
  switch (message.type) {
    case "start":
      void start(message);
      break;
    case "turn":
      void runTurn(message);
      break;
    case "cancel":
      cancel.abort(new Error("cancelled"));
      cancel = cancellable();
      break;
    case "stop":
      void stop();
      break;
  }
});
// Ctrl-C reaches the whole process group: the coordinator cancels and stops the workers itself.
process.on("SIGINT", () => undefined);
