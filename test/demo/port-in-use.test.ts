/**
 * A metrics port already taken: the demo exits 1 with one line that names the port and suggests
 * another `--port`, no stack trace, in its own process and with `--workers` (whose workers take
 * `--port` and the ports after it), before anything else starts.
 */
import { createServer, type Server } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import {
  firstTakenPort,
  isPortFree,
  isPortInUse,
  portInUseMessage,
  suggestPort,
} from "../../demo/port-in-use.js";
import { startPostgres } from "../../demo/postgres-server.js";
import { startWorkerFleet, WorkerStartError } from "../../demo/workers.js";
import { runDemo, stopDemos } from "../helpers/demo.js";
import { postgresBinaries, postgresRequired, skipNote } from "../helpers/postgres.js";
import { freePort } from "../helpers/prometheus.js";

afterEach(stopDemos);

const binaries = postgresBinaries();

/** The demo in a child process: loading it takes a while on a busy machine. */
const DEMO_TIMEOUT_MS = 90_000;

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    await new Promise((resolve) => server.close(resolve));
  }
});

/** Listens on the port of 127.0.0.1 until the test ends. */
async function take(port: number): Promise<void> {
  const server = createServer();
  servers.push(server);
  await new Promise<void>((resolve) => server.listen({ host: "127.0.0.1", port }, resolve));
}

/** A free port with `span - 1` free ports after it. */
async function freeRange(span: number): Promise<number> {
  for (;;) {
    const port = await freePort();
    const range = Array.from({ length: span }, (_, index) => port + index);
    if (port + span <= 65_535 && (await firstTakenPort(range)) === undefined) return port;
  }
}

describe("recognising a taken port", () => {
  it("finds EADDRINUSE in the error or in any error it was caused by", () => {
    const inUse = Object.assign(new Error("listen EADDRINUSE"), { code: "EADDRINUSE" });
    expect(isPortInUse(inUse)).toBe(true);
    expect(isPortInUse(new Error("could not listen", { cause: inUse }))).toBe(true);
    expect(isPortInUse(new Error("outer", { cause: new Error("inner", { cause: inUse }) }))).toBe(
      true,
    );
  });

  it("does not take another failure for a taken port", () => {
    const denied = Object.assign(new Error("listen EACCES"), { code: "EACCES" });
    expect(isPortInUse(new Error("could not listen", { cause: denied }))).toBe(false);
    expect(isPortInUse("EADDRINUSE")).toBe(false);
    expect(isPortInUse(undefined)).toBe(false);
  });

  it("tells a taken port from a free one, and finds the first taken one of several", async () => {
    const port = await freeRange(3);
    expect(await isPortFree(port + 1)).toBe(true);
    await take(port + 1);
    expect(await isPortFree(port + 1)).toBe(false);
    expect(await firstTakenPort([port, port + 1, port + 2])).toBe(port + 1);
    expect(await firstTakenPort([port, port + 2])).toBeUndefined();
  });
});

describe("the suggestion", () => {
  it("is the next port when it is free", async () => {
    const port = await freeRange(2);
    await take(port);
    expect(await suggestPort(port)).toBe(port + 1);
  });

  it("skips ports from which the workers' range is not free", async () => {
    const port = await freeRange(6);
    await take(port + 2);
    expect(await suggestPort(port, 3)).toBe(port + 3);
  });

  it("is one line naming the port and the --port to give instead", () => {
    expect(portInUseMessage({ taken: 9464, suggestion: 9465 })).toBe(
      "Port 9464 is in use; choose another with --port, e.g. npm start -- --port 9465",
    );
  });

  it("names the workers' ports and keeps --workers in the command it suggests", () => {
    expect(
      portInUseMessage({
        taken: 9465,
        suggestion: 9468,
        workers: { count: 3, ports: [9464, 9465, 9466, 9467] },
      }),
    ).toBe(
      "Port 9465 is in use (the workers' metrics take ports 9464 to 9467); choose another with --port, e.g. npm start -- --workers 3 --port 9468",
    );
  });
});

describe("npm start with a taken port", () => {
  it(
    "exits 1 with one line naming the port and a free --port to give instead",
    async () => {
      const port = await freeRange(2);
      await take(port);
      const { code, stdout, stderr } = await runDemo([
        "--threads",
        "2",
        "--turns",
        "1",
        "--port",
        String(port),
      ]);
      expect(code).toBe(1);
      expect(stderr).toBe(
        `Port ${port} is in use; choose another with --port, e.g. npm start -- --port ${port + 1}\n`,
      );
      expect(stdout).toBe("");
    },
    DEMO_TIMEOUT_MS,
  );

  it(
    "with --workers, exits 1 with one line before PostgreSQL or any worker starts",
    async () => {
      // Two workers and the one that replaces the killed one: --port to --port + 2.
      const port = await freeRange(6);
      await take(port + 1);
      const { code, stdout, stderr } = await runDemo([
        "--workers",
        "2",
        "--threads",
        "2",
        "--turns",
        "1",
        "--port",
        String(port),
      ]);
      expect(code).toBe(1);
      expect(stderr).toBe(
        `Port ${port + 1} is in use (the workers' metrics take ports ${port} to ${port + 2}); choose another with --port, e.g. npm start -- --workers 2 --port ${port + 2}\n`,
      );
      expect(stdout).not.toContain("PostgreSQL");
    },
    DEMO_TIMEOUT_MS,
  );
});

describe.skipIf(binaries === undefined && !postgresRequired)(
  `a worker whose port is taken once the fleet starts${skipNote(binaries)}`,
  () => {
    it(
      "fails to start with the port it could not take, and no stack trace",
      async () => {
        const postgres = await startPostgres();
        // The worker is forked from this process, which runs TypeScript without tsx.
        const nodeOptions = process.env.NODE_OPTIONS;
        process.env.NODE_OPTIONS = `${nodeOptions ?? ""} --import tsx`.trim();
        try {
          const port = await freeRange(1);
          await take(port);
          const started = startWorkerFleet({
            workers: 1,
            postgresUrl: postgres.url,
            persist: true,
            locale: "en",
            basePort: port,
            threads: 1,
            concurrency: 1,
            turns: 1,
            seed: 1,
            interruptRate: () => 0,
            log: () => undefined,
          });
          const error = await started.then(
            () => undefined,
            (failure: unknown) => failure,
          );
          expect(error, String(error)).toBeInstanceOf(WorkerStartError);
          expect((error as WorkerStartError).portInUse, String(error)).toBe(port);
          expect((error as Error).message).toBe(`worker-1: port ${port} is in use`);
        } finally {
          if (nodeOptions === undefined) delete process.env.NODE_OPTIONS;
          else process.env.NODE_OPTIONS = nodeOptions;
          await postgres.stop();
        }
      },
      DEMO_TIMEOUT_MS,
    );
  },
);
