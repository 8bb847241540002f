/** examples/openai-agents.ts, run as a user would: refused without the filter, answered with it. */
import { describe, expect, it } from "vitest";
import { runExample } from "../helpers/examples.js";

describe("examples/openai-agents.ts", () => {
  it("is refused without the filter, and answered with it over a placeholder result", async () => {
    const output = await runExample("openai-agents.ts");
    expect(output).toContain("Pending approvals: 1");
    expect(output).toContain(
      "Without the filter: refused: 400 No tool output found for function call call_1.",
    );
    expect(output).toContain("With the filter: answered: The refund never went through.");
    expect(output).toContain(
      '{"type":"function_call_result","callId":"call_1","name":"refund","status":"completed","output":"[Tool call was interrupted and did not return a result.]"}',
    );
  });
});
