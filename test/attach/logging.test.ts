/**
 * What the library writes to a logger: every line starts with `[tool-call-resilience] `, a repair
 * is warned about once per history (as the counters count a dangling call) and its repeats on
 * later model calls go to `debug`, and the default console logger prints those repeats only when
 * `NODE_DEBUG` names the library.
 */
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import type { MeterProvider } from "@opentelemetry/api";
import { createAgent } from "langchain";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
  danglingToolCallMiddleware,
  type RepairLogger,
  repairOpenAIChatMessages,
  type ToolCallRepair,
  ToolCallResilienceOptionsError,
  withToolCallRepair,
} from "../../src/index.js";
import { DOUBLE_ATTACHMENT_WARNING } from "../../src/middleware.js";
import { METRIC_DANGLING_TOOL_CALLS } from "../../src/telemetry/semconv.js";
import {
  agentWith,
  aiAnswer,
  aiToolCall,
  humanTurn,
  onThread,
  scriptedModel,
  searchTool,
} from "../helpers/agent.js";
import { aiCalls, human } from "../helpers/history.js";
import { metricsHarness } from "../helpers/telemetry.js";

const PREFIX = "[tool-call-resilience] ";
/** The warning of a LangChain attachment, whose placeholders are `ToolMessage`s. */
const ONE_PLACEHOLDER = `${PREFIX}Injecting 1 placeholder ToolMessage(s) for dangling tool calls`;
/** The warning of a native format, whose placeholders are tool results of that format. */
const ONE_NATIVE_PLACEHOLDER = `${PREFIX}Injecting 1 placeholder tool result(s) for dangling tool calls`;
/** A placeholder, and the synthetic reply written between it and the user message after it. */
const ONE_PLACEHOLDER_AND_TURN = `${ONE_PLACEHOLDER}; inserted 1 synthetic turn(s) the order of turns needs`;
const CALL_1 = { id: "call_1", name: "search", args: { query: "weather" } };
const CALL_2 = { id: "call_2", name: "search", args: { query: "tides" } };
const OPENAI_CALL = {
  id: "call_1",
  type: "function",
  function: { name: "search", arguments: "{}" },
};

/** A logger with every method, whose calls the test can read. */
function spyLogger() {
  return {
    warn: vi.fn<RepairLogger["warn"]>(),
    error: vi.fn<NonNullable<RepairLogger["error"]>>(),
    debug: vi.fn<NonNullable<RepairLogger["debug"]>>(),
  };
}

/** Every message a spy logger got, at any level. */
function linesOf(logger: ReturnType<typeof spyLogger>): string[] {
  return [...logger.warn.mock.calls, ...logger.error.mock.calls, ...logger.debug.mock.calls].map(
    ([message]) => message,
  );
}

/** The tool call ids of the repairs a log line reports. */
function repairedCallsOf(details: Record<string, unknown> | undefined): string[] {
  return ((details?.repairs ?? []) as ToolCallRepair[]).map((repair) => repair.toolCallId);
}

/** The kind and tool call id of each repair a log line reports, as `"<kind> <id>"`. */
function repairsOf(details: Record<string, unknown> | undefined): string[] {
  return ((details?.repairs ?? []) as ToolCallRepair[]).map(
    (repair) => `${repair.kind} ${repair.toolCallId}`,
  );
}

/** A thread whose first model call already sees a dangling call (`a0` never got its result). */
const brokenThread = () => [
  humanTurn("h1", "Weather?"),
  aiToolCall("a0", CALL_1),
  humanTurn("h2", "Well?"),
];

interface HookRequest {
  messages: BaseMessage[];
  runtime: { configurable?: { thread_id?: string } };
  state: { messages: BaseMessage[] };
  model: unknown;
}

/** The middleware's wrapModelCall, called as createAgent calls it. */
function hookOf(options: Parameters<typeof danglingToolCallMiddleware>[0]) {
  const hook = danglingToolCallMiddleware(options).wrapModelCall as unknown as (
    request: HookRequest,
    handler: (request: HookRequest) => AIMessage,
  ) => unknown;
  return (messages: BaseMessage[], threadId?: string) =>
    hook(
      {
        messages,
        runtime: threadId === undefined ? {} : onThread(threadId),
        state: { messages },
        model: {},
      },
      () => new AIMessage("fine"),
    );
}

describe("every line the library logs starts with [tool-call-resilience]", () => {
  it("the repair warning, of the middleware, withToolCallRepair and a native format, each naming what it inserts", async () => {
    const logger = spyLogger();
    hookOf({ logger })(brokenThread(), "prefix-middleware");
    await withToolCallRepair(scriptedModel(new AIMessage("fine")), { logger }).invoke(
      brokenThread(),
      onThread("prefix-wrapper"),
    );
    repairOpenAIChatMessages(
      [
        { role: "user", content: "Weather?" },
        { role: "assistant", content: null, tool_calls: [OPENAI_CALL] },
      ],
      { logger },
    );

    // The native format writes no synthetic turn, and its history ends at the call anyway.
    expect(logger.warn.mock.calls.map(([message]) => message)).toEqual([
      ONE_PLACEHOLDER_AND_TURN,
      ONE_PLACEHOLDER_AND_TURN,
      ONE_NATIVE_PLACEHOLDER,
    ]);
  });

  it("a failure of the library, at error", () => {
    const logger = spyLogger();
    // A request that can be repaired but not copied to hand the repair on.
    const messages = brokenThread();
    const request = new Proxy(
      { messages, runtime: {}, state: { messages }, model: {} },
      {
        ownKeys() {
          throw new Error("request cannot be listed");
        },
      },
    );
    const hook = danglingToolCallMiddleware({ logger }).wrapModelCall as unknown as (
      request: unknown,
      handler: () => AIMessage,
    ) => unknown;
    hook(request, () => new AIMessage("fine"));
    // A message a native format cannot read, and a meter provider that throws.
    const hostile = {
      get role(): string {
        throw new Error("no reading me");
      },
    };
    repairOpenAIChatMessages([hostile], { logger });
    const broken = {
      getMeter() {
        throw new Error("meter down");
      },
    } as unknown as MeterProvider;
    hookOf({ logger, meterProvider: broken })(brokenThread(), "prefix-telemetry");

    expect(logger.error.mock.calls.map(([message]) => message)).toEqual([
      `${PREFIX}Tool-call middleware failed; passing the request on unchanged`,
      `${PREFIX}Tool-call repair (openai-chat) failed; passing the messages on unchanged`,
      `${PREFIX}OpenTelemetry metrics failed; the model call goes on. Later metrics failures are not logged`,
    ]);
  });

  it("the double-attachment warning, whose exported constant stays the bare text", async () => {
    const logger = spyLogger();
    const model = withToolCallRepair(scriptedModel(aiAnswer("a1", "Hi.")), { logger });
    const agent = createAgent({
      model,
      tools: [],
      middleware: [danglingToolCallMiddleware({ logger })],
    });

    await agent.invoke({ messages: [humanTurn("h1", "Hi")] });

    expect(DOUBLE_ATTACHMENT_WARNING.startsWith(PREFIX)).toBe(false);
    expect(logger.warn.mock.calls.map(([message]) => message)).toEqual([
      `${PREFIX}${DOUBLE_ATTACHMENT_WARNING}`,
    ]);
  });

  it("a failed locale resolver and a failed placeholder function", () => {
    const logger = spyLogger();
    hookOf({
      logger,
      locale: () => {
        throw new Error("no locale service");
      },
      placeholder: () => {
        throw new Error("template service down");
      },
    })(brokenThread(), "prefix-resolvers");

    const lines = linesOf(logger);
    expect(lines).toEqual([
      `${PREFIX}Locale resolver failed; using English placeholder text`,
      ONE_PLACEHOLDER_AND_TURN,
      `${PREFIX}Placeholder function failed; using the catalog text`,
    ]);
  });
});

describe("a dangling call is warned about once per history, its repeats at debug", () => {
  it("warns once over three model calls of a thread that is not persisted, then logs at debug", async () => {
    const logger = spyLogger();
    const harness = metricsHarness();
    const model = scriptedModel(aiAnswer("a1", "?"), aiAnswer("a2", "?"), aiAnswer("a3", "?"));
    const agent = agentWith({
      model,
      tools: [searchTool()],
      middleware: [danglingToolCallMiddleware({ logger, meterProvider: harness.meterProvider })],
    });

    await agent.invoke({ messages: brokenThread() }, onThread("kept"));
    await agent.invoke({ messages: [humanTurn("h3", "Hello?")] }, onThread("kept"));
    await agent.invoke({ messages: [humanTurn("h4", "Anyone?")] }, onThread("kept"));

    expect(model.callCount).toBe(3);
    expect(logger.warn).toHaveBeenCalledTimes(1);
    expect(logger.warn.mock.calls[0]).toEqual([
      ONE_PLACEHOLDER_AND_TURN,
      {
        threadId: "kept",
        repairs: [
          expect.objectContaining({ kind: "placeholder_inserted", toolCallId: "call_1" }),
          expect.objectContaining({ kind: "turn_inserted", toolCallId: "call_1" }),
        ],
      },
    ]);
    expect(logger.debug).toHaveBeenCalledTimes(2);
    for (const [message, details] of logger.debug.mock.calls) {
      expect(message).toBe(`${ONE_PLACEHOLDER_AND_TURN} (again; warned on an earlier model call)`);
      expect(details).toMatchObject({ threadId: "kept" });
      expect(repairedCallsOf(details)).toEqual(["call_1", "call_1"]);
    }
    expect(logger.error).not.toHaveBeenCalled();
    // As the counters count it: one dangling call.
    expect(await harness.sum(METRIC_DANGLING_TOOL_CALLS)).toBe(1);
    await harness.shutdown();
  });

  it("warns once, and throws nothing, with a logger that has no debug", async () => {
    const warn = vi.fn<RepairLogger["warn"]>();
    const model = scriptedModel(aiAnswer("a1", "?"), aiAnswer("a2", "?"), aiAnswer("a3", "?"));
    const agent = agentWith({
      model,
      tools: [searchTool()],
      middleware: [danglingToolCallMiddleware({ logger: { warn } })],
    });

    await agent.invoke({ messages: brokenThread() }, onThread("no-debug"));
    await agent.invoke({ messages: [humanTurn("h3", "Hello?")] }, onThread("no-debug"));
    await agent.invoke({ messages: [humanTurn("h4", "Anyone?")] }, onThread("no-debug"));

    expect(model.callCount).toBe(3);
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn.mock.calls[0]?.[0]).toBe(ONE_PLACEHOLDER_AND_TURN);
  });

  it("warns again, once, for a second dangling call that appears later on the thread", async () => {
    const logger = spyLogger();
    const harness = metricsHarness();
    const model = scriptedModel(aiAnswer("a1", "?"), aiAnswer("a2", "?"), aiAnswer("a3", "?"));
    const agent = agentWith({
      model,
      tools: [searchTool()],
      middleware: [danglingToolCallMiddleware({ logger, meterProvider: harness.meterProvider })],
    });

    await agent.invoke({ messages: brokenThread() }, onThread("second"));
    await agent.invoke(
      { messages: [aiToolCall("b0", CALL_2), humanTurn("h3", "And tides?")] },
      onThread("second"),
    );
    await agent.invoke({ messages: [humanTurn("h4", "Anyone?")] }, onThread("second"));

    // The second warning tells of the new call alone; the old one, seen again, is at debug.
    expect(logger.warn.mock.calls.map(([message]) => message)).toEqual([
      ONE_PLACEHOLDER_AND_TURN,
      ONE_PLACEHOLDER_AND_TURN,
    ]);
    expect(logger.warn.mock.calls.map(([, details]) => repairsOf(details))).toEqual([
      ["placeholder_inserted call_1", "turn_inserted call_1"],
      ["placeholder_inserted call_2", "turn_inserted call_2"],
    ]);
    expect(logger.debug.mock.calls.map(([, details]) => repairsOf(details))).toEqual([
      ["placeholder_inserted call_1", "turn_inserted call_1"],
      [
        "placeholder_inserted call_1",
        "turn_inserted call_1",
        "placeholder_inserted call_2",
        "turn_inserted call_2",
      ],
    ]);
    expect(await harness.sum(METRIC_DANGLING_TOOL_CALLS)).toBe(2);
    await harness.shutdown();
  });

  it("warns once on each of two threads with the same history", async () => {
    const logger = spyLogger();
    const model = scriptedModel(...["a1", "a2", "a3", "a4"].map((id) => aiAnswer(id, "?")));
    const agent = agentWith({
      model,
      tools: [searchTool()],
      middleware: [danglingToolCallMiddleware({ logger })],
    });

    for (const thread of ["left", "right"]) {
      await agent.invoke({ messages: brokenThread() }, onThread(thread));
      await agent.invoke({ messages: [humanTurn("h3", "Hello?")] }, onThread(thread));
    }

    expect(logger.warn.mock.calls.map(([, details]) => details?.threadId)).toEqual([
      "left",
      "right",
    ]);
    expect(logger.debug.mock.calls.map(([, details]) => details?.threadId)).toEqual([
      "left",
      "right",
    ]);
  });

  it("warns at every sighting of a call with no thread and no message id, as it is counted", async () => {
    const logger = spyLogger();
    const model = withToolCallRepair(
      scriptedModel(...["a1", "a2", "a3"].map((id) => aiAnswer(id, "?"))),
      { logger },
    );
    const history = [human("Weather?"), aiCalls(["call_1", "search"]), human("Well?")];
    for (let call = 0; call < 3; call++) await model.invoke(history);

    const openAI = [
      { role: "user", content: "Weather?" },
      { role: "assistant", content: null, tool_calls: [OPENAI_CALL] },
    ];
    repairOpenAIChatMessages(openAI, { logger });
    repairOpenAIChatMessages(openAI, { logger });
    // With a thread, the same messages are told apart from another conversation's: warned once.
    repairOpenAIChatMessages(openAI, { logger }, { threadId: "native" });
    repairOpenAIChatMessages(openAI, { logger }, { threadId: "native" });

    expect(logger.warn).toHaveBeenCalledTimes(6);
    expect(logger.debug).toHaveBeenCalledTimes(1);
    expect(logger.debug.mock.calls[0]?.[1]).toMatchObject({ threadId: "native" });
  });

  it("remembers per logger: agents built per request with one logger warn once", () => {
    const logger = spyLogger();
    hookOf({ logger })(brokenThread(), "per-request");
    hookOf({ logger })(brokenThread(), "per-request");
    hookOf({ logger: spyLogger() })(brokenThread(), "per-request");
    expect(logger.warn).toHaveBeenCalledTimes(1);
    expect(logger.debug).toHaveBeenCalledTimes(1);
  });

  it("logs a failed placeholder function where its repair goes: warn first, debug after", () => {
    const logger = spyLogger();
    const call = hookOf({
      logger,
      placeholder: () => {
        throw new Error("template service down");
      },
    });
    call(brokenThread(), "failing-placeholder");
    call(brokenThread(), "failing-placeholder");

    const failed = `${PREFIX}Placeholder function failed; using the catalog text`;
    expect(logger.warn.mock.calls.map(([message]) => message)).toEqual([
      ONE_PLACEHOLDER_AND_TURN,
      failed,
    ]);
    expect(logger.debug.mock.calls.map(([message]) => message)).toEqual([
      `${ONE_PLACEHOLDER_AND_TURN} (again; warned on an earlier model call)`,
      failed,
    ]);
  });

  it("logs a failed locale resolver where its placeholder goes: warn first, debug after", () => {
    const logger = spyLogger();
    const call = hookOf({
      logger,
      locale: () => {
        throw new Error("no locale in this context");
      },
    });
    call(brokenThread(), "failing-resolver");
    call(brokenThread(), "failing-resolver");
    // A new dangling call on the same thread: the resolver's failure is news again.
    call(
      [...brokenThread(), aiToolCall("b0", CALL_2), humanTurn("h3", "And?")],
      "failing-resolver",
    );

    const failed = `${PREFIX}Locale resolver failed; using English placeholder text`;
    expect(logger.warn.mock.calls.map(([message]) => message)).toEqual([
      failed,
      ONE_PLACEHOLDER_AND_TURN,
      failed,
      ONE_PLACEHOLDER_AND_TURN,
    ]);
    expect(logger.debug.mock.calls.map(([message]) => message)).toEqual([
      failed,
      `${ONE_PLACEHOLDER_AND_TURN} (again; warned on an earlier model call)`,
      `${ONE_PLACEHOLDER_AND_TURN} (again; warned on an earlier model call)`,
    ]);
  });

  it("goes on when the logger's debug throws", () => {
    const warn = vi.fn<RepairLogger["warn"]>();
    const debug = vi.fn(() => {
      throw new Error("debug sink down");
    });
    const call = hookOf({ logger: { warn, debug } });
    expect(call(brokenThread(), "throwing-debug")).toEqual(new AIMessage("fine"));
    expect(call(brokenThread(), "throwing-debug")).toEqual(new AIMessage("fine"));
    expect(debug).toHaveBeenCalledTimes(1);
    expect(warn).toHaveBeenCalledTimes(1);
  });

  it("warns at every sighting with countOnceMemory: 0, as the counters then count", () => {
    const logger = spyLogger();
    const call = hookOf({ logger, countOnceMemory: 0 });
    call(brokenThread(), "no-memory");
    call(brokenThread(), "no-memory");
    expect(logger.warn).toHaveBeenCalledTimes(2);
    expect(logger.debug).not.toHaveBeenCalled();
  });
});

describe("the default logger", () => {
  const original = process.env.NODE_DEBUG;
  let consoleWarn: ReturnType<typeof vi.spyOn>;
  let consoleDebug: ReturnType<typeof vi.spyOn>;

  beforeEach(() => {
    delete process.env.NODE_DEBUG;
    consoleWarn = vi.spyOn(console, "warn").mockImplementation(() => {});
    consoleDebug = vi.spyOn(console, "debug").mockImplementation(() => {});
  });

  afterEach(() => {
    consoleWarn.mockRestore();
    consoleDebug.mockRestore();
    if (original === undefined) delete process.env.NODE_DEBUG;
    else process.env.NODE_DEBUG = original;
  });

  it("prints the repeats to console.debug only when NODE_DEBUG names tool-call-resilience", () => {
    const call = hookOf({});
    call(brokenThread(), "default-logger");
    call(brokenThread(), "default-logger");
    expect(consoleWarn).toHaveBeenCalledTimes(1);
    expect(consoleWarn.mock.calls[0]?.[0]).toBe(ONE_PLACEHOLDER_AND_TURN);
    expect(consoleDebug).not.toHaveBeenCalled();

    process.env.NODE_DEBUG = "http";
    call(brokenThread(), "default-logger");
    expect(consoleDebug).not.toHaveBeenCalled();

    process.env.NODE_DEBUG = "http,tool-call-resilience";
    call(brokenThread(), "default-logger");
    expect(consoleDebug).toHaveBeenCalledTimes(1);
    expect(consoleDebug.mock.calls[0]?.[0]).toBe(
      `${ONE_PLACEHOLDER_AND_TURN} (again; warned on an earlier model call)`,
    );

    // Node's own reading: case ignored, `*` a wildcard.
    process.env.NODE_DEBUG = "TOOL-CALL-*";
    call(brokenThread(), "default-logger");
    expect(consoleDebug).toHaveBeenCalledTimes(2);
    expect(consoleWarn).toHaveBeenCalledTimes(1);
  });
});

describe("the logger option", () => {
  it("accepts a debug method, and rejects a debug that is not one, naming it", () => {
    expect(() => danglingToolCallMiddleware({ logger: spyLogger() })).not.toThrow();
    const bad = { warn() {}, debug: "verbose" } as unknown as RepairLogger;
    expect(() => danglingToolCallMiddleware({ logger: bad })).toThrow(
      ToolCallResilienceOptionsError,
    );
    expect(() => danglingToolCallMiddleware({ logger: bad })).toThrow(/debug\(message, details\)/);
  });
});
