/**
 * What the provider receives: each history below is built as the real clients build it, sent
 * through the real converters (Chat Completions, the Responses API, Anthropic; v0 and v1 output)
 * and held to each provider's rules, before and after the repair. One test per case found where
 * the engine and the wire disagreed, and the server-side tools that must never get a placeholder.
 */
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { PLACEHOLDER_CATALOG } from "../src/core/locales.js";
import { BLANK_SCREENSHOT } from "../src/core/placeholder-message.js";
import { type RepairTarget, repairToolCalls, syntheticReasonOf } from "../src/index.js";
import {
  anthropicAIMessage,
  approvedAndRejected,
  asOutputV1,
  functionCall,
  responsesAIMessage,
  toolUse,
} from "./helpers/client-messages.js";
import {
  ACCEPTED_BY_ALL,
  type Client,
  providerViolations,
  responsesInputOf,
} from "./helpers/provider-payloads.js";

const INTERRUPTED = PLACEHOLDER_CATALOG.en.interrupted;
const INVALID = PLACEHOLDER_CATALOG.en.invalid_arguments;

/** The client each target is for, by the name of its rules. */
const CLIENT_OF: Record<Exclude<RepairTarget, "any">, Client> = {
  "openai-completions": "openai",
  "openai-responses": "responses",
  anthropic: "anthropic",
};

function messagesOf(history: readonly unknown[], target?: RepairTarget): BaseMessage[] {
  return repairToolCalls(history, { target }).messages as BaseMessage[];
}

/** Repaired for every client, and for each client alone: every body passes its rules. */
function expectAcceptedEverywhere(history: () => BaseMessage[]): void {
  expect(providerViolations(messagesOf(history()))).toEqual(ACCEPTED_BY_ALL);
  for (const [target, client] of Object.entries(CLIENT_OF)) {
    expect(providerViolations(messagesOf(history(), target as RepairTarget))[client]).toEqual([]);
  }
}

function toolMessages(messages: readonly unknown[]): ToolMessage[] {
  return messages.filter((message): message is ToolMessage => ToolMessage.isInstance(message));
}

describe("1. Responses API, unparsable arguments", () => {
  const history = () => [
    new HumanMessage("Find x and y."),
    responsesAIMessage([functionCall("call_ok"), functionCall("call_bad", "search", '{"q":')]),
    new ToolMessage({ content: "x found", tool_call_id: "call_ok", name: "search" }),
    new HumanMessage("Go on."),
  ];

  it("the Responses client sends the cut-off call from the output, and the API refuses it unanswered", () => {
    const [ai] = history().slice(1) as AIMessage[];
    expect(ai?.invalid_tool_calls?.map((call) => call.id)).toEqual(["call_bad"]);
    expect(providerViolations(history())).toMatchObject({
      openai: [],
      responses: [{ message: "No tool output found for function call call_bad." }],
    });
  });

  it("is answered with an invalid-arguments placeholder, for the Responses API and for every client", () => {
    for (const target of ["openai-responses", "any"] as const) {
      const messages = messagesOf(history(), target);
      const answer = toolMessages(messages).find((message) => message.tool_call_id === "call_bad");
      expect(answer?.content).toBe(INVALID);
    }
    expectAcceptedEverywhere(history);
  });

  it("is left alone for Chat Completions, which never sends it", () => {
    const input = history();
    expect(repairToolCalls(input, { target: "openai-completions" }).messages).toBe(input);
  });
});

describe("2. Responses API, other call types", () => {
  const history = () => [
    new HumanMessage("Grep and look."),
    responsesAIMessage([
      {
        type: "custom_tool_call",
        id: "ctc_1",
        call_id: "call_custom",
        name: "grep",
        input: "TODO",
      },
      {
        type: "computer_call",
        id: "cu_1",
        call_id: "call_computer",
        action: { type: "screenshot" },
        pending_safety_checks: [],
        status: "completed",
      },
    ]),
    new HumanMessage("Stop. What happened?"),
  ];

  it("a placeholder goes out as an output of the call's own type", () => {
    for (const target of ["openai-responses", "any"] as const) {
      const input = responsesInputOf(messagesOf(history(), target)) as Record<string, unknown>[];
      expect(input.find((item) => item.call_id === "call_custom" && item !== input[1])).toEqual({
        type: "custom_tool_call_output",
        call_id: "call_custom",
        output: INTERRUPTED,
      });
      expect(input.find((item) => item.type === "computer_call_output")).toEqual({
        type: "computer_call_output",
        call_id: "call_computer",
        output: { type: "input_image", image_url: BLANK_SCREENSHOT },
      });
    }
    expectAcceptedEverywhere(history);
  });

  it("for the other clients, which send both as function calls, a placeholder is the usual text", () => {
    const messages = messagesOf(history(), "anthropic");
    expect(toolMessages(messages).map((message) => message.content)).toEqual([
      INTERRUPTED,
      INTERRUPTED,
    ]);
  });
});

describe("3. Calls edited after the model answered (approve + reject of parallel calls)", () => {
  const calls = [
    functionCall("c_email", "send_email", '{"to":"ops"}'),
    functionCall("c_delete", "delete_records", '{"table":"users"}'),
  ];
  const shapes: Record<string, () => AIMessage> = {
    "the Responses client, v0 (sends response_metadata.output)": () => responsesAIMessage(calls),
    "the Responses client, v1 (sends the tool_call blocks)": () =>
      asOutputV1(responsesAIMessage(calls)),
    "ChatAnthropic, v1 (sends the tool_call blocks)": () =>
      asOutputV1(
        anthropicAIMessage([
          toolUse("c_email", "send_email", { to: "ops" }),
          toolUse("c_delete", "delete_records", { table: "users" }),
        ]),
      ),
  };

  for (const [shape, aiMessage] of Object.entries(shapes)) {
    const history = () => [
      new HumanMessage("Email ops and delete the users table."),
      ...approvedAndRejected(aiMessage(), "c_delete"),
    ];

    it(`${shape}: the dropped call goes out unanswered as it is, and is answered once repaired`, () => {
      const client: Client = shape.startsWith("ChatAnthropic") ? "anthropic" : "responses";
      const [violation] = providerViolations(history())[client];
      expect(violation?.message).toContain("c_email");
      expectAcceptedEverywhere(history);
      const target = client === "anthropic" ? "anthropic" : "openai-responses";
      const answers = toolMessages(messagesOf(history(), target));
      expect(answers.map((answer) => [answer.tool_call_id, answer.content])).toEqual([
        ["c_email", INTERRUPTED],
        ["c_delete", "User rejected the tool call for `delete_records` with id c_delete"],
      ]);
    });
  }

  it("Chat Completions sends the revised list alone: nothing to repair for it", () => {
    const input = [
      new HumanMessage("Email and delete."),
      ...approvedAndRejected(responsesAIMessage(calls), "c_delete"),
    ];
    expect(repairToolCalls(input, { target: "openai-completions" }).messages).toBe(input);
  });
});

describe("4. v1 tool_call blocks without an id, or with one id twice", () => {
  const v1 = (ids: readonly string[]) =>
    asOutputV1(
      anthropicAIMessage(ids.map((id, position) => toolUse(id, "search", { n: position }))),
    );
  const cases: Record<string, () => BaseMessage[]> = {
    "blocks without an id": () => [
      new HumanMessage("Search twice."),
      v1(["", ""]),
      new HumanMessage("Go on."),
    ],
    "one id twice": () => [
      new HumanMessage("Search twice."),
      v1(["toolu_1", "toolu_1"]),
      new HumanMessage("Go on."),
    ],
  };

  for (const [name, history] of Object.entries(cases)) {
    it(`${name}: the ids given go into the blocks the converters send, not only tool_calls`, () => {
      expect(providerViolations(history()).anthropic).not.toEqual([]);
      for (const target of ["anthropic", "openai-responses", "any"] as const) {
        const ai = messagesOf(history(), target)[1] as AIMessage;
        const blockIds = (ai.content as { type: string; id?: string }[])
          .filter((block) => block.type === "tool_call")
          .map((block) => block.id);
        expect(new Set(blockIds).size).toBe(2);
        expect(blockIds.every((id) => typeof id === "string" && id !== "")).toBe(true);
      }
      expectAcceptedEverywhere(history);
    });
  }
});

describe("5. A call without an id that did run", () => {
  it("its result, without an id either, answers it under the id the call is given: nothing says interrupted", () => {
    const history = () => [
      new HumanMessage("Look it up."),
      new AIMessage({ content: "", tool_calls: [{ name: "search", args: { q: "x" } }] }),
      new ToolMessage({
        content: "x found",
        tool_call_id: undefined as unknown as string,
        name: "search",
      }),
      new HumanMessage("Thanks. And then?"),
    ];
    const { messages, repairs } = repairToolCalls(history());
    // The human message after the result gets a synthetic reply before it (Bedrock, Mistral).
    expect(repairs.map((repair) => repair.kind)).toEqual(["id_assigned", "turn_inserted"]);
    const ai = messages[1] as AIMessage;
    const [result] = toolMessages(messages);
    expect(result?.content).toBe("x found");
    expect(result?.tool_call_id).toBe(ai.tool_calls?.[0]?.id);
    expect(repairs[1]).toMatchObject({ toolCallId: ai.tool_calls?.[0]?.id, outputIndex: 3 });
    expect(syntheticReasonOf(messages[3])).toBe("turn_order");
    expect(JSON.stringify(messages)).not.toContain(INTERRUPTED);
    expectAcceptedEverywhere(history);
  });

  it("several such calls are paired with their results in order, one result per call", () => {
    const history = [
      new AIMessage({
        content: "",
        tool_calls: [
          { name: "search", args: { q: "x" } },
          { name: "calc", args: { e: "1+1" } },
        ],
      }),
      new ToolMessage({ content: "x found", tool_call_id: "", name: "search" }),
      new ToolMessage({ content: "2", tool_call_id: "", name: "calc" }),
    ];
    const { messages } = repairToolCalls(history);
    const ai = messages[0] as AIMessage;
    expect(toolMessages(messages).map((result) => [result.tool_call_id, result.content])).toEqual([
      [ai.tool_calls?.[0]?.id, "x found"],
      [ai.tool_calls?.[1]?.id, "2"],
    ]);
  });

  it("where results are fewer than the calls (one name for both), the result answers the first call and only the other gets a placeholder", () => {
    const history = [
      new AIMessage({
        content: "",
        tool_calls: [
          { name: "search", args: { q: "x" } },
          { name: "search", args: { q: "y" } },
        ],
      }),
      new ToolMessage({ content: "found", tool_call_id: "", name: "search" }),
    ];
    const { messages, repairs } = repairToolCalls(history);
    const ai = messages[0] as AIMessage;
    expect(toolMessages(messages).map((result) => [result.tool_call_id, result.content])).toEqual([
      [ai.tool_calls?.[0]?.id, "found"],
      [ai.tool_calls?.[1]?.id, INTERRUPTED],
    ]);
    expect(syntheticReasonOf(messages[2])).toBe("interrupted");
    expect(repairs.map((repair) => repair.kind)).not.toContain("orphan_dropped");
  });
});

describe("6. Anthropic tool_result blocks in a human message", () => {
  const history = () => [
    new HumanMessage("Look it up."),
    anthropicAIMessage([{ type: "text", text: "Searching." }, toolUse("toolu_1")]),
    new HumanMessage({
      content: [
        { type: "tool_result", tool_use_id: "toolu_1", content: "x found" },
        { type: "text", text: "And summarize it." },
      ],
    }),
  ];

  it("answer their tool_use: for ChatAnthropic the history is clean as it is", () => {
    const input = history();
    expect(providerViolations(input).anthropic).toEqual([]);
    expect(repairToolCalls(input, { target: "anthropic" }).messages).toBe(input);
  });

  it("for every client, each becomes a tool message and no placeholder is added beside it", () => {
    const { messages, repairs } = repairToolCalls(history());
    // The rest of the human message follows the result: a synthetic reply goes between them.
    expect(repairs.map((repair) => repair.kind)).toEqual(["result_moved", "turn_inserted"]);
    const [result] = toolMessages(messages);
    expect([result?.tool_call_id, result?.content]).toEqual(["toolu_1", "x found"]);
    expect(messages.indexOf(result as ToolMessage)).toBe(2);
    expect(syntheticReasonOf(messages[3])).toBe("turn_order");
    expect((messages[4] as HumanMessage).content).toEqual([
      { type: "text", text: "And summarize it." },
    ]);
    expectAcceptedEverywhere(history);
  });

  it("with a call they leave unanswered, ChatAnthropic gets one result per call", () => {
    const partial = () => [
      anthropicAIMessage([toolUse("toolu_1"), toolUse("toolu_2")]),
      new HumanMessage({
        content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "x" }],
      }),
    ];
    const messages = messagesOf(partial(), "anthropic");
    expect(toolMessages(messages).map((result) => [result.tool_call_id, result.content])).toEqual([
      ["toolu_1", "x"],
      ["toolu_2", INTERRUPTED],
    ]);
    expectAcceptedEverywhere(partial);
  });
});

describe("7. A result that stands before its call, with a unique id", () => {
  it("is moved after its call instead of being dropped for a placeholder", () => {
    const history = () => [
      new HumanMessage("Look it up."),
      new ToolMessage({ content: "x found", tool_call_id: "call_1", name: "search" }),
      new AIMessage({ content: "", tool_calls: [{ id: "call_1", name: "search", args: {} }] }),
    ];
    const { messages, repairs } = repairToolCalls(history());
    expect(repairs.map((repair) => repair.kind)).toEqual(["result_moved"]);
    expect(toolMessages(messages).map((result) => result.content)).toEqual(["x found"]);
    expect(messages.indexOf(toolMessages(messages)[0] as ToolMessage)).toBe(2);
    expectAcceptedEverywhere(history);
  });
});

describe("8. Empty tool names", () => {
  it("the copy sent names the call, and its placeholder carries the same name", () => {
    const history = () => [
      new HumanMessage("Do it."),
      new AIMessage({ content: "", tool_calls: [{ id: "call_1", name: "", args: {} }] }),
      new HumanMessage("Well?"),
    ];
    expect(providerViolations(history()).openai[0]?.message).toContain(
      "function.name': empty string",
    );
    const { messages, repairs } = repairToolCalls(history());
    expect(repairs.map((repair) => [repair.kind, repair.toolName])).toEqual([
      ["name_assigned", "unknown"],
      ["placeholder_inserted", "unknown"],
      ["turn_inserted", "unknown"],
    ]);
    expect((messages[1] as AIMessage).tool_calls?.[0]?.name).toBe("unknown");
    expect(toolMessages(messages)[0]?.name).toBe("unknown");
    expectAcceptedEverywhere(history);
  });

  it("a name another channel gives the call is used where one lacks it", () => {
    const history = () => [
      anthropicAIMessage([toolUse("toolu_1", "search")]),
      new HumanMessage("Well?"),
    ];
    const input = history();
    (input[0] as AIMessage).tool_calls = [{ id: "toolu_1", name: "", args: {}, type: "tool_call" }];
    const messages = messagesOf(input);
    expect((messages[0] as AIMessage).tool_calls?.[0]?.name).toBe("search");
    expect(toolMessages(messages)[0]?.name).toBe("search");
  });
});

describe("server-side tools get no placeholder", () => {
  const histories: Record<string, () => BaseMessage[]> = {
    "Responses web_search_call and file_search_call (v0)": () => [
      new HumanMessage("Search the web and the files."),
      responsesAIMessage([
        {
          type: "web_search_call",
          id: "ws_1",
          status: "completed",
          action: { type: "search", query: "x" },
        },
        { type: "file_search_call", id: "fs_1", status: "completed", queries: ["x"], results: [] },
        {
          type: "message",
          id: "msg_1",
          role: "assistant",
          status: "completed",
          content: [{ type: "output_text", text: "Found.", annotations: [] }],
        },
      ]),
      new HumanMessage("Thanks."),
    ],
    "Responses web_search_call (v1 server_tool_call blocks)": () => [
      new HumanMessage("Search the web."),
      asOutputV1(
        responsesAIMessage([
          {
            type: "web_search_call",
            id: "ws_1",
            status: "completed",
            action: { type: "search", query: "x" },
          },
        ]),
      ),
      new HumanMessage("Thanks."),
    ],
    "Responses mcp_call and code_interpreter_call (v0)": () => [
      new HumanMessage("Ask the MCP server, then compute."),
      responsesAIMessage([
        {
          type: "mcp_call",
          id: "mcp_1",
          server_label: "docs",
          name: "lookup",
          arguments: "{}",
          output: "ok",
        },
        {
          type: "code_interpreter_call",
          id: "ci_1",
          status: "completed",
          code: "1+1",
          container_id: "c",
          outputs: [],
        },
      ]),
      new HumanMessage("Thanks."),
    ],
    "Anthropic server_tool_use with its web_search_tool_result": () => [
      new HumanMessage("Search the web."),
      anthropicAIMessage([
        { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: { query: "x" } },
        { type: "web_search_tool_result", tool_use_id: "srvtoolu_1", content: [] },
        { type: "text", text: "Found." },
      ]),
      new HumanMessage("Thanks."),
    ],
  };

  for (const [name, history] of Object.entries(histories)) {
    it(`${name}: the history comes back as it is, for every target`, () => {
      for (const target of ["any", ...Object.keys(CLIENT_OF)] as RepairTarget[]) {
        const input = history();
        expect(repairToolCalls(input, { target }).messages).toBe(input);
      }
    });
  }
});
