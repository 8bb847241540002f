/**
 * The OpenAI Responses API adapter: `repairResponsesInput` over the `input` items of a request,
 * held to the API's rules (`responsesViolations`), with the same guarantees as the other native
 * adapters: the same objects for what needed nothing, the input array itself for a clean input, no
 * mutation, options validated once, the telemetry of the middleware, and failing open.
 */
import type { ResponseInputItem } from "openai/resources/responses/responses";
import { describe, expect, expectTypeOf, it, vi } from "vitest";
import { BLANK_SCREENSHOT } from "../../src/core/placeholder-message.js";
import { COMPUTER_TOOL_NAME } from "../../src/core/wire-targets.js";
import { repairInFormat } from "../../src/formats/format.js";
import { openAIResponsesFormat } from "../../src/formats/openai-responses.js";
import { repairResponsesInput, ToolCallResilienceOptionsError } from "../../src/index.js";
import {
  METRIC_DANGLING_TOOL_CALLS,
  METRIC_MODEL_CALLS,
  METRIC_REPAIRS,
  METRIC_THREAD_RECENT_DANGLING_TOOL_CALLS,
} from "../../src/telemetry/semconv.js";
import { responsesViolations } from "../helpers/provider-rules.js";
import { metricsHarness } from "../helpers/telemetry.js";

const quiet = { logger: false } as const;
const INTERRUPTED = "[Tool call was interrupted and did not return a result.]";

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object") {
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
    Object.freeze(value);
  }
  return value;
}

const user = (text: string) => ({ role: "user", content: text });
const functionCall = (callId: string | undefined, name = "search", args = "{}") => ({
  type: "function_call",
  id: `fc_${callId ?? "none"}`,
  call_id: callId,
  name,
  arguments: args,
});
const functionOutput = (callId: string, output = `result of ${callId}`) => ({
  type: "function_call_output",
  call_id: callId,
  output,
});
const customCall = (callId: string) => ({
  type: "custom_tool_call",
  id: `ctc_${callId}`,
  call_id: callId,
  name: "run_sql",
  input: "select 1",
});
const computerCall = (callId: string) => ({
  type: "computer_call",
  id: `cu_${callId}`,
  call_id: callId,
  action: { type: "click", button: "left", x: 10, y: 20 },
  pending_safety_checks: [],
  status: "completed",
});
const localShellCall = (callId: string) => ({
  type: "local_shell_call",
  id: `lsh_${callId}`,
  call_id: callId,
  action: { type: "exec", command: ["ls"], env: {} },
  status: "completed",
});
const shellCall = (callId: string) => ({
  type: "shell_call",
  id: `sh_${callId}`,
  call_id: callId,
  action: { commands: ["ls"] },
});
const applyPatchCall = (callId: string) => ({
  type: "apply_patch_call",
  id: `apc_${callId}`,
  call_id: callId,
  operation: { type: "delete_file", path: "old.txt" },
  status: "completed",
});
const toolSearchCall = (callId: string, execution: "client" | "server") => ({
  type: "tool_search_call",
  id: `ts_${callId}`,
  call_id: callId,
  execution,
  arguments: { query: "calendar" },
});
const hostedShellCall = (callId: string) => ({
  ...shellCall(callId),
  environment: { type: "container_reference", container_id: "cntr_1" },
});
const shellOutput = (callId: string) => ({
  type: "shell_call_output",
  call_id: callId,
  output: [{ stdout: "a.txt", stderr: "", outcome: { type: "exit", exit_code: 0 } }],
});
const reasoning = (id: string) => ({ type: "reasoning", id, summary: [] });

describe("the Responses API's rules the repair is held to", () => {
  it("refuse a call of each kind the application runs without its output, in the API's words", () => {
    const calls = [
      functionCall("c1"),
      customCall("c2"),
      computerCall("c3"),
      localShellCall("c4"),
      shellCall("c5"),
      applyPatchCall("c6"),
      toolSearchCall("c7", "client"),
      toolSearchCall("c8", "server"),
      hostedShellCall("c9"),
    ];
    expect(responsesViolations(calls).map((violation) => violation.message)).toEqual([
      "No tool output found for function call c1.",
      "No tool output found for custom tool call c2.",
      "No tool output found for computer call c3.",
      "No tool output found for local shell call c4.",
      "No tool output found for shell call c5.",
      "No tool output found for apply patch call c6.",
      "No tool output found for tool search call c7.",
    ]);
  });

  it("refuse an output of the wrong shape for its type, and one for a call of another type", () => {
    expect(
      responsesViolations([
        localShellCall("c4"),
        { type: "local_shell_call_output", call_id: "c4", output: { stdout: "x" } },
        shellCall("c5"),
        { type: "shell_call_output", call_id: "c5", output: "x" },
        applyPatchCall("c6"),
        { type: "apply_patch_call_output", call_id: "c6", status: "done" },
        toolSearchCall("c7", "client"),
        { type: "tool_search_output", call_id: "c7", execution: "client", tools: "none" },
        shellCall("c9"),
        functionOutput("c9"),
      ]).map((violation) => violation.message),
    ).toEqual([
      "Invalid type for 'input[1].output': expected a string, but got an object instead.",
      "Invalid 'input[3].output': expected an array of shell output chunks (stdout, stderr and an outcome).",
      "Invalid value: 'done'. Supported values are: 'completed' and 'failed'.",
      "Invalid type for 'input[7].tools': expected an array, but got a string instead.",
      "No tool call found for function call output with call_id c9.",
      "No tool output found for shell call c9.",
    ]);
  });
});

describe("the Responses API's rules: a tool search output answers its call, whatever it says of itself", () => {
  it("pairs an output without `execution` with the client tool search of its call_id, once", () => {
    const bare = { type: "tool_search_output", call_id: "c7", status: "completed", tools: [] };
    expect(responsesViolations([toolSearchCall("c7", "client"), bare])).toEqual([]);
    expect(
      responsesViolations([toolSearchCall("c7", "client"), bare, bare]).map((v) => v.message),
    ).toEqual(["Duplicate tool search call output for call_id c7 in 'input[2]'."]);
    // With no client tool search of its call_id, it is the API's own.
    expect(
      responsesViolations([toolSearchCall("c8", "server"), { ...bare, call_id: "c8" }]),
    ).toEqual([]);
  });
});

describe("repairResponsesInput: calls without an output", () => {
  it("answers each kind of call the application runs with the output item its type needs", () => {
    const input = deepFreeze([
      user("Tidy up the repository"),
      functionCall("c_fn"),
      user("next"),
      customCall("c_custom"),
      user("next"),
      computerCall("c_computer"),
      user("next"),
      localShellCall("c_local"),
      user("next"),
      shellCall("c_shell"),
      user("next"),
      applyPatchCall("c_patch"),
      user("next"),
      toolSearchCall("c_search", "client"),
      user("done?"),
    ]);
    expect(responsesViolations(input)).toHaveLength(7);
    const { messages, repairs } = repairResponsesInput(input, quiet);
    expect(responsesViolations(messages)).toEqual([]);
    // Each placeholder stands right after its call, before the user's next message.
    expect(messages.filter((_item, index) => index % 3 === 2)).toEqual([
      { type: "function_call_output", call_id: "c_fn", output: INTERRUPTED },
      { type: "custom_tool_call_output", call_id: "c_custom", output: INTERRUPTED },
      {
        type: "computer_call_output",
        call_id: "c_computer",
        output: { type: "computer_screenshot", image_url: BLANK_SCREENSHOT },
      },
      { type: "local_shell_call_output", id: "c_local", call_id: "c_local", output: INTERRUPTED },
      {
        type: "shell_call_output",
        call_id: "c_shell",
        output: [{ stdout: "", stderr: INTERRUPTED, outcome: { type: "exit", exit_code: 1 } }],
      },
      {
        type: "apply_patch_call_output",
        call_id: "c_patch",
        status: "failed",
        output: INTERRUPTED,
      },
      {
        type: "tool_search_output",
        call_id: "c_search",
        execution: "client",
        status: "completed",
        tools: [],
      },
    ]);
    expect(repairs.map((repair) => [repair.kind, repair.toolName, repair.callIndex])).toEqual([
      ["placeholder_inserted", "search", 1],
      ["placeholder_inserted", "run_sql", 3],
      ["placeholder_inserted", "computer_use", 5],
      ["placeholder_inserted", "local_shell", 7],
      ["placeholder_inserted", "shell", 9],
      ["placeholder_inserted", "apply_patch", 11],
      ["placeholder_inserted", "tool_search", 13],
    ]);
    expect(repairs.map((repair) => repair.outputIndex)).toEqual([2, 5, 8, 11, 14, 17, 20]);
  });

  it("answers the missing calls of a turn of parallel calls after the outputs it has", () => {
    const input = deepFreeze([
      user("Weather in Lisbon and Porto?"),
      reasoning("rs_1"),
      functionCall("c_lis", "weather"),
      functionCall("c_opo", "weather"),
      functionOutput("c_opo"),
      user("And tomorrow?"),
    ]);
    const { messages, repairs } = repairResponsesInput(input, quiet);
    expect(responsesViolations(messages)).toEqual([]);
    expect(messages).toEqual([
      input[0],
      input[1],
      input[2],
      input[3],
      { type: "function_call_output", call_id: "c_lis", output: INTERRUPTED },
      input[4],
      input[5],
    ]);
    for (const index of [0, 1, 2, 3]) expect(messages[index]).toBe(input[index]);
    expect(messages[5]).toBe(input[4]);
    expect(repairs).toEqual([
      expect.objectContaining({ toolCallId: "c_lis", callIndex: 2, outputIndex: 4 }),
    ]);
  });

  it("points at the call item itself, second in its turn, with reasoning between the calls", () => {
    const input = [
      functionCall("a"),
      reasoning("rs_2"),
      customCall("b"),
      functionOutput("a"),
      user("go on"),
    ];
    const { messages, repairs } = repairResponsesInput(input, quiet);
    expect(responsesViolations(messages)).toEqual([]);
    expect(repairs).toEqual([
      expect.objectContaining({
        toolCallId: "b",
        toolName: "run_sql",
        callIndex: 2,
        outputIndex: 4,
      }),
    ]);
    expect(messages[4]).toEqual({
      type: "custom_tool_call_output",
      call_id: "b",
      output: INTERRUPTED,
    });
  });

  it("tells a function call whose arguments were cut off from one that was interrupted", () => {
    const { messages, repairs } = repairResponsesInput(
      [functionCall("a", "search", '{"q": "x')],
      quiet,
    );
    expect(repairs[0]?.reason).toBe("invalid_arguments");
    expect(messages[1]).toEqual({
      type: "function_call_output",
      call_id: "a",
      output: "[Tool call was not run: its arguments could not be parsed.]",
    });
  });
});

describe("repairResponsesInput: outputs", () => {
  it("drops an output that answers no call, and moves a late one back after its call", () => {
    const input = deepFreeze([
      functionOutput("ghost"),
      user("find it"),
      functionCall("a"),
      user("hurry"),
      functionOutput("a"),
    ]);
    const { messages, repairs } = repairResponsesInput(input, quiet);
    expect(responsesViolations(messages)).toEqual([]);
    expect(messages).toEqual([input[1], input[2], input[4], input[3]]);
    for (const [at, from] of [
      [0, 1],
      [1, 2],
      [2, 4],
      [3, 3],
    ] as const) {
      expect(messages[at]).toBe(input[from]);
    }
    expect(repairs).toEqual([
      expect.objectContaining({ kind: "orphan_dropped", toolCallId: "ghost", resultIndex: 0 }),
      expect.objectContaining({
        kind: "result_moved",
        toolCallId: "a",
        resultIndex: 4,
        outputIndex: 2,
      }),
    ]);
  });

  it("reads an output of another type than its call's as an orphan, and answers the call", () => {
    const input = [customCall("a"), functionOutput("a")];
    expect(responsesViolations(input)).not.toEqual([]);
    const { messages, repairs } = repairResponsesInput(input, quiet);
    expect(responsesViolations(messages)).toEqual([]);
    expect(messages).toEqual([
      input[0],
      { type: "custom_tool_call_output", call_id: "a", output: INTERRUPTED },
    ]);
    // The repairs name the call's own id, however the engine told the two apart.
    expect(repairs.map((repair) => [repair.kind, repair.toolCallId]).sort()).toEqual([
      ["orphan_dropped", "a"],
      ["placeholder_inserted", "a"],
    ]);
  });

  it("keeps outputs whose call the input cannot show: after an item reference, or on a stored response", () => {
    const referring = deepFreeze([
      { type: "item_reference", id: "fc_earlier" },
      functionOutput("c_earlier"),
      user("thanks"),
    ]);
    expect(repairResponsesInput(referring, quiet).messages).toBe(referring);
    const continuing = deepFreeze([functionOutput("c_stored"), user("and then?")]);
    expect(
      repairResponsesInput(continuing, quiet, { continuesStoredResponse: true }).messages,
    ).toBe(continuing);
    // Without either, such an output answers nothing the API will see.
    expect(repairResponsesInput(continuing, quiet).repairs.map((repair) => repair.kind)).toEqual([
      "orphan_dropped",
    ]);
  });
});

describe("repairResponsesInput: a tool search output answers its call, whatever its execution says", () => {
  // The SDK's input type makes an output's `execution` optional: an application may leave it out.
  const loaded = { type: "function", name: "calendar_read", parameters: {}, strict: false };
  const searchOutput = (callId: string, execution?: "client" | "server") => ({
    type: "tool_search_output",
    call_id: callId,
    ...(execution === undefined ? {} : { execution }),
    status: "completed",
    tools: [loaded],
  });

  it("takes a client tool search's output without `execution` as its answer: the input comes back as it is", () => {
    const input = deepFreeze([
      user("Find the calendar tools"),
      toolSearchCall("ts1", "client"),
      searchOutput("ts1"),
      user("Now book it"),
    ]);
    expect(responsesViolations(input)).toEqual([]);
    const result = repairResponsesInput(input, quiet);
    expect(result.messages).toBe(input);
    expect(result.repairs).toEqual([]);
  });

  it("moves such an output back after its call, and never answers the call twice", () => {
    const early = deepFreeze([
      user("Find it"),
      searchOutput("ts1"),
      toolSearchCall("ts1", "client"),
    ]);
    const { messages, repairs } = repairResponsesInput(early, quiet);
    expect(responsesViolations(messages)).toEqual([]);
    expect(messages).toEqual([early[0], early[2], early[1]]);
    expect(repairs.map((repair) => repair.kind)).toEqual(["result_moved"]);
    // An output that calls itself the API's still answers the application's call of its id.
    const labelled = deepFreeze([toolSearchCall("ts2", "client"), searchOutput("ts2", "server")]);
    expect(repairResponsesInput(labelled, quiet).messages).toBe(labelled);
  });

  it("passes such an output on as the API's when no client tool search has its call_id", () => {
    const input = deepFreeze([toolSearchCall("ts3", "server"), searchOutput("ts3"), user("go on")]);
    expect(responsesViolations(input)).toEqual([]);
    expect(repairResponsesInput(input, quiet).messages).toBe(input);
  });
});

describe("repairResponsesInput: a local shell output, paired by `call_id` or by `id`", () => {
  it("reads an output keyed by `id` alone as its call's, and writes a placeholder either key pairs", () => {
    // The SDK's LocalShellCallOutput has `id` ("the unique ID of the local shell tool call
    // generated by the model") and no `call_id`; the AI SDK writes `call_id`.
    const byId = deepFreeze([
      localShellCall("c_ls"),
      { type: "local_shell_call_output", id: "c_ls", output: "a.txt" },
    ]);
    expect(repairResponsesInput(byId, quiet).messages).toBe(byId);
    const { messages } = repairResponsesInput([localShellCall("c_ls"), user("x")], quiet);
    const { call_id, id, ...rest } = messages[1] as Record<string, unknown>;
    expect([call_id, id]).toEqual(["c_ls", "c_ls"]);
    for (const placeholder of [
      { ...rest, id },
      { ...rest, call_id },
    ]) {
      expect(responsesViolations([localShellCall("c_ls"), placeholder])).toEqual([]);
    }
  });
});

describe("repairResponsesInput: call ids", () => {
  it("gives a call with a missing or empty call_id one, keeps its item id, and answers it", () => {
    const input = deepFreeze([functionCall(undefined), { ...functionCall(""), id: "fc_empty" }]);
    const { messages, repairs } = repairResponsesInput(input, quiet);
    expect(responsesViolations(messages)).toEqual([]);
    const calls = messages.slice(0, 2) as { id: string; call_id: string }[];
    expect(calls.map((call) => call.id)).toEqual(["fc_none", "fc_empty"]);
    for (const call of calls) expect(call.call_id).toMatch(/^tcr_/);
    expect(messages.slice(2)).toEqual(
      calls.map((call) => ({
        type: "function_call_output",
        call_id: call.call_id,
        output: INTERRUPTED,
      })),
    );
    expect(repairs.filter((repair) => repair.kind === "id_assigned")).toEqual([
      expect.objectContaining({ toolCallId: calls[0]?.call_id, callIndex: 0, outputIndex: 0 }),
      expect.objectContaining({ toolCallId: calls[1]?.call_id, callIndex: 1, outputIndex: 1 }),
    ]);
  });

  it("gives the second of two parallel calls with one call_id an id of its own, and its output", () => {
    const input = deepFreeze([
      functionCall("a"),
      { ...functionCall("a", "fetch"), id: "fc_a2" },
      functionOutput("a", "first"),
      functionOutput("a", "second"),
    ]);
    const { messages } = repairResponsesInput(input, quiet);
    expect(responsesViolations(messages)).toEqual([]);
    const second = (messages[1] as { call_id: string }).call_id;
    expect(second).toMatch(/^tcr_/);
    expect(messages[0]).toBe(input[0]);
    expect(messages[2]).toBe(input[2]);
    expect(messages[3]).toEqual({ ...input[3], call_id: second });
  });

  it("repairs two calls that an orphan output it drops stood between as the one turn they become", () => {
    const input = deepFreeze([
      functionCall("d"),
      functionOutput("gone"),
      { ...functionCall("d"), id: "fc_d2" },
      user("go on"),
      functionOutput("d", "found"),
    ]);
    const keepLate = { ...quiet, misplaced: "keep" } as const;
    const { messages, repairs } = repairResponsesInput(input, keepLate);
    const second = (messages[1] as { call_id: string }).call_id;
    expect(second).toMatch(/^tcr_/);
    // The real output still answers the first call, and is never lost on the next repair.
    expect(messages).toEqual([
      input[0],
      { ...input[2], call_id: second },
      { type: "function_call_output", call_id: second, output: INTERRUPTED },
      input[3],
      input[4],
    ]);
    expect(repairResponsesInput(messages, keepLate).messages).toBe(messages);
    // Indices are the input's and the output's, as if the turn had been read in place.
    expect(repairs).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ kind: "orphan_dropped", toolCallId: "gone", resultIndex: 1 }),
        expect.objectContaining({ kind: "id_assigned", callIndex: 2, outputIndex: 1 }),
      ]),
    );
    // Where the orphan is kept, it still parts the two turns.
    const kept = repairResponsesInput(input, { ...keepLate, orphans: "keep" }).messages;
    expect(kept.slice(0, 3)).toEqual(input.slice(0, 3));
  });

  it("answers a call_id reused in a later turn in that turn", () => {
    const clean = deepFreeze([
      functionCall("a"),
      functionOutput("a"),
      user("again"),
      { ...functionCall("a"), id: "fc_a2" },
      functionOutput("a"),
    ]);
    expect(repairResponsesInput(clean, quiet).messages).toBe(clean);
    const dangling = clean.slice(0, 4);
    const { messages } = repairResponsesInput(dangling, quiet);
    expect(responsesViolations(messages)).toEqual([]);
    expect(messages[4]).toEqual({
      type: "function_call_output",
      call_id: "a",
      output: INTERRUPTED,
    });
  });

  it("names a function call that has no name, and never names a call type that has none", () => {
    const input = [functionCall("a", ""), computerCall("b")];
    const { messages, repairs } = repairResponsesInput(input, quiet);
    expect(responsesViolations(messages)).toEqual([]);
    expect(messages[0]).toEqual({ ...input[0], name: "unknown" });
    expect(messages[1]).toBe(input[1]);
    expect(repairs.find((repair) => repair.kind === "name_assigned")).toMatchObject({
      toolCallId: "a",
      toolName: "unknown",
      callIndex: 0,
    });
  });

  it("never repeats an item id: a local shell placeholder's id is the call's, unless taken", () => {
    const input = [
      localShellCall("c_1"),
      { type: "message", id: "c_1", role: "user", content: "x" },
    ];
    const { messages } = repairResponsesInput(input, quiet);
    expect(responsesViolations(messages)).toEqual([]);
    expect(messages[1]).toMatchObject({
      type: "local_shell_call_output",
      id: "c_1_1",
      call_id: "c_1",
    });
  });
});

describe("repairResponsesInput: what passes through", () => {
  it("never waits for an answer to what the API runs itself, nor to messages and references", () => {
    const input = deepFreeze([
      { role: "developer", content: "Be brief." },
      { type: "message", role: "system", content: [{ type: "input_text", text: "Cite sources." }] },
      user("Research, plot, and book it"),
      reasoning("rs_1"),
      { type: "web_search_call", id: "ws_1", status: "completed", action: { type: "search" } },
      { type: "file_search_call", id: "fs_1", queries: ["x"], status: "completed" },
      {
        type: "code_interpreter_call",
        id: "ci_1",
        code: "1+1",
        container_id: "c",
        outputs: [],
        status: "completed",
      },
      { type: "image_generation_call", id: "ig_1", result: null, status: "completed" },
      { type: "mcp_list_tools", id: "ml_1", server_label: "cal", tools: [] },
      {
        type: "mcp_call",
        id: "mc_1",
        name: "book",
        arguments: "{}",
        server_label: "cal",
        output: "ok",
      },
      {
        type: "mcp_approval_request",
        id: "mr_1",
        name: "pay",
        arguments: "{}",
        server_label: "cal",
      },
      toolSearchCall("c_server", "server"),
      { type: "tool_search_output", call_id: "c_server", execution: "server", tools: [] },
      { type: "program", id: "pg_1", call_id: "c_prog", code: "run()", fingerprint: "f" },
      { type: "message", id: "msg_1", role: "assistant", status: "completed", content: [] },
      { type: "mcp_approval_response", approval_request_id: "mr_1", approve: false },
      { type: "item_reference", id: "msg_0" },
      { id: "msg_00" },
      { type: "compaction", id: "cmp_1", encrypted_content: "…" },
      { type: "a_future_item", id: "x_1" },
      hostedShellCall("c_hosted_1"),
      shellOutput("c_hosted_1"),
      hostedShellCall("c_hosted_2"),
    ]);
    expect(responsesViolations(input)).toEqual([]);
    const result = repairResponsesInput(input, quiet);
    expect(result.messages).toBe(input);
    expect(result.repairs).toEqual([]);
  });

  it("returns the very same array for a clean input: parallel outputs in any order, the model's items between calls", () => {
    const input = deepFreeze([
      user("Compare three cities"),
      reasoning("rs_1"),
      functionCall("a", "weather"),
      reasoning("rs_2"),
      functionCall("b", "weather"),
      hostedShellCall("h"),
      shellOutput("h"),
      computerCall("c"),
      functionOutput("b"),
      {
        type: "computer_call_output",
        call_id: "c",
        output: { type: "computer_screenshot", image_url: "data:image/png;base64,AA" },
      },
      functionOutput("a"),
      { type: "message", role: "assistant", content: [{ type: "output_text", text: "Done." }] },
    ]);
    expect(responsesViolations(input)).toEqual([]);
    const result = repairResponsesInput(input, quiet);
    expect(result.messages).toBe(input);
    expect(result.repairs).toEqual([]);
  });
});

describe("repairResponsesInput: the guarantees of every adapter", () => {
  const dangling = () =>
    deepFreeze([
      user("Find x and y"),
      functionCall("a"),
      functionCall("b", "fetch"),
      functionOutput("a"),
      user("Go on"),
    ]);

  it("keeps every item that needed nothing as the same object, never mutates, and is idempotent", () => {
    const input = dangling();
    const before = structuredClone(input);
    const { messages } = repairResponsesInput(input, quiet);
    expect(messages).toHaveLength(6);
    for (const [at, from] of [
      [0, 0],
      [1, 1],
      [2, 2],
      [3, 3],
      [5, 4],
    ] as const) {
      expect(messages[at]).toBe(input[from]);
    }
    expect(input).toEqual(before);
    expect(repairResponsesInput(messages, quiet).messages).toBe(messages);
  });

  it("marks nothing on the wire: a placeholder has the fields its type takes, and no more", () => {
    const { messages } = repairResponsesInput(dangling(), { ...quiet, markSynthetic: true });
    expect(Object.keys(messages[4] as object).sort()).toEqual(["call_id", "output", "type"]);
  });

  it("follows the policy: templates, a locale per call, and a window that counts a turn as one", () => {
    const templated = repairResponsesInput(dangling(), {
      ...quiet,
      placeholder: "{tool_name} ({tool_call_id}) never answered",
    }).messages[4];
    expect(templated).toMatchObject({ output: "fetch (b) never answered" });
    const german = repairResponsesInput(dangling(), quiet, { locale: "de" }).messages[4];
    expect((german as { output: string }).output).not.toBe(INTERRUPTED);
    // The last three entries: the turn of both calls, the output, the user: "b" is answered.
    expect(repairResponsesInput(dangling(), { ...quiet, window: 3 }).repairs).toHaveLength(1);
    // The last two: the output and the user; the turn before them is left as it is.
    expect(repairResponsesInput(dangling(), { ...quiet, window: 2 }).repairs).toEqual([]);
  });

  it("refuses bad options at once, and reads an options object once", () => {
    expect(() => repairResponsesInput([], { window: 0 })).toThrow(ToolCallResilienceOptionsError);
    expect(() => repairResponsesInput([], { window: 0 })).toThrow(/window/);
    let reads = 0;
    const options = {
      logger: false as const,
      get window() {
        reads++;
        return 10;
      },
    };
    repairResponsesInput(dangling(), options);
    const afterFirst = reads;
    expect(afterFirst).toBeGreaterThan(0);
    repairResponsesInput(dangling(), options);
    repairResponsesInput([functionCall("c")], options);
    expect(reads).toBe(afterFirst);
  });

  it("is the shipped format under repairInFormat, frozen, for inputs without parallel calls", () => {
    const input = [user("hi"), customCall("a"), user("hello?"), functionOutput("zz")];
    expect(repairInFormat(openAIResponsesFormat, input, quiet)).toEqual(
      repairResponsesInput(input, quiet),
    );
    expect(Object.isFrozen(openAIResponsesFormat)).toBe(true);
    expect(openAIResponsesFormat).toMatchObject({ name: "openai-responses", provider: "openai" });
  });

  it("gives back what the SDK's own input item type accepts", () => {
    const input: ResponseInputItem[] = [{ role: "user", content: "hi" }];
    const sent: ResponseInputItem[] = repairResponsesInput(input).messages;
    expectTypeOf(sent).toEqualTypeOf<ResponseInputItem[]>();
    expect(sent).toBe(input);
  });
});

describe("repairResponsesInput: telemetry", () => {
  it("records the repair as OpenAI's, per model, tool and thread, each call once", async () => {
    const harness = metricsHarness();
    const options = { ...quiet, meterProvider: harness.meterProvider };
    const context = {
      threadId: "thread-r",
      model: "gpt-5",
      tools: [{ type: "function", name: "fetch", parameters: {} }],
    };
    const input = [user("x"), functionCall("a", "fetch"), customCall("b"), user("y")];
    repairResponsesInput(input, options, context);
    repairResponsesInput(input, options, context); // the same calls again: counted once
    expect(
      await harness.sum(METRIC_DANGLING_TOOL_CALLS, {
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "gpt-5",
        "gen_ai.tool.name": "fetch",
      }),
    ).toBe(1);
    expect(
      await harness.sum(METRIC_DANGLING_TOOL_CALLS, { "gen_ai.provider.name": "openai" }),
    ).toBe(2);
    expect(
      await harness.sum(METRIC_THREAD_RECENT_DANGLING_TOOL_CALLS, {
        "gen_ai.conversation.id": "thread-r",
      }),
    ).toBe(2);
    expect(
      await harness.sum(METRIC_MODEL_CALLS, { "tool_call_resilience.outcome": "repaired" }),
    ).toBe(2);
    await harness.shutdown();
  });

  it("counts orphans and moves by kind, and a clean input as a clean call", async () => {
    const harness = metricsHarness();
    const options = { ...quiet, meterProvider: harness.meterProvider };
    repairResponsesInput(
      [functionOutput("ghost"), functionCall("a"), user("x"), functionOutput("a")],
      options,
    );
    repairResponsesInput([functionCall("a"), functionOutput("a")], options);
    expect(
      await harness.sum(METRIC_REPAIRS, { "tool_call_resilience.repair.kind": "orphan_dropped" }),
    ).toBe(1);
    expect(
      await harness.sum(METRIC_REPAIRS, { "tool_call_resilience.repair.kind": "result_moved" }),
    ).toBe(1);
    expect(await harness.sum(METRIC_MODEL_CALLS, { "tool_call_resilience.outcome": "clean" })).toBe(
      1,
    );
    await harness.shutdown();
  });
});

describe("repairResponsesInput: tools offered by their type alone", () => {
  it("labels a computer call as its tool is offered, computer_use_preview or computer, never _OTHER", async () => {
    const harness = metricsHarness();
    const options = { ...quiet, meterProvider: harness.meterProvider };
    const preview = {
      type: "computer_use_preview",
      display_width: 1024,
      display_height: 768,
      environment: "browser",
    };
    for (const [tools, id] of [
      [[preview], "c_preview"],
      [[{ type: "computer" }], "c_ga"],
      [[{ type: "shell", environment: { type: "local" } }, { type: "apply_patch" }], "c_shell"],
    ] as const) {
      const calls =
        id === "c_shell" ? [shellCall(id), applyPatchCall(`${id}_p`)] : [computerCall(id)];
      repairResponsesInput([user("go"), ...calls, user("well?")], options, { tools: [...tools] });
    }
    const byTool = (name: string) =>
      harness.sum(METRIC_DANGLING_TOOL_CALLS, { "gen_ai.tool.name": name });
    expect(await byTool(COMPUTER_TOOL_NAME)).toBe(2);
    expect(await byTool("shell")).toBe(1);
    expect(await byTool("apply_patch")).toBe(1);
    expect(await byTool("_OTHER")).toBe(0);
    await harness.shutdown();
  });
});

describe("repairResponsesInput: failing open", () => {
  it("passes an input it cannot read on unchanged, logged and counted", async () => {
    const harness = metricsHarness();
    const logger = { warn: vi.fn(), error: vi.fn() };
    const hostile = {
      get type(): string {
        throw new Error("no reading me");
      },
    };
    const input = [functionCall("a"), hostile];
    const result = repairResponsesInput(input, { logger, meterProvider: harness.meterProvider });
    expect(result.messages).toBe(input);
    expect(result.repairs).toEqual([]);
    expect(logger.error).toHaveBeenCalledWith(
      expect.stringContaining("failed; passing the messages on unchanged"),
      expect.objectContaining({ error: expect.any(Error) }),
    );
    expect(
      await harness.sum(METRIC_MODEL_CALLS, { "tool_call_resilience.outcome": "failed_open" }),
    ).toBe(1);
    await harness.shutdown();
  });

  it("never throws on junk, and still answers the calls it can read around it", () => {
    const circular: Record<string, unknown> = { type: "function_call_output" };
    circular.self = circular;
    const revoked = Proxy.revocable({}, {});
    revoked.revoke();
    const junk: unknown[] = [
      null,
      undefined,
      42,
      Number.NaN,
      "text",
      true,
      Symbol("item"),
      10n,
      () => "item",
      [],
      [functionCall("in_an_array")],
      {},
      { type: 7, call_id: "x" },
      { type: "function_call", call_id: 12, name: ["x"] },
      { type: "function_call_output" },
      circular,
      Object.freeze({ type: "computer_call", call_id: { not: "an id" } }),
      new Date(0),
      new Map([["type", "function_call"]]),
    ];
    for (const item of junk) {
      const input = [user("x"), functionCall("a"), item];
      expect(() => repairResponsesInput(input, quiet)).not.toThrow();
      const { messages } = repairResponsesInput(input, quiet);
      expect(messages).toContainEqual(
        expect.objectContaining({ type: "function_call_output", call_id: "a" }),
      );
    }
    const withRevoked = [functionCall("a"), revoked.proxy];
    expect(repairResponsesInput(withRevoked, quiet).messages).toBe(withRevoked);
    for (const notAList of [null, undefined, 42, "input", {}]) {
      expect(() => repairResponsesInput(notAList as never, quiet)).not.toThrow();
    }
  });
});
