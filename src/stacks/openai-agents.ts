/**
 * tool-call-resilience/openai-agents: a `callModelInputFilter` for the OpenAI Agents SDK
 * (`@openai/agents`, `run()` and `Runner`), with the engine, policy, logging, fail-open and
 * telemetry every other attachment has. Before each model call it repairs the SDK's input items:
 * calls without a result, results whose call is missing or stands after them, calls without an id
 * or with one another call of their turn has. Nothing here loads the SDK: the filter is typed
 * structurally, and assignable to its `CallModelInputFilter`.
 *
 * @example
 * ```ts
 * import { run, user } from "@openai/agents";
 * import { toolCallRepairInputFilter } from "tool-call-resilience/openai-agents";
 *
 * const callModelInputFilter = toolCallRepairInputFilter({
 *   threadId: ({ context }) => (context as { threadId?: string } | undefined)?.threadId,
 * });
 * const result = await run(agent, [...storedItems, user("Where were we?")], {
 *   context: { threadId: "thread-7" },
 *   callModelInputFilter,
 * });
 * ```
 */
import { z } from "zod/v4";
import { log, logFailedOpen } from "../attach/logging.js";
import {
  type LocaleRequest,
  type LocaleResolver,
  toolCallRepairOptionsShape,
} from "../attach/options.js";
import { type MessageLibrary, recordFailedOpen, repairerFrom } from "../attach/repairer.js";
import { notOneOf, optionsError } from "../core/errors.js";
import { formatRequestOf, PLAIN_MESSAGES, prepareInFormat } from "../formats/format.js";
import type { FormatRepairContext } from "../formats/message-format.js";
import { agentItemsFormat, type Turn, turnsOf } from "./openai-agents-items.js";
import {
  type AgentLike,
  type AgentReading,
  CallSightings,
  groupIdOfCurrentTrace,
  readAgent,
} from "./openai-agents-run.js";

export type {
  LocaleRequest,
  LocaleResolver,
  RepairLogger,
  ToolCallRepairOptions,
} from "../attach/options.js";
export type { OptionsProblem } from "../core/errors.js";
export { isOptionsError, ToolCallResilienceOptionsError } from "../core/errors.js";
export type { AgentItemPlaceholder } from "./openai-agents-items.js";
export type { AgentLike } from "./openai-agents-run.js";

/** The name the filter's option errors give it. */
const FILTER_NAME = "toolCallRepairInputFilter";

/** How the filter's own failures are named in the log. */
const ATTACHMENT = "OpenAI Agents tool-call filter";

/**
 * What the SDK hands a `callModelInputFilter` as `modelData` (its `ModelInputData`): the input
 * items of the model call and the instructions.
 *
 * @example
 * ```ts
 * const modelData: ModelInputDataLike = { input: [user("hi")], instructions: "Be brief." };
 * ```
 */
export interface ModelInputDataLike {
  readonly input: readonly unknown[];
  readonly instructions?: string;
}

/**
 * What the SDK hands a `callModelInputFilter` (its `CallModelInputFilterArgs`): the model call's
 * data, the agent it is for, and the run's context (`run(agent, input, { context })`).
 *
 * @example
 * ```ts
 * filter({ modelData: { input: saved }, agent, context: { threadId: "t-1" } });
 * ```
 */
export interface InputFilterArgs<D extends ModelInputDataLike = ModelInputDataLike> {
  readonly modelData: D;
  readonly agent: AgentLike;
  readonly context: unknown;
}

/**
 * Picks the thread of one model call from the filter's arguments, typically from the run's
 * context; `undefined` for none.
 *
 * @example
 * ```ts
 * const threadId: ThreadIdResolver = ({ context }) => (context as { threadId?: string })?.threadId;
 * ```
 */
export type ThreadIdResolver = (args: InputFilterArgs) => string | undefined;

/** What the filter adds to the options of every attachment. */
const filterOptionsShape = {
  /**
   * The conversation a model call belongs to: recorded as `gen_ai.conversation.id`, and what
   * counts each dangling call and each tool call once. A fixed id, or a function of the filter's
   * arguments (the run's `context`, the `agent`, the `modelData`). A function that throws or
   * returns no text gives the call no thread (logged once).
   * @default the group id of the run's trace (`RunConfig.groupId`), when tracing is on
   * @example
   * ```ts
   * { threadId: ({ context }) => (context as { threadId?: string })?.threadId }
   * ```
   */
  threadId: z
    .union(
      [z.string().min(1), z.custom<ThreadIdResolver>((value) => typeof value === "function")],
      { error: "expected a non-empty string, or a function of the filter's arguments" },
    )
    .optional()
    .describe(
      "The conversation of a model call (`gen_ai.conversation.id`, and what counts each call once): a fixed id or a function of `{ context, agent, modelData }`; by default the group id of the run's trace (`RunConfig.groupId`), when tracing is on.",
    ),
  /**
   * Whether the run continues a conversation the provider keeps (`previousResponseId`,
   * `conversationId`), where the SDK sends the model only the new items: a result whose call the
   * input does not hold then answers a call the provider holds, and passes on as it is. The same
   * name and meaning as `repairResponsesInput`'s `continuesStoredResponse`.
   * - `true`: a result whose call is not in the input is always kept.
   * - `false`: the input is the whole history; such a result is an orphan, and dropped.
   * - `"auto"`: such results are kept when the input holds nothing the model produced (no call,
   *   no assistant message, no reasoning), which is what the SDK sends in those runs, and dropped
   *   otherwise. Safe for both kinds of run: it never drops a result whose call the provider may
   *   hold, but lets an orphan pass when the input is results and user messages alone.
   * @default "auto"
   * @example
   * ```ts
   * { continuesStoredResponse: false } // runs that never use previousResponseId or conversationId
   * ```
   */
  continuesStoredResponse: z
    .union([z.boolean(), z.literal("auto")], {
      error: (issue) => notOneOf([true, false, "auto"], issue.input),
    })
    .optional()
    .describe(
      'Whether the run continues a conversation the provider keeps (`previousResponseId`, `conversationId`), so that a result whose call the input does not hold answers a call the provider holds and passes on as it is: `true` always keeps such results, `false` drops them as orphans (the input is the whole history), `"auto"` (the default) keeps them only when the input holds nothing the model produced, as the SDK sends it in those runs.',
    ),
};

// The options of toolCallRepairInputFilter, defined once: the options of every attachment
// (`toolCallRepairOptionsShape`), plus `threadId` and `continuesStoredResponse`.
const toolCallRepairInputFilterOptionsSchema: z.ZodObject<
  typeof toolCallRepairOptionsShape & typeof filterOptionsShape,
  z.core.$strict
> = z.strictObject({ ...toolCallRepairOptionsShape, ...filterOptionsShape });

/**
 * Options of {@link toolCallRepairInputFilter}: those of every attachment, plus `threadId` and
 * `continuesStoredResponse`. Each is documented on its field of
 * {@link toolCallRepairInputFilterOptionsSchema}.
 *
 * @example
 * ```ts
 * const options: ToolCallRepairInputFilterOptions = { threadId: "thread-7", logger: false };
 * ```
 */
export type ToolCallRepairInputFilterOptions = z.input<
  typeof toolCallRepairInputFilterOptionsSchema
>;

/**
 * A `callModelInputFilter` for `run()`, a `Runner`, or `RunConfig`. It treats every item as
 * immutable, and says so to the SDK (`preserveInputIdentity`), which then hands it its own items
 * rather than deep copies of them.
 *
 * @example
 * ```ts
 * const runner = new Runner({ callModelInputFilter: toolCallRepairInputFilter() });
 * ```
 */
export interface ToolCallRepairInputFilter {
  <D extends ModelInputDataLike>(args: InputFilterArgs<D>): D;
  readonly preserveInputIdentity: true;
}

/** The model call the filter is in, while the shared steps run (they run synchronously). */
interface CurrentCall {
  readonly args: InputFilterArgs;
  readonly threadId: string | undefined;
  readonly agent: AgentReading;
}

/**
 * A `callModelInputFilter` that repairs the tool-call protocol of each model call's input items,
 * as `danglingToolCallMiddleware` does for LangChain, and counts it with OpenTelemetry.
 *
 * - Each call the application runs (a `function_call`, `computer_call`, local `shell_call`,
 *   `apply_patch_call`, client `tool_search_call`) left without its result gets one of its own
 *   type after its turn: a `function_call_result` with the placeholder text, a blank screenshot, a
 *   shell output with the text on stderr and exit code 1, a failed patch, an empty tool search.
 *   Calls the provider answers itself (hosted tools, MCP, programs, a hosted shell) and MCP
 *   approval requests pass through.
 * - A result whose call is missing is dropped, one separated from its call is moved back, and a
 *   call without an id, or with one another call of its turn has, gets one, as the options say.
 *   A result whose call may be one the provider keeps (`conversationId`, `previousResponseId`)
 *   passes on as it is, as `continuesStoredResponse` says: by default when the input holds
 *   nothing the model produced, which is what the SDK sends in those runs. A client tool search's
 *   output answers its call whatever its own `execution` says.
 * - It records the model call (provider `openai` unless `providerName` says otherwise; the
 *   agent's model, tools, handoffs and name; the thread), its repairs and each dangling call once.
 *   A computer call is labelled `computer_use`, as the agent's computer tool is, whatever its name.
 *   It never sees the model's answer, so the tool calls the model makes are counted when they
 *   first reach a model call's input: a run's last calls are counted by the thread's next model
 *   call, and never when no model call follows them.
 *
 * The SDK itself leaves calls without a result out of `result.history`, a `RunState`'s history
 * and a session's history (unless a result of another call has their id) before any filter runs:
 * the model then never hears of them, and the filter neither answers nor counts them. It repairs
 * what reaches the model: items an application keeps itself (a run's items, streamed items kept
 * across an abort), a session trimmed by a `sessionInputCallback`. The repair is the model
 * call's: a session keeps its items as they were.
 *
 * Fail-open: a failure of ours is logged and the model data goes on as it came, counted as
 * `failed_open`; the filter never throws. An agent whose `name`, `model`, `tools` or `handoffs`
 * cannot be read (a getter that throws) is no failure of the repair: that is logged once per
 * filter, and the call is repaired and counted by its outcome, without what could not be read
 * (model `unknown`, its tools' calls `_OTHER`). It returns `modelData` itself when nothing needed
 * repair, else a copy whose `input` is a new array holding every item that needed nothing as the
 * same object; it never changes an item.
 *
 * @param options - validated once, here
 * @throws {ToolCallResilienceOptionsError} when an option is invalid
 *
 * @example
 * ```ts
 * import { MemorySession, run } from "@openai/agents";
 * import { toolCallRepairInputFilter } from "tool-call-resilience/openai-agents";
 *
 * const callModelInputFilter = toolCallRepairInputFilter({
 *   threadId: ({ context }) => (context as { threadId: string }).threadId,
 *   locale: (request) => (request.runtime?.context as { locale?: string })?.locale,
 * });
 * await run(agent, "Where were we?", { session, context: { threadId }, callModelInputFilter });
 * ```
 */
export function toolCallRepairInputFilter(
  options: ToolCallRepairInputFilterOptions = {},
): ToolCallRepairInputFilter {
  const parsed = toolCallRepairInputFilterOptionsSchema.safeParse(options ?? {});
  if (!parsed.success) throw optionsError(parsed.error, FILTER_NAME, true);
  const { threadId, locale, continuesStoredResponse = "auto", ...shared } = parsed.data;
  let current: CurrentCall | undefined;
  const library: MessageLibrary = {
    ...PLAIN_MESSAGES,
    agentNameOfCurrentRun: () => current?.agent.name,
  };
  const repairer = repairerFrom(
    { ...shared, locale: typeof locale === "function" ? localeOfRun(locale) : locale },
    ATTACHMENT,
    library,
  );
  const sightings = new CallSightings(shared.countOnceMemory, shared.meterProvider);
  let threadIdFailed = false;
  let agentFailed = false;

  /** Logs the first failure to read an agent: its calls are recorded without what it hides. */
  function agentFailure(error: unknown): void {
    if (agentFailed) return;
    agentFailed = true;
    const message = `${ATTACHMENT}: reading the agent failed; its calls are repaired, and recorded without its model or tools`;
    log(repairer.logger, "error", message, { error });
  }

  /** A locale resolver that sees the SDK's items and the run's context. */
  function localeOfRun(resolver: LocaleResolver): LocaleResolver {
    return (request: LocaleRequest) =>
      resolver({
        messages: current?.args.modelData.input ?? request.messages,
        runtime: { context: current?.args.context, configurable: request.runtime?.configurable },
      });
  }

  function threadIdOf(args: InputFilterArgs): string | undefined {
    if (typeof threadId === "string") return threadId;
    if (threadId === undefined) return groupIdOfCurrentTrace();
    try {
      const id = threadId(args);
      return typeof id === "string" && id !== "" ? id : undefined;
    } catch (error) {
      if (!threadIdFailed) {
        threadIdFailed = true;
        log(repairer.logger, "error", `${ATTACHMENT}: the threadId option threw`, { error });
      }
      return undefined;
    }
  }

  function repaired<D extends ModelInputDataLike>(args: InputFilterArgs<D>, modelData: D): D {
    const input: unknown = modelData.input;
    const agent = readAgent(args.agent, agentFailure);
    const call: CurrentCall = { args, threadId: threadIdOf(args), agent };
    const context: FormatRepairContext = {
      threadId: call.threadId,
      model: agent.model,
      tools: agent.tools,
    };
    let turns: Turn[];
    try {
      if (!Array.isArray(input)) throw new TypeError("modelData.input is no list");
      turns = turnsOf(input, agent.hostedShell, continuesStoredResponse);
    } catch (error) {
      current = call;
      try {
        recordFailedOpen(
          repairer,
          formatRequestOf(agentItemsFormat, Array.isArray(input) ? input : [], context),
          error,
        );
      } finally {
        current = undefined;
      }
      return modelData;
    }
    current = call;
    try {
      const prepared = prepareInFormat(agentItemsFormat, turns, undefined, context, repairer);
      if (prepared.afterResponse !== undefined) {
        const calls = sightings.firstSeen(turns, call.threadId);
        if (calls.length > 0) prepared.afterResponse({ type: "ai", tool_calls: calls });
      }
      const { messages } = prepared.repaired;
      if (messages === turns) return modelData;
      return { ...modelData, input: messages.flatMap((turn) => turn.items) };
    } finally {
      current = undefined;
    }
  }

  const filter = <D extends ModelInputDataLike>(args: InputFilterArgs<D>): D => {
    let modelData: D | undefined;
    try {
      modelData = args.modelData;
      return repaired(args, modelData);
    } catch (error) {
      // The engine and prepareInFormat guard themselves: this is a bug of ours around them.
      logFailedOpen(repairer, "request", error);
      return modelData as D;
    }
  };
  return Object.assign(filter, { preserveInputIdentity: true as const });
}
