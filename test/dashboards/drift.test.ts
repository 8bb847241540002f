import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it, vi } from "vitest";
import { renderBundle } from "../../dashboards/generator/bundle.js";

const root = fileURLToPath(new URL("../../dashboards/", import.meta.url));
const generatorDirectory = join(root, "generator");
const REGENERATE = "run `npm run dashboards` and commit the result";

/** Written by hand, next to the generated rules it tests. */
const HAND_WRITTEN = /^prometheus\/[\w-]+\.test\.yml$/;

/** The JSON and YAML files under the directories the generator writes to. */
function generatedFileCandidates(): string[] {
  const found: string[] = [];
  for (const directory of ["grafana", "prometheus"]) {
    const absolute = join(root, directory);
    if (!existsSync(absolute)) continue;
    for (const entry of readdirSync(absolute, { recursive: true, encoding: "utf8" })) {
      const path = relative(root, join(absolute, entry)).split("\\").join("/");
      if (/\.(json|ya?ml)$/.test(path) && !HAND_WRITTEN.test(path)) found.push(path);
    }
  }
  return found.sort();
}

describe("the committed monitoring bundle", () => {
  const bundle = renderBundle();

  it.each([...bundle.keys()])("dashboards/%s matches its generator", (path) => {
    const target = join(root, path);
    expect(existsSync(target), `dashboards/${path} is missing: ${REGENERATE}`).toBe(true);
    expect(
      readFileSync(target, "utf8"),
      `dashboards/${path} differs from its generator: ${REGENERATE}`,
    ).toBe(bundle.get(path));
  });

  it("holds no generated file the generator no longer writes", () => {
    const stale = generatedFileCandidates().filter((path) => !bundle.has(path));
    expect(stale, `delete them, then ${REGENERATE}`).toEqual([]);
  });
});

describe("the generator", () => {
  afterEach(() => {
    vi.unstubAllEnvs();
    vi.resetModules();
  });

  it("reads nothing from the environment", () => {
    for (const file of readdirSync(generatorDirectory).filter((name) => name.endsWith(".ts"))) {
      const source = readFileSync(join(generatorDirectory, file), "utf8");
      expect(source, `dashboards/generator/${file}`).not.toMatch(
        /process\.(env|argv)|import\.meta\.env/,
      );
    }
  });

  it("writes the committed files whatever the environment says", async () => {
    // RUNBOOK_BASE_URL once changed every runbook_url; it must not anymore.
    vi.stubEnv("RUNBOOK_BASE_URL", "https://example.com/runbook.md");
    vi.stubEnv("PROMETHEUS_DATASOURCE_UID", "from-the-environment");
    vi.resetModules();
    const { renderBundle: renderAgain } = await import("../../dashboards/generator/bundle.js");
    for (const [path, text] of renderAgain()) {
      expect(text, `dashboards/${path}`).toBe(readFileSync(join(root, path), "utf8"));
    }
  });
});
