/**
 * The native-format adapters take the history itself: a request's parameters given in its place
 * (`{ model, messages }`, `{ model, input }`) are refused at once, saying what to pass, where they
 * would otherwise come back unrepaired, without a word, on every call.
 */
import { describe, expect, it } from "vitest";
import { repairInFormat } from "../../src/formats/format.js";
import {
  isOptionsError,
  repairAnthropicMessages,
  repairModelMessages,
  repairOpenAIChatMessages,
  repairResponsesInput,
} from "../../src/formats/index.js";
import { openAIChatFormat } from "../../src/formats/openai-chat.js";

const quiet = { logger: false } as const;

/** The message of the error `repair` throws, which must be the library's options error. */
function refusal(repair: () => unknown): string {
  try {
    repair();
  } catch (error) {
    expect(isOptionsError(error)).toBe(true);
    return (error as Error).message;
  }
  throw new Error("expected the adapter to throw");
}

describe("a request's parameters given in place of the history", () => {
  const params = {
    model: "gpt-4.1",
    messages: [
      { role: "user", content: "Weather?" },
      {
        role: "assistant",
        content: null,
        tool_calls: [
          { id: "call_1", type: "function", function: { name: "search", arguments: "{}" } },
        ],
      },
    ],
  };

  it.each([
    [
      "repairOpenAIChatMessages",
      "openai-chat",
      () => repairOpenAIChatMessages(params as never, quiet),
    ],
    ["repairAnthropicMessages", "anthropic", () => repairAnthropicMessages(params as never, quiet)],
    ["repairModelMessages", "ai-sdk", () => repairModelMessages(params as never, quiet)],
    [
      "repairInFormat",
      "openai-chat",
      () => repairInFormat(openAIChatFormat, params as never, quiet),
    ],
  ])("%s refuses them, saying to pass the message array", (_name, format, repair) => {
    expect(refusal(repair)).toBe(
      `Invalid ${format} arguments:\n- expected the message array (params.messages), got an object with a messages field`,
    );
  });

  it("repairResponsesInput refuses them, saying to pass the input items", () => {
    const request = { model: "gpt-5", input: [{ role: "user", content: "Weather?" }] };
    expect(refusal(() => repairResponsesInput(request as never, quiet))).toBe(
      "Invalid openai-responses arguments:\n- expected the input item array (params.input), got an object with an input field",
    );
  });

  it("still passes on, unchanged, an input that holds no history: a Responses input given as text", () => {
    expect(repairResponsesInput("Weather?" as never, quiet).messages).toBe("Weather?");
    const messages = params.messages;
    expect(repairOpenAIChatMessages(messages, quiet).repairs).toHaveLength(1);
  });
});
