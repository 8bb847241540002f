/**
 * A throwaway PostgreSQL cluster for the demo and the tests: a new cluster (`initdb`) in a
 * temporary folder, its superuser `postgres` with a random password, served by `postgres` on a
 * free port of 127.0.0.1, and stopped by its PID (a fast shutdown), folder removed. Whatever way
 * this process ends, short of SIGKILL, the server does not outlive it.
 *
 * PostgreSQL refuses to run as root: as root, the cluster is made and served by the `postgres`
 * system user (which Debian's `postgresql` package creates).
 */
import { execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { accessSync, constants, readdirSync, rmSync, writeFileSync } from "node:fs";
import { delimiter, join } from "node:path";
import pg from "pg";
import { redactMessage } from "../src/cli/connection-string.js";
import {
  chownTree,
  freePort,
  type LocalServer,
  type SystemUser,
  startLocalServer,
} from "./local-server.js";

/** Where Debian installs each major version of PostgreSQL: `<version>/bin`, off the `PATH`. */
const DEBIAN_POSTGRESQL_DIR = "/usr/lib/postgresql";

/** The PostgreSQL binaries a cluster is made and served with. */
export interface PostgresBinaries {
  readonly initdb: string;
  readonly postgres: string;
}

/** Where to look for the PostgreSQL binaries. */
export interface PostgresSearch {
  /** A `PATH` to look in first. Default: this process's. */
  readonly path?: string;
  /** Then the `<version>/bin` folders of this one. Default: {@link DEBIAN_POSTGRESQL_DIR}. */
  readonly debianDir?: string;
}

/** Neither the `PATH` nor Debian's folders have the PostgreSQL binaries. */
export class PostgresNotFoundError extends Error {
  override readonly name = "PostgresNotFoundError";
  constructor(search: PostgresSearch = {}) {
    const path = search.path ?? process.env.PATH ?? "";
    const debianDir = search.debianDir ?? DEBIAN_POSTGRESQL_DIR;
    super(
      `PostgreSQL's initdb and postgres binaries are neither in a folder of the PATH ` +
        `(${path === "" ? "empty" : path}) nor in ${debianDir}/<version>/bin; install ` +
        "Debian's postgresql package (apt-get install postgresql), or put a folder that has " +
        "both on the PATH",
    );
  }
}

/** A running PostgreSQL server. */
export interface PostgresServer extends LocalServer {
  /**
   * The superuser's URL, password included:
   * `postgres://postgres:<password>@127.0.0.1:<port>/postgres`. Print it through
   * `redactConnectionString` (`src/cli/connection-string.ts`).
   */
  readonly url: string;
}

/** What to start PostgreSQL with. */
export interface PostgresServerOptions {
  /** Gives up waiting (and stops the server) when this aborts. */
  readonly signal?: AbortSignal;
  /** How long to wait for the server to accept a query, in milliseconds. Default: 30 s. */
  readonly readyTimeoutMs?: number;
  /** Where to look for the binaries. Default: the `PATH`, then Debian's folders. */
  readonly search?: PostgresSearch;
  /** Ports the server must not take: those the caller's own servers will listen on. */
  readonly besidesPorts?: readonly number[];
}

/** Whether the folder has these programs, executable. */
function hasPrograms(folder: string, programs: readonly string[]): boolean {
  return programs.every((program) => {
    try {
      accessSync(join(folder, program), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/** Orders version numbers (`9.6`, `15`) from the highest down. */
function byVersionDescending(a: string, b: string): number {
  const left = a.split(".").map(Number);
  const right = b.split(".").map(Number);
  for (let index = 0; index < Math.max(left.length, right.length); index++) {
    const difference = (right[index] ?? 0) - (left[index] ?? 0);
    if (difference !== 0) return difference;
  }
  return 0;
}

/**
 * Where `initdb` and `postgres` are: the first folder of the `PATH` that has both, else the
 * `bin` folder of the highest version under `/usr/lib/postgresql` that has both (Debian puts
 * neither on the `PATH`), else `undefined`. One folder has both, so that they are one version.
 *
 * @example
 * const binaries = findPostgresBinaries();
 * if (binaries === undefined) throw new PostgresNotFoundError();
 */
export function findPostgresBinaries(search: PostgresSearch = {}): PostgresBinaries | undefined {
  const programs = ["initdb", "postgres"];
  const onPath = (search.path ?? process.env.PATH ?? "").split(delimiter).filter((f) => f !== "");
  let versions: string[];
  try {
    versions = readdirSync(search.debianDir ?? DEBIAN_POSTGRESQL_DIR).filter((name) =>
      /^\d+(?:\.\d+)*$/.test(name),
    );
  } catch {
    versions = [];
  }
  const debian = versions
    .sort(byVersionDescending)
    .map((version) => join(search.debianDir ?? DEBIAN_POSTGRESQL_DIR, version, "bin"));
  const folder = [...onPath, ...debian].find((candidate) => hasPrograms(candidate, programs));
  return folder === undefined
    ? undefined
    : { initdb: join(folder, "initdb"), postgres: join(folder, "postgres") };
}

/**
 * The `postgres` system user, for when this process runs as root, whom PostgreSQL refuses to run
 * as; `undefined` otherwise.
 *
 * @throws {Error} when this process is root and there is no `postgres` user
 */
function serverUser(): SystemUser | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: string) =>
    Number(execFileSync("id", [flag, "postgres"], { encoding: "utf8", stdio: "pipe" }).trim());
  try {
    return { uid: id("-u"), gid: id("-g") };
  } catch {
    throw new Error(
      "PostgreSQL refuses to run as root, and there is no postgres system user to run it as; " +
        "install Debian's postgresql package (apt-get install postgresql), which creates it, " +
        "or create one (adduser --system --group postgres)",
    );
  }
}

/**
 * Makes a new cluster in `<folder>/data` whose superuser `postgres` has `password`, given to
 * `initdb` in a file only its user can read, removed as soon as `initdb` is done.
 *
 * @throws {Error} when `initdb` fails (what it printed is in the message), or `signal` aborts
 */
async function initdb(
  binary: string,
  folder: string,
  password: string,
  user: SystemUser | undefined,
  signal: AbortSignal | undefined,
): Promise<void> {
  const passwordFile = join(folder, "password");
  writeFileSync(passwordFile, password, { mode: 0o600 });
  try {
    if (user !== undefined) chownTree(folder, user);
    const child = spawn(
      binary,
      [
        "-D",
        join(folder, "data"),
        "-U",
        "postgres",
        "--auth-host=scram-sha-256",
        "--auth-local=trust",
        `--pwfile=${passwordFile}`,
        // The same cluster whatever the machine's locale; no fsync, for a throwaway one.
        "--encoding=UTF8",
        "--locale=C",
        "--no-sync",
      ],
      {
        stdio: ["ignore", "pipe", "pipe"],
        ...(user === undefined ? {} : { uid: user.uid, gid: user.gid, cwd: folder }),
        ...(signal === undefined ? {} : { signal }),
      },
    );
    let output = "";
    child.stdout.setEncoding("utf8").on("data", (text: string) => (output += text));
    child.stderr.setEncoding("utf8").on("data", (text: string) => (output += text));
    const code = await new Promise<number | string>((resolve, reject) => {
      child.once("error", reject);
      child.once("close", (exitCode, signalCode) => resolve(exitCode ?? signalCode ?? "unknown"));
    });
    if (code !== 0) throw new Error(`initdb exited with code ${code}\n${output}`);
  } finally {
    rmSync(passwordFile, { force: true });
  }
}

/** Connects to the server with `url` and runs `select 1`; rejects with the reason it cannot. */
async function selectOne(url: string): Promise<void> {
  const client = new pg.Client({
    connectionString: url,
    connectionTimeoutMillis: 1_000,
    query_timeout: 1_000,
  });
  // Errors after the connection (the server going away) would otherwise be thrown as events.
  client.on("error", () => {});
  await client.connect();
  try {
    await client.query("select 1");
  } finally {
    await client.end();
  }
}

/** It could not take its port, taken since it was found free. */
class PortTakenError extends Error {
  override readonly name = "PortTakenError";
}

/** How many times a port taken meanwhile is replaced by another. */
const PORT_RETRIES = 3;

/**
 * Starts a throwaway PostgreSQL cluster on a free port of 127.0.0.1 and waits until its
 * superuser can connect with {@link PostgresServer.url} and run `select 1`. When the port is
 * taken before the server takes it, it starts over on another one (up to 3 times).
 *
 * No error this throws holds the password: URLs in it are redacted.
 *
 * @throws {PostgresNotFoundError} when the binaries are not found (see
 *   {@link findPostgresBinaries})
 * @throws {Error} when this process is root and there is no `postgres` user, when `initdb` fails,
 *   when the server exits or is not ready in time (its log is in the message), or when `signal`
 *   aborts
 * @example
 * const postgres = await startPostgres();
 * const client = new pg.Client({ connectionString: postgres.url });
 * await client.connect();
 * // ...
 * await client.end();
 * await postgres.stop();
 */
export async function startPostgres(options: PostgresServerOptions = {}): Promise<PostgresServer> {
  const binaries = findPostgresBinaries(options.search);
  if (binaries === undefined) throw new PostgresNotFoundError(options.search);
  const user = serverUser();
  const password = randomBytes(24).toString("hex");
  for (let attempt = 0; ; attempt++) {
    const port = await freePort(options.besidesPorts);
    const url = `postgres://postgres:${password}@127.0.0.1:${port}/postgres`;
    const hidden = (text: string) => redactMessage(text, url);
    try {
      return await startLocalServer({
        name: "postgres",
        binary: binaries.postgres,
        port,
        url,
        prepare: (folder) => initdb(binaries.initdb, folder, password, user, options.signal),
        args: (folder) => [
          "-D",
          join(folder, "data"),
          "-p",
          String(port),
          "-k",
          folder,
          "-c",
          "listen_addresses=127.0.0.1",
        ],
        ready: () =>
          selectOne(url).catch((error: unknown) => {
            throw new Error(
              hidden(`${url}: ${error instanceof Error ? error.message : String(error)}`),
            );
          }),
        // A fast shutdown: it ends the sessions rather than waiting for them.
        stopSignal: "SIGINT",
        portTaken: (log) =>
          attempt < PORT_RETRIES
            ? new PortTakenError(`port ${port} on 127.0.0.1 was taken\n${log}`)
            : undefined,
        ...(user === undefined ? {} : { user }),
        ...(options.readyTimeoutMs === undefined ? {} : { readyTimeoutMs: options.readyTimeoutMs }),
        ...(options.signal === undefined ? {} : { signal: options.signal }),
      });
    } catch (error) {
      if (error instanceof PortTakenError) continue;
      // Belt and braces: no message or stack trace leaves here with the password.
      if (error instanceof Error) {
        error.message = hidden(error.message);
        if (error.stack !== undefined) error.stack = hidden(error.stack);
      }
      throw error;
    }
  }
}
