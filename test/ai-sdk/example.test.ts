/** examples/ai-sdk-middleware.ts runs as a user would run it, and prints what its comments promise. */
import { describe, expect, it } from "vitest";
import { runExample } from "../helpers/examples.js";

describe("examples/ai-sdk-middleware.ts", () => {
  it("gets an answer where the model refused the orphan result, and repairs the history generateText refuses", async () => {
    const output = await runExample("ai-sdk-middleware.ts");
    expect(output).toContain(
      "Without the middleware: 400 Bad Request: No tool call found for function call output with call_id call_weather.",
    );
    expect(output).toContain(
      "[tool-call-resilience] Repaired tool-call history: dropped 1 orphan tool result(s)",
    );
    expect(output).toContain("With the middleware, the model answered: Lisbon is sunny today.");
    expect(output).not.toMatch(/What the model received:\n {2}tool:.*call_weather/);
    expect(output).toContain(
      "The AI SDK's own check, before any middleware: AI_MissingToolResultsError",
    );
    expect(output).toContain("Repaired with repairMessages, the model answered:");
    expect(output).toMatch(
      /assistant: .*"toolCallId":"call_1".*\n {2}tool: .*"toolCallId":"call_1".*"type":"error-text","value":"\[Tool call was interrupted and did not return a result\.\]"/,
    );
  });
});
