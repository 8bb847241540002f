/**
 * `withToolCallRepair(model)`: any LangChain chat model, repairing its input before every call.
 * For agent stacks other than `createAgent`: a LangGraph `StateGraph` of your own, the prebuilt
 * `createReactAgent`, LCEL chains.
 */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { ChatPromptValue } from "@langchain/core/prompt_values";
import { ensureConfig, RunnableBinding } from "@langchain/core/runnables";
import { AsyncLocalStorageProviderSingleton } from "@langchain/core/singletons";
import { LANGCHAIN_MESSAGES } from "./langchain.js";
import { type ToolCallRepairOptions, toolCallRepairOptionsShape } from "./options.js";
import { callRepaired, createRepairer, type Repairer } from "./repairer.js";
import type { ModelRequestLike } from "./request.js";

/** The methods whose input arrives here and is repaired; everything else is built on them. */
const REPAIRED = new Set<PropertyKey>(["invoke", "_streamIterator", "streamEvents"]);

/** Methods that build a runnable around the model, which must keep reaching the wrapper. */
const BUILDERS = new Set<PropertyKey>(["bindTools", "withConfig", "withStructuredOutput", "bind"]);

const WRAPPER_NAME = "withToolCallRepair";

/** Wrapped model → the model it wraps. */
const unwrapped = new WeakMap<object, BaseChatModel>();

/**
 * Marks the options a repaired stream passes on: a model without streaming answers `stream` by
 * calling its own `invoke` with them, and that input, repaired already, is not inspected (nor
 * counted) twice.
 */
const REPAIRED_STREAM = Symbol("tool-call-resilience.repairedStream");

function isRepairedStream(options: unknown): boolean {
  return (
    typeof options === "object" &&
    options !== null &&
    (options as { [REPAIRED_STREAM]?: unknown })[REPAIRED_STREAM] === true
  );
}

/**
 * Wraps a LangChain chat model so that every `invoke`, `stream`, `batch` and `streamEvents`
 * repairs its messages first, with the same engine, policy, logging and telemetry as the
 * `createAgent` middleware: each call left without a result gets a placeholder `ToolMessage`
 * right after its AI message, and so on, as the options say. `bindTools`, `withConfig` and
 * `withStructuredOutput` on the wrapper give runnables that keep repairing. The wrapper is the
 * model itself behind a proxy: `instanceof`, its fields and its other methods are the model's.
 *
 * The thread id of the telemetry is the call's `configurable.thread_id` over the current LangGraph
 * run's (a node may pass a `configurable` of its own, or none), and the tools are those bound with
 * `bindTools`, in any provider's shape. Fail-open: a failure of the repair
 * is logged and the model is called with its original input. The model's own errors pass through.
 *
 * @param model - any `BaseChatModel` (`ChatOpenAI`, `ChatAnthropic`, `initChatModel(...)`, ...)
 * @param options - the options of the middleware, but `persist`: a model cannot write to a thread
 * @returns the wrapped model, of the same type; wrapping a wrapper wraps its model again
 * @throws {ToolCallResilienceOptionsError} when an option is invalid
 * @throws {TypeError} when `model` is not a chat model (a model name string, the options given
 *   first, a promise of a model or an agent), saying what it is
 *
 * @example In a LangGraph StateGraph with a ToolNode
 * ```ts
 * import { ChatOpenAI } from "@langchain/openai";
 * import { withToolCallRepair } from "tool-call-resilience";
 *
 * const model = withToolCallRepair(new ChatOpenAI({ model: "gpt-4.1" })).bindTools(tools);
 * const graph = new StateGraph(MessagesAnnotation)
 *   .addNode("agent", async (state) => ({ messages: [await model.invoke(state.messages)] }))
 *   .addNode("tools", new ToolNode(tools))
 *   .addEdge(START, "agent")
 *   .addConditionalEdges("agent", toolsCondition)
 *   .addEdge("tools", "agent")
 *   .compile({ checkpointer });
 * ```
 */
export function withToolCallRepair<M extends BaseChatModel>(
  model: M,
  options: ToolCallRepairOptions = {},
): M {
  if (!isRunnableModel(model)) {
    throw new TypeError(
      `${WRAPPER_NAME} expects a LangChain chat model first (new ChatOpenAI(...), await initChatModel(...), ...) and its options second; got ${describe(model)}`,
    );
  }
  const repairer = createRepairer(
    options,
    WRAPPER_NAME,
    "Tool-call model wrapper",
    LANGCHAIN_MESSAGES,
  );
  return wrap((unwrapped.get(model) as M | undefined) ?? model, repairer);
}

function wrap<M extends BaseChatModel>(model: M, repairer: Repairer): M {
  // One function per method, so that `wrapped.invoke === wrapped.invoke` as on the model.
  const methods = new Map<PropertyKey, { readonly of: unknown; readonly method: unknown }>();
  const proxy: M = new Proxy(model, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== "function") return value;
      if (!REPAIRED.has(property) && !BUILDERS.has(property)) return value;
      const known = methods.get(property);
      if (known?.of === value) return known.method;
      const method = REPAIRED.has(property)
        ? repairing(target, property, value as Method, repairer, receiver)
        : (...args: unknown[]) => rebound(value.apply(receiver, args), repairer);
      methods.set(property, { of: value, method });
      return method;
    },
  });
  unwrapped.set(proxy, model);
  return proxy;
}

/**
 * A runnable the model built (`bindTools`, `withConfig`) reaches the wrapper when it was built on
 * it; a model that builds a new instance of itself instead (`ChatOpenAI.withConfig` does, as do
 * the test models) gets that instance wrapped too, alone or inside the binding it returns.
 */
function rebound(built: unknown, repairer: Repairer): unknown {
  if (unwrapped.has(built as object)) return built;
  if (isChatModel(built)) return wrap(built, repairer);
  if (!(built instanceof RunnableBinding)) return built;
  const bound = built.bound as unknown;
  if (unwrapped.has(bound as object) || !isChatModel(bound)) return built;
  return bindingOver(built, wrap(bound, repairer));
}

/** The same binding (arguments, config), over another model. */
function bindingOver(
  binding: RunnableBinding<unknown, unknown>,
  bound: BaseChatModel,
): RunnableBinding<unknown, unknown> {
  return new RunnableBinding({
    bound,
    kwargs: binding.kwargs,
    config: binding.config,
    configFactories: binding.configFactories,
  });
}

/**
 * The model behind a {@link withToolCallRepair} wrapper (alone, or bound by a `RunnableBinding`),
 * or `undefined` when the model does not repair: the `createAgent` middleware then calls it in the
 * wrapper's stead, so that one request is repaired, and counted, once.
 */
export function unrepairedModelOf(model: unknown): unknown {
  if (typeof model !== "object" || model === null) return undefined;
  const inner = unwrapped.get(model);
  if (inner !== undefined) return inner;
  if (!(model instanceof RunnableBinding)) return undefined;
  const bound = unwrapped.get(model.bound as object);
  if (bound === undefined) return undefined;
  // One binding per binding, so that what is read of a model once per model is read once.
  let rebuilt = unwrappedBindings.get(model);
  if (rebuilt === undefined) {
    rebuilt = bindingOver(model, bound);
    unwrappedBindings.set(model, rebuilt);
  }
  return rebuilt;
}

/** A binding of a wrapper → the same binding of the model behind it. */
const unwrappedBindings = new WeakMap<object, RunnableBinding<unknown, unknown>>();

function isRunnableModel(value: unknown): value is BaseChatModel {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as { invoke?: unknown }).invoke === "function" &&
    typeof (value as { _streamIterator?: unknown })._streamIterator === "function"
  );
}

/** The options a wrapper or the middleware takes, to tell an options object given first. */
const OPTION_NAMES: ReadonlySet<string> = new Set([
  ...Object.keys(toolCallRepairOptionsShape),
  "persist",
]);

/**
 * What was given in the model's place, for the error: the mistakes that get here are the options
 * given first (the model left out), a model class or a promise of a model given for the model,
 * and another runnable (an agent, a binding) given for a chat model.
 */
function describe(value: unknown): string {
  if (typeof value === "string") return `the string ${JSON.stringify(value)}`;
  if (typeof value === "function") {
    const name = (value as { name?: unknown }).name;
    return typeof (value as { prototype?: { invoke?: unknown } }).prototype?.invoke === "function"
      ? `the class ${String(name)} itself, not an instance (new ${String(name)}(...))`
      : "a function";
  }
  if (typeof value !== "object" || value === null) return String(value);
  if (Array.isArray(value)) return "an array";
  if (typeof (value as { then?: unknown }).then === "function") {
    return "a promise; await it first (initChatModel is async)";
  }
  const prototype: unknown = Object.getPrototypeOf(value);
  if (prototype === Object.prototype || prototype === null) {
    const keys = Object.keys(value);
    const listed = `{ ${keys.slice(0, 5).join(", ")}${keys.length > 5 ? ", ..." : ""} }`;
    return keys.length > 0 && keys.every((key) => OPTION_NAMES.has(key))
      ? `the options ${listed} in the model's place`
      : keys.length === 0
        ? "an empty object"
        : `a plain object ${listed}`;
  }
  const className = (prototype as { constructor?: { name?: unknown } }).constructor?.name;
  const what = typeof className === "string" && className !== "" ? `a ${className}` : "an object";
  return typeof (value as { invoke?: unknown }).invoke === "function"
    ? `${what}, which has invoke() but is no chat model (it has no _streamIterator())`
    : `${what} without invoke()`;
}

function isChatModel(value: unknown): value is BaseChatModel {
  return (
    isRunnableModel(value) && typeof (value as { bindTools?: unknown }).bindTools === "function"
  );
}

type Method = (this: unknown, input: unknown, options?: unknown, ...rest: unknown[]) => unknown;

/** One of the entry points, repairing its input before it goes on. */
function repairing(
  model: BaseChatModel,
  property: PropertyKey,
  method: Method,
  repairer: Repairer,
  receiver: unknown,
) {
  return function repaired(this: unknown, input: unknown, options?: unknown, ...rest: unknown[]) {
    const self = this === undefined ? receiver : this;
    // streamEvents v1 and v2 run through stream, which is repaired there.
    const passesOn =
      property === "streamEvents" &&
      ((options as { version?: unknown } | undefined)?.version === "v1" ||
        (options as { version?: unknown } | undefined)?.version === "v2");
    const messages = messagesOf(input);
    if (passesOn || messages === undefined || isRepairedStream(options)) {
      return method.call(self, input, options, ...rest);
    }
    const request = requestOf(model, messages, options);
    return callRepaired(repairer, request, (prepared) => {
      const repairedInput = prepared.messages === messages ? input : inputWith(input, prepared);
      const passed =
        property === "_streamIterator"
          ? { ...(options as object), [REPAIRED_STREAM]: true }
          : options;
      return method.call(self, repairedInput, passed, ...rest);
    });
  };
}

/** The messages of a model input, or none for a string or anything else. */
function messagesOf(input: unknown): readonly unknown[] | undefined {
  if (Array.isArray(input)) return input;
  if (input instanceof ChatPromptValue) return input.messages;
  return undefined;
}

function inputWith(input: unknown, prepared: { readonly messages: readonly unknown[] }): unknown {
  if (input instanceof ChatPromptValue) {
    return new ChatPromptValue(prepared.messages as ChatPromptValue["messages"]);
  }
  return prepared.messages;
}

interface CallOptionsLike {
  readonly tools?: readonly unknown[];
  readonly configurable?: { readonly thread_id?: string; readonly [key: string]: unknown };
  readonly context?: unknown;
}

/** Tools a model keeps among its own default call options (`ChatOpenAI.bindTools` does). */
function boundToolsOf(model: BaseChatModel): readonly unknown[] | undefined {
  try {
    const tools = (model as { defaultOptions?: { tools?: unknown } }).defaultOptions?.tools;
    return Array.isArray(tools) ? tools : undefined;
  } catch {
    return undefined;
  }
}

/** What the shared steps read of this call: the model, its bound tools, the run's thread. */
function requestOf(
  model: BaseChatModel,
  messages: readonly unknown[],
  options: unknown,
): ModelRequestLike & { readonly messages: readonly unknown[] } {
  let config: CallOptionsLike = {};
  let configurable: CallOptionsLike["configurable"];
  try {
    // The run's config, as the model itself reads it: a node's config reaches a model invoked
    // without one through LangChain's async-local storage.
    config = ensureConfig(options as Record<string, unknown> | undefined) as CallOptionsLike;
    configurable = configurableOfRun(config.configurable);
  } catch {
    // Unreadable options: no thread, no tools; the call goes on.
  }
  return {
    messages,
    model,
    tools: Array.isArray(config.tools) ? config.tools : boundToolsOf(model),
    runtime: { configurable, context: config.context },
  };
}

/**
 * The call's `configurable` over the current run's: a node that passes a `configurable` of its
 * own (`model.invoke(messages, { configurable: { user_tier: "pro" } })`) replaces the run's
 * whole `configurable` in the call's config, thread id included, while LangGraph still runs the
 * call inside the node's run. The run's config is read the way LangGraph itself recovers it, from
 * LangChain's async-local storage; outside a run there is none, and the call's own is all there is.
 */
function configurableOfRun(own: CallOptionsLike["configurable"]): CallOptionsLike["configurable"] {
  const run = AsyncLocalStorageProviderSingleton.getRunnableConfig()?.configurable as
    | CallOptionsLike["configurable"]
    | undefined;
  if (run === undefined || run === own) return own;
  return own === undefined ? run : { ...run, ...own };
}
