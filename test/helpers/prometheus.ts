/**
 * Scraping the Prometheus endpoint of `startTelemetry` in tests: a free port on 127.0.0.1, and the
 * demo's parser for the text exposition format, which finds samples by name and labels.
 */
import { createServer } from "node:net";

export { type Exposition, parseExposition, type Sample, scrape } from "../../demo/exposition.js";

/** A TCP port on 127.0.0.1 that was free a moment ago. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen({ host: "127.0.0.1", port: 0 }, () => {
      const address = server.address();
      server.close(() => {
        if (address !== null && typeof address === "object") resolve(address.port);
        else reject(new Error("no port was assigned"));
      });
    });
  });
}
