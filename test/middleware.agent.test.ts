/**
 * Integration tests: the middleware inside a real `createAgent`, with a fake model, real tools and
 * a `MemorySaver`, on threads broken the ways production threads break.
 */
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { MemorySaver } from "@langchain/langgraph";
import { createAgent, MiddlewareError } from "langchain";
import { describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { PLACEHOLDER_CATALOG, TURN_CATALOG } from "../src/core/locales.js";
import {
  danglingToolCallMiddleware,
  type LocaleRequest,
  type RepairLogger,
  syntheticReasonOf,
  type ToolCallRepair,
} from "../src/index.js";
import {
  abortMidTool,
  agentWith,
  aiAnswer,
  aiToolCall,
  askUserTool,
  humanTurn,
  onThread,
  receivedBy,
  scriptedModel,
  searchTool,
  stallingSearchTool,
  storedMessages,
  type ThreadedAgent,
} from "./helpers/agent.js";
import { aiCalls, human, shapeOf } from "./helpers/history.js";

const ENGLISH_PLACEHOLDER = "[Tool call was interrupted and did not return a result.]";
const WARNING_PREFIX =
  "[tool-call-resilience] Injecting 1 placeholder ToolMessage(s) for dangling tool calls";

const SEARCH_CALL = { id: "call_search", name: "search", args: { query: "weather" } };
const ASK_CALL = { id: "call_ask", name: "ask_user", args: { question: "Which city?" } };

/** A logger whose calls the test can read. */
function spyLogger() {
  return {
    warn: vi.fn<RepairLogger["warn"]>(),
    error: vi.fn<NonNullable<RepairLogger["error"]>>(),
    debug: vi.fn<NonNullable<RepairLogger["debug"]>>(),
  };
}

function isPlaceholder(message: BaseMessage): boolean {
  return ToolMessage.isInstance(message) && message.response_metadata?.synthetic === true;
}

function isReplyTurn(message: BaseMessage): boolean {
  return AIMessage.isInstance(message) && syntheticReasonOf(message) === "turn_order";
}

/** Asserts that a message is the placeholder of one call, with the given text. */
function expectPlaceholder(
  message: BaseMessage | undefined,
  call: { readonly id: string; readonly name: string },
  text = ENGLISH_PLACEHOLDER,
) {
  expect(message).toBeDefined();
  expect(ToolMessage.isInstance(message)).toBe(true);
  const placeholder = message as ToolMessage;
  expect(placeholder.content).toBe(text);
  expect(placeholder.status).toBe("error");
  expect(placeholder.tool_call_id).toBe(call.id);
  expect(placeholder.name).toBe(call.name);
  expect(placeholder.response_metadata).toEqual({
    synthetic: true,
    synthetic_reason: "interrupted",
  });
}

/** Asserts that a message is the synthetic reply written between tool results and a user message. */
function expectReplyTurn(message: BaseMessage | undefined) {
  expect(message).toBeDefined();
  expect(AIMessage.isInstance(message)).toBe(true);
  const reply = message as AIMessage;
  expect(reply.content).toBe(TURN_CATALOG.en.reply);
  expect(reply.tool_calls).toEqual([]);
  expect(reply.response_metadata).toEqual({ synthetic: true, synthetic_reason: "turn_order" });
  expect(syntheticReasonOf(reply)).toBe("turn_order");
}

/** Breaks a thread by aborting a run while its tool runs. */
async function breakByAbort(
  agent: ThreadedAgent,
  started: Promise<void>,
  threadId: string,
): Promise<void> {
  const error = await abortMidTool(
    agent,
    started,
    threadId,
    humanTurn("h1", "What's the weather?"),
  );
  expect(error).toMatchObject({ name: "AbortError" });
  expect(shapeOf(await storedMessages(agent, threadId))).toEqual(["human", "ai(call_search)"]);
}

/** Breaks a thread by leaving the interrupt of its `ask_user` tool unanswered. */
async function breakByInterrupt(agent: ThreadedAgent, threadId: string): Promise<void> {
  const result = await agent.invoke(
    { messages: [humanTurn("h1", "Book me a table.")] },
    onThread(threadId),
  );
  expect(result).toHaveProperty("__interrupt__");
  expect(shapeOf(await storedMessages(agent, threadId))).toEqual(["human", "ai(call_ask)"]);
}

describe("a dangling history given as input", () => {
  const danglingInput = () => [
    human("What's the weather?"),
    aiCalls(["call_1", "search"]),
    human("Never mind, tell me a joke."),
  ];

  it("hands the model the history with a placeholder right after the AI message that made the call", async () => {
    const model = scriptedModel(aiAnswer("a1", "Why did the chicken..."));
    const agent = agentWith({
      model,
      tools: [searchTool()],
      middleware: [danglingToolCallMiddleware({ logger: false })],
    });

    await agent.invoke({ messages: danglingInput() }, onThread("input"));

    expect(model.callCount).toBe(1);
    const received = receivedBy(model, 0);
    expect(shapeOf(received)).toEqual(["human", "ai(call_1)", "tool(call_1)", "ai", "human"]);
    expectPlaceholder(received[2], { id: "call_1", name: "search" });
    expectReplyTurn(received[3]);
    expect(received[4]?.content).toBe("Never mind, tell me a joke.");
  });

  it("leaves the stored thread exactly as the agent without the middleware stores it", async () => {
    const withModel = scriptedModel(aiAnswer("a1", "A joke."));
    const withMiddleware = agentWith({
      model: withModel,
      tools: [searchTool()],
      middleware: [danglingToolCallMiddleware({ logger: false })],
    });
    const withoutModel = scriptedModel(aiAnswer("a1", "A joke."));
    const without = agentWith({ model: withoutModel, tools: [searchTool()] });

    await withMiddleware.invoke({ messages: danglingInput() }, onThread("input"));
    await without.invoke({ messages: danglingInput() }, onThread("input"));

    const stored = await storedMessages(withMiddleware, "input");
    const storedWithout = await storedMessages(without, "input");
    expect(shapeOf(stored)).toEqual(["human", "ai(call_1)", "human", "ai"]);
    expect(shapeOf(stored)).toEqual(shapeOf(storedWithout));
    expect(stored.some(isPlaceholder)).toBe(false);
  });
});

describe("a run aborted mid-tool", () => {
  it("repairs the next model request on the same thread and stores no placeholder", async () => {
    const { tool, started } = stallingSearchTool();
    const model = scriptedModel(aiToolCall("a1", SEARCH_CALL), aiAnswer("a2", "Sure, a joke."));
    const agent = agentWith({
      model,
      tools: [tool],
      middleware: [danglingToolCallMiddleware({ logger: false })],
    });

    await breakByAbort(agent, started, "aborted");
    await agent.invoke(
      { messages: [humanTurn("h2", "Never mind, tell me a joke.")] },
      onThread("aborted"),
    );

    expect(model.callCount).toBe(2);
    const received = receivedBy(model, 1);
    expect(shapeOf(received)).toEqual([
      "human",
      "ai(call_search)",
      "tool(call_search)",
      "ai",
      "human",
    ]);
    expectPlaceholder(received[2], SEARCH_CALL);
    expectReplyTurn(received[3]);
    expect(received.map((message) => message.id)).toEqual(["h1", "a1", undefined, undefined, "h2"]);

    const stored = await storedMessages(agent, "aborted");
    expect(shapeOf(stored)).toEqual(["human", "ai(call_search)", "human", "ai"]);
    expect(stored.some(isPlaceholder)).toBe(false);
  });
});

describe("an interrupt left unanswered", () => {
  it("repairs the next model request when the thread goes on with a new message", async () => {
    const model = scriptedModel(aiToolCall("a1", ASK_CALL), aiAnswer("a2", "Okay."));
    const agent = agentWith({
      model,
      tools: [askUserTool()],
      middleware: [danglingToolCallMiddleware({ logger: false })],
    });

    await breakByInterrupt(agent, "interrupted");
    await agent.invoke(
      { messages: [humanTurn("h2", "Forget the table.")] },
      onThread("interrupted"),
    );

    expect(model.callCount).toBe(2);
    const received = receivedBy(model, 1);
    expect(shapeOf(received)).toEqual(["human", "ai(call_ask)", "tool(call_ask)", "ai", "human"]);
    expectPlaceholder(received[2], ASK_CALL);
    expectReplyTurn(received[3]);

    const stored = await storedMessages(agent, "interrupted");
    expect(shapeOf(stored)).toEqual(["human", "ai(call_ask)", "human", "ai"]);
    expect(stored.some(isPlaceholder)).toBe(false);
  });
});

describe("without the middleware", () => {
  it("sends an aborted thread to the model with its tool call unanswered", async () => {
    const { tool, started } = stallingSearchTool();
    const model = scriptedModel(aiToolCall("a1", SEARCH_CALL), aiAnswer("a2", "Sure."));
    const agent = agentWith({ model, tools: [tool] });

    await breakByAbort(agent, started, "aborted");
    await agent.invoke({ messages: [humanTurn("h2", "Never mind.")] }, onThread("aborted"));

    const received = receivedBy(model, 1);
    expect(shapeOf(received)).toEqual(["human", "ai(call_search)", "human"]);
    expect(received.some((message) => ToolMessage.isInstance(message))).toBe(false);
  });

  it("sends an interrupted thread to the model with its tool call unanswered", async () => {
    const model = scriptedModel(aiToolCall("a1", ASK_CALL), aiAnswer("a2", "Okay."));
    const agent = agentWith({ model, tools: [askUserTool()] });

    await breakByInterrupt(agent, "interrupted");
    await agent.invoke({ messages: [humanTurn("h2", "Forget it.")] }, onThread("interrupted"));

    expect(shapeOf(receivedBy(model, 1))).toEqual(["human", "ai(call_ask)", "human"]);
  });
});

describe("persist: true", () => {
  it("writes the placeholder of an aborted run into the thread once, so later calls need no repair", async () => {
    const { tool, started } = stallingSearchTool();
    const logger = spyLogger();
    const model = scriptedModel(
      aiToolCall("a1", SEARCH_CALL),
      aiAnswer("a2", "Sure, a joke."),
      aiAnswer("a3", "Another one."),
    );
    const agent = agentWith({
      model,
      tools: [tool],
      middleware: [danglingToolCallMiddleware({ persist: true, logger })],
    });

    await breakByAbort(agent, started, "persisted");
    await agent.invoke({ messages: [humanTurn("h2", "Never mind.")] }, onThread("persisted"));

    const afterRepair = await storedMessages(agent, "persisted");
    expect(shapeOf(afterRepair)).toEqual([
      "human",
      "ai(call_search)",
      "tool(call_search)",
      "ai",
      "human",
      "ai",
    ]);
    expectPlaceholder(afterRepair[2], SEARCH_CALL);
    expectReplyTurn(afterRepair[3]);
    expect(afterRepair[3]?.id).toEqual(expect.any(String));
    expect(afterRepair.map((message) => message.id)).toEqual([
      "h1",
      "a1",
      afterRepair[2]?.id,
      afterRepair[3]?.id,
      "h2",
      "a2",
    ]);
    expect(shapeOf(receivedBy(model, 1))).toEqual([
      "human",
      "ai(call_search)",
      "tool(call_search)",
      "ai",
      "human",
    ]);
    expect(logger.warn).toHaveBeenCalledTimes(1);

    await agent.invoke({ messages: [humanTurn("h3", "One more.")] }, onThread("persisted"));

    expect(logger.warn).toHaveBeenCalledTimes(1);
    const third = receivedBy(model, 2);
    expect(shapeOf(third)).toEqual([
      "human",
      "ai(call_search)",
      "tool(call_search)",
      "ai",
      "human",
      "ai",
      "human",
    ]);
    expect(third[2]?.id).toBe(afterRepair[2]?.id);
    expect(third[3]?.id).toBe(afterRepair[3]?.id);
    const final = await storedMessages(agent, "persisted");
    expect(final.filter(isPlaceholder)).toHaveLength(1);
    expect(final.filter(isReplyTurn)).toHaveLength(1);
    expect(final.map((message) => message.id)).toEqual([
      ...afterRepair.map((message) => message.id),
      "h3",
      "a3",
    ]);
  });

  it("writes the placeholder of an unanswered interrupt into the thread", async () => {
    const logger = spyLogger();
    const model = scriptedModel(
      aiToolCall("a1", ASK_CALL),
      aiAnswer("a2", "Okay."),
      aiAnswer("a3", "Done."),
    );
    const agent = agentWith({
      model,
      tools: [askUserTool()],
      middleware: [danglingToolCallMiddleware({ persist: true, logger })],
    });

    await breakByInterrupt(agent, "persisted");
    await agent.invoke({ messages: [humanTurn("h2", "Forget it.")] }, onThread("persisted"));
    await agent.invoke({ messages: [humanTurn("h3", "Thanks.")] }, onThread("persisted"));

    const stored = await storedMessages(agent, "persisted");
    expect(shapeOf(stored)).toEqual([
      "human",
      "ai(call_ask)",
      "tool(call_ask)",
      "ai",
      "human",
      "ai",
      "human",
      "ai",
    ]);
    expectPlaceholder(stored[2], ASK_CALL);
    expectReplyTurn(stored[3]);
    expect(stored.filter(isReplyTurn)).toHaveLength(1);
    expect(logger.warn).toHaveBeenCalledTimes(1);
  });

  it("never rewrites a clean thread", async () => {
    const logger = spyLogger();
    const model = scriptedModel(
      aiToolCall("a1", SEARCH_CALL),
      aiAnswer("a2", "Sunny."),
      aiAnswer("a3", "You're welcome."),
    );
    const agent = agentWith({
      model,
      tools: [searchTool()],
      middleware: [danglingToolCallMiddleware({ persist: true, logger })],
    });

    await agent.invoke({ messages: [humanTurn("h1", "Weather?")] }, onThread("clean"));
    const first = await storedMessages(agent, "clean");
    await agent.invoke({ messages: [humanTurn("h2", "Thanks.")] }, onThread("clean"));
    const second = await storedMessages(agent, "clean");

    expect(shapeOf(first)).toEqual(["human", "ai(call_search)", "tool(call_search)", "ai"]);
    expect(second.slice(0, first.length).map((message) => message.id)).toEqual(
      first.map((message) => message.id),
    );
    expect(second.map((message) => message.id).slice(first.length)).toEqual(["h2", "a3"]);
    // The persist hook ran before each of the three model calls and wrote nothing each time.
    const hookRuns: unknown[] = [];
    for await (const snapshot of agent.graph.getStateHistory(onThread("clean"))) {
      for (const task of snapshot.tasks) {
        if (task.name === "DanglingToolCallMiddleware.before_model") hookRuns.push(task.result);
      }
    }
    expect(hookRuns).toHaveLength(3);
    for (const written of hookRuns) expect(written ?? {}).not.toHaveProperty("messages");
    expect(logger.warn).not.toHaveBeenCalled();
  });
});

describe("logging", () => {
  it("warns once for a call repaired on both model calls of a run, with the thread and the repairs", async () => {
    const logger = spyLogger();
    const model = scriptedModel(aiToolCall("a1", SEARCH_CALL), aiAnswer("a2", "Sunny."));
    const agent = agentWith({
      model,
      tools: [searchTool()],
      middleware: [danglingToolCallMiddleware({ logger })],
    });

    // The dangling call stays in the request of both model calls of this run.
    await agent.invoke(
      { messages: [human("Hi"), aiCalls(["call_1", "search"]), human("Weather?")] },
      onThread("logged"),
    );

    expect(model.callCount).toBe(2);
    // The second model call repairs the same dangling call: a repeat, at debug.
    expect(logger.warn).toHaveBeenCalledTimes(1);
    expect(logger.debug).toHaveBeenCalledTimes(1);
    for (const [message, details] of [...logger.warn.mock.calls, ...logger.debug.mock.calls]) {
      expect(message.startsWith(WARNING_PREFIX)).toBe(true);
      expect(details).toMatchObject({
        threadId: "logged",
        repairs: [
          { kind: "placeholder_inserted", toolCallId: "call_1", toolName: "search" },
          { kind: "turn_inserted", toolCallId: "call_1", toolName: "search", outputIndex: 3 },
        ],
      });
    }
    expect(logger.error).not.toHaveBeenCalled();
  });

  it("warns through console.warn by default", async () => {
    const consoleWarn = vi.spyOn(console, "warn").mockImplementation(() => {});
    try {
      const model = scriptedModel(aiAnswer("a1", "Hi."));
      const agent = agentWith({ model, tools: [], middleware: [danglingToolCallMiddleware()] });

      await agent.invoke(
        { messages: [human("Hi"), aiCalls(["call_1", "search"]), human("Hello?")] },
        onThread("console"),
      );

      expect(consoleWarn).toHaveBeenCalledTimes(1);
      expect(String(consoleWarn.mock.calls[0]?.[0]).startsWith(WARNING_PREFIX)).toBe(true);
    } finally {
      consoleWarn.mockRestore();
    }
  });

  it("stays silent with logger: false", async () => {
    const consoleWarn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const consoleError = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      const model = scriptedModel(aiAnswer("a1", "Hi."));
      const agent = agentWith({
        model,
        tools: [],
        middleware: [danglingToolCallMiddleware({ logger: false })],
      });

      await agent.invoke(
        { messages: [human("Hi"), aiCalls(["call_1", "search"]), human("Hello?")] },
        onThread("silent"),
      );

      expectPlaceholder(receivedBy(model, 0)[2], { id: "call_1", name: "search" });
      expect(consoleWarn).not.toHaveBeenCalled();
      expect(consoleError).not.toHaveBeenCalled();
    } finally {
      consoleWarn.mockRestore();
      consoleError.mockRestore();
    }
  });

  it("logs nothing on a clean run with a tool call and its result", async () => {
    const logger = spyLogger();
    const model = scriptedModel(aiToolCall("a1", SEARCH_CALL), aiAnswer("a2", "Sunny."));
    const agent = agentWith({
      model,
      tools: [searchTool()],
      middleware: [danglingToolCallMiddleware({ logger })],
    });

    await agent.invoke({ messages: [humanTurn("h1", "Weather?")] }, onThread("clean"));

    expect(shapeOf(receivedBy(model, 1))).toEqual([
      "human",
      "ai(call_search)",
      "tool(call_search)",
    ]);
    expect(logger.warn).not.toHaveBeenCalled();
    expect(logger.error).not.toHaveBeenCalled();
  });
});

describe("localized placeholder text", () => {
  const contextSchema = z.object({ locale: z.string().optional() });
  const localeFromContext = (request: LocaleRequest) =>
    (request.runtime?.context as { locale?: string } | undefined)?.locale;

  it("hands the locale resolver the request's runtime, with the invoke context and thread id", async () => {
    const resolver = vi.fn(localeFromContext);
    const model = scriptedModel(aiAnswer("a1", "はい。"));
    const agent = createAgent({
      model,
      tools: [searchTool()],
      contextSchema,
      checkpointer: new MemorySaver(),
      middleware: [danglingToolCallMiddleware({ locale: resolver, logger: false })],
    });

    await agent.invoke(
      { messages: [human("Hi"), aiCalls(["call_1", "search"]), human("Hello?")] },
      { ...onThread("ja-thread"), context: { locale: "ja" } },
    );

    expect(resolver).toHaveBeenCalledTimes(1);
    const request = resolver.mock.calls[0]?.[0];
    expect(request?.runtime?.context).toEqual({ locale: "ja" });
    expect(request?.runtime?.configurable?.thread_id).toBe("ja-thread");
    expect(shapeOf(request?.messages ?? [])).toEqual(["human", "ai(call_1)", "human"]);
  });

  it("writes the placeholder in Japanese when runtime.context.locale is ja", async () => {
    const { tool, started } = stallingSearchTool();
    const model = scriptedModel(aiToolCall("a1", SEARCH_CALL), aiAnswer("a2", "はい。"));
    const agent = createAgent({
      model,
      tools: [tool],
      contextSchema,
      checkpointer: new MemorySaver(),
      middleware: [danglingToolCallMiddleware({ locale: localeFromContext, logger: false })],
    });

    await breakByAbort(agent, started, "ja-thread");
    await agent.invoke(
      { messages: [humanTurn("h2", "やっぱりいいです。")] },
      { ...onThread("ja-thread"), context: { locale: "ja" } },
    );

    const received = receivedBy(model, 1);
    expect(PLACEHOLDER_CATALOG.ja.interrupted).not.toBe(ENGLISH_PLACEHOLDER);
    expectPlaceholder(received[2], SEARCH_CALL, PLACEHOLDER_CATALOG.ja.interrupted);
  });

  it("persists the placeholder in the locale the resolver picks from runtime.context", async () => {
    const { tool, started } = stallingSearchTool();
    const model = scriptedModel(aiToolCall("a1", SEARCH_CALL), aiAnswer("a2", "はい。"));
    const agent = createAgent({
      model,
      tools: [tool],
      contextSchema,
      checkpointer: new MemorySaver(),
      middleware: [
        danglingToolCallMiddleware({ locale: localeFromContext, persist: true, logger: false }),
      ],
    });

    await breakByAbort(agent, started, "ja-persist");
    await agent.invoke(
      { messages: [humanTurn("h2", "やっぱりいいです。")] },
      { ...onThread("ja-persist"), context: { locale: "ja" } },
    );

    expectPlaceholder(receivedBy(model, 1)[2], SEARCH_CALL, PLACEHOLDER_CATALOG.ja.interrupted);
    const stored = await storedMessages(agent, "ja-persist");
    expectPlaceholder(stored[2], SEARCH_CALL, PLACEHOLDER_CATALOG.ja.interrupted);
  });
});

describe("fail-open", () => {
  const dangling = () => [human("Hi"), aiCalls(["call_1", "search"]), human("Hello?")];

  it("uses the English catalog text when the placeholder function throws, and tells the logger", async () => {
    const failure = new Error("template service down");
    const logger = spyLogger();
    const model = scriptedModel(aiAnswer("a1", "Hello."));
    const agent = agentWith({
      model,
      tools: [searchTool()],
      middleware: [
        danglingToolCallMiddleware({
          logger,
          placeholder: () => {
            throw failure;
          },
        }),
      ],
    });

    await agent.invoke({ messages: dangling() }, onThread("fail-open"));

    const received = receivedBy(model, 0);
    expect(shapeOf(received)).toEqual(["human", "ai(call_1)", "tool(call_1)", "ai", "human"]);
    expectPlaceholder(received[2], { id: "call_1", name: "search" });
    expectReplyTurn(received[3]);
    expect(logger.warn).toHaveBeenCalledTimes(2);
    const [message, details] = logger.warn.mock.calls[0] ?? [];
    expect(message?.startsWith(WARNING_PREFIX)).toBe(true);
    const repairs = (details as { repairs: ToolCallRepair[] }).repairs;
    expect(repairs.map((repair) => repair.kind)).toEqual(["placeholder_inserted", "turn_inserted"]);
    expect(repairs[0]?.placeholderError).toBe(failure);
    expect(repairs[1]?.placeholderError).toBeUndefined();
    expect(logger.warn.mock.calls[1]).toEqual([
      "[tool-call-resilience] Placeholder function failed; using the catalog text",
      { threadId: "fail-open", toolCallId: "call_1", error: failure },
    ]);
  });

  it("uses English when the locale resolver throws, and tells the logger", async () => {
    const logger = spyLogger();
    const model = scriptedModel(aiAnswer("a1", "Hello."));
    const agent = agentWith({
      model,
      tools: [searchTool()],
      middleware: [
        danglingToolCallMiddleware({
          logger,
          locale: () => {
            throw new Error("no locale service");
          },
        }),
      ],
    });

    await agent.invoke({ messages: dangling() }, onThread("fail-open"));

    expectPlaceholder(receivedBy(model, 0)[2], { id: "call_1", name: "search" });
    const messages = logger.warn.mock.calls.map(([message]) => message);
    expect(messages).toHaveLength(2);
    expect(messages[0]).toBe(
      "[tool-call-resilience] Locale resolver failed; using English placeholder text",
    );
    expect(messages[1]?.startsWith(WARNING_PREFIX)).toBe(true);
  });

  it("keeps the repair and the model call going when the logger itself throws", async () => {
    const model = scriptedModel(aiAnswer("a1", "Hello."));
    const agent = agentWith({
      model,
      tools: [searchTool()],
      middleware: [
        danglingToolCallMiddleware({
          logger: {
            warn: () => {
              throw new Error("log sink unavailable");
            },
          },
        }),
      ],
    });

    const { messages } = await agent.invoke({ messages: dangling() }, onThread("bad-logger"));
    expect(messages.at(-1)?.content).toBe("Hello.");
    expect(model.callCount).toBe(1);
    expectPlaceholder(receivedBy(model, 0)[2], { id: "call_1", name: "search" });
  });

  it("does not throw away a finished repair when only the logger's warn fails", async () => {
    const logger = {
      warn: vi.fn<RepairLogger["warn"]>(() => {
        throw new Error("log sink unavailable");
      }),
      error: vi.fn<NonNullable<RepairLogger["error"]>>(),
    };
    const model = scriptedModel(aiAnswer("a1", "Hello."));
    const agent = agentWith({
      model,
      tools: [searchTool()],
      middleware: [danglingToolCallMiddleware({ logger })],
    });

    await agent.invoke({ messages: dangling() }, onThread("bad-warn"));

    expect(shapeOf(receivedBy(model, 0))).toEqual([
      "human",
      "ai(call_1)",
      "tool(call_1)",
      "ai",
      "human",
    ]);
  });
});

describe("errors from the model", () => {
  it("reach the caller unchanged, as the cause of the MiddlewareError createAgent wraps them in", async () => {
    const boom = new Error("boom");
    const logger = spyLogger();
    const model = scriptedModel(boom);
    const agent = agentWith({
      model,
      tools: [searchTool()],
      middleware: [danglingToolCallMiddleware({ logger })],
    });

    const error = await agent
      .invoke(
        { messages: [human("Hi"), aiCalls(["call_1", "search"]), human("Hello?")] },
        onThread("boom"),
      )
      .then(
        () => undefined,
        (caught: unknown) => caught,
      );

    expect(error).toBeInstanceOf(Error);
    const root = MiddlewareError.isInstance(error) ? error.cause : error;
    expect(root).toBe(boom);
    // The request had been repaired, and the model was called once: no retry, no swallowing.
    expect(model.callCount).toBe(1);
    expectPlaceholder(receivedBy(model, 0)[2], { id: "call_1", name: "search" });
    expect(logger.error).not.toHaveBeenCalled();
  });
});
