/** Every runnable example runs as a user would run it, and prints what its comments promise. */
import { describe, expect, it } from "vitest";
import { PLACEHOLDER_CATALOG } from "../src/core/locales.js";
import { runExample } from "./helpers/examples.js";
import { freePort } from "./helpers/prometheus.js";

/** The warning the examples' loggers print, as the library writes it: prefixed once. */
const WARNING =
  "[tool-call-resilience] Injecting 1 placeholder ToolMessage(s) for dangling tool calls";

describe("examples", () => {
  it("basic.ts shows the interrupted call answered by a placeholder before the next model call", async () => {
    const output = await runExample("basic.ts");
    const received = output.slice(output.indexOf("What the model received"));
    expect(received).toMatch(
      /ai\s+calls deploy\(call_deploy_1\)\n\s+tool\s+answers call_deploy_1: \[Tool call was interrupted and did not return a result\.\]\n\s+ai\s+\[No reply was written to the tool results above\.\]\n\s+human\s+Never mind/,
    );
    expect(output).toContain(WARNING);
    expect(output).not.toContain("[tool-call-resilience] [tool-call-resilience]");
    expect(output).toContain("The model answered: The deploy never finished");
  });

  it("custom-template.ts renders a template, a per-reason map and a function", async () => {
    const output = await runExample("custom-template.ts");
    expect(output).toContain("call_weather: [get_weather did not answer (call call_weather)");
    expect(output).toContain(
      "call_time: [get_time was not run: its arguments were cut off. Ask again.]",
    );
    expect(output).toContain(`${PLACEHOLDER_CATALOG.fr.interrupted} (outil : get_weather)`);
  });

  it("localized.ts answers each user in their own language, and in English when unknown", async () => {
    const output = await runExample("localized.ts");
    expect(output).toContain(PLACEHOLDER_CATALOG.ja.interrupted);
    expect(output).toContain(PLACEHOLDER_CATALOG["zh-TW"].interrupted);
    expect(output).toContain(PLACEHOLDER_CATALOG["pt-BR"].interrupted);
    expect(output).toMatch(/sw-KE\s+\[Tool call was interrupted and did not return a result\.\]/);
  });

  it("telemetry.ts serves the dangling calls to Prometheus, each counted once", async () => {
    const output = await runExample("telemetry.ts", { METRICS_PORT: String(await freePort()) });
    expect(output).toMatch(
      /tool_call_resilience_dangling_tool_calls_total\{[^}]*gen_ai_tool_name="deploy"[^}]*\} 2\n/,
    );
    expect(output).toMatch(/tool_call_resilience_repairs_total\{[^}]*placeholder_inserted"\} 4\n/);
    // Each of those repairs also writes a reply before the user's message (a fake model: any wire).
    expect(output).toMatch(/tool_call_resilience_repairs_total\{[^}]*turn_inserted"\} 4\n/);
    expect(output).toMatch(/gen_ai_conversation_id="thread-a"[^}]*\} 1\n/);
    expect(output).toContain("Dangling rate: 2 of 3 tool calls left without a result.");
  });

  for (const name of ["state-graph.ts", "react-agent.ts"]) {
    it(`${name} answers the dangling call in the model's input, with no middleware`, async () => {
      const output = await runExample(name);
      const received = output.slice(output.indexOf("What the model received"));
      expect(received).toMatch(
        /ai\s+calls deploy\(call_deploy_1\)\n\s+tool\s+answers call_deploy_1: \[Tool call was interrupted and did not return a result\.\]\n\s+ai\s+\[No reply was written to the tool results above\.\]\n\s+human\s+Never mind/,
      );
      expect(output).toContain(WARNING);
      expect(output).not.toContain("[tool-call-resilience] [tool-call-resilience]");
      expect(output).toContain("The model answered: The deploy never finished");
    });
  }

  it("native-formats.ts repairs each format, and the AI SDK answers only once repaired", async () => {
    const output = await runExample("native-formats.ts");
    expect(output).toContain(
      '{"role":"tool","tool_call_id":"call_1","content":"[Tool call was interrupted and did not return a result.]"}',
    );
    expect(output).toMatch(/"tool_use_id":"toolu_1".*"tool_use_id":"toolu_2".*"And tomorrow\?"/);
    expect(output).toContain("AI SDK, as it was: AI_MissingToolResultsError");
    expect(output).toContain('AI SDK, repaired: the model answered "The booking was interrupted');
  });
});
