/**
 * The package as a user meets it: packed with `npm pack`, installed from the tarball in fresh apps
 * by the README's own `npm install` lines (read from the README, the tarball standing in for the
 * package's name), and used the ways the README says it can be used: the `createAgent` snippet
 * and `startTelemetry()` from an ES module, `require()` from CommonJS, TypeScript under
 * `nodenext`, `bundler` and `node10`, `tool-call-resilience/formats` and the audit command in an
 * app of the OpenAI SDK without LangChain, and the AI SDK middleware and the OpenAI Agents SDK
 * filter in apps on those stacks alone. Then `publint` and `@arethetypeswrong/cli` read the
 * tarball.
 *
 * It needs the npm registry (the apps install their peers from it), so it is not part of
 * `npm test`: `npm run test:package` runs it, on whichever Node.js runs npm, which picks the
 * releases that Node.js admits, as it does for a user.
 */
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PLACEHOLDER_CATALOG, TURN_CATALOG } from "../../src/core/locales.js";
import { REPAIR_DURATION_BUCKETS } from "../../src/telemetry/semconv.js";
import { latestPoints, type OtlpReceiver, startOtlpReceiver } from "../helpers/otlp-receiver.js";
import { freePort, parseExposition } from "../helpers/prometheus.js";
import { SDK_RANGE } from "../helpers/sdk.js";
import {
  COMPLETION_TEXT,
  type ReceivedRequest,
  type StrictProviderServer,
  startStrictProviderServer,
} from "../helpers/strict-provider-server.js";
import { type InstallCommand, type ReadmeSnippet, readmeSnippets } from "./readme-installs.js";

const execFileAsync = promisify(execFile);
const root = fileURLToPath(new URL("../..", import.meta.url));
const INSTALL_TIMEOUT_MS = 300_000;

/** The Node.js major version the apps run on: the one running these tests. */
const nodeMajor = Number(process.versions.node.split(".")[0]);

/** Whether the Node.js running the tests is `major.minor` or later. */
function nodeAtLeast(major: number, minor: number): boolean {
  const [runningMajor = 0, runningMinor = 0] = process.versions.node.split(".").map(Number);
  return runningMajor > major || (runningMajor === major && runningMinor >= minor);
}

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a command, and returns its exit code and output instead of throwing on a failure. */
async function run(
  command: string,
  args: readonly string[],
  cwd: string,
  env: Record<string, string> = {},
): Promise<Run> {
  try {
    const { stdout, stderr } = await execFileAsync(command, args, {
      cwd,
      env: { ...process.env, ...env },
      maxBuffer: 64 * 1024 * 1024,
      timeout: INSTALL_TIMEOUT_MS,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: unknown; stdout?: string; stderr?: string };
    return {
      code: typeof failed.code === "number" ? failed.code : 1,
      stdout: failed.stdout ?? "",
      stderr: failed.stderr ?? String(error),
    };
  }
}

/** `node` with the same binary that runs the tests. */
function node(args: readonly string[], cwd: string, env?: Record<string, string>): Promise<Run> {
  return run(process.execPath, args, cwd, env);
}

/**
 * Runs the app's TypeScript on `file` as a strict `nodenext` project that checks every declaration
 * file (`skipLibCheck: false`) and no ambient types.
 */
async function typecheck(dir: string, file: string): Promise<Run> {
  writeFileSync(
    join(dir, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        module: "nodenext",
        moduleResolution: "nodenext",
        target: "es2022",
        strict: true,
        noEmit: true,
        skipLibCheck: false,
        types: [],
      },
      files: [file],
    }),
  );
  return node(["node_modules/typescript/bin/tsc", "-p", "tsconfig.json"], dir);
}

/**
 * The errors of a {@link typecheck} in the app's own file or in this package's declarations. The
 * stacks' own declarations need more than a bare app gives them (`@types/node`, `json-schema`'s
 * types), and are theirs to answer for; an error in ours, or an assignment in the app's file
 * that fails, is ours.
 */
function ownTypeErrors(tsc: Run): string[] {
  const lines = `${tsc.stdout}\n${tsc.stderr}`.split("\n");
  const own = lines.filter((line) =>
    /^(check\.ts|node_modules\/tool-call-resilience\/)/.test(line),
  );
  // The check ran: it read the app's file, and either passed or reported something.
  if (tsc.code !== 0 && !lines.some((line) => /error TS/.test(line))) return [tsc.stderr];
  return own;
}

/** The version of a package this repository was tested with, from its own install. */
function testedVersion(name: string): string {
  const manifest = JSON.parse(
    readFileSync(join(root, "node_modules", name, "package.json"), "utf8"),
  ) as { version: string };
  return manifest.version;
}

/** The README's TypeScript snippets, with the install lines before each, for this Node.js. */
const snippets = readmeSnippets(readFileSync(join(root, "README.md"), "utf8"), nodeMajor);

/** The README's snippet that imports `specifier`. */
function snippetImporting(specifier: string): ReadmeSnippet {
  const found = snippets.find((snippet) => snippet.imports.includes(specifier));
  if (found === undefined)
    throw new Error(`no TypeScript snippet of the README imports ${specifier}`);
  return found;
}

/** The snippet at the top: `createAgent` with the middleware. */
const topSnippet = snippets[0] as ReadmeSnippet;
/** The Telemetry section's snippet: `startTelemetry()`. */
const telemetrySnippet = snippetImporting("tool-call-resilience/setup");

/** An app this test installs, and which of the README's snippets it serves. */
interface AppPlan {
  readonly name: string;
  /** The README snippets whose install lines build it, in order; their lines run one by one. */
  readonly snippets: readonly ReadmeSnippet[];
  /** What the app's tests need beyond the README's lines, installed after them. */
  readonly extras: readonly string[];
}

const typescript = `typescript@${testedVersion("typescript")}`;

/**
 * The apps built from the README's lines. The LangChain app gets the top block's lines, then the
 * Telemetry section's (the order in which a user following the README meets them), and what its
 * other tests need; every other install block of the README gets an app of its own.
 */
const APP_PLANS = {
  langChain: {
    name: "langchain-app",
    snippets: [topSnippet, telemetrySnippet],
    // A provider with rules on the order of turns, for the repair's synthetic reply.
    extras: [`@langchain/mistralai@${testedVersion("@langchain/mistralai")}`, typescript],
  },
  chatModel: {
    name: "chat-model-app",
    snippets: [snippetImporting("@langchain/langgraph/prebuilt")],
    extras: [],
  },
  openAI: {
    name: "openai-app",
    snippets: [snippetImporting("tool-call-resilience/formats")],
    extras: [typescript],
  },
  aiSdk: {
    name: "ai-sdk-app",
    snippets: [snippetImporting("tool-call-resilience/ai-sdk")],
    extras: [typescript],
  },
  agents: {
    name: "agents-app",
    snippets: [snippetImporting("tool-call-resilience/openai-agents")],
    extras: [typescript],
  },
} as const satisfies Record<string, AppPlan>;

/** The README's install lines an app runs, in order. */
function installsOf(plan: AppPlan): InstallCommand[] {
  return plan.snippets.flatMap((snippet) => snippet.installs);
}

/** One of the README's install lines, as an app ran it. */
interface ReadmeInstall {
  readonly command: InstallCommand;
  /** The arguments given to `npm install`. */
  readonly args: readonly string[];
  readonly result: Run;
}

interface App {
  readonly dir: string;
  /** The README's lines it ran, in order, up to the first that failed. */
  readonly readmeInstalls: readonly ReadmeInstall[];
}

/** Makes an empty app folder with a package.json. */
function appFolder(name: string): string {
  const dir = join(workspace, name);
  mkdirSync(dir);
  writeFileSync(
    join(dir, "package.json"),
    `${JSON.stringify({ name, version: "1.0.0", private: true, type: "module" }, null, 2)}\n`,
  );
  return dir;
}

/**
 * `npm install` of `packages` in `dir`, quiet about audits and funding. `--prefer-offline` only
 * where asked: a README line resolves against the registry as it is now, as it does for a user,
 * never against metadata cached by an earlier run.
 */
function npmInstall(
  dir: string,
  packages: readonly string[],
  preferOffline: boolean,
): Promise<Run> {
  const flags = ["--no-audit", "--no-fund", ...(preferOffline ? ["--prefer-offline"] : [])];
  return run("npm", ["install", ...flags, ...packages], dir);
}

/** Throws with npm's output unless the install succeeded. */
function installed(name: string, install: Run): Run {
  if (install.code !== 0) {
    throw new Error(`npm install failed in ${name}:\n${install.stdout}\n${install.stderr}`);
  }
  return install;
}

/**
 * Makes the app of `plan`: runs its README lines one by one, as written but for the tarball in
 * place of `tool-call-resilience`, and stops at the first that fails (the tests report it); then
 * installs the extras its tests need.
 */
async function createApp(plan: AppPlan): Promise<App> {
  const dir = appFolder(plan.name);
  const readmeInstalls: ReadmeInstall[] = [];
  for (const command of installsOf(plan)) {
    const args = command.packages.map((spec) => (spec === "tool-call-resilience" ? tarball : spec));
    const result = await npmInstall(dir, args, false);
    readmeInstalls.push({ command, args, result });
    if (result.code !== 0) return { dir, readmeInstalls };
  }
  if (plan.extras.length > 0) {
    installed(plan.name, await npmInstall(dir, plan.extras, true));
  }
  return { dir, readmeInstalls };
}

/** What a README install line must not print: a refused peer range, or a refused engine. */
const INSTALL_COMPLAINTS = ["ERESOLVE", "EBADENGINE"] as const;

/**
 * The text of the result sent right after the call `id`, in a Chat Completions or a Responses
 * request; `undefined` when what follows the call is not its result.
 */
function placeholderAfterCall(request: ReceivedRequest | undefined, id: string): unknown {
  const items = (request?.body.messages ?? request?.body.input ?? []) as Array<
    Record<string, unknown>
  >;
  const call = items.findIndex(
    (item) =>
      item.call_id === id ||
      (Array.isArray(item.tool_calls) &&
        (item.tool_calls as Array<{ id?: unknown }>).some((entry) => entry.id === id)),
  );
  const next = items[call + 1];
  if (call < 0 || next === undefined) return undefined;
  if (next.role === "tool" && next.tool_call_id === id) return next.content;
  if (next.type === "function_call_output" && next.call_id === id) return next.output;
  return undefined;
}

/**
 * The invocations after the top snippet: the user asks for a deploy, the model calls `deploy`,
 * whose `interrupt()` nobody answers; then the user writes again on the same thread.
 */
const TOP_SNIPPET_RUN = `
const config = { configurable: { thread_id: "support-1" } };
await agent.invoke({ messages: [{ role: "user", content: "Deploy billing, please." }] }, config);
const result = await agent.invoke(
  { messages: [{ role: "user", content: "Never mind. What happened?" }] },
  config,
);
console.log("answer:", result.messages.at(-1).text);
`;

/** The log line of the README's top example, for the one placeholder of its thread. */
const INJECTING_ONE_PLACEHOLDER =
  /\[tool-call-resilience\] Injecting 1 placeholder ToolMessage\(s\) for dangling tool calls/;

let workspace: string;
let tarball: string;
let tarballFiles: string[];
let langChainApp: App;
let chatModelApp: App;
let openAIApp: App;
let setupApp: { readonly dir: string };
let aiSdkApp: App;
let agentsApp: App;
/** An app whose package.json names `@opentelemetry/api`, as `npm install` saves it. */
let apiNamedApp: { readonly dir: string };

/** Every app built from the README's lines, by its plan's name. */
function readmeApps(): Array<[AppPlan, App]> {
  return [
    [APP_PLANS.langChain, langChainApp],
    [APP_PLANS.chatModel, chatModelApp],
    [APP_PLANS.openAI, openAIApp],
    [APP_PLANS.aiSdk, aiSdkApp],
    [APP_PLANS.agents, agentsApp],
  ];
}

/**
 * The end of the `@opentelemetry/sdk-node` range the setup app installs: the newest release where
 * Node.js can run it (0.300 and later want 22.15), else the lowest.
 */
const SDK_RANGE_END = (() => {
  const [newMajor = 0, newMinor = 0] = SDK_RANGE.newest.node.split(".").map(Number);
  const which = nodeAtLeast(newMajor, newMinor) ? "newest" : "lowest";
  const end = SDK_RANGE[which];
  return { which, sdkNode: end["@opentelemetry/sdk-node"], api: end["@opentelemetry/api"] };
})();

/** The lowest zod the package's `dependencies` admit. */
const LOWEST_ZOD = (
  JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
    dependencies: Record<string, string>;
  }
).dependencies.zod?.match(/^\^(\d+\.\d+\.\d+)/)?.[1] as string;

/** A `node_modules` above the apps would lend them packages they did not install. */
function ancestorNodeModules(dir: string): string | undefined {
  for (let current = dirname(dir); ; current = dirname(current)) {
    const candidate = join(current, "node_modules");
    if (existsSync(candidate)) return candidate;
    if (dirname(current) === current) return undefined;
  }
}

beforeAll(async () => {
  workspace = mkdtempSync(join(tmpdir(), "tcr-consumer-"));
  const borrowed = ancestorNodeModules(workspace);
  if (borrowed !== undefined) {
    throw new Error(
      `${borrowed} is above the test apps, so they would not be fresh installs: set TMPDIR to a folder without one above it`,
    );
  }
  // `prepack` builds, so this is what `npm publish` would upload from this tree.
  const packed = await run("npm", ["pack", "--json", "--pack-destination", workspace], root);
  if (packed.code !== 0) throw new Error(`npm pack failed:\n${packed.stdout}\n${packed.stderr}`);
  const report = JSON.parse(packed.stdout.slice(packed.stdout.indexOf("["))) as Array<{
    filename: string;
    files: Array<{ path: string }>;
  }>;
  const [entry] = report;
  if (entry === undefined) throw new Error("npm pack reported no package");
  tarball = join(workspace, entry.filename);
  tarballFiles = entry.files.map((file) => file.path);

  [langChainApp, chatModelApp, openAIApp, aiSdkApp, agentsApp, setupApp, apiNamedApp] =
    await Promise.all([
      createApp(APP_PLANS.langChain),
      createApp(APP_PLANS.chatModel),
      createApp(APP_PLANS.openAI),
      createApp(APP_PLANS.aiSdk),
      createApp(APP_PLANS.agents),
      // The setup entry point on an end of the SDK range: the SDK and its API, nothing else; and
      // the lowest zod the package admits, whose types its declarations must compile against.
      (async () => {
        const dir = appFolder("setup-app");
        const packages = [
          tarball,
          `@opentelemetry/sdk-node@${SDK_RANGE_END.sdkNode}`,
          `@opentelemetry/api@${SDK_RANGE_END.api}`,
          `zod@${LOWEST_ZOD}`,
          typescript,
        ];
        installed("setup-app", await npmInstall(dir, packages, true));
        return { dir };
      })(),
      // A user who installed the API by its name (as the README once said to): npm saves the
      // newest, and the setup entry's hint is for installing the SDK next to it.
      (async () => {
        const dir = appFolder("api-named-app");
        installed("api-named-app", await npmInstall(dir, [tarball, "@opentelemetry/api"], false));
        return { dir };
      })(),
    ]);
}, 2 * INSTALL_TIMEOUT_MS);

afterAll(() => {
  if (workspace !== undefined) rmSync(workspace, { recursive: true, force: true });
});

describe("the README's npm install lines", () => {
  it("are each run by one of the apps below", () => {
    const covered = new Set(Object.values(APP_PLANS).flatMap((plan) => installsOf(plan)));
    const notRun = snippets
      .flatMap((snippet) => snippet.installs)
      .filter((command) => !covered.has(command))
      .map((command) => command.line);
    expect(notRun).toEqual([]);
  });

  for (const plan of Object.values(APP_PLANS)) {
    installsOf(plan).forEach((command, index) => {
      it(`${plan.name}, \`${command.line}\`: exits 0 on Node.js ${process.versions.node}, with neither ERESOLVE nor EBADENGINE`, () => {
        const app = readmeApps().find(([candidate]) => candidate === plan)?.[1];
        const ran = app?.readmeInstalls[index];
        expect(ran, "an earlier line of this app failed").toBeDefined();
        const output = `${ran?.result.stdout}\n${ran?.result.stderr}`;
        expect(ran?.result.code, `npm install ${ran?.args.join(" ")}\n${output}`).toBe(0);
        for (const complaint of INSTALL_COMPLAINTS) expect(output).not.toContain(complaint);
      });
    });
  }

  it.each(
    Object.values(APP_PLANS).flatMap((plan) => plan.snippets.map((snippet) => ({ plan, snippet }))),
  )(
    "$plan.name: every module the snippet at README line $snippet.line imports is there",
    async ({ plan, snippet }) => {
      const app = readmeApps().find(([candidate]) => candidate === plan)?.[1] as App;
      const ran = await node(
        [
          "--input-type=module",
          "-e",
          snippet.imports
            .map((specifier) => `await import(${JSON.stringify(specifier)});`)
            .join("\n"),
        ],
        app.dir,
      );
      expect(ran.code, ran.stderr).toBe(0);
    },
  );
});

describe("the packed tarball", () => {
  it("declares the @opentelemetry/sdk-node range whose ends CI runs the setup entry point against", () => {
    const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
      peerDependencies: Record<string, string>;
    };
    expect(manifest.peerDependencies["@opentelemetry/sdk-node"]).toBe(
      `>=${SDK_RANGE.lowest["@opentelemetry/sdk-node"]} <1`,
    );
    expect(manifest.peerDependencies["@opentelemetry/api"]).toBe(
      `^${SDK_RANGE.lowest["@opentelemetry/api"].replace(/\.\d+$/, ".0")}`,
    );
  });

  it("ships the monitoring bundle a user points Grafana and Prometheus at", () => {
    for (const path of [
      "dashboards/README.md",
      "dashboards/runbook.md",
      "dashboards/grafana/tool-call-resilience-overview.json",
      "dashboards/grafana/tool-call-resilience-threads.json",
      "dashboards/grafana/provisioning/dashboards/tool-call-resilience.yml",
      "dashboards/grafana/provisioning/alerting/tool-call-resilience.yml",
      "dashboards/prometheus/recording-rules.yml",
      "dashboards/prometheus/alerts.yml",
      "dashboards/prometheus/rules.test.yml",
      "dashboards/prometheus/spike.test.yml",
      "dashboards/alertmanager/tool-call-resilience.yml",
    ]) {
      expect(tarballFiles).toContain(path);
    }
    // The generator is TypeScript for this repository's build, not for users.
    expect(tarballFiles.filter((path) => path.startsWith("dashboards/generator"))).toEqual([]);
  });

  it("ships the docs the README links to; the examples stay in the repository", () => {
    expect(tarballFiles).toEqual(
      expect.arrayContaining(["README.md", "docs/telemetry.md", "ARCHITECTURE.md", "LICENSE"]),
    );
    const readme = readFileSync(join(root, "README.md"), "utf8");
    const relativeLinks = [...readme.matchAll(/\]\(((?!https?:|#)[^)#\s]+)(?:#[^)]*)?\)/g)].map(
      (match) => (match[1] as string).replace(/\/$/, ""),
    );
    expect(relativeLinks.length).toBeGreaterThan(0);
    for (const link of relativeLinks) {
      // The registry's page links these into the repository (package.json `repository`).
      expect(existsSync(join(root, link)), `${link}, linked from the README`).toBe(true);
      if (link.startsWith("examples/")) continue;
      const shipped = tarballFiles.some((path) => path === link || path.startsWith(`${link}/`));
      expect(shipped, `${link}, linked from the README, in the package`).toBe(true);
    }
  });

  it("holds the compiled entry points with their types, and no source maps", () => {
    for (const entry of [
      "dist/index",
      "dist/setup/index",
      "dist/formats/index",
      "dist/telemetry/semconv",
      "dist/stacks/ai-sdk",
      "dist/stacks/openai-agents",
    ]) {
      expect(tarballFiles).toContain(`${entry}.js`);
      expect(tarballFiles).toContain(`${entry}.d.ts`);
    }
    expect(tarballFiles.filter((path) => path.endsWith(".map"))).toEqual([]);
    expect(tarballFiles.filter((path) => /^(src|test|bench|demo)\//.test(path))).toEqual([]);
  });

  it("passes publint with no errors, warnings or suggestions", async () => {
    const publint = await run(join(root, "node_modules/.bin/publint"), ["run", tarball], root);
    expect(publint.stderr).toBe("");
    expect(publint.code, publint.stdout).toBe(0);
    expect(publint.stdout).not.toMatch(/Errors:|Warnings:|Suggestions:/);
  });

  it("passes @arethetypeswrong/cli for every entry point and resolution mode", async () => {
    // Every resolution mode, one rule set aside: CJSResolvesToESM ("a require call resolved to
    // an ESM file") predates `require()` of ES modules, which every Node.js version this package
    // supports has, and which the CommonJS test below does for real.
    const attw = await run(
      join(root, "node_modules/.bin/attw"),
      ["--format", "json", tarball, "--ignore-rules", "cjs-resolves-to-esm"],
      root,
    );
    expect(attw.code, attw.stdout).toBe(0);
    const result = JSON.parse(attw.stdout) as { analysis: { problems: Array<{ kind: string }> } };
    expect(
      result.analysis.problems.filter((problem) => problem.kind !== "CJSResolvesToESM"),
    ).toEqual([]);
  });
});

describe("installed in an app with the peers the README names", () => {
  let server: StrictProviderServer;

  beforeAll(async () => {
    server = await startStrictProviderServer();
  });

  afterAll(async () => {
    await server?.close();
  });

  it("puts the monitoring bundle where the README says", () => {
    const readme = readFileSync(
      join(langChainApp.dir, "node_modules/tool-call-resilience/README.md"),
      "utf8",
    );
    const paths = [
      ...readme.matchAll(/node_modules\/tool-call-resilience\/([\w./-]+\.(?:yml|json|md))/g),
    ].map((match) => match[1] as string);
    expect(paths.length).toBeGreaterThan(0);
    for (const path of paths) {
      expect(
        existsSync(join(langChainApp.dir, "node_modules/tool-call-resilience", path)),
        path,
      ).toBe(true);
    }
  });

  it("runs the README's createAgent snippet as written: the interrupted call is answered", async () => {
    expect(topSnippet.code, "the README's first TypeScript block").toContain(
      "danglingToolCallMiddleware()",
    );
    writeFileSync(join(langChainApp.dir, "snippet.mjs"), `${topSnippet.code}${TOP_SNIPPET_RUN}`);
    // The model's first answer calls `deploy`, on whichever OpenAI API the client chose.
    const deployCall = { id: "call_deploy_1", name: "deploy", args: { service: "billing" } };
    server.script("openai", { calls: [deployCall] });
    server.script("responses", { calls: [deployCall] });
    const before = server.received.length;
    const ran = await node(["snippet.mjs"], langChainApp.dir, {
      OPENAI_API_KEY: "test",
      OPENAI_BASE_URL: server.openAIBaseURL,
    });
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toContain(`answer: ${COMPLETION_TEXT}`);
    expect(ran.stderr).toMatch(INJECTING_ONE_PLACEHOLDER);
    // The provider accepted the second turn, with the placeholder right after the call.
    const requests = server.received.slice(before);
    expect(requests.map((request) => request.status)).toEqual([200, 200]);
    expect(placeholderAfterCall(requests[1], "call_deploy_1")).toBe(
      PLACEHOLDER_CATALOG.en.interrupted,
    );
  });

  it("runs the README's Telemetry snippet with the SDK its line installed: the repair is counted and served", async () => {
    expect(telemetrySnippet.code).toContain("startTelemetry({");
    // The snippet serves on the default port; this test gives it a free one, nothing else.
    const port = await freePort();
    const telemetry = telemetrySnippet.code.replace(
      "startTelemetry({",
      `startTelemetry({ port: ${port}, `,
    );
    writeFileSync(
      join(langChainApp.dir, "telemetry.mjs"),
      `${telemetry}${topSnippet.code}${TOP_SNIPPET_RUN}
const scraped = await (await fetch(telemetry.metricsUrl)).text();
await telemetry.shutdown();
console.log(JSON.stringify({ scraped }));
`,
    );
    const deployCall = { id: "call_deploy_1", name: "deploy", args: { service: "billing" } };
    server.script("openai", { calls: [deployCall] });
    server.script("responses", { calls: [deployCall] });
    const ran = await node(["telemetry.mjs"], langChainApp.dir, {
      OPENAI_API_KEY: "test",
      OPENAI_BASE_URL: server.openAIBaseURL,
    });
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toContain(`Prometheus scrapes http://127.0.0.1:${port}/metrics`);
    const exposition = parseExposition(
      (
        JSON.parse(ran.stdout.split("\n").find((line) => line.startsWith("{")) ?? "{}") as {
          scraped: string;
        }
      ).scraped,
    );
    expect(
      exposition
        .find("tool_call_resilience_dangling_tool_calls_total")
        .map((sample) => [
          sample.labels.gen_ai_tool_name,
          sample.labels.gen_ai_request_model,
          sample.value,
        ]),
    ).toEqual([["deploy", "gpt-4.1", 1]]);
    expect(exposition.sum("tool_call_resilience_model_calls_total")).toBe(2);
    expect(
      exposition
        .find("tool_call_resilience_thread_recent_dangling_tool_calls")
        .map((sample) => [sample.labels.gen_ai_conversation_id, sample.value]),
    ).toEqual([["support-1", 1]]);
  });

  it("sends ChatMistralAI the README's thread in an order Mistral accepts: a reply before the user's message", async () => {
    // Mistral's own converter builds the request; only its network call is replaced. The reply
    // the repair writes is internal to the package: the app is given its English text.
    const script = `
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { ChatMistralAI } from "@langchain/mistralai";
import { withToolCallRepair } from "tool-call-resilience";

const englishReply = ${JSON.stringify(TURN_CATALOG.en.reply)};

const model = new ChatMistralAI({ model: "mistral-large-latest", apiKey: "test", maxRetries: 0 });
let sent;
model.completionWithRetry = async (request) => {
  sent = request;
  return {
    choices: [{ index: 0, finishReason: "stop", message: { role: "assistant", content: "Done." } }],
    usage: { promptTokens: 1, completionTokens: 1, totalTokens: 2 },
  };
};
const thread = [
  new HumanMessage("Deploy billing, please."),
  new AIMessage({ content: "", tool_calls: [{ id: "call_deploy_1", name: "deploy", args: {} }] }),
  new HumanMessage("Never mind. What happened?"),
];
const answer = await withToolCallRepair(model, { logger: false }).invoke(thread);
console.log(JSON.stringify({
  answer: answer.text,
  roles: sent.messages.map((message) => message.role),
  reply: sent.messages[3].content === englishReply,
}));
`;
    writeFileSync(join(langChainApp.dir, "mistral.mjs"), script);
    const ran = await node(["mistral.mjs"], langChainApp.dir);
    expect(ran.code, ran.stderr).toBe(0);
    expect(JSON.parse(ran.stdout)).toEqual({
      answer: "Done.",
      roles: ["user", "assistant", "tool", "assistant", "user"],
      reply: true,
    });
  });

  it("is require()d from CommonJS: the main entry, /setup, /formats, /semconv, /ai-sdk and /openai-agents", async () => {
    writeFileSync(
      join(langChainApp.dir, "check.cjs"),
      `const main = require("tool-call-resilience");
const setup = require("tool-call-resilience/setup");
const formats = require("tool-call-resilience/formats");
const semconv = require("tool-call-resilience/semconv");
const aiSdk = require("tool-call-resilience/ai-sdk");
const openAIAgents = require("tool-call-resilience/openai-agents");
console.log(JSON.stringify({
  aiSdkMiddleware: typeof aiSdk.toolCallRepairMiddleware,
  agentsFilter: typeof openAIAgents.toolCallRepairInputFilter,
  middleware: typeof main.danglingToolCallMiddleware,
  wrapper: typeof main.withToolCallRepair,
  startTelemetry: typeof setup.startTelemetry,
  openAI: typeof formats.repairOpenAIChatMessages,
  sameEngine: main.repairOpenAIChatMessages === formats.repairOpenAIChatMessages,
  danglingMetric: semconv.METRIC_DANGLING_TOOL_CALLS,
  namesOnlyInSemconv: !("METRIC_DANGLING_TOOL_CALLS" in main),
  internalsInMain: ["repairInFormat", "PLACEHOLDER_CATALOG", "TURN_CATALOG", "PACKAGE_VERSION"].filter(
    (name) => main[name] !== undefined,
  ),
  setupErrorFromAnotherCopy: setup.isSetupError(Object.assign(new Error("x"), { name: "ToolCallResilienceSetupError" })),
}));
`,
    );
    const ran = await node(["check.cjs"], langChainApp.dir);
    expect(ran.code, ran.stderr).toBe(0);
    expect(JSON.parse(ran.stdout)).toEqual({
      aiSdkMiddleware: "function",
      agentsFilter: "function",
      middleware: "function",
      wrapper: "function",
      startTelemetry: "function",
      openAI: "function",
      sameEngine: true,
      danglingMetric: "tool_call_resilience.dangling_tool_calls",
      namesOnlyInSemconv: true,
      internalsInMain: [],
      setupErrorFromAnotherCopy: true,
    });
  });

  it("runs its command line from the app: the version, and an audit that fixes a thread", async () => {
    const bin = join(langChainApp.dir, "node_modules/.bin/tool-call-resilience");
    const version = await run(bin, ["--version"], langChainApp.dir);
    expect(version.code, version.stderr).toBe(0);
    expect(version.stdout.trim()).toBe(
      (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string }).version,
    );
    const thread = [
      { role: "user", content: "Find flights" },
      {
        role: "assistant",
        content: null,
        tool_calls: [
          { id: "call_1", type: "function", function: { name: "search", arguments: "{}" } },
        ],
      },
      { role: "user", content: "Never mind" },
    ];
    writeFileSync(join(langChainApp.dir, "threads.jsonl"), `${JSON.stringify(thread)}\n`);
    const audit = await run(bin, ["audit", "threads.jsonl"], langChainApp.dir);
    expect(audit.code, audit.stderr).toBe(1);
    expect(audit.stdout).toContain("1 dangling");
    const fixed = await run(
      bin,
      ["audit", "threads.jsonl", "--fix", "--out", "repaired.jsonl"],
      langChainApp.dir,
    );
    expect(fixed.code, fixed.stderr).toBe(0);
    const [repaired] = readFileSync(join(langChainApp.dir, "repaired.jsonl"), "utf8")
      .split("\n")
      .map((line) => JSON.parse(line || "null") as unknown[] | null);
    expect(repaired?.[2]).toEqual({
      role: "tool",
      tool_call_id: "call_1",
      content: PLACEHOLDER_CATALOG.en.interrupted,
    });
    // Reading a checkpointer needs its optional peer, which this app does not have: the audit
    // says which package to install, and never prints the password it was given.
    const checkpointer = await run(
      bin,
      ["audit", "--checkpointer", "postgres://app:s3cret-pw@127.0.0.1:1/app"],
      langChainApp.dir,
    );
    expect(checkpointer.code).toBe(2);
    expect(checkpointer.stderr).toContain("@langchain/langgraph-checkpoint-postgres");
    expect(`${checkpointer.stdout}${checkpointer.stderr}`).not.toContain("s3cret-pw");
  });

  it.each([
    ["nodenext", { module: "nodenext", moduleResolution: "nodenext" }, "ts"],
    ["bundler", { module: "preserve", moduleResolution: "bundler" }, "ts"],
    ["node10", { module: "commonjs", moduleResolution: "node10" }, "cts"],
  ] as const)(
    "compiles against the public types under moduleResolution %s",
    async (label, options, extension) => {
      const file = `types-${label}.${extension}`;
      writeFileSync(
        join(langChainApp.dir, file),
        `import { danglingToolCallMiddleware, type ToolCallRepairOptions, withToolCallRepair } from "tool-call-resilience";
import { repairOpenAIChatMessages, type FormatRepairResult } from "tool-call-resilience/formats";
import { startTelemetry } from "tool-call-resilience/setup";
import { METRIC_DANGLING_TOOL_CALLS } from "tool-call-resilience/semconv";

export const metric: "tool_call_resilience.dangling_tool_calls" = METRIC_DANGLING_TOOL_CALLS;
const options: ToolCallRepairOptions = { locale: "de", threadMetrics: false };
export const middleware = danglingToolCallMiddleware({ ...options, persist: true });
export const wrap = withToolCallRepair;
export const repaired: FormatRepairResult<unknown> = repairOpenAIChatMessages([], options, { model: "gpt-4.1" });
export const telemetry: typeof startTelemetry = startTelemetry;
// @ts-expect-error: not an option
danglingToolCallMiddleware({ notAnOption: true });
`,
      );
      writeFileSync(
        join(langChainApp.dir, `tsconfig.${label}.json`),
        JSON.stringify({
          compilerOptions: {
            ...options,
            target: "es2022",
            strict: true,
            noEmit: true,
            skipLibCheck: true,
            types: [],
          },
          files: [file],
        }),
      );
      const tsc = await node(
        ["node_modules/typescript/bin/tsc", "-p", `tsconfig.${label}.json`],
        langChainApp.dir,
      );
      expect(tsc.stdout + tsc.stderr).toBe("");
      expect(tsc.code).toBe(0);
    },
  );

  it("shows the documentation of every option in the editor, from the published declarations", async () => {
    writeFileSync(
      join(langChainApp.dir, "options-docs.ts"),
      `import type { DanglingToolCallMiddlewareOptions, RepairOptions, ToolCallRepairOptions } from "tool-call-resilience";
import type { OtlpOptions, RecommendedViewsOptions, StartTelemetryOptions, ThreadMetricsProducerOptions } from "tool-call-resilience/setup";
export type Middleware = DanglingToolCallMiddlewareOptions;
export type Shared = ToolCallRepairOptions;
export type Engine = RepairOptions;
export type Start = StartTelemetryOptions;
export type Otlp = OtlpOptions;
export type Views = RecommendedViewsOptions;
export type Producer = ThreadMetricsProducerOptions;
`,
    );
    // What an editor shows on hover: each property's documentation comment, read through the
    // TypeScript compiler API from the installed package's declarations.
    writeFileSync(
      join(langChainApp.dir, "options-docs.mjs"),
      `import ts from "typescript";
const program = ts.createProgram(["options-docs.ts"], {
  module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, strict: true, noEmit: true,
});
const checker = program.getTypeChecker();
const options = {};
for (const statement of program.getSourceFile("options-docs.ts").statements) {
  if (!ts.isTypeAliasDeclaration(statement)) continue;
  const type = checker.getTypeAtLocation(statement.name);
  options[statement.name.text] = Object.fromEntries(checker.getPropertiesOfType(type).map((property) =>
    [property.name, ts.displayPartsToString(property.getDocumentationComment(checker)) !== ""]));
}
console.log(JSON.stringify(options));
`,
    );
    const ran = await node(["options-docs.mjs"], langChainApp.dir);
    expect(ran.code, ran.stderr).toBe(0);
    const documented = JSON.parse(ran.stdout) as Record<string, Record<string, boolean>>;
    expect(Object.keys(documented.Middleware ?? {})).toContain("persist");
    expect(Object.keys(documented.Start ?? {})).toContain("otlp");
    const undocumented = Object.entries(documented).flatMap(([type, properties]) =>
      Object.entries(properties)
        .filter(([, hasDocs]) => !hasDocs)
        .map(([name]) => `${type}.${name}`),
    );
    expect(undocumented).toEqual([]);
  });
});

describe("tool-call-resilience/formats and the audit command, in the OpenAI SDK app: no LangChain", () => {
  it("installs no LangChain", () => {
    for (const name of ["@langchain/core", "langchain", "@langchain/langgraph"]) {
      expect(existsSync(join(openAIApp.dir, "node_modules", name)), name).toBe(false);
    }
  });

  it("repairs OpenAI, Anthropic and AI SDK histories from an ES module and from CommonJS", async () => {
    const body = (load: string) => `${load}
const openAI = repairOpenAIChatMessages([
  { role: "user", content: "Find flights" },
  { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "search", arguments: "{}" } }] },
  { role: "user", content: "Never mind" },
], { logger: false }).messages;
const anthropic = repairAnthropicMessages([
  { role: "user", content: "Find flights" },
  { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "search", input: {} }] },
  { role: "user", content: "Never mind" },
], { logger: false }).messages;
const aiSdk = repairModelMessages([
  { role: "user", content: "Find flights" },
  { role: "assistant", content: [{ type: "tool-call", toolCallId: "tc_1", toolName: "search", input: {} }] },
  { role: "user", content: "Never mind" },
], { logger: false }).messages;
console.log(JSON.stringify({ openAI: openAI[2], anthropic: anthropic[2], aiSdk: aiSdk[2] }));
`;
    writeFileSync(
      join(openAIApp.dir, "repair.mjs"),
      body(
        'import { repairAnthropicMessages, repairModelMessages, repairOpenAIChatMessages } from "tool-call-resilience/formats";',
      ),
    );
    writeFileSync(
      join(openAIApp.dir, "repair.cjs"),
      body(
        'const { repairAnthropicMessages, repairModelMessages, repairOpenAIChatMessages } = require("tool-call-resilience/formats");',
      ),
    );
    const placeholder = PLACEHOLDER_CATALOG.en.interrupted;
    for (const file of ["repair.mjs", "repair.cjs"]) {
      const ran = await node([file], openAIApp.dir);
      expect(ran.code, ran.stderr).toBe(0);
      const { openAI, anthropic, aiSdk } = JSON.parse(ran.stdout) as Record<string, unknown>;
      expect(openAI).toEqual({ role: "tool", tool_call_id: "call_1", content: placeholder });
      expect(anthropic).toMatchObject({
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "toolu_1", content: placeholder, is_error: true },
        ],
      });
      expect(aiSdk).toMatchObject({
        role: "tool",
        content: [
          {
            type: "tool-result",
            toolCallId: "tc_1",
            toolName: "search",
            output: { type: "error-text", value: placeholder },
          },
        ],
      });
    }
  });

  it("compiles under nodenext with every declaration file checked", async () => {
    writeFileSync(
      join(openAIApp.dir, "check.ts"),
      `import { type FormatRepairResult, repairOpenAIChatMessages, type ToolCallRepairOptions } from "tool-call-resilience/formats";

const options: ToolCallRepairOptions = { logger: false };
export const result: FormatRepairResult<unknown> = repairOpenAIChatMessages([], options);
`,
    );
    const tsc = await typecheck(openAIApp.dir, "check.ts");
    expect(tsc.stdout + tsc.stderr).toBe("");
    expect(tsc.code).toBe(0);
  });

  it("names the missing peer when startTelemetry() is called without @opentelemetry/sdk-node", async () => {
    const ran = await node(
      [
        "--input-type=module",
        "-e",
        `const { startTelemetry } = await import("tool-call-resilience/setup");
await startTelemetry().catch((error) => console.log(error.name, error.message));`,
      ],
      openAIApp.dir,
    );
    expect(ran.code, ran.stderr).toBe(0);
    // Below Node.js 22.15 npm installs sdk-node 0.223, which refuses the API 1.10 an app that
    // names the API has saved: the hint gives the pair that installs there.
    const fallback = nodeAtLeast(22, 15)
      ? ""
      : " (if npm answers ERESOLVE because your package.json names @opentelemetry/api 1.10: npm install @opentelemetry/sdk-node@0.223 @opentelemetry/api@1.9)";
    expect(ran.stdout.trim()).toBe(
      `ToolCallResilienceSetupError startTelemetry() needs the optional peer dependency @opentelemetry/sdk-node; install it: npm install @opentelemetry/sdk-node${fallback}`,
    );
  });

  it("names the missing peer when the main entry is imported without LangChain", async () => {
    const ran = await node(
      ["--input-type=module", "-e", 'await import("tool-call-resilience")'],
      openAIApp.dir,
    );
    expect(ran.code).not.toBe(0);
    expect(ran.stderr).toMatch(/Cannot find (package|module) '@langchain\//);
  });
});

describe("the audit command, in the OpenAI SDK app: no LangChain", () => {
  const bin = "tool-call-resilience";

  it("answers --help and --version", async () => {
    const help = await run("npx", [bin, "--help"], openAIApp.dir);
    expect(help.code, help.stderr).toBe(0);
    expect(help.stdout).toContain("audit");
    const version = await run("npx", [bin, "--version"], openAIApp.dir);
    expect(version.code, version.stderr).toBe(0);
    expect(version.stdout.trim()).toBe(
      (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string }).version,
    );
  });

  it("audits an OpenAI Chat Completions history: a dangling call is reported, exit 1", async () => {
    const thread = {
      thread_id: "support-1",
      messages: [
        { role: "user", content: "Deploy billing, please." },
        {
          role: "assistant",
          content: null,
          tool_calls: [
            {
              id: "call_deploy_1",
              type: "function",
              function: { name: "deploy", arguments: '{"service":"billing"}' },
            },
          ],
        },
        { role: "user", content: "Never mind. What happened?" },
      ],
    };
    writeFileSync(join(openAIApp.dir, "threads.jsonl"), `${JSON.stringify(thread)}\n`);
    const audit = await run("npx", [bin, "audit", "threads.jsonl"], openAIApp.dir);
    expect(audit.code, audit.stderr).toBe(1);
    expect(audit.stdout).toContain('threads.jsonl:1: thread 0 "support-1" (openai): 1 dangling');
  });

  it("stops at a LangChain history with one line naming the package to install, exit 2", async () => {
    const thread = [
      { type: "human", content: "Deploy billing, please." },
      {
        type: "ai",
        content: "",
        tool_calls: [{ id: "call_deploy_1", name: "deploy", args: { service: "billing" } }],
      },
      { type: "human", content: "Never mind. What happened?" },
    ];
    writeFileSync(join(openAIApp.dir, "langchain.jsonl"), `${JSON.stringify(thread)}\n`);
    const audit = await run("npx", [bin, "audit", "langchain.jsonl"], openAIApp.dir);
    expect(audit.code).toBe(2);
    const lines = audit.stderr.split("\n").filter((line) => line.trim() !== "");
    expect(lines, audit.stderr).toHaveLength(1);
    expect(lines[0]).toContain("npm install @langchain/core");
  });
});

describe(`the setup entry's install hint, in an app whose package.json names @opentelemetry/api (Node.js ${process.versions.node})`, () => {
  /** The message `startTelemetry()` throws in the app while it has no SDK. */
  let hint: string;

  beforeAll(async () => {
    const ran = await node(
      [
        "--input-type=module",
        "-e",
        `const { startTelemetry } = await import("tool-call-resilience/setup");
await startTelemetry().catch((error) => console.log(error.message));`,
      ],
      apiNamedApp.dir,
    );
    hint = ran.stdout.trim();
  });

  /** The packages of the `npm install` command that `pattern`'s group finds in the hint. */
  function hinted(pattern: RegExp): string[] {
    const command = pattern.exec(hint)?.[1];
    expect(command, hint).toBeDefined();
    return (command as string).split(/\s+/).slice(2);
  }

  it("starts from the API npm saved as the newest, 1.10 or later", () => {
    const manifest = JSON.parse(readFileSync(join(apiNamedApp.dir, "package.json"), "utf8")) as {
      dependencies: Record<string, string>;
    };
    const [major, minor] = (manifest.dependencies["@opentelemetry/api"] ?? "")
      .replace(/^\^/, "")
      .split(".")
      .map(Number);
    expect(major).toBe(1);
    expect(minor).toBeGreaterThanOrEqual(10);
    expect(hint).toContain("needs the optional peer dependency @opentelemetry/sdk-node");
  });

  it(
    nodeAtLeast(22, 15)
      ? "installs the SDK with the hint's command, then serves the repairs"
      : "cannot install the SDK with the plain command (ERESOLVE), installs it with the hint's fallback, then serves the repairs",
    async () => {
      const plain = await npmInstall(
        apiNamedApp.dir,
        hinted(/install it: (npm install \S+)/),
        false,
      );
      const plainOutput = `${plain.stdout}\n${plain.stderr}`;
      if (nodeAtLeast(22, 15)) {
        expect(hint).not.toContain("ERESOLVE");
        expect(plain.code, plainOutput).toBe(0);
        expect(plainOutput).not.toContain("ERESOLVE");
      } else {
        // What the hint is for: npm picks sdk-node 0.223 here, whose peer range refuses API 1.10.
        expect(plain.code, plainOutput).not.toBe(0);
        expect(plainOutput).toContain("ERESOLVE");
        const fallback = await npmInstall(
          apiNamedApp.dir,
          hinted(/\(if npm answers ERESOLVE[^:]*: (npm install [^)]+)\)/),
          false,
        );
        const fallbackOutput = `${fallback.stdout}\n${fallback.stderr}`;
        expect(fallback.code, fallbackOutput).toBe(0);
        for (const complaint of INSTALL_COMPLAINTS) expect(fallbackOutput).not.toContain(complaint);
      }
      writeFileSync(
        join(apiNamedApp.dir, "telemetry.mjs"),
        `import { startTelemetry } from "tool-call-resilience/setup";
import { repairOpenAIChatMessages } from "tool-call-resilience/formats";

const telemetry = await startTelemetry({ port: Number(process.argv[2]) });
repairOpenAIChatMessages([
  { role: "user", content: "Find flights" },
  { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "search", arguments: "{}" } }] },
  { role: "user", content: "Never mind" },
], { logger: false }, { threadId: "t-1", model: "gpt-test" });
const scraped = await (await fetch(telemetry.metricsUrl)).text();
await telemetry.shutdown();
console.log(JSON.stringify({ scraped }));
`,
      );
      const ran = await node(["telemetry.mjs", String(await freePort())], apiNamedApp.dir);
      expect(ran.code, ran.stderr).toBe(0);
      const { scraped } = JSON.parse(ran.stdout) as { scraped: string };
      expect(parseExposition(scraped).sum("tool_call_resilience_dangling_tool_calls_total")).toBe(
        1,
      );
    },
    2 * INSTALL_TIMEOUT_MS,
  );
});

describe(`tool-call-resilience/setup on the ${SDK_RANGE_END.which} @opentelemetry/sdk-node of its range (${SDK_RANGE_END.sdkNode})`, () => {
  let otlp: OtlpReceiver;

  beforeAll(async () => {
    otlp = await startOtlpReceiver();
  });

  afterAll(async () => {
    await otlp?.close();
  });

  it("serves the repairs for Prometheus with the recommended views, and pushes the same counts and the repair's span over OTLP", async () => {
    writeFileSync(
      join(setupApp.dir, "telemetry.mjs"),
      `import { startTelemetry } from "tool-call-resilience/setup";
import { repairOpenAIChatMessages } from "tool-call-resilience/formats";

const telemetry = await startTelemetry({ prometheus: true, port: 0 + Number(process.argv[2]), serviceName: "setup-app", otlp: { traces: true } });
const thread = [
  { role: "user", content: "Find flights" },
  { role: "assistant", content: null, tool_calls: [
    { id: "call_1", type: "function", function: { name: "search", arguments: "{}" } },
    { id: "call_2", type: "function", function: { name: "search", arguments: "{}" } },
  ] },
  { role: "user", content: "Never mind" },
];
repairOpenAIChatMessages(thread, { logger: false }, { threadId: "t-1", model: "gpt-test" });
const scraped = await (await fetch(telemetry.metricsUrl)).text();
await telemetry.shutdown();
console.log(JSON.stringify({ scraped }));
`,
    );
    const port = await freePort();
    const ran = await node(["telemetry.mjs", String(port)], setupApp.dir, {
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
    });
    expect(ran.code, ran.stderr).toBe(0);
    const { scraped } = JSON.parse(ran.stdout) as { scraped: string };
    const exposition = parseExposition(scraped);
    expect(exposition.sum("tool_call_resilience_dangling_tool_calls_total")).toBe(2);
    expect(exposition.sum("tool_call_resilience_model_calls_total")).toBe(1);
    // The per-thread gauge, from the producer startTelemetry gives this SDK's readers.
    expect(
      exposition
        .find("tool_call_resilience_thread_recent_dangling_tool_calls")
        .map((sample) => [sample.labels.gen_ai_conversation_id, sample.value]),
    ).toEqual([["t-1", 2]]);
    // The recommended views: the duration histogram has the library's buckets.
    expect(
      exposition
        .find("tool_call_resilience_repair_duration_bucket")
        .map((sample) => sample.labels.le),
    ).toEqual([...REPAIR_DURATION_BUCKETS.map(String), "+Inf"]);

    expect(otlp.refused).toEqual([]);
    const points = latestPoints(otlp.requests).filter(
      (point) => point.scope.name === "tool-call-resilience",
    );
    const total = (metric: string) =>
      points
        .filter((point) => point.metric === metric)
        .reduce((sum, point) => sum + (point.kind === "histogram" ? point.count : point.value), 0);
    expect(total("tool_call_resilience.dangling_tool_calls")).toBe(2);
    expect(total("tool_call_resilience.model_calls")).toBe(1);
    expect(total("tool_call_resilience.thread.recent_dangling_tool_calls")).toBe(2);
    expect(points[0]?.resource["service.name"]).toBe("setup-app");
    expect(points[0]?.resource["service.instance.id"]).toEqual(expect.any(String));
    // The span, through the batch span processor of the trace SDK this sdk-node depends on.
    const spans = otlp.requests.flatMap((request) => request.spans);
    expect(spans.map((span) => span.name)).toEqual(["repair_tool_calls"]);
    expect(spans[0]?.resource["service.name"]).toBe("setup-app");
  });

  it("compiles under nodenext with every declaration file checked, against this SDK's types", async () => {
    writeFileSync(
      join(setupApp.dir, "check.ts"),
      `import { NodeSDK } from "@opentelemetry/sdk-node";
import {
  type MetricProducer,
  type MetricView,
  recommendedViews,
  type ServedTelemetryHandle,
  startTelemetry,
  type TelemetryHandle,
  threadMetricsProducer,
} from "tool-call-resilience/setup";

export const served: Promise<ServedTelemetryHandle> = startTelemetry({ port: 9464 });
export const pushed: Promise<TelemetryHandle> = startTelemetry({
  otlp: { endpoint: "http://collector:4318", traces: true, headers: { "x-api-key": "k" } },
});
const views: MetricView[] = recommendedViews({ cardinalityLimit: 500 });
export const producer: MetricProducer = threadMetricsProducer();
export const sdk = new NodeSDK({ views });

export async function pushedUrl(): Promise<string> {
  const handle = await startTelemetry({ otlp: true });
  // @ts-expect-error Pushing over OTLP alone, there may be no endpoint: metricsUrl is string | undefined.
  return handle.metricsUrl;
}
`,
    );
    // The package uses the app's zod, the lowest it admits.
    expect(
      existsSync(join(setupApp.dir, "node_modules/tool-call-resilience/node_modules/zod")),
    ).toBe(false);
    const tsc = await typecheck(setupApp.dir, "check.ts");
    expect(tsc.stdout + tsc.stderr).toBe("");
    expect(tsc.code).toBe(0);
  });
});

describe("tool-call-resilience/ai-sdk and /openai-agents, in apps on those stacks alone", () => {
  let server: StrictProviderServer;

  beforeAll(async () => {
    server = await startStrictProviderServer();
  });

  afterAll(async () => {
    await server?.close();
  });

  it("install no LangChain", () => {
    for (const app of [aiSdkApp, agentsApp]) {
      for (const name of ["@langchain/core", "langchain", "@langchain/langgraph"]) {
        expect(existsSync(join(app.dir, "node_modules", name)), name).toBe(false);
      }
    }
  });

  it("AI SDK: generateText through the middleware sends a history the provider accepts", async () => {
    // A tool result whose call is gone (trimmed away): the AI SDK's own checks let it through,
    // and OpenAI refuses it.
    writeFileSync(
      join(aiSdkApp.dir, "generate.mjs"),
      `import { createOpenAI } from "@ai-sdk/openai";
import { generateText, wrapLanguageModel } from "ai";
import { toolCallRepairMiddleware } from "tool-call-resilience/ai-sdk";

const openai = createOpenAI({ baseURL: process.env.OPENAI_BASE_URL, apiKey: "test" });
const messages = [
  { role: "user", content: "Find flights to Lisbon." },
  { role: "tool", content: [{ type: "tool-result", toolCallId: "call_gone", toolName: "search", output: { type: "text", value: "3 flights" } }] },
  { role: "user", content: "Thanks. Any trains?" },
];
async function attempt(model) {
  try {
    return (await generateText({ model, messages, maxRetries: 0 })).text;
  } catch (error) {
    return \`\${error.name} \${error.statusCode}\`;
  }
}
const middleware = toolCallRepairMiddleware({ logger: false });
console.log(JSON.stringify({
  bare: await attempt(openai.chat("gpt-4.1")),
  repaired: await attempt(wrapLanguageModel({ model: openai.chat("gpt-4.1"), middleware })),
}));
`,
    );
    const ran = await node(["generate.mjs"], aiSdkApp.dir, {
      OPENAI_BASE_URL: server.openAIBaseURL,
    });
    expect(ran.code, ran.stderr).toBe(0);
    expect(JSON.parse(ran.stdout)).toEqual({
      bare: "AI_APICallError 400",
      repaired: COMPLETION_TEXT,
    });
  });

  it("AI SDK: the middleware is a LanguageModelMiddleware under nodenext, every declaration checked", async () => {
    writeFileSync(
      join(aiSdkApp.dir, "check.ts"),
      `import type { LanguageModelMiddleware } from "ai";
import { toolCallRepairMiddleware } from "tool-call-resilience/ai-sdk";

export const middleware: LanguageModelMiddleware = toolCallRepairMiddleware({ logger: false });
`,
    );
    expect(ownTypeErrors(await typecheck(aiSdkApp.dir, "check.ts"))).toEqual([]);
  });

  it("OpenAI Agents SDK: a Runner with the filter answers a history the provider refuses without it", async () => {
    // A run whose \`deploy\` call never got a result (the process stopped mid-tool), continued
    // with new input through the SDK's own OpenAI provider.
    writeFileSync(
      join(agentsApp.dir, "run.mjs"),
      `import { Agent, OpenAIProvider, Runner, setTracingDisabled } from "@openai/agents";
import { toolCallRepairInputFilter } from "tool-call-resilience/openai-agents";

setTracingDisabled(true);
const agent = new Agent({ name: "Support", model: "gpt-4.1", instructions: "Help the user." });
const modelProvider = new OpenAIProvider({ apiKey: "test", baseURL: process.env.OPENAI_BASE_URL });
const history = [
  { role: "user", content: "Deploy billing, please." },
  { type: "function_call", callId: "call_deploy_1", name: "deploy", arguments: "{}", status: "completed" },
  { role: "user", content: "Never mind. What happened?" },
];
async function attempt(config) {
  try {
    return (await new Runner({ modelProvider, ...config }).run(agent, history)).finalOutput;
  } catch (error) {
    return \`\${error.constructor.name} \${error.status ?? error.cause?.status ?? ""}\`.trim();
  }
}
console.log(JSON.stringify({
  bare: await attempt({}),
  repaired: await attempt({ callModelInputFilter: toolCallRepairInputFilter({ logger: false }) }),
}));
`,
    );
    const ran = await node(["run.mjs"], agentsApp.dir, {
      OPENAI_API_KEY: "test",
      OPENAI_BASE_URL: server.openAIBaseURL,
    });
    expect(ran.code, ran.stderr).toBe(0);
    const { bare, repaired } = JSON.parse(ran.stdout) as { bare: string; repaired: string };
    expect(bare).toMatch(/400/);
    expect(repaired).toBe(COMPLETION_TEXT);
  });

  it("OpenAI Agents SDK: the filter is a RunConfig callModelInputFilter under nodenext", async () => {
    writeFileSync(
      join(agentsApp.dir, "check.ts"),
      `import type { RunConfig } from "@openai/agents";
import { toolCallRepairInputFilter } from "tool-call-resilience/openai-agents";

export const filter: RunConfig["callModelInputFilter"] = toolCallRepairInputFilter({ logger: false });
`,
    );
    expect(ownTypeErrors(await typecheck(agentsApp.dir, "check.ts"))).toEqual([]);
  });
});
