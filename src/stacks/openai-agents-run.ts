/**
 * What the OpenAI Agents SDK filter reads of the run it is called in, without loading the SDK:
 * the agent's name, model, tools and handoffs, whether its shell runs in the provider's container,
 * the group id of the run's trace, and which tool calls of the input it sees for the first time.
 * Every read is guarded: what cannot be read gives nothing, never an error in the model call (a
 * field of the agent that throws is reported, for the filter to log).
 */
import { type MeterProvider, metrics } from "@opentelemetry/api";
import { listOf } from "../core/fields.js";
import { offeredNameOfTool } from "../formats/openai-tool-items.js";
import { recordOf, stringOrUndefined } from "../formats/read.js";
import { CountOnceMemory, DEFAULT_COUNT_ONCE_MEMORY } from "../telemetry/count-once.js";
import { callsOfTurn, type Turn } from "./openai-agents-items.js";

/**
 * What the filter reads of the SDK's `Agent` (its `name`, `model`, `tools` and `handoffs`); an
 * `Agent` of any context and output type is one.
 *
 * @example
 * ```ts
 * const agent: AgentLike = new Agent({ name: "support", model: "gpt-4.1", tools: [search] });
 * ```
 */
export interface AgentLike {
  readonly name?: unknown;
  readonly model?: unknown;
  readonly tools?: readonly unknown[];
  readonly handoffs?: readonly unknown[];
}

/**
 * What the filter reads of the agent of one model call: its name, its model's name, the tools it
 * offers, and whether its shell runs in the provider's container.
 *
 * @example
 * ```ts
 * const reading: AgentReading = { name: "support", model: "gpt-4.1", tools: [{ name: "search" }], hostedShell: false };
 * ```
 */
export interface AgentReading {
  readonly name: string | undefined;
  readonly model: string | undefined;
  readonly tools: readonly { name: string }[];
  readonly hostedShell: boolean;
}

/** Reads a field, or nothing when reading it throws. */
function fieldOf(value: unknown, key: string): unknown {
  try {
    return recordOf(value)?.[key];
  } catch {
    return undefined;
  }
}

/**
 * Reads the agent of a model call, never throwing. A field of the agent that cannot be read (a
 * getter that throws, a revoked proxy) reads as absent, and its error goes to `onFailure`; a
 * tool, handoff or model object that cannot be read gives nothing. The model is `agent.model` when
 * it is a model's name, else the name a `Model` object holds (`model`, `modelName`, or the
 * Responses model's `_model`); `undefined` when the agent leaves it to the run (`RunConfig.model`,
 * the SDK's default), which the filter does not see: the `modelName` option names it then.
 *
 * @example
 * ```ts
 * readAgent({ name: "support", model: "gpt-4.1", tools: [] }, console.error).model; // "gpt-4.1"
 * readAgent({ model: "" }, console.error).model; // undefined: the run's default model
 * ```
 */
export function readAgent(agent: unknown, onFailure: (error: unknown) => void): AgentReading {
  const field = (key: keyof AgentLike) => {
    try {
      return recordOf(agent)?.[key];
    } catch (error) {
      onFailure(error);
      return undefined;
    }
  };
  const [name, model, tools, handoffs] = [
    field("name"),
    field("model"),
    field("tools"),
    field("handoffs"),
  ];
  /** A read of the tools' lists; a list that throws while read counts as none. */
  const guarded = <T>(read: () => T, none: T): T => {
    try {
      return read();
    } catch (error) {
      onFailure(error);
      return none;
    }
  };
  return {
    name: stringOrUndefined(name),
    model: guarded(() => modelNameOf(model), undefined),
    tools: guarded(
      () =>
        offeredToolsOf(
          typeof agent === "object" && agent !== null ? agent : undefined,
          tools,
          handoffs,
        ),
      [],
    ),
    hostedShell: guarded(() => hasHostedShell(tools), false),
  };
}

function modelNameOf(model: unknown): string | undefined {
  if (typeof model === "string") return stringOrUndefined(model);
  for (const key of ["model", "modelName", "_model"]) {
    const name = stringOrUndefined(fieldOf(model, key));
    if (name !== undefined) return name;
  }
  return undefined;
}

/** The names an agent offers, by its tools and handoffs arrays (read again when either changes). */
const offered = new WeakMap<
  object,
  { tools: unknown; handoffs: unknown; names: readonly { name: string }[] }
>();

/**
 * The tools an agent offers, as the telemetry labels calls: each tool's `name` (a tool offered by
 * its `type` alone, the computer, shell and apply-patch tools, under the name its nameless calls
 * are given: `offeredNameOfTool`), and each handoff's tool name (a `Handoff`'s `toolName`, an
 * agent's `transfer_to_<name>` as the SDK makes it). The same list for the same arrays, so that
 * the telemetry reads it once.
 */
function offeredToolsOf(
  agent: object | undefined,
  tools: unknown,
  handoffs: unknown,
): readonly { name: string }[] {
  const known = agent === undefined ? undefined : offered.get(agent);
  if (known !== undefined && known.tools === tools && known.handoffs === handoffs) {
    return known.names;
  }
  const names: { name: string }[] = [];
  for (const tool of listOf(tools)) {
    const name =
      offeredNameOfTool(fieldOf(tool, "type")) ?? stringOrUndefined(fieldOf(tool, "name"));
    if (name !== undefined) names.push({ name });
  }
  for (const handoff of listOf(handoffs)) {
    const agentName = stringOrUndefined(fieldOf(handoff, "name"));
    // A `Handoff`'s tool name, or the SDK's default one for an agent given as a handoff.
    const name =
      stringOrUndefined(fieldOf(handoff, "toolName")) ??
      (agentName === undefined
        ? undefined
        : `transfer_to_${agentName.replace(/[^a-zA-Z0-9]/g, "_")}`);
    if (name !== undefined) names.push({ name });
  }
  if (agent !== undefined) offered.set(agent, { tools, handoffs, names });
  return names;
}

/**
 * Whether the agent's shell tool runs in the provider's hosted container (an `environment` other
 * than `local`), whose shell calls the provider answers itself.
 */
function hasHostedShell(tools: unknown): boolean {
  for (const tool of listOf(tools)) {
    if (fieldOf(tool, "type") !== "shell") continue;
    const environment = fieldOf(fieldOf(tool, "environment"), "type");
    return environment !== undefined && environment !== "local";
  }
  return false;
}

/**
 * Where the SDK keeps the context of the current trace: an `AsyncLocalStorage` under a global
 * symbol, which every copy of `@openai/agents-core` in a process shares (and
 * `setTracingContextStorage` replaces), so it is read here without loading the SDK.
 */
const TRACE_CONTEXT = Symbol.for("openai.agents.core.asyncLocalStorage");

/**
 * The `groupId` of the trace the current run is in (`RunConfig.groupId`, or `withTrace`'s); none
 * outside a run, and none when tracing is disabled (`setTracingDisabled(true)`,
 * `tracingDisabled`), where the SDK's traces carry no group.
 *
 * @example
 * ```ts
 * // inside run(agent, input, { groupId: "thread-7" }), tracing on:
 * groupIdOfCurrentTrace(); // "thread-7"
 * ```
 */
export function groupIdOfCurrentTrace(): string | undefined {
  try {
    const storage = (globalThis as Record<symbol, unknown>)[TRACE_CONTEXT] as
      | { getStore?: () => unknown }
      | undefined;
    const store = storage?.getStore?.();
    if (fieldOf(store, "active") !== true) return undefined;
    return stringOrUndefined(fieldOf(fieldOf(store, "trace"), "groupId"));
  } catch {
    return undefined;
  }
}

/** One memory per meter provider, shared by the filters that keep the default size. */
const sharedSightings = new WeakMap<object, CountOnceMemory>();

/**
 * The tool calls of model inputs, each seen for the first time once: what the filter counts as the
 * calls the model made, since it never sees the model's answer. A call is one call per thread,
 * call type, `callId`, and how many calls of that type and `callId` come before it in the input
 * (so that a server that reuses short ids such as `call_0` has each of them counted, and a
 * function call and a shell call that share an id are two calls).
 *
 * @example
 * ```ts
 * const sightings = new CallSightings(undefined, undefined);
 * sightings.firstSeen(turnsOf(input), "thread-1"); // [{ id: "call_1", name: "search", args: {} }]
 * sightings.firstSeen(turnsOf(input), "thread-1"); // []
 * ```
 */
export class CallSightings {
  readonly #own: CountOnceMemory | undefined;
  readonly #meterProvider: MeterProvider | undefined;

  /**
   * @param size - the `countOnceMemory` option: a memory of this size for this filter; unset, one
   *   memory of the default size per meter provider, shared
   * @param meterProvider - the `meterProvider` option; unset, the global one at each call
   */
  constructor(size: number | undefined, meterProvider: MeterProvider | undefined) {
    this.#own = size === undefined ? undefined : new CountOnceMemory(size);
    this.#meterProvider = meterProvider;
  }

  /**
   * The calls of these turns not seen before on this thread, as an answer's tool calls (each with
   * the id the engine knows it by).
   */
  firstSeen(
    turns: readonly Turn[],
    threadId: string | undefined,
  ): { id: string; name: string | undefined; args: Record<string, never> }[] {
    const memory = this.#memory();
    const fresh: { id: string; name: string | undefined; args: Record<string, never> }[] = [];
    const seen = new Map<string, number>();
    for (const turn of turns) {
      for (const { type, callId, id, name } of callsOfTurn(turn)) {
        // Keyed on the thread, the call's type and `callId`, and its rank among those.
        const call = `${type}\u0000${callId}`;
        const rank = seen.get(call) ?? 0;
        seen.set(call, rank + 1);
        const key = `${threadId ?? ""}\u0000${call}\u0000${rank}`;
        if (memory.firstSighting(key)) fresh.push({ id, name, args: {} });
      }
    }
    return fresh;
  }

  #memory(): CountOnceMemory {
    if (this.#own !== undefined) return this.#own;
    const destination = this.#meterProvider ?? metrics.getMeterProvider();
    let memory = sharedSightings.get(destination);
    if (memory === undefined) {
      memory = new CountOnceMemory(DEFAULT_COUNT_ONCE_MEMORY);
      sharedSightings.set(destination, memory);
    }
    return memory;
  }
}
