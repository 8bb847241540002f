/**
 * The throwaway PostgreSQL cluster of the demo and the tests: its superuser connects with its URL
 * (and not without the password in it), its errors never hold that password, and `stop()` leaves
 * neither a process nor a folder behind. Finding the binaries is tested on fake ones.
 *
 * Without PostgreSQL's binaries the suites that start a cluster are skipped, loudly; with
 * `REQUIRE_POSTGRES=1` (as in CI) they fail instead.
 */
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import {
  findPostgresBinaries,
  PostgresNotFoundError,
  type PostgresServer,
  startPostgres,
} from "../../demo/postgres-server.js";
import { postgresBinaries, postgresRequired, skipNote } from "../helpers/postgres.js";

const binaries = postgresBinaries();

/** Ports `freePort` gives before free ones, to have the server find its port taken. */
const takenPorts: number[] = [];
vi.mock(import("../../demo/local-server.js"), async (original) => {
  const actual = await original();
  return {
    ...actual,
    freePort: vi.fn(async () => takenPorts.shift() ?? (await actual.freePort())),
  };
});

/** Runs `fn` with a client connected to `url`, then disconnects it. */
async function withClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Why connecting to `url` fails; fails the test when it does not. */
async function connectionFailure(url: string): Promise<Error> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  // An error once the connection fails must not be thrown as an event.
  client.on("error", () => {});
  try {
    await client.connect();
  } catch (error) {
    return error as Error;
  }
  await client.end();
  throw new Error("connected");
}

/** Whether a process with this PID exists. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The server's folder, from the Unix socket it says it listens on. */
function folderOf(server: PostgresServer): string {
  const match = /Unix socket "(.+)\/\.s\.PGSQL\.\d+"/.exec(server.log());
  if (match === null) throw new Error(`no Unix socket in the log:\n${server.log()}`);
  return match[1] as string;
}

describe.skipIf(binaries === undefined && !postgresRequired)(
  `a throwaway PostgreSQL cluster${skipNote(binaries)}`,
  () => {
    let server: PostgresServer | undefined;
    beforeAll(async () => {
      server = await startPostgres();
    }, 60_000);
    afterAll(() => server?.stop());

    const started = () => {
      if (server === undefined) throw new Error("the cluster did not start");
      return server;
    };

    it("lets its superuser make a table and use it, with its URL", async () => {
      const rows = await withClient(started().url, async (client) => {
        await client.query("create table calls (id text primary key, tool text not null)");
        await client.query("insert into calls values ($1, $2), ($3, $4)", [
          "call_1",
          "search",
          "call_2",
          "fetch",
        ]);
        return (await client.query("select id, tool from calls order by id")).rows;
      });
      expect(rows).toEqual([
        { id: "call_1", tool: "search" },
        { id: "call_2", tool: "fetch" },
      ]);
    });

    it("gives a URL with a password, which the server asks for", async () => {
      const url = new URL(started().url);
      expect(url.protocol).toBe("postgres:");
      expect(url.username).toBe("postgres");
      expect(url.hostname).toBe("127.0.0.1");
      expect(url.pathname).toBe("/postgres");
      expect(url.password).toMatch(/^[0-9a-f]{32,}$/);
      expect(server?.pid).toBeGreaterThan(0);

      const withoutPassword = new URL(url);
      withoutPassword.password = "";
      await expect(connectionFailure(withoutPassword.href)).resolves.toBeInstanceOf(Error);
      const wrongPassword = new URL(url);
      wrongPassword.password = "not-the-password";
      expect((await connectionFailure(wrongPassword.href)).message).toMatch(
        /password authentication failed/,
      );
    });

    it("stops: its process ends, its folder goes, and stopping twice is fine", async () => {
      const other = await startPostgres();
      const folder = folderOf(other);
      expect(existsSync(folder)).toBe(true);
      expect(alive(other.pid)).toBe(true);
      await other.stop();
      expect(() => process.kill(other.pid, 0)).toThrow();
      expect(existsSync(folder)).toBe(false);
      await expect(other.stop()).resolves.toBeUndefined();
    }, 60_000);

    it("says why it is not ready, with its URL redacted and no password anywhere", async () => {
      const failure = await startPostgres({ readyTimeoutMs: 0 }).then(
        async (unexpected) => {
          await unexpected.stop();
          throw new Error("ready at once");
        },
        (error: unknown) => error as Error,
      );
      expect(failure.message).toMatch(/postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:\d+\/postgres/);
      // The password is 48 hexadecimal digits.
      expect(`${failure.message}\n${failure.stack}`).not.toMatch(/[0-9a-f]{48}/);
    }, 60_000);

    it("starts over on another port when its port is taken", async () => {
      const squatter = createServer();
      await new Promise<void>((resolve) =>
        squatter.listen({ host: "127.0.0.1", port: 0 }, resolve),
      );
      const address = squatter.address();
      if (address === null || typeof address !== "object") throw new Error("no port");
      takenPorts.push(address.port, address.port);
      try {
        const other = await startPostgres();
        try {
          expect(takenPorts).toEqual([]);
          expect(new URL(other.url).port).not.toBe(String(address.port));
          await withClient(other.url, (client) => client.query("select 1"));
        } finally {
          await other.stop();
        }
      } finally {
        takenPorts.length = 0;
        squatter.close();
      }
    }, 60_000);

    it("gives up when its signal aborts", async () => {
      await expect(startPostgres({ signal: AbortSignal.abort() })).rejects.toThrow(/abort/i);
    });
  },
);

describe("finding the PostgreSQL binaries", () => {
  const root = mkdtempSync(join(tmpdir(), "tool-call-resilience-postgres-binaries-"));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  /** A folder with fake executables of these names. */
  const folderWith = (folder: string, programs: readonly string[]) => {
    mkdirSync(join(root, folder), { recursive: true });
    for (const program of programs) {
      writeFileSync(join(root, folder, program), "#!/bin/sh\n");
      chmodSync(join(root, folder, program), 0o755);
    }
    return join(root, folder);
  };
  const empty = folderWith("empty", []);

  it("finds none on an empty PATH without Debian's folders, and says what to install", async () => {
    const search = { path: "", debianDir: join(root, "no-such-folder") };
    expect(findPostgresBinaries(search)).toBeUndefined();
    const failure = await startPostgres({ search }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(PostgresNotFoundError);
    const error = failure as PostgresNotFoundError;
    expect(error.name).toBe("PostgresNotFoundError");
    expect(error.message).toMatch(/initdb/);
    expect(error.message).toMatch(/postgres binaries/);
    expect(error.message).toMatch(/PATH \(empty\)/);
    expect(error.message).toContain(join(root, "no-such-folder"));
    expect(error.message).toMatch(/apt-get install postgresql/);
  });

  it("takes the first folder of the PATH that has both", () => {
    const initdbOnly = folderWith("path/initdb-only", ["initdb"]);
    const both = folderWith("path/both", ["initdb", "postgres"]);
    const later = folderWith("path/later", ["initdb", "postgres"]);
    const debianDir = folderWith("debian", []);
    folderWith("debian/16/bin", ["initdb", "postgres"]);
    expect(
      findPostgresBinaries({ path: [empty, initdbOnly, both, later].join(delimiter), debianDir }),
    ).toEqual({ initdb: join(both, "initdb"), postgres: join(both, "postgres") });
  });

  it("else takes the highest version of Debian's that has both", () => {
    const debianDir = folderWith("versions", []);
    folderWith("versions/9.6/bin", ["initdb", "postgres"]);
    const fifteen = folderWith("versions/15/bin", ["initdb", "postgres"]);
    folderWith("versions/16/bin", ["initdb"]);
    folderWith("versions/common/bin", ["initdb", "postgres"]);
    expect(findPostgresBinaries({ path: empty, debianDir })).toEqual({
      initdb: join(fifteen, "initdb"),
      postgres: join(fifteen, "postgres"),
    });
  });
});
