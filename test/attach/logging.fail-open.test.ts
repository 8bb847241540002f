/**
 * How the library writes to a logger without ever breaking a model call: the prefix, the fall-back
 * from `error` to `warn`, a throwing or rejecting logger swallowed, `debug` nowhere when missing,
 * the one fail-open line every attachment writes, and the once-per-history repair warnings.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  log,
  logFailedOpen,
  loggerFrom,
  reportRepairs,
  SILENT_LOGGER,
  telemetryFailureLogger,
} from "../../src/attach/logging.js";
import type { RepairLogger } from "../../src/attach/options.js";
import { newToolMessage } from "../../src/core/repair-langchain.js";
import type { ToolCallRepair } from "../../src/core/repair-log.js";
import { plainToolMessage, type ToolMessageFactory } from "../../src/core/tool-message.js";
import { CountOnceMemory } from "../../src/telemetry/count-once.js";

const PREFIX = "[tool-call-resilience] ";

function spyLogger() {
  return {
    warn: vi.fn<RepairLogger["warn"]>(),
    error: vi.fn<NonNullable<RepairLogger["error"]>>(),
    debug: vi.fn<NonNullable<RepairLogger["debug"]>>(),
  };
}

afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
});

describe("log", () => {
  it("puts the library's prefix before every message, at the level asked for", () => {
    const logger = spyLogger();
    log(logger, "warn", "a warning", { a: 1 });
    log(logger, "error", "an error", { b: 2 });
    log(logger, "debug", "a repeat", { c: 3 });
    expect(logger.warn).toHaveBeenCalledWith(`${PREFIX}a warning`, { a: 1 });
    expect(logger.error).toHaveBeenCalledWith(`${PREFIX}an error`, { b: 2 });
    expect(logger.debug).toHaveBeenCalledWith(`${PREFIX}a repeat`, { c: 3 });
  });

  it("writes an error to warn when the logger's error throws", () => {
    const logger = spyLogger();
    logger.error.mockImplementation(() => {
      throw new Error("logger down");
    });
    log(logger, "error", "it failed", {});
    expect(logger.warn).toHaveBeenCalledWith(`${PREFIX}it failed`, {});
  });

  it("writes an error to warn when the logger has no error", () => {
    const warn = vi.fn<RepairLogger["warn"]>();
    log({ warn }, "error", "it failed", {});
    expect(warn).toHaveBeenCalledWith(`${PREFIX}it failed`, {});
  });

  it("swallows a warn that throws, even after error threw too", () => {
    const thrower = () => {
      throw new Error("logger down");
    };
    expect(() => log({ warn: thrower, error: thrower }, "error", "it failed", {})).not.toThrow();
    expect(() => log({ warn: thrower }, "warn", "a warning", {})).not.toThrow();
  });

  it("swallows the rejection of an async logger, so that no rejection goes unhandled", async () => {
    const unhandled = vi.fn();
    process.on("unhandledRejection", unhandled);
    try {
      const rejecting = () => Promise.reject(new Error("logger down"));
      log({ warn: rejecting, error: rejecting, debug: rejecting }, "error", "it failed", {});
      log({ warn: rejecting, debug: rejecting }, "debug", "a repeat", {});
      await new Promise((resolve) => setTimeout(resolve, 10));
      expect(unhandled).not.toHaveBeenCalled();
    } finally {
      process.off("unhandledRejection", unhandled);
    }
  });

  it("writes debug lines nowhere when the logger has no debug, not even to warn", () => {
    const warn = vi.fn<RepairLogger["warn"]>();
    log({ warn }, "debug", "a repeat", {});
    expect(warn).not.toHaveBeenCalled();
  });

  it("loses a debug line whose debug throws, and writes it nowhere else", () => {
    const logger = spyLogger();
    logger.debug.mockImplementation(() => {
      throw new Error("logger down");
    });
    expect(() => log(logger, "debug", "a repeat", {})).not.toThrow();
    expect(logger.warn).not.toHaveBeenCalled();
    expect(logger.error).not.toHaveBeenCalled();
  });
});

describe("logFailedOpen", () => {
  it("names the attachment and what it passed on unchanged, at error, with the error", () => {
    const logger = spyLogger();
    const error = new Error("bug");
    logFailedOpen({ attachment: "Tool-call middleware", logger }, "request", error);
    expect(logger.error).toHaveBeenCalledWith(
      `${PREFIX}Tool-call middleware failed; passing the request on unchanged`,
      { error },
    );
  });

  it("never throws, whatever the logger does", () => {
    const thrower = () => {
      throw new Error("logger down");
    };
    const logger = { warn: thrower, error: thrower };
    expect(() => logFailedOpen({ attachment: "x", logger }, "messages", new Error())).not.toThrow();
  });
});

describe("loggerFrom", () => {
  it("gives the silent logger for false, and the given logger as it is", () => {
    const logger = spyLogger();
    expect(loggerFrom(false)).toBe(SILENT_LOGGER);
    expect(loggerFrom(logger)).toBe(logger);
  });

  it("writes to the console when unset, and repeats only when NODE_DEBUG names the library", () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const debug = vi.spyOn(console, "debug").mockImplementation(() => {});
    const logger = loggerFrom(undefined);
    vi.stubEnv("NODE_DEBUG", "http,net");
    log(logger, "warn", "a warning", {});
    log(logger, "debug", "a repeat", {});
    expect(warn).toHaveBeenCalledWith(`${PREFIX}a warning`, {});
    expect(debug).not.toHaveBeenCalled();
    vi.stubEnv("NODE_DEBUG", "http,Tool-Call-*");
    log(logger, "debug", "a repeat", {});
    expect(debug).toHaveBeenCalledWith(`${PREFIX}a repeat`, {});
  });
});

describe("telemetryFailureLogger", () => {
  it("logs the first failure of each part of the telemetry, and no later one", () => {
    const logger = spyLogger();
    const onFailure = telemetryFailureLogger(logger);
    onFailure(new Error("one"), "metrics");
    onFailure(new Error("two"), "metrics");
    onFailure(new Error("three"), "tracing");
    expect(logger.error.mock.calls.map(([message]) => message)).toEqual([
      `${PREFIX}OpenTelemetry metrics failed; the model call goes on. Later metrics failures are not logged`,
      `${PREFIX}OpenTelemetry tracing failed; the model call goes on. Later tracing failures are not logged`,
    ]);
  });
});

describe("reportRepairs", () => {
  /** What the native formats write: plain tool messages, turned into their own tool results. */
  const PLAIN = { makeToolMessage: plainToolMessage };
  const history = [{ type: "ai", id: "a1", tool_calls: [{ id: "call_1", name: "search" }] }];
  const placeholder: ToolCallRepair = {
    kind: "placeholder_inserted",
    toolCallId: "call_1",
    toolName: "search",
    reason: "interrupted",
    callIndex: 0,
    outputIndex: 1,
  };

  it("warns about a repair the first time its history shows it, and repeats it at debug", () => {
    const logger = spyLogger();
    const warnings = { logger, warned: new CountOnceMemory(10), library: PLAIN };
    const place = { threadId: "t1" };
    reportRepairs(warnings, place, history, [placeholder], undefined);
    reportRepairs(warnings, place, history, [placeholder], undefined);
    expect(logger.warn).toHaveBeenCalledTimes(1);
    expect(logger.warn.mock.calls[0]?.[1]).toEqual({ threadId: "t1", repairs: [placeholder] });
    expect(logger.debug).toHaveBeenCalledTimes(1);
    expect(logger.debug.mock.calls[0]?.[0]).toMatch(/\(again; warned on an earlier model call\)$/);
  });

  it("names the placeholders by what the repair wrote: ToolMessages for LangChain, tool results otherwise", () => {
    const langChain = spyLogger();
    const plain = spyLogger();
    const place = { threadId: undefined };
    const warnings = (
      logger: RepairLogger,
      makeToolMessage: ToolMessageFactory = plainToolMessage,
    ) => ({
      logger,
      warned: new CountOnceMemory(0),
      library: { makeToolMessage },
    });
    reportRepairs(warnings(langChain, newToolMessage), place, history, [placeholder], undefined);
    reportRepairs(warnings(plain), place, history, [placeholder], undefined);
    expect(langChain.warn.mock.calls[0]?.[0]).toBe(
      `${PREFIX}Injecting 1 placeholder ToolMessage(s) for dangling tool calls`,
    );
    expect(plain.warn.mock.calls[0]?.[0]).toBe(
      `${PREFIX}Injecting 1 placeholder tool result(s) for dangling tool calls`,
    );
  });

  it("logs a locale resolver's failure at warn when a new placeholder needed its text", () => {
    const logger = spyLogger();
    const error = new Error("no locale");
    const place = { threadId: undefined };
    reportRepairs(
      { logger, warned: new CountOnceMemory(10), library: PLAIN },
      place,
      history,
      [placeholder],
      error,
    );
    expect(logger.warn).toHaveBeenCalledWith(
      `${PREFIX}Locale resolver failed; using English placeholder text`,
      { error },
    );
  });
});
