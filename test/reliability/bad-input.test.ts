/**
 * Bad input: whatever a history holds, the engine and the middleware neither throw nor hang, and
 * what they hand on is a request every provider accepts (checked through the OpenAI and Anthropic
 * clients' own converters and Gemini's turn rules). Junk of every JavaScript type, frozen and
 * circular objects, getters and proxies that throw, calls of the wrong shape, a history of a
 * million messages, tool names no label was made for (through the real Prometheus exporter, and
 * promtool's parser where it is installed), and templates that try to expand twice.
 */
import { execFile } from "node:child_process";
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { afterEach, describe, expect, it } from "vitest";
import { prometheusName, series } from "../../dashboards/generator/names.js";
import { findOnPath } from "../../demo/prometheus-server.js";
import { danglingToolCallMiddleware, repairToolCalls, syntheticReasonOf } from "../../src/index.js";
import { type ServedTelemetryHandle, startTelemetry } from "../../src/setup/index.js";
import { ATTR_GEN_AI_TOOL_NAME } from "../../src/telemetry/semconv.js";
import { aiCalls, aiText, human, toolResult } from "../helpers/history.js";
import { freePort, scrape } from "../helpers/prometheus.js";
import { ACCEPTED_BY_ALL, providerViolations } from "../helpers/provider-payloads.js";

/** The messages of a history a client can send: anything else is no message at all. */
function sendable(messages: readonly unknown[]): BaseMessage[] {
  return messages.filter((message): message is BaseMessage => {
    try {
      return (
        message instanceof Object &&
        typeof (message as { type?: unknown }).type === "string" &&
        typeof (message as { _getType?: unknown })._getType === "function"
      );
    } catch {
      return false;
    }
  });
}

/** Repairs a history, and expects what comes out to be accepted by every provider. */
function expectProviderValid(history: readonly unknown[]) {
  const result = repairToolCalls(history);
  expect(providerViolations(sendable(result.messages))).toEqual(ACCEPTED_BY_ALL);
  return result;
}

const throwing = (what: string) => () => {
  throw new Error(`reading ${what}`);
};

/** An AI message whose one call has no result, between two human turns. */
const dangling = () => [human("find it"), aiCalls(["call_1", "search"])];

describe("junk entries of every type", () => {
  const junk: Record<string, unknown> = {
    null: null,
    undefined: undefined,
    "a number": 42,
    NaN: Number.NaN,
    "a string": "text",
    "a boolean": true,
    "a symbol": Symbol("message"),
    "a bigint": 10n,
    "a function": () => "message",
    "an array": [aiCalls("call_9")],
    "an empty object": {},
    "a null-prototype object": Object.create(null),
    "a Date": new Date(0),
    "a Map": new Map([["type", "ai"]]),
  };

  for (const [name, entry] of Object.entries(junk)) {
    it(`passes ${name} through where it stands, and repairs around it`, () => {
      const history = [...dangling(), entry, human("go on")];
      const { messages, repairs } = expectProviderValid(history);
      expect(repairs.map((repair) => repair.kind)).toEqual(["placeholder_inserted"]);
      expect(syntheticReasonOf(messages[2])).toBe("interrupted");
      expect(messages[3]).toBe(entry);
      expect(messages[4]).toBe(history[3]);
    });
  }

  it("returns a history of nothing but junk as the very same array", () => {
    const history = Object.values(junk);
    expect(repairToolCalls(history).messages).toBe(history);
  });

  it.each([
    ["null", null],
    ["undefined", undefined],
    ["a string", "messages"],
    ["an object", { 0: aiCalls("call_1"), length: 1 }],
    ["a number", 7],
  ])("returns %s given as the history as it is, without throwing", (_name, value) => {
    const result = repairToolCalls(value as unknown as unknown[]);
    expect(result.messages).toBe(value);
    expect(result.repairs).toEqual([]);
  });
});

describe("frozen objects", () => {
  const deepFreeze = <T>(value: T): T => {
    if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
      Object.freeze(value);
      for (const key of Reflect.ownKeys(value)) {
        deepFreeze((value as Record<string | symbol, unknown>)[key]);
      }
    }
    return value;
  };

  it("repairs a deep-frozen history of LangChain messages without writing to any of it", () => {
    const history = deepFreeze([
      ...dangling(),
      new AIMessage({ content: "", tool_calls: [{ name: "search", args: {} }] }),
      human("go on"),
    ]);
    const { messages, repairs } = expectProviderValid(history);
    expect(repairs.map((repair) => repair.kind)).toEqual([
      "placeholder_inserted",
      "id_assigned",
      "placeholder_inserted",
      "turn_inserted",
    ]);
    expect(messages).not.toBe(history);
    expect(messages).toHaveLength(history.length + 3);
    expect(syntheticReasonOf(messages[5])).toBe("turn_order");
    expect(messages[6]).toBe(history[3]);
    // The id goes on a copy, which can take it although the original is frozen.
    const copy = messages[3] as AIMessage;
    expect(copy).toBeInstanceOf(AIMessage);
    expect(copy.tool_calls?.[0]?.id).toBe(repairs[1]?.toolCallId);
    expect((history[2] as AIMessage).tool_calls?.[0]?.id).toBeUndefined();
  });

  it("repairs frozen plain objects with frozen call lists", () => {
    const history = deepFreeze([
      { type: "ai", content: "", tool_calls: [{ id: "call_1", name: "search", args: {} }] },
      { type: "human", content: "go on" },
    ]);
    const { messages } = repairToolCalls(history);
    expect(messages.map((message) => (message as { type: string }).type)).toEqual([
      "ai",
      "tool",
      "ai",
      "human",
    ]);
    expect(syntheticReasonOf(messages[2])).toBe("turn_order");
    expect(messages[3]).toBe(history[1]);
  });
});

describe("getters and proxies that throw", () => {
  const throwingGetterOn = (field: string, base: Record<string, unknown>) =>
    Object.defineProperty({ ...base }, field, { get: throwing(field), enumerable: true });

  const aiFields = { type: "ai", content: "", tool_calls: [{ id: "call_2", name: "search" }] };
  const toolFields = { type: "tool", content: "42", tool_call_id: "call_1" };
  const cases: Record<string, () => unknown> = {
    "type on an AI message": () => throwingGetterOn("type", aiFields),
    "role on a plain message": () => throwingGetterOn("role", { content: "hi" }),
    tool_calls: () => throwingGetterOn("tool_calls", aiFields),
    content: () => throwingGetterOn("content", aiFields),
    additional_kwargs: () => throwingGetterOn("additional_kwargs", { ...aiFields, tool_calls: [] }),
    "a call's id": () => ({
      ...aiFields,
      tool_calls: [Object.defineProperty({ name: "search" }, "id", { get: throwing("id") })],
    }),
    "tool_call_id on a result": () => throwingGetterOn("tool_call_id", toolFields),
    "a Responses output item's call_id": () => ({
      ...aiFields,
      content: [],
      response_metadata: {
        output: [
          Object.defineProperty({ type: "function_call", name: "search" }, "call_id", {
            get: throwing("call_id"),
            enumerable: true,
          }),
        ],
      },
    }),
    response_metadata: () => throwingGetterOn("response_metadata", { ...aiFields, content: [] }),
    "a tool_result block's tool_use_id in a human message": () => ({
      type: "human",
      content: [
        Object.defineProperty({ type: "tool_result", content: "42" }, "tool_use_id", {
          get: throwing("tool_use_id"),
          enumerable: true,
        }),
      ],
    }),
    "an entry that is not read until it is copied": () =>
      throwingGetterOn("extra", { ...aiFields, tool_calls: [{ name: "search" }] }),
    "a proxy whose every trap throws": () =>
      new Proxy(
        {},
        {
          get: throwing("get"),
          has: throwing("has"),
          ownKeys: throwing("ownKeys"),
          getPrototypeOf: throwing("getPrototypeOf"),
          getOwnPropertyDescriptor: throwing("getOwnPropertyDescriptor"),
        },
      ),
    "a revoked proxy": () => {
      const { proxy, revoke } = Proxy.revocable({ type: "ai" }, {});
      revoke();
      return proxy;
    },
  };

  for (const [name, make] of Object.entries(cases)) {
    it(`never throws on a getter that throws on ${name}, and keeps the entry where it stood`, () => {
      const entry = make();
      const history = [...dangling(), toolResult("call_1"), entry, human("go on")];
      // The entry itself never goes to expect(): the matchers would read it, and throw.
      const { messages } = repairToolCalls(history);
      expect(messages.length).toBe(history.length);
      expect(messages[3] === entry).toBe(true);
      // A history that also needs a repair elsewhere still gets it.
      const broken = [...dangling(), entry, human("go on")];
      const repaired = repairToolCalls(broken);
      expect(repaired.repairs.map((repair) => repair.kind)).toEqual(["placeholder_inserted"]);
      expect(repaired.messages.indexOf(entry)).toBe(3);
      expect(syntheticReasonOf(repaired.messages[2])).toBe("interrupted");
    });
  }

  it("hands the middleware's handler a request and never throws out of it", async () => {
    const entry = throwingGetterOn("type", aiFields);
    const middleware = danglingToolCallMiddleware({ logger: false });
    const hook = middleware.wrapModelCall as unknown as (
      request: unknown,
      handler: (request: { messages: unknown[] }) => unknown,
    ) => unknown;
    const history = [...dangling(), entry, human("go on")];
    let received: unknown[] | undefined;
    const response = new AIMessage("fine");
    const returned = await hook(
      { messages: history, runtime: {}, state: {}, tools: [] },
      (request) => {
        received = request.messages;
        return response;
      },
    );
    expect(returned).toBe(response);
    expect(received?.length).toBe(history.length + 1);
    expect(syntheticReasonOf(received?.[2])).toBe("interrupted");
    expect(received?.[3] === entry).toBe(true);
  });
});

describe("circular objects", () => {
  it("repairs a message that refers to itself, and a call whose arguments hold its message", () => {
    const ai = aiCalls(["call_1", "search"]) as AIMessage & { self?: unknown };
    ai.self = ai;
    const plain: Record<string, unknown> = { type: "ai", content: "" };
    plain.tool_calls = [{ id: "call_2", name: "search", args: { message: plain } }];
    plain.parent = plain;
    const history = [human("go"), ai, plain, human("go on")];
    const { messages, repairs } = repairToolCalls(history);
    expect(repairs.map((repair) => [repair.kind, repair.toolCallId])).toEqual([
      ["placeholder_inserted", "call_1"],
      ["placeholder_inserted", "call_2"],
      ["turn_inserted", "call_2"],
    ]);
    expect(messages[1]).toBe(ai);
    expect(messages[3]).toBe(plain);
    expect(syntheticReasonOf(messages[5])).toBe("turn_order");
    expect(messages).toHaveLength(7);
  });

  it("reads a call list that holds itself as one more call, without an id or a name, and answers both", () => {
    const loop: unknown[] = [{ id: "call_2", name: "search" }];
    loop.push(loop);
    const history = [human("go"), { type: "ai", content: "", tool_calls: loop }, human("go on")];
    const { messages, repairs } = repairToolCalls(history);
    expect(repairs.map((repair) => [repair.kind, repair.toolCallId])).toEqual([
      ["id_assigned", "tcr_1_1"],
      ["name_assigned", "tcr_1_1"],
      ["placeholder_inserted", "call_2"],
      ["placeholder_inserted", "tcr_1_1"],
      ["turn_inserted", "tcr_1_1"],
    ]);
    expect(messages).toHaveLength(6);
    expect(repairToolCalls(messages).messages).toBe(messages);
  });
});

describe("calls of the wrong shape", () => {
  it.each([
    ["a string", "call_1"],
    ["a number", 1],
    ["an object", { id: "call_1", name: "search" }],
    ["true", true],
  ])("reads tool_calls given as %s as no calls", (_name, value) => {
    const history = [{ type: "ai", content: "", tool_calls: value }, human("go on")];
    expect(repairToolCalls(history).messages).toBe(history);
  });

  it("gives a call with a numeric id a string id of its own, shared with the result right after it that has no usable id either", () => {
    const history = [
      { type: "ai", content: "", tool_calls: [{ id: 1, name: "search", args: {} }] },
      { type: "tool", content: "42", tool_call_id: 1 },
      human("go on"),
    ];
    const { messages, repairs } = repairToolCalls(history);
    expect(repairs.map((repair) => [repair.kind, repair.toolCallId])).toEqual([
      ["id_assigned", "tcr_0_0"],
      ["turn_inserted", "tcr_0_0"],
    ]);
    expect(syntheticReasonOf(messages[2])).toBe("turn_order");
    expect(
      (messages[0] as { tool_calls: { id: unknown }[] }).tool_calls.map((call) => call.id),
    ).toEqual(["tcr_0_0"]);
    expect(messages[1]).toMatchObject({ content: "42", tool_call_id: "tcr_0_0" });
  });

  it("reads calls whose name or arguments are of the wrong type", () => {
    const history = [
      {
        type: "ai",
        content: "",
        tool_calls: [],
        additional_kwargs: {
          tool_calls: [
            { id: "call_1", type: "function", function: { name: 7, arguments: 7 } },
            { id: "call_2", type: "function", function: "search" },
            { id: "call_3" },
          ],
        },
      },
    ];
    const { repairs } = repairToolCalls(history);
    expect(
      repairs
        .filter((repair) => repair.kind === "placeholder_inserted")
        .map((repair) => [repair.toolCallId, repair.toolName]),
    ).toEqual([
      ["call_1", "unknown"],
      ["call_2", "unknown"],
      ["call_3", "unknown"],
    ]);
  });
});

describe("a history of 1,000,000 messages", () => {
  const SIZE = 1_000_000;

  /**
   * Whole turns of human, AI call, its result and the AI's answer to it (well formed on every
   * wire), every `danglingEvery`-th turn stopping after the call (no result, no answer), then
   * human turns up to exactly SIZE messages.
   */
  function longHistory(danglingEvery: number | undefined): unknown[] {
    const history: unknown[] = [];
    for (let turn = 0; history.length + 4 <= SIZE; turn++) {
      const id = `call_${turn}`;
      history.push(human(`turn ${turn}`), aiCalls([id, "search"]));
      if (danglingEvery === undefined || turn % danglingEvery !== 0) {
        history.push(toolResult(id), aiText(`answer ${turn}`));
      }
    }
    while (history.length < SIZE) history.push(human("the end"));
    return history;
  }

  it("comes back as the very same array when it is clean", () => {
    const history = longHistory(undefined);
    const { messages, repairs } = repairToolCalls(history);
    expect(repairs).toEqual([]);
    // Not toBe(): a failing toBe would print a million messages.
    expect(messages === history).toBe(true);
  });

  it("gets a placeholder right after each dangling call, and a reply before the human turn after it, and nothing else changes", () => {
    const history = longHistory(750);
    const { messages, repairs } = repairToolCalls(history);
    const dangling = history.filter(
      (message, index) =>
        message instanceof AIMessage &&
        (message.tool_calls?.length ?? 0) > 0 &&
        !(history[index + 1] instanceof ToolMessage),
    ).length;
    expect(dangling).toBeGreaterThan(300);
    // Each dangling call is followed by a human turn: a placeholder and then a reply.
    expect(repairs).toHaveLength(2 * dangling);
    expect(messages).toHaveLength(SIZE + 2 * dangling);
    for (const [index, repair] of repairs.entries()) {
      if (index % 2 === 0) {
        expect(repair.kind).toBe("placeholder_inserted");
        const placeholder = messages[repair.outputIndex ?? -1] as ToolMessage;
        expect(syntheticReasonOf(placeholder)).toBe("interrupted");
        expect(messages[(repair.outputIndex ?? 0) - 1]).toBe(history[repair.callIndex ?? -1]);
        expect(placeholder.tool_call_id).toBe(repair.toolCallId);
      } else {
        expect(repair.kind).toBe("turn_inserted");
        const placeholder = repairs[index - 1];
        expect(repair.toolCallId).toBe(placeholder?.toolCallId);
        expect(repair.outputIndex).toBe((placeholder?.outputIndex ?? 0) + 1);
        const reply = messages[repair.outputIndex ?? -1] as AIMessage;
        expect(reply).toBeInstanceOf(AIMessage);
        expect(reply.tool_calls).toEqual([]);
        expect(syntheticReasonOf(reply)).toBe("turn_order");
        expect(messages[(repair.outputIndex ?? 0) + 1]).toBeInstanceOf(HumanMessage);
      }
    }
    expect(messages.filter((message) => syntheticReasonOf(message) === undefined)).toEqual(history);
  });

  it("repairs a long history whose break is in the careful analysis' hands", () => {
    const history = longHistory(1_000);
    // An orphan at the start sends the whole history to the careful analysis.
    history[0] = toolResult("call_none");
    const { messages, repairs } = repairToolCalls(history);
    expect(repairs[0]).toMatchObject({ kind: "orphan_dropped", resultIndex: 0 });
    expect(repairToolCalls(messages).messages).toBe(messages);
  });
});

describe("tool names no label was made for", () => {
  const NAMES = [
    'say "hi"',
    "back\\slash",
    "new\nline",
    "nul\u0000bell\u0007escape\u001b",
    "emoji 🔧🦜",
    "astral 𝒳 and combining é",
    "x".repeat(300),
  ];
  let handle: ServedTelemetryHandle | undefined;
  afterEach(async () => {
    await handle?.shutdown();
    handle = undefined;
  });

  const promtool = findOnPath("promtool");
  const required = process.env.REQUIRE_PROMETHEUS === "1";
  const promtoolNote =
    promtool === undefined && !required ? " (promtool's parser skipped: promtool not on PATH)" : "";

  it(`name their placeholders, and count right in the real exporter's escaped output${promtoolNote}`, async () => {
    handle = await startTelemetry({ port: await freePort() });
    const middleware = danglingToolCallMiddleware({ logger: false, providerName: "openai" });
    const hook = middleware.wrapModelCall as unknown as (
      request: unknown,
      handler: (request: { messages: unknown[] }) => unknown,
    ) => Promise<unknown>;
    const tools = NAMES.map((name) => ({ name, description: "A tool.", schema: {} }));
    for (const [index, name] of NAMES.entries()) {
      let received: unknown[] = [];
      await hook(
        {
          messages: [human("go"), aiCalls([`call_${index}`, name]), human("go on")],
          runtime: { configurable: { thread_id: `thread-${index}` } },
          state: {},
          tools,
          model: { model: "gpt-test" },
        },
        (request) => {
          received = request.messages;
          return new AIMessage("fine");
        },
      );
      expect((received[2] as ToolMessage).name).toBe(name);
    }

    const exposition = await scrape(handle.metricsUrl);
    const tool = prometheusName(ATTR_GEN_AI_TOOL_NAME);
    for (const name of NAMES) {
      expect(exposition.sum(series.danglingToolCalls, { [tool]: name }), name).toBe(1);
    }
    // Every line is a comment or a sample in the text format, with only \\, \" and \n escaped.
    const labelValue = String.raw`"(?:[^"\\\n]|\\[\\"n])*"`;
    const sample = new RegExp(
      String.raw`^[a-zA-Z_:][a-zA-Z0-9_:]*(\{[a-zA-Z_][a-zA-Z0-9_]*=${labelValue}(,[a-zA-Z_][a-zA-Z0-9_]*=${labelValue})*,?\})? \S+( \d+)?$`,
      "u",
    );
    for (const line of exposition.text.split("\n")) {
      if (line === "" || line.startsWith("# ")) continue;
      expect(line).toMatch(sample);
    }

    if (promtool !== undefined || required) {
      expect(promtool, "REQUIRE_PROMETHEUS=1 but promtool is not on the PATH").toBeDefined();
      const problems = await promtoolCheckMetrics(promtool as string, exposition.text);
      // promtool lints names too; only a parse error would mean the exposition is broken.
      expect(problems).not.toMatch(/error while linting|parse|unexpected|invalid/i);
    }
  });
});

function promtoolCheckMetrics(promtool: string, text: string): Promise<string> {
  return new Promise((resolve) => {
    const child = execFile(
      promtool,
      ["check", "metrics"],
      { timeout: 10_000 },
      (_error, stdout, stderr) => resolve(`${stdout}${stderr}`),
    );
    child.stdin?.end(text);
  });
}

describe("templates that try to expand twice", () => {
  const history = () => [
    { type: "ai", content: "", tool_calls: [{ id: "{tool_name}", name: "{tool_call_id}" }] },
  ];
  const textOf = (options: Parameters<typeof repairToolCalls>[1]) =>
    (repairToolCalls(history(), options).messages[1] as ToolMessage).content;

  it("fills a template in one pass: each value appears as it is", () => {
    expect(textOf({ placeholder: "{tool_name} {tool_call_id}" })).toBe(
      "{tool_call_id} {tool_name}",
    );
  });

  it("fills a template per reason in one pass", () => {
    expect(
      textOf({ placeholder: { interrupted: "[{tool_name}|{tool_call_id}|{tool_name}]" } }),
    ).toBe("[{tool_call_id}|{tool_name}|{tool_call_id}]");
  });

  it("uses a placeholder function's text as it is, tokens and all", () => {
    expect(
      textOf({ placeholder: ({ toolName }) => `${toolName} {tool_name} {tool_call_id}` }),
    ).toBe("{tool_call_id} {tool_name} {tool_call_id}");
  });

  it("leaves a template with a value that holds the other token's text unchanged on a second repair", () => {
    const options = { placeholder: "{tool_name}:{tool_call_id}" } as const;
    const once = repairToolCalls(history(), options);
    expect(repairToolCalls(once.messages, options).messages).toBe(once.messages);
    expect((once.messages[1] as ToolMessage).content).toBe("{tool_call_id}:{tool_name}");
  });
});
