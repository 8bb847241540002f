/**
 * toolCallRepairInputFilter in real runs of the OpenAI Agents SDK (`Agent`, `Runner`, its OpenAI
 * provider on the Responses API) against the strict local server, which answers 400 as the API
 * does. A run is interrupted while a tool call is open (an approval left pending, an abort while
 * the tool runs), then the conversation goes on with new user input: where the call reaches the
 * next model call unanswered, the API refuses it without the filter and answers with it; where
 * the SDK settles the call itself first, the filter passes the input on as it is.
 */
import {
  Agent,
  type AgentInputItem,
  type CallModelInputFilter,
  MemorySession,
  type Model,
  type ModelRequest,
  type ModelResponse,
  Runner,
  RunState,
  tool,
  Usage,
} from "@openai/agents";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { toolCallRepairInputFilter } from "../../src/stacks/openai-agents.js";
import {
  COMPLETION_TEXT,
  type StrictProviderServer,
  startStrictProviderServer,
} from "../helpers/strict-provider-server.js";
import { functionResult, providerFor, user } from "./sdk.js";

const INTERRUPTED = "[Tool call was interrupted and did not return a result.]";

let server: StrictProviderServer;
beforeAll(async () => {
  server = await startStrictProviderServer();
});
afterAll(() => server.close());

const refund = tool({
  name: "refund",
  description: "Refunds an order.",
  parameters: z.object({ order: z.string() }),
  needsApproval: true,
  execute: async ({ order }) => `refunded ${order}`,
});
const lookup = tool({
  name: "lookup",
  description: "Looks an order up.",
  parameters: z.object({ order: z.string() }),
  execute: async ({ order }) => `order ${order}: shipped`,
});

/** A tool that runs until the run's signal aborts it; `started` resolves when it runs. */
function slowTool() {
  let started!: () => void;
  const running = new Promise<void>((resolve) => {
    started = resolve;
  });
  const export_ = tool({
    name: "export_report",
    description: "Exports a report.",
    parameters: z.object({}),
    execute: async (_input, _context, details) => {
      started();
      await new Promise<never>((_, reject) => {
        details?.signal?.addEventListener("abort", () => reject(details.signal?.reason));
      });
      return "exported";
    },
  });
  return { tool: export_, running };
}

const agentWith = (tools: Agent["tools"]) =>
  new Agent({ name: "support", instructions: "Help.", model: "gpt-4.1", tools });

/** A runner on the strict server, with the filter or without it. */
const runnerWith = (callModelInputFilter?: CallModelInputFilter) =>
  new Runner({ modelProvider: providerFor(server), callModelInputFilter });

/** What the last model call sent, as types and call ids. */
function lastInput(): string[] {
  const input = (server.received.at(-1)?.body.input ?? []) as Record<string, unknown>[];
  return input.map((item) =>
    item.call_id === undefined ? String(item.type ?? item.role) : `${item.type}:${item.call_id}`,
  );
}

/** The filter, and whether each of its calls passed modelData on as it came. */
function observedFilter() {
  const filter = toolCallRepairInputFilter({ logger: false });
  const passedAsItCame: boolean[] = [];
  const observed: CallModelInputFilter = Object.assign(
    (args: Parameters<CallModelInputFilter>[0]) => {
      const data = filter(args);
      passedAsItCame.push(data === args.modelData);
      return data;
    },
    { preserveInputIdentity: true },
  );
  return { observed, passedAsItCame };
}

describe("a call that reaches the next model call unanswered", () => {
  it("an approval left pending, the run's items kept by the application: 400 without, an answer with", async () => {
    const agent = agentWith([refund]);
    server.script("responses", {
      calls: [{ id: "call_r1", name: "refund", args: { order: "42" } }],
    });
    const first = await runnerWith().run(agent, "Refund order 42");
    expect(first.interruptions).toHaveLength(1);
    // The application appends each run's items to its own store; the approval stays pending in
    // the run's saved state, and the user moves on.
    const saved = first.state.toString();
    const stored: AgentInputItem[] = [
      user("Refund order 42"),
      ...first.newItems
        .filter((item) => item.type !== "tool_approval_item")
        .map((item) => item.rawItem as AgentInputItem),
    ];
    expect((await RunState.fromString(agent, saved)).getInterruptions()).toHaveLength(1);
    const next = [...stored, user("Never mind. What is my balance?")];

    await expect(runnerWith().run(agent, next)).rejects.toThrow(
      /400 No tool output found for function call call_r1/,
    );

    const result = await runnerWith(toolCallRepairInputFilter({ logger: false })).run(agent, next);
    expect(result.finalOutput).toBe(COMPLETION_TEXT);
    expect(lastInput()).toEqual([
      "user",
      "function_call:call_r1",
      "function_call_output:call_r1",
      "user",
    ]);
    expect(server.received.at(-1)?.body.input?.[2]).toMatchObject({ output: INTERRUPTED });
  });

  it("an abort while the tool runs, the streamed items kept by the application: 400 without, an answer with", async () => {
    for (const withFilter of [false, true]) {
      const slow = slowTool();
      const agent = agentWith([slow.tool]);
      const runner = runnerWith(
        withFilter ? toolCallRepairInputFilter({ logger: false }) : undefined,
      );
      server.script("responses", { calls: [{ id: "call_x1", name: "export_report", args: {} }] });
      const stored: AgentInputItem[] = [user("Export the report")];
      const abort = new AbortController();
      const stream = await runner.run(agent, [...stored], { stream: true, signal: abort.signal });
      const reading = (async () => {
        for await (const event of stream) {
          if (event.type === "run_item_stream_event") {
            stored.push(event.item.rawItem as AgentInputItem);
          }
        }
      })();
      await slow.running;
      abort.abort();
      await reading;
      await stream.completed;
      expect(stream.cancelled).toBe(true);
      expect(stored.map((item) => item.type ?? item.role)).toEqual(["user", "function_call"]);

      const next = runner.run(agent, [...stored, user("Is it done?")]);
      if (withFilter) {
        expect((await next).finalOutput).toBe(COMPLETION_TEXT);
        expect(lastInput()).toEqual([
          "user",
          "function_call:call_x1",
          "function_call_output:call_x1",
          "user",
        ]);
      } else {
        await expect(next).rejects.toThrow(/400 No tool output found for function call call_x1/);
      }
    }
  });

  it("a session trimmed by a sessionInputCallback keeps a result whose call it cut: 400 without, an answer with", async () => {
    const agent = agentWith([lookup]);
    const session = new MemorySession();
    server.script("responses", {
      calls: [{ id: "call_l1", name: "lookup", args: { order: "7" } }],
    });
    await runnerWith().run(agent, "Where is order 7?", { session });
    const lastTwo = (history: AgentInputItem[], input: AgentInputItem[]) => [
      ...history.slice(-2),
      ...input,
    ];

    await expect(
      runnerWith().run(agent, "Thanks!", { session, sessionInputCallback: lastTwo }),
    ).rejects.toThrow(/400 No tool call found for function call output with call_id call_l1/);

    const result = await runnerWith(toolCallRepairInputFilter({ logger: false })).run(
      agent,
      "Thanks!",
      { session, sessionInputCallback: lastTwo },
    );
    expect(result.finalOutput).toBe(COMPLETION_TEXT);
    // The last two items of the session were the call's result and the answer: the result goes.
    expect(lastInput()).toEqual(["message", "user"]);
    // The repair is the model call's: the session keeps its items as they were.
    expect((await session.getItems()).map((item) => item.type)).toEqual([
      "message",
      "function_call",
      "function_call_result",
      "message",
      "message",
      "message",
    ]);
  });
});

describe("a call the SDK settles itself before any filter runs", () => {
  it("a pending approval in a restored RunState: its history leaves the call out", async () => {
    const agent = agentWith([refund]);
    server.script("responses", {
      calls: [{ id: "call_r2", name: "refund", args: { order: "9" } }],
    });
    const first = await runnerWith().run(agent, "Refund order 9");
    const state = await RunState.fromString(agent, first.state.toString());
    expect(state.getInterruptions()).toHaveLength(1);

    const { observed, passedAsItCame } = observedFilter();
    const result = await runnerWith(observed).run(agent, [...state.history, user("Forget it.")]);
    expect(result.finalOutput).toBe(COMPLETION_TEXT);
    expect(lastInput()).toEqual(["user", "user"]);
    expect(passedAsItCame).toEqual([true]);
  });

  it("a pending approval in a Session: the SDK leaves the call out of the session's history", async () => {
    const agent = agentWith([refund]);
    const session = new MemorySession();
    const { observed, passedAsItCame } = observedFilter();
    const runner = runnerWith(observed);
    server.script("responses", {
      calls: [{ id: "call_r3", name: "refund", args: { order: "5" } }],
    });
    expect((await runner.run(agent, "Refund order 5", { session })).interruptions).toHaveLength(1);
    expect((await session.getItems()).map((item) => item.type)).toContain("function_call");

    const result = await runner.run(agent, "Forget it.", { session });
    expect(result.finalOutput).toBe(COMPLETION_TEXT);
    expect(lastInput()).toEqual(["user", "user"]);
    expect(passedAsItCame).toEqual([true, true]);
  });

  it("an abort while the tool runs, with a Session: the SDK writes an error result itself", async () => {
    const slow = slowTool();
    const agent = agentWith([slow.tool]);
    const session = new MemorySession();
    const { observed, passedAsItCame } = observedFilter();
    const runner = runnerWith(observed);
    server.script("responses", { calls: [{ id: "call_x2", name: "export_report", args: {} }] });
    const abort = new AbortController();
    const running = runner.run(agent, "Export the report", { session, signal: abort.signal });
    await slow.running;
    abort.abort();
    await expect(running).rejects.toThrow(/abort/i);

    const result = await runner.run(agent, "Is it done?", { session });
    expect(result.finalOutput).toBe(COMPLETION_TEXT);
    expect(lastInput()).toEqual([
      "user",
      "function_call:call_x2",
      "function_call_output:call_x2",
      "user",
    ]);
    expect(server.received.at(-1)?.body.input?.[2]).not.toMatchObject({ output: INTERRUPTED });
    expect(passedAsItCame).toEqual([true, true]);
  });
});

describe("a conversation the provider keeps", () => {
  it("passes the tool results of a previousResponseId run on as they are: their calls are the provider's", async () => {
    const inputs: unknown[] = [];
    const answers: ModelResponse["output"][] = [
      [
        {
          type: "function_call",
          id: "fc_1",
          callId: "call_k1",
          name: "lookup",
          arguments: '{"order":"3"}',
          status: "completed",
        },
      ],
      [
        {
          type: "message",
          id: "msg_2",
          role: "assistant",
          status: "completed",
          content: [{ type: "output_text", text: "Shipped." }],
        },
      ],
    ];
    const model: Model = {
      async getResponse(request: ModelRequest): Promise<ModelResponse> {
        inputs.push(request.input);
        return { output: answers[inputs.length - 1] ?? [], usage: new Usage(), responseId: "r" };
      },
      getStreamedResponse: () => {
        throw new Error("not streamed");
      },
    };
    const agent = new Agent({ name: "support", model, tools: [lookup] });
    const runner = new Runner({
      callModelInputFilter: toolCallRepairInputFilter({ logger: false }),
    });
    const result = await runner.run(agent, "Where is order 3?", { previousResponseId: "resp_0" });
    expect(result.finalOutput).toBe("Shipped.");
    expect(inputs[1]).toEqual([
      expect.objectContaining({ type: "function_call_result", callId: "call_k1" }),
    ]);
  });

  it("with continuesStoredResponse: false, drops a result whose call is not in the input: a 400 by default, an answer with it", async () => {
    const agent = agentWith([lookup]);
    // A history cut before the call, sent whole: no previousResponseId keeps the call.
    const input: AgentInputItem[] = [
      functionResult("call_o1", "lookup"),
      user("Where is order 7?"),
    ];
    const refusal = /400 No tool call found for function call output with call_id call_o1/;
    await expect(runnerWith().run(agent, input)).rejects.toThrow(refusal);
    // "auto": an input of results and user messages alone may continue a stored response.
    const auto = runnerWith(toolCallRepairInputFilter({ logger: false }));
    await expect(auto.run(agent, input)).rejects.toThrow(refusal);

    const whole = runnerWith(
      toolCallRepairInputFilter({ logger: false, continuesStoredResponse: false }),
    );
    expect((await whole.run(agent, input)).finalOutput).toBe(COMPLETION_TEXT);
    expect(lastInput()).toEqual(["user"]);
  });
});
