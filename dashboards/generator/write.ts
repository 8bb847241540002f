/**
 * Writes the generated monitoring bundle into `dashboards/`: `npm run dashboards`.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { renderBundle } from "./bundle.js";

const root = fileURLToPath(new URL("..", import.meta.url));
for (const [path, text] of renderBundle()) {
  const target = join(root, path);
  mkdirSync(dirname(target), { recursive: true });
  writeFileSync(target, text);
  console.log(`wrote dashboards/${path}`);
}
