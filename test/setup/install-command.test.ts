/**
 * The command the setup entry point names when `@opentelemetry/sdk-node` is missing works on the
 * Node.js that reads it: below 22.15 npm installs sdk-node 0.223, whose peer range stops short of
 * the `@opentelemetry/api` 1.10 an app that names the API has saved.
 */
import { describe, expect, it } from "vitest";
import { sdkInstallCommand } from "../../src/setup/sdk.js";

describe("the command that installs @opentelemetry/sdk-node", () => {
  it.each(["20.19.0", "22.12.0", "22.14.0"])(
    "names the SDK and, on Node.js %s, the pair that installs where the app names API 1.10",
    (node) => {
      const command = sdkInstallCommand(node);
      expect(command).toMatch(/^npm install @opentelemetry\/sdk-node /);
      expect(command).toContain("npm install @opentelemetry/sdk-node@0.223 @opentelemetry/api@1.9");
    },
  );

  it.each(["22.15.0", "24.22.3"])(
    "on Node.js %s, where the newest SDK runs, is the plain install",
    (node) => {
      expect(sdkInstallCommand(node)).toBe("npm install @opentelemetry/sdk-node");
    },
  );
});
