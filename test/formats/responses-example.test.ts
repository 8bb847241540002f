/** examples/responses-input.ts, run as a user would: refused as it was, answered once repaired. */
import { describe, expect, it } from "vitest";
import { runExample } from "../helpers/examples.js";

describe("examples/responses-input.ts", () => {
  it("is refused with the API's 400, then answered once repaired, each call with its output type", async () => {
    const output = await runExample("responses-input.ts");
    expect(output).toContain("As it was: 400 No tool output found for function call call_opo.");
    expect(output).toContain('Repaired: the model answered "Lisbon is sunny');
    expect(output).toContain("placeholder_inserted for get_weather (call_opo), at 5:");
    expect(output).toContain(
      '{"type":"function_call_output","call_id":"call_opo","output":"[Tool call was interrupted',
    );
    expect(output).toContain("placeholder_inserted for computer_use (call_click), at 6:");
    expect(output).toContain(
      '{"type":"computer_call_output","call_id":"call_click","output":{"type":"computer_screenshot"',
    );
  });
});
