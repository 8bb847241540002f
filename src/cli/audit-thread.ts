/**
 * The audit of one thread: which format it is in, what the engine finds wrong in it, and the
 * repaired thread in the same format. LangChain messages go through LangChain's own serializers
 * (`load` for `toJSON()` output, the stored-message mappers for `toDict()` output); the native
 * formats go through their adapters.
 *
 * `@langchain/core` is an optional peer: an app of the OpenAI SDK or the AI SDK has none. So it
 * is imported only when a LangChain thread is met (or a checkpointer read), once; the format of a
 * thread is told without it.
 */

import type { BaseMessage, StoredMessage } from "@langchain/core/messages";
import type { RepairOptions } from "../core/policy.js";
import { REPAIR_KINDS, type RepairAuditName } from "../core/repair-kinds.js";
import type { ToolCallRepair } from "../core/repair-log.js";
import { repairModelMessages } from "../formats/ai-sdk.js";
import { repairAnthropicMessages } from "../formats/anthropic.js";
import { repairOpenAIChatMessages } from "../formats/openai-chat.js";
import { REASON_VALUE_INVALID_ARGUMENTS } from "../telemetry/semconv.js";

/** The formats the audit tells apart. */
export const THREAD_FORMATS = ["langchain", "openai", "anthropic", "ai-sdk"] as const;
/** A format the audit tells apart: one of {@link THREAD_FORMATS}. */
export type ThreadFormat = (typeof THREAD_FORMATS)[number];

/**
 * The problem a placeholder for a call whose arguments could not be parsed fixes: counted apart
 * from the calls that were interrupted, as the model, not the run, is at fault.
 */
const INVALID_PROBLEM = "invalid";

/**
 * A problem the audit counts: the audit name of a kind of repair (from the table of kinds), or
 * {@link INVALID_PROBLEM}.
 */
export type Problem = RepairAuditName | typeof INVALID_PROBLEM;

/**
 * What each problem is, in the words of `--help`, in the order the report lists them (orphans
 * before misplaced results, unlike the table of kinds). Its type holds it to every problem, so a
 * new kind of repair does not go unexplained here.
 */
export const PROBLEM_DESCRIPTIONS = Object.freeze({
  dangling: "calls without a result",
  invalid: "calls whose arguments were cut off",
  orphan: "results without a call",
  misplaced: "results separated from their call",
  missing_id: "calls without an id or with one made twice",
  missing_name: "calls without a name",
  unlisted: "calls not every client sends",
  turn_order: "turns out of the order some providers require",
}) satisfies Readonly<Record<Problem, string>>;

/** The problems an audit counts, by the repair that fixes each, in the order the report lists them. */
export const PROBLEMS: readonly Problem[] = Object.freeze(
  Object.keys(PROBLEM_DESCRIPTIONS) as Problem[],
);

/** How many of each problem. */
export type ProblemCounts = Record<Problem, number>;

/** What the audit of one thread found. */
export interface ThreadAudit {
  readonly format: ThreadFormat;
  readonly problems: ProblemCounts;
  readonly repairs: readonly ToolCallRepair[];
  /** The repaired messages in the thread's format; the input array itself when it was clean. */
  readonly messages: readonly unknown[];
}

type Fields = Record<string, unknown>;

/** What to install to audit LangChain messages. */
export const LANGCHAIN_PACKAGE = "@langchain/core";

/**
 * `@langchain/core` could not be loaded, so no LangChain thread can be audited: it is not
 * installed (`missing`), or it is but fails to load. Its message follows a thread's name.
 */
export class LangChainUnavailableError extends Error {
  override readonly name = "LangChainUnavailableError";
  constructor(
    /** Whether `@langchain/core` is not installed, rather than broken. */
    readonly missing: boolean,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/**
 * The package an import did not find, when the failure is that a package (not something inside
 * one) is not installed: `pg` for `Cannot find package 'pg' imported from …`; `undefined` for
 * any other failure. A bare `true` when it is a package but its name is not told.
 */
export function missingPackageOf(error: unknown): string | true | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  const message = error instanceof Error ? error.message : "";
  const named = /Cannot find (?:package|module) '([^']+)'/.exec(message)?.[1];
  // An error thrown by a module hook off the main thread can reach here without its code.
  if (code !== "ERR_MODULE_NOT_FOUND" && code !== "MODULE_NOT_FOUND" && named === undefined) {
    return undefined;
  }
  if (named === undefined || /^(?:[./]|file:|[A-Za-z]:)/.test(named)) return true;
  return named
    .split("/")
    .slice(0, named.startsWith("@") ? 2 : 1)
    .join("/");
}

/** What the audit of LangChain messages uses of `@langchain/core`, and the engine's LangChain side. */
interface LangChainModules {
  readonly load: typeof import("@langchain/core/load").load;
  readonly mapChatMessagesToStoredMessages: typeof import("@langchain/core/messages").mapChatMessagesToStoredMessages;
  readonly mapStoredMessagesToChatMessages: typeof import("@langchain/core/messages").mapStoredMessagesToChatMessages;
  readonly repairToolCalls: typeof import("../core/repair-langchain.js").repairToolCalls;
}

let langChainModules: Promise<LangChainModules> | undefined;

/**
 * `@langchain/core`, imported on the first call and kept. Throws a
 * {@link LangChainUnavailableError} when it cannot be loaded (every call, as the first did).
 */
export function loadLangChain(): Promise<LangChainModules> {
  langChainModules ??= importLangChain();
  return langChainModules;
}

async function importLangChain(): Promise<LangChainModules> {
  try {
    const [serialization, messages, engine] = await Promise.all([
      import("@langchain/core/load"),
      import("@langchain/core/messages"),
      import("../core/repair-langchain.js"),
    ]);
    return {
      load: serialization.load,
      mapChatMessagesToStoredMessages: messages.mapChatMessagesToStoredMessages,
      mapStoredMessagesToChatMessages: messages.mapStoredMessagesToChatMessages,
      repairToolCalls: engine.repairToolCalls,
    };
  } catch (error) {
    const missing = missingPackageOf(error) === LANGCHAIN_PACKAGE;
    throw new LangChainUnavailableError(
      missing,
      missing
        ? `is in LangChain's format, which needs ${LANGCHAIN_PACKAGE}: npm install ${LANGCHAIN_PACKAGE}`
        : `is in LangChain's format, and ${LANGCHAIN_PACKAGE} cannot be loaded: ${(error as Error).message}`,
      { cause: error },
    );
  }
}

const LANGCHAIN_TYPES = new Set([
  "human",
  "ai",
  "tool",
  "system",
  "generic",
  "function",
  "developer",
]);

function blocksOf(message: Fields): Fields[] {
  return Array.isArray(message.content) ? (message.content as Fields[]) : [];
}

/**
 * The format of a thread, from the first message that tells; `undefined` when none does (only
 * text messages with a role, which every role-based format shares).
 */
function formatOf(messages: readonly unknown[]): ThreadFormat | undefined {
  for (const entry of messages) {
    const message = entry as Fields;
    if (
      message.lc === 1 ||
      (typeof message.type === "string" && LANGCHAIN_TYPES.has(message.type))
    ) {
      return "langchain";
    }
    const blocks = blocksOf(message).map((block) => block?.type);
    if (blocks.includes("tool_use") || blocks.includes("tool_result")) return "anthropic";
    if (blocks.includes("tool-call") || blocks.includes("tool-result")) return "ai-sdk";
    if (message.role === "tool" && typeof message.tool_call_id === "string") return "openai";
    if (Array.isArray(message.tool_calls)) {
      const first = message.tool_calls[0] as Fields | undefined;
      return first !== undefined && "function" in first ? "openai" : "langchain";
    }
  }
  return undefined;
}

/** The problem a repair fixes: its kind's audit name, save for a placeholder for invalid arguments. */
function problemOf(repair: ToolCallRepair): Problem {
  return repair.reason === REASON_VALUE_INVALID_ARGUMENTS
    ? INVALID_PROBLEM
    : REPAIR_KINDS[repair.kind].auditName;
}

/** The problems behind a list of repairs: the repair kinds, placeholders split by their reason. */
export function problemsOf(repairs: readonly ToolCallRepair[]): ProblemCounts {
  const counts = Object.fromEntries(PROBLEMS.map((problem) => [problem, 0])) as ProblemCounts;
  for (const repair of repairs) counts[problemOf(repair)]++;
  return counts;
}

/**
 * Audits one thread (its messages are JSON objects) and repairs it in its own format. A thread of
 * text messages alone is clean in every format; it is counted under `fallback`.
 */
export async function auditThread(
  messages: readonly unknown[],
  options: RepairOptions,
  /** The format of a thread that does not tell: that of the threads before it, say. */
  fallback: ThreadFormat = "openai",
): Promise<ThreadAudit> {
  const format = formatOf(messages) ?? fallback;
  const quiet = { ...options, logger: false as const };
  const result =
    format === "openai"
      ? repairOpenAIChatMessages(messages, quiet)
      : format === "anthropic"
        ? repairAnthropicMessages(messages, quiet)
        : format === "ai-sdk"
          ? repairModelMessages(messages, quiet)
          : await repairLangChain(messages, options);
  return {
    format,
    problems: problemsOf(result.repairs),
    repairs: result.repairs,
    messages: result.messages,
  };
}

/**
 * What a repaired thread still has wrong, as it is written out: `written`, its messages read back
 * from the bytes written, audited again in the format they were repaired in.
 */
export async function problemsLeft(
  audit: ThreadAudit,
  written: readonly unknown[],
  options: RepairOptions,
): Promise<ProblemCounts> {
  return (await auditThread(written, options, audit.format)).problems;
}

type LangChainForm = "serialized" | "stored" | "plain";

function langChainFormOf(message: Fields): LangChainForm {
  if (message.lc === 1 && message.type === "constructor") return "serialized";
  if (
    typeof message.type === "string" &&
    typeof message.data === "object" &&
    message.data !== null
  ) {
    return "stored";
  }
  return "plain";
}

/**
 * LangChain messages: revived with LangChain's own loaders, repaired by the engine, and written
 * back in the form they came in (messages the repair did not touch, as they were).
 */
async function repairLangChain(messages: readonly unknown[], options: RepairOptions) {
  const langChain = await loadLangChain();
  const { load, mapStoredMessagesToChatMessages, repairToolCalls } = langChain;
  const forms = messages.map((message) => langChainFormOf(message as Fields));
  const revived = await Promise.all(
    messages.map(async (message, index) => {
      const form = forms[index];
      if (form === "serialized") return load<BaseMessage>(JSON.stringify(message));
      if (form === "stored") return mapStoredMessagesToChatMessages([message as StoredMessage])[0];
      return message;
    }),
  );
  const original = new Map<unknown, unknown>(
    revived.map((message, index) => [message, messages[index]]),
  );
  const result = repairToolCalls(revived, options);
  if (result.messages === revived) return { messages, repairs: result.repairs };
  const form = forms.find((found) => found !== "plain") ?? "plain";
  const written = result.messages.map((message) => {
    if (original.has(message)) return original.get(message);
    return writeLangChain(langChain, message, form);
  });
  return { messages: written, repairs: result.repairs };
}

function writeLangChain(
  { mapChatMessagesToStoredMessages }: LangChainModules,
  message: unknown,
  form: LangChainForm,
): unknown {
  const isInstance = typeof (message as { toDict?: unknown }).toDict === "function";
  if (!isInstance) return message;
  if (form === "serialized") return JSON.parse(JSON.stringify(message));
  if (form === "stored") return mapChatMessagesToStoredMessages([message as BaseMessage])[0];
  // A plain thread gets plain messages: the fields of the stored form, with its type.
  const stored = mapChatMessagesToStoredMessages([message as BaseMessage])[0] as StoredMessage;
  return stripUndefined({ type: stored.type, ...stored.data });
}

function stripUndefined(fields: Fields): Fields {
  return Object.fromEntries(
    Object.entries(fields).filter(([, value]) => value !== undefined && value !== null),
  );
}
