/**
 * A call the provider runs itself that asks for approval (OpenAI's MCP tools), through the AI
 * SDK's own approval flow: the model asks, the user denies, and `generateText` answers the call
 * with an `execution-denied` result in a tool message of the next prompt. That result answers a
 * call of the provider, so the middleware leaves it where it is, as it leaves the call.
 */
import { generateText, type ModelMessage } from "ai";
import { describe, expect, it, vi } from "vitest";
import {
  ATTR_OUTCOME,
  METRIC_MODEL_CALLS,
  METRIC_REPAIRS,
  METRIC_TOOL_CALLS,
} from "../../src/telemetry/semconv.js";
import { answer, type GenerateResult, instrumented, type PromptMessage } from "./prompts.js";

/** What `@ai-sdk/openai` reports for an MCP call that needs approval (`mcp_approval_request`). */
const approvalAsked = (): GenerateResult =>
  answer(
    {
      type: "tool-call",
      toolCallId: "mcp_1",
      toolName: "mcp.create_issue",
      input: '{"title":"Flaky test"}',
      providerExecuted: true,
      dynamic: true,
    },
    { type: "tool-approval-request", approvalId: "mcpr_1", toolCallId: "mcp_1" },
  );

/** The prompt's parts of a tool message, wherever they stand. */
const toolParts = (prompt: readonly PromptMessage[]) =>
  prompt.flatMap((message) => (message.role === "tool" ? message.content : []));

describe("a denied approval of a call the provider runs", () => {
  it("reaches the model as the AI SDK wrote it: an execution-denied result, no repair", async () => {
    const warn = vi.fn();
    const { metrics, model, inner, scripted } = instrumented({ logger: { warn } });
    scripted.next = approvalAsked;
    const asked = await generateText({ model, prompt: "File an issue about the flaky test." });
    expect(asked.content.map((part) => part.type)).toEqual(["tool-call", "tool-approval-request"]);

    scripted.next = () => answer({ type: "text", text: "I did not file it." });
    const messages: ModelMessage[] = [
      { role: "user", content: "File an issue about the flaky test." },
      ...asked.response.messages,
      {
        role: "tool",
        content: [
          {
            type: "tool-approval-response",
            approvalId: "mcpr_1",
            approved: false,
            reason: "Not now.",
            providerExecuted: true,
          },
        ],
      },
    ];
    await generateText({ model, messages });

    const sent = inner.doGenerateCalls[1]?.prompt ?? [];
    expect(toolParts(sent)).toEqual([
      expect.objectContaining({ type: "tool-approval-response", approvalId: "mcpr_1" }),
      expect.objectContaining({
        type: "tool-result",
        toolCallId: "mcp_1",
        output: expect.objectContaining({ type: "execution-denied", reason: "Not now." }),
      }),
    ]);
    expect(warn).not.toHaveBeenCalled();
    expect(await metrics.sum(METRIC_MODEL_CALLS, { [ATTR_OUTCOME]: "clean" })).toBe(2);
    expect(await metrics.points(METRIC_REPAIRS)).toEqual([]);
    // The provider's own call is not one the client runs.
    expect(await metrics.points(METRIC_TOOL_CALLS)).toEqual([]);
  });
});
