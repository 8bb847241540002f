/**
 * Scraping the Prometheus endpoint of `startTelemetry` in tests: a free port on 127.0.0.1, and the
 * demo's parser for the text exposition format, which finds samples by name and labels.
 */
import { createServer } from "node:net";

export { type Exposition, parseExposition, type Sample, scrape } from "../../demo/exposition.js";

export { freePort } from "../../demo/local-server.js";

/** Whether something on 127.0.0.1 accepts connections on this port. */
export function isListening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(true));
    server.listen({ host: "127.0.0.1", port }, () => server.close(() => resolve(false)));
  });
}
