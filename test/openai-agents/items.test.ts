/**
 * toolCallRepairInputFilter on the OpenAI Agents SDK's own items, called as the SDK calls it: each
 * kind of call left without its result, results out of place, missing and reused ids, what passes
 * through, identity, and failing open. Every repaired input is valid under the SDK's protocol
 * schema and is accepted by the SDK's converter to the Responses API and the API's rules (the
 * strict local server).
 */
import { Agent, type AgentInputItem, shellTool, tool } from "@openai/agents";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import {
  type InputFilterArgs,
  ToolCallResilienceOptionsError,
  toolCallRepairInputFilter,
} from "../../src/stacks/openai-agents.js";
import {
  ATTR_OUTCOME,
  METRIC_MODEL_CALLS,
  OUTCOME_VALUE_FAILED_OPEN,
} from "../../src/telemetry/semconv.js";
import {
  type StrictProviderServer,
  startStrictProviderServer,
} from "../helpers/strict-provider-server.js";
import { metricsHarness } from "../helpers/telemetry.js";
import {
  applyPatchCall,
  assistant,
  computerCall,
  deepFrozen,
  functionCall,
  functionResult,
  isProtocolItem,
  reasoning,
  sentThroughResponses,
  shellCall,
  toolSearchCall,
  user,
  webSearch,
} from "./sdk.js";

const INTERRUPTED = "[Tool call was interrupted and did not return a result.]";

const search = tool({
  name: "search",
  description: "Searches.",
  parameters: z.object({ query: z.string() }),
  execute: async ({ query }) => `results for ${query}`,
});
const agent = new Agent({ name: "support", model: "gpt-4.1", tools: [search] });

const filter = toolCallRepairInputFilter({ logger: false });

/** The filter's arguments for an input, as the SDK builds them. */
function argsOf(
  input: readonly AgentInputItem[],
  on: Agent = agent,
): InputFilterArgs<{
  input: AgentInputItem[];
  instructions: string;
}> {
  return { modelData: { input: [...input], instructions: "Be brief." }, agent: on, context: {} };
}

/** The types and call ids of items, to read an input at a glance. */
const shapeOf = (items: readonly unknown[]) =>
  items.map((item) => {
    const fields = (item ?? {}) as { type?: string; role?: string; callId?: string };
    return fields.callId === undefined
      ? (fields.type ?? fields.role)
      : `${fields.type}:${fields.callId}`;
  });

let server: StrictProviderServer;
beforeAll(async () => {
  server = await startStrictProviderServer();
});
afterAll(() => server.close());

describe("a call left without its result gets one of its own type, after its turn", () => {
  const cases: [string, AgentInputItem, Record<string, unknown>][] = [
    [
      "function_call",
      functionCall("call_1"),
      {
        type: "function_call_result",
        callId: "call_1",
        name: "search",
        status: "completed",
        output: INTERRUPTED,
      },
    ],
    [
      "computer_call (a blank screenshot: the only answer it takes)",
      computerCall("call_1"),
      {
        type: "computer_call_result",
        callId: "call_1",
        output: { type: "computer_screenshot", data: expect.stringMatching(/^data:image\/png/) },
      },
    ],
    [
      "shell_call (the text on stderr, exit code 1)",
      shellCall("call_1"),
      {
        type: "shell_call_output",
        callId: "call_1",
        output: [{ stdout: "", stderr: INTERRUPTED, outcome: { type: "exit", exitCode: 1 } }],
      },
    ],
    [
      "apply_patch_call (a failed patch)",
      applyPatchCall("call_1"),
      { type: "apply_patch_call_output", callId: "call_1", status: "failed", output: INTERRUPTED },
    ],
    [
      "tool_search_call run by the client (no tools found)",
      toolSearchCall("call_1", "client"),
      {
        type: "tool_search_output",
        callId: "call_1",
        execution: "client",
        status: "completed",
        tools: [],
      },
    ],
  ];

  it.each(cases)("%s", async (_kind, call, placeholder) => {
    const input = deepFrozen([user("Do it"), call, user("Are you there?")]);
    expect((await sentThroughResponses(server, input)).status).toBe(400);

    const repaired = filter(argsOf(input)).input;

    expect(shapeOf(repaired)).toEqual([
      "user",
      `${call.type}:call_1`,
      `${placeholder.type}:call_1`,
      "user",
    ]);
    expect(repaired[2]).toEqual(placeholder);
    expect(repaired.every(isProtocolItem)).toBe(true);
    expect(await sentThroughResponses(server, repaired)).toEqual({ status: 200 });
  });

  it("answers a client tool search as the SDK keeps it, its call id and execution in providerData", async () => {
    const call = {
      type: "tool_search_call",
      id: "tsc_1",
      status: "completed",
      arguments: { query: "billing" },
      providerData: { call_id: "call_ts", execution: "client" },
    } as AgentInputItem;
    const input = deepFrozen([user("Find the billing tools"), call, user("Well?")]);
    expect((await sentThroughResponses(server, input)).status).toBe(400);
    const repaired = filter(argsOf(input)).input;
    expect(repaired[2]).toMatchObject({ type: "tool_search_output", callId: "call_ts" });
    expect(await sentThroughResponses(server, repaired)).toEqual({ status: 200 });
  });

  it("answers the unanswered call of a parallel turn after the results the turn has", async () => {
    const input = deepFrozen([
      user("Find x and y"),
      reasoning(),
      functionCall("call_a"),
      assistant("Looking both up."),
      functionCall("call_b", "fetch"),
      functionResult("call_a"),
      user("And?"),
    ]);
    const repaired = filter(argsOf(input)).input;
    expect(shapeOf(repaired)).toEqual([
      "user",
      "reasoning",
      "function_call:call_a",
      "assistant",
      "function_call:call_b",
      "function_call_result:call_a",
      "function_call_result:call_b",
      "user",
    ]);
    expect(repaired[6]).toMatchObject({ name: "fetch", output: INTERRUPTED });
    expect(await sentThroughResponses(server, repaired)).toEqual({ status: 200 });
  });

  it("keeps a program's caller and the call's namespace on the answer", () => {
    const call = functionCall("call_1", "search", {
      namespace: "crm",
      caller: { type: "program", callerId: "prog_1" },
    });
    const repaired = filter(argsOf([user("Go"), call])).input;
    expect(repaired[2]).toMatchObject({
      type: "function_call_result",
      callId: "call_1",
      namespace: "crm",
      caller: { type: "program", callerId: "prog_1" },
    });
    expect(isProtocolItem(repaired[2])).toBe(true);
  });

  it("tells a call whose arguments were cut off from one that was interrupted", () => {
    const call = functionCall("call_1", "search", { arguments: '{"query": "x' });
    const repaired = filter(argsOf([user("Go"), call])).input;
    expect(repaired[2]).toMatchObject({
      output: "[Tool call was not run: its arguments could not be parsed.]",
    });
  });
});

describe("a client tool search's output answers its call, whatever its own execution says", () => {
  const loaded = { type: "function", name: "billing_lookup", parameters: {}, strict: false };

  it("takes an output without `execution` as the answer: the model data comes back as it is", async () => {
    const output = {
      type: "tool_search_output",
      callId: "ts1",
      status: "completed",
      tools: [loaded],
    } as AgentInputItem;
    const input = deepFrozen([
      user("Find the billing tools"),
      toolSearchCall("ts1", "client"),
      output,
      user("Now look it up"),
    ]);
    const args = argsOf(input);
    expect(filter(args)).toBe(args.modelData);
    expect(await sentThroughResponses(server, input)).toEqual({ status: 200 });
  });

  it("reads the call id and execution where the SDK keeps them, in providerData", () => {
    const call = {
      type: "tool_search_call",
      arguments: { query: "billing" },
      providerData: { call_id: "ts2", execution: "client" },
    } as AgentInputItem;
    const output = {
      type: "tool_search_output",
      tools: [loaded],
      providerData: { call_id: "ts2" },
    } as AgentInputItem;
    const args = argsOf([user("a"), call, output, user("b")]);
    expect(filter(args)).toBe(args.modelData);
  });
});

describe("results out of place", () => {
  it("drops a result whose call is missing (a trimmed history), which the API refuses", async () => {
    const input = deepFrozen([
      functionResult("call_gone"),
      assistant("Done."),
      user("Next"),
      functionCall("call_1"),
      functionResult("call_1"),
    ]);
    expect((await sentThroughResponses(server, input)).message).toMatch(/No tool call found/);
    const repaired = filter(argsOf(input)).input;
    expect(repaired).toEqual(input.slice(1));
    expect(await sentThroughResponses(server, repaired)).toEqual({ status: 200 });
  });

  it("moves a result written before its call after it, and one a message late back to it", async () => {
    const early = deepFrozen([
      user("a"),
      functionResult("call_1"),
      functionCall("call_1"),
      user("b"),
    ]);
    expect((await sentThroughResponses(server, early)).status).toBe(400);
    const fixed = filter(argsOf(early)).input;
    expect(shapeOf(fixed)).toEqual([
      "user",
      "function_call:call_1",
      "function_call_result:call_1",
      "user",
    ]);
    expect(fixed[2]).toBe(early[1]);
    expect(await sentThroughResponses(server, fixed)).toEqual({ status: 200 });

    // Accepted by the Responses API as it is, not by Chat Completions (the SDK may use either).
    const late = deepFrozen([functionCall("call_1"), user("hurry"), functionResult("call_1")]);
    expect(shapeOf(filter(argsOf(late)).input)).toEqual([
      "function_call:call_1",
      "function_call_result:call_1",
      "user",
    ]);
  });
});

describe("ids", () => {
  it("gives a call without an id one, and its answer the same", async () => {
    const input = deepFrozen([user("a"), functionCall(""), user("b")]);
    expect((await sentThroughResponses(server, input)).message).toMatch(/call_id/);
    const repaired = filter(argsOf(input)).input as { callId: string }[];
    expect(repaired[1]?.callId).toMatch(/^tcr_/);
    expect(repaired[2]).toMatchObject({
      type: "function_call_result",
      callId: repaired[1]?.callId,
    });
    expect(input[1]).toMatchObject({ callId: "" });
    expect(await sentThroughResponses(server, repaired)).toEqual({ status: 200 });
  });

  it("never pairs a result without an id with a call of another kind that has none", () => {
    // A computer call's result without an id cannot answer a function call: it answers nothing.
    const input = deepFrozen([
      user("a"),
      functionCall(""),
      {
        type: "computer_call_result",
        status: "completed",
        output: { type: "computer_screenshot", data: "data:image/png;base64,AAAA" },
      } as unknown as AgentInputItem,
      user("b"),
    ]);
    const repaired = filter(argsOf(input)).input as { type: string; callId: string }[];
    expect(repaired.map((item) => item.type)).toEqual([
      undefined, // the user messages, as the SDK writes them: a role, no type
      "function_call",
      "function_call_result",
      undefined,
    ]);
    expect(repaired[2]?.callId).toBe(repaired[1]?.callId);
  });

  it("gives the second of two calls of one turn sharing an id a new one, and answers it", async () => {
    const input = deepFrozen([
      user("a"),
      functionCall("call_0"),
      functionCall("call_0", "fetch"),
      functionResult("call_0"),
      user("b"),
    ]);
    expect((await sentThroughResponses(server, input)).status).toBe(400);
    const repaired = filter(argsOf(input)).input;
    expect(shapeOf(repaired)).toEqual([
      "user",
      "function_call:call_0",
      expect.stringMatching(/^function_call:tcr_/),
      "function_call_result:call_0",
      expect.stringMatching(/^function_call_result:tcr_/),
      "user",
    ]);
    expect(repaired[1]).toBe(input[1]);
    expect(await sentThroughResponses(server, repaired)).toEqual({ status: 200 });
  });

  it("tells apart calls of two types that share an id, as the SDK pairs each with its own type", () => {
    const input = deepFrozen([
      user("a"),
      functionCall("call_1"),
      shellCall("call_1"),
      functionResult("call_1"),
      user("b"),
    ]);
    const repaired = filter(argsOf(input)).input;
    expect(shapeOf(repaired)).toEqual([
      "user",
      "function_call:call_1",
      "shell_call:call_1",
      "function_call_result:call_1",
      "shell_call_output:call_1",
      "user",
    ]);
  });
});

describe("what passes through as it is", () => {
  it("calls the provider answers itself, its own items and MCP approval requests", () => {
    const approvalRequest: AgentInputItem = {
      type: "hosted_tool_call",
      name: "mcp_approval_request",
      providerData: { type: "mcp_approval_request", id: "mcpr_1", server_label: "crm" },
    };
    const program: AgentInputItem = {
      type: "program",
      callId: "prog_1",
      code: "print(1)",
      fingerprint: "f",
    };
    const input = deepFrozen([
      user("a"),
      webSearch(),
      approvalRequest,
      program,
      toolSearchCall("ts_1", "server"),
      reasoning(),
      { type: "compaction", encrypted_content: "e" } as AgentInputItem,
      { type: "unknown", providerData: { type: "future_item" } } as AgentInputItem,
      user("b"),
    ]);
    const args = argsOf(input);
    expect(filter(args)).toBe(args.modelData);
  });

  it("shell calls when the agent's shell runs in the provider's container", () => {
    const hosted = new Agent({
      name: "ops",
      model: "gpt-4.1",
      tools: [shellTool({ environment: { type: "container_auto" } })],
    });
    const args = argsOf([user("a"), shellCall("call_1"), user("b")], hosted);
    expect(filter(args)).toBe(args.modelData);
  });

  it("results alone, as the SDK sends them for a conversation the provider keeps", () => {
    // With previousResponseId or conversationId, the calls are the provider's: only outputs come.
    const args = argsOf([functionResult("call_1"), functionResult("call_2", "fetch")]);
    expect(filter(args)).toBe(args.modelData);
  });
});

describe("results whose call the input does not hold: continuesStoredResponse", () => {
  const alone = () => deepFrozen([functionResult("c1"), user("And then?")]);

  it('passes them on by default ("auto") when the input holds nothing the model made', () => {
    for (const options of [{}, { continuesStoredResponse: "auto" as const }]) {
      const args = argsOf(alone());
      expect(toolCallRepairInputFilter({ logger: false, ...options })(args)).toBe(args.modelData);
    }
  });

  it("drops them as orphans with false: the input is the whole history", () => {
    const whole = toolCallRepairInputFilter({ logger: false, continuesStoredResponse: false });
    expect(whole(argsOf(alone())).input).toEqual([user("And then?")]);
  });

  it("keeps them with true, even beside calls and messages the model made", () => {
    const input = deepFrozen([
      user("a"),
      functionCall("c0"),
      functionResult("c0"),
      functionResult("c_stored"),
      assistant("Done."),
    ]);
    const stored = toolCallRepairInputFilter({ logger: false, continuesStoredResponse: true });
    const args = argsOf(input);
    expect(stored(args)).toBe(args.modelData);
    expect(shapeOf(filter(argsOf(input)).input)).not.toContain("function_call_result:c_stored");
    expect(stored(argsOf(alone())).input).toEqual(alone());
  });

  it("refuses any other value, naming the option", () => {
    expect(() => toolCallRepairInputFilter({ continuesStoredResponse: "yes" as never })).toThrow(
      /continuesStoredResponse/,
    );
  });
});

describe("identity", () => {
  it("returns modelData itself when nothing needs repair", () => {
    const args = argsOf([
      user("a"),
      functionCall("call_1"),
      functionResult("call_1"),
      assistant("ok"),
    ]);
    expect(filter(args)).toBe(args.modelData);
    expect(filter.preserveInputIdentity).toBe(true);
  });

  it("keeps every item that needed nothing, changes none, and keeps the instructions", () => {
    const input = deepFrozen([user("a"), functionCall("call_1"), user("b")]);
    const args = argsOf(input);
    const repaired = filter(args);
    expect(repaired).not.toBe(args.modelData);
    expect(repaired.instructions).toBe("Be brief.");
    expect(repaired.input[0]).toBe(input[0]);
    expect(repaired.input[1]).toBe(input[1]);
    expect(repaired.input[3]).toBe(input[2]);
    expect(args.modelData.input).toEqual(input);
  });

  it("is idempotent: a repaired input comes back as it is", () => {
    const once = filter(
      argsOf([user("a"), functionCall("call_1"), shellCall("call_2"), user("b")]),
    );
    const args = argsOf(once.input);
    expect(filter(args)).toBe(args.modelData);
  });
});

describe("failing open", () => {
  it("reads junk among the items as other items, and still answers the calls", () => {
    const junk = [null, 3, "text", [], { type: 5 }] as never[];
    const nameless = { type: "function_call" } as never;
    const repaired = filter(argsOf([...junk, nameless, functionCall("call_1"), user("b")])).input;
    expect(repaired.slice(0, 5)).toEqual(junk);
    const results = repaired.filter(
      (item) => (item as { type?: unknown } | null)?.type === "function_call_result",
    );
    expect(results).toHaveLength(2);
    // The call without an id or a name is given both, in a copy; its answer names them.
    expect(repaired[5]).not.toBe(nameless);
    expect(repaired[5]).toMatchObject({ callId: expect.stringMatching(/^tcr_/) });
    expect(results[0]).toMatchObject({ callId: (repaired[5] as { callId: string }).callId });
  });

  it("warns of the tool result it inserted, in the SDK's words, not LangChain's", () => {
    const logger = { warn: vi.fn(), error: vi.fn() };
    toolCallRepairInputFilter({ logger })(argsOf([user("a"), functionCall("call_1")]));
    expect(logger.warn).toHaveBeenCalledWith(
      "[tool-call-resilience] Injecting 1 placeholder tool result(s) for dangling tool calls",
      expect.objectContaining({ repairs: [expect.objectContaining({ toolCallId: "call_1" })] }),
    );
  });

  it("passes an input it cannot read on unchanged, logged and counted as failed_open", async () => {
    const harness = metricsHarness();
    const logger = { warn: vi.fn(), error: vi.fn() };
    const failing = toolCallRepairInputFilter({ logger, meterProvider: harness.meterProvider });
    const hostile = {
      get type(): string {
        throw new Error("no reading me");
      },
    } as unknown as AgentInputItem;
    const args = argsOf([user("a"), hostile, functionCall("call_1")]);
    expect(failing(args)).toBe(args.modelData);
    expect(logger.error).toHaveBeenCalledWith(
      expect.stringContaining("failed; passing the messages on unchanged"),
      expect.objectContaining({ error: expect.any(Error) }),
    );
    expect(
      await harness.sum(METRIC_MODEL_CALLS, { [ATTR_OUTCOME]: OUTCOME_VALUE_FAILED_OPEN }),
    ).toBe(1);
    await harness.shutdown();
  });

  it("repairs the input when the agent's tools cannot even be listed, and logs it once", () => {
    const logger = { warn: vi.fn(), error: vi.fn() };
    const guarded = toolCallRepairInputFilter({ logger });
    const tools = new Proxy([search], {
      get(target, key, receiver) {
        if (key === Symbol.iterator || key === "length") throw new Error("no listing tools");
        return Reflect.get(target, key, receiver);
      },
    });
    const unlistable = { name: "support", model: "gpt-4.1", tools, handoffs: [] };
    const args = { ...argsOf([user("a"), functionCall("call_1"), user("b")]), agent: unlistable };
    const repaired = guarded(args as unknown as ReturnType<typeof argsOf>).input;
    expect(shapeOf(repaired)).toEqual(
      shapeOf([user("a"), functionCall("call_1"), functionResult("call_1"), user("b")]),
    );
    expect(logger.error).toHaveBeenCalledTimes(1);
    expect(logger.error).toHaveBeenCalledWith(expect.stringContaining("reading the agent failed"), {
      error: new Error("no listing tools"),
    });
  });

  it("never throws, whatever it is called with", () => {
    const modelData = { input: "not a list" as unknown as AgentInputItem[] };
    expect(filter({ modelData, agent, context: undefined })).toBe(modelData);
    expect(() => filter(null as never)).not.toThrow();
    expect(() =>
      filter({ modelData: undefined as never, agent: null as never, context: 1 }),
    ).not.toThrow();
  });
});

describe("options", () => {
  it("refuses bad options when the filter is made, naming them", () => {
    expect(() => toolCallRepairInputFilter({ window: 0 })).toThrow(ToolCallResilienceOptionsError);
    expect(() => toolCallRepairInputFilter({ threadId: 7 as never })).toThrow(/threadId/);
    expect(() => toolCallRepairInputFilter({ persist: true } as never)).toThrow(/persist/);
    expect(() => toolCallRepairInputFilter({ threadId: "" })).toThrow(/toolCallRepairInputFilter/);
  });

  it("follows the policy: a template, a locale, a window", () => {
    const input = deepFrozen([user("a"), functionCall("call_1"), user("b")]);
    const templated = toolCallRepairInputFilter({
      logger: false,
      placeholder: "{tool_name} ({tool_call_id}) never answered",
    });
    expect(templated(argsOf(input)).input[2]).toMatchObject({
      output: "search (call_1) never answered",
    });
    const german = toolCallRepairInputFilter({ logger: false, locale: "de" });
    expect(german(argsOf(input)).input[2]).not.toMatchObject({ output: INTERRUPTED });
    // Only the last item is looked at: the call before it is left as it is.
    const windowed = toolCallRepairInputFilter({ logger: false, window: 1 });
    const args = argsOf(input);
    expect(windowed(args)).toBe(args.modelData);
  });

  it("lets a locale resolver read the run's context", () => {
    const resolver = vi.fn(
      (request: { runtime?: { context?: unknown } }) =>
        (request.runtime?.context as { locale?: string } | undefined)?.locale,
    );
    const localized = toolCallRepairInputFilter({ logger: false, locale: resolver });
    const args = { ...argsOf([user("a"), functionCall("call_1")]), context: { locale: "fr" } };
    const french = localized(args).input[2] as { output: string };
    expect(resolver).toHaveBeenCalledTimes(1);
    expect(resolver.mock.calls[0]?.[0]).toMatchObject({ messages: args.modelData.input });
    const english = toolCallRepairInputFilter({ logger: false })(args).input[2] as {
      output: string;
    };
    expect(french.output).not.toBe(english.output);
  });
});
