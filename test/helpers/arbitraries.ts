/**
 * fast-check generators of chat histories built from real LangChain messages, for the property
 * tests of the repair engine. A history is generated as a list of steps (a spec that shrinks well)
 * and then materialized into fresh message objects, so every run gets its own instances.
 */
import {
  AIMessage,
  HumanMessage,
  type OpenAIToolCall,
  SystemMessage,
  ToolMessage,
} from "@langchain/core/messages";
import fc from "fast-check";

/** The small id alphabet: ids get reused across turns and duplicated within a message. */
export const CALL_IDS = ["a", "b", "c"] as const;
/** The id of the raw `additional_kwargs.tool_calls` shadow of a message that has parsed calls. */
const SHADOW_ID = "z";

/** One call of an AI message; `id` may be missing or empty, `name` too. */
export interface CallSpec {
  readonly id: string | undefined;
  readonly name: string | undefined;
}

/** An AI message that makes calls, with the tool messages that follow it directly. */
export interface TurnSpec {
  readonly kind: "turn";
  readonly calls: readonly CallSpec[];
  readonly invalid: readonly CallSpec[];
  /** Send every call only as raw OpenAI-shaped `additional_kwargs.tool_calls`. */
  readonly raw: boolean;
  /** Add a raw `additional_kwargs.tool_calls` shadow that the engine must ignore. */
  readonly shadow: boolean;
  /** Also keep each listed call that has an id as a `tool_use` content block (ChatAnthropic's shape). */
  readonly blocks: boolean;
  /** `tool_call_id`s of the tool messages right after the AI message, in order. */
  readonly results: readonly string[];
}

export type StepSpec =
  | TurnSpec
  | { readonly kind: "tool"; readonly id: string; readonly name: string }
  /** A human message that cut in before results came back: `human, tool(...), ...`. */
  | { readonly kind: "late"; readonly ids: readonly string[] }
  | { readonly kind: "human" }
  | { readonly kind: "system" }
  | { readonly kind: "aiText" }
  | { readonly kind: "junk"; readonly which: 0 | 1 | 2 | 3 };

const MAX_MESSAGES = 40;

const nameArb = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom("search", "calc") },
  { weight: 1, arbitrary: fc.constantFrom("", undefined) },
);

/** A call's id: mostly one of `ids`, sometimes empty or missing. */
const idArbOver = (ids: readonly string[]) =>
  fc.oneof(
    { weight: 8, arbitrary: fc.constantFrom(...ids) },
    { weight: 2, arbitrary: fc.constantFrom("", undefined) },
  );

/** The id a stray or extra tool message carries: mostly one of `ids`, rarely empty. */
const resultIdArbOver = (ids: readonly string[]) =>
  fc.oneof(
    { weight: 9, arbitrary: fc.constantFrom(...ids) },
    { weight: 1, arbitrary: fc.constant("") },
  );

/** A well-formed call: a non-empty id and a name. */
const cleanCallArb = (id: string): fc.Arbitrary<CallSpec> =>
  fc.constantFrom("search", "calc").map((name) => ({ id, name }));

function distinctIds(calls: readonly CallSpec[]): string[] {
  return [...new Set(calls.map((call) => call.id ?? ""))];
}

/** A turn whose group answers a random subset of its calls, plus maybe some extra results. */
const brokenTurnArbOver = (ids: readonly string[]): fc.Arbitrary<TurnSpec> => {
  const callArb: fc.Arbitrary<CallSpec> = fc.record({ id: idArbOver(ids), name: nameArb });
  return fc
    .record({
      calls: fc.array(callArb, { maxLength: 3 }),
      invalid: fc.oneof(
        { weight: 4, arbitrary: fc.constant<CallSpec[]>([]) },
        { weight: 1, arbitrary: fc.array(callArb, { minLength: 1, maxLength: 2 }) },
      ),
      raw: fc.oneof(
        { weight: 7, arbitrary: fc.constant(false) },
        { weight: 1, arbitrary: fc.constant(true) },
      ),
      shadow: fc.oneof(
        { weight: 7, arbitrary: fc.constant(false) },
        { weight: 1, arbitrary: fc.constant(true) },
      ),
      blocks: fc.oneof(
        { weight: 5, arbitrary: fc.constant(false) },
        { weight: 1, arbitrary: fc.constant(true) },
      ),
    })
    .chain((turn) =>
      fc
        .record({
          answered: fc.shuffledSubarray(distinctIds([...turn.calls, ...turn.invalid])),
          extras: fc.array(resultIdArbOver(ids), { maxLength: 2 }),
          at: fc.nat(),
        })
        .map(({ answered, extras, at }) => {
          const results = [...answered];
          for (const extra of extras) results.splice(at % (results.length + 1), 0, extra);
          return { kind: "turn" as const, ...turn, results };
        }),
    );
};

/** A turn whose group answers every call exactly once, in a random order. */
const cleanTurnArb: fc.Arbitrary<TurnSpec> = fc
  .uniqueArray(fc.constantFrom(...CALL_IDS), { minLength: 1, maxLength: 3 })
  .chain((ids) =>
    fc.record({
      calls: fc.tuple(...ids.map(cleanCallArb)),
      invalidCount: fc.nat({ max: ids.length - 1 }),
      shadow: fc.boolean(),
      blocks: fc.boolean(),
      results: fc.shuffledSubarray(ids, { minLength: ids.length }),
    }),
  )
  .map(({ calls, invalidCount, shadow, blocks, results }) => {
    // Every call of a well-formed message is listed in `tool_calls` with an id of its own: raw-only
    // calls, `tool_use` blocks for unlisted calls and ids made twice all need a repair. Invalid
    // calls are never sent only next to parsed calls and a raw shadow (OpenAI's shape).
    const split = shadow ? calls.length - invalidCount : calls.length;
    const sent = calls.slice(0, split);
    return {
      kind: "turn" as const,
      calls: sent,
      invalid: calls.slice(split),
      raw: false,
      shadow,
      blocks,
      results: results.filter((id) => sent.some((call) => call.id === id)),
    };
  });

const otherStepArb: fc.Arbitrary<StepSpec> = fc.oneof(
  { weight: 4, arbitrary: fc.constant({ kind: "human" as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: "system" as const }) },
  { weight: 2, arbitrary: fc.constant({ kind: "aiText" as const }) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(0, 1, 2, 3).map((which) => ({ kind: "junk" as const, which })),
  },
);

/**
 * Steps of a broken history over an id alphabet: turns with missing, extra and duplicate results
 * (so also results in another AI message's group), stray results, results after a human message,
 * junk, ...
 */
export function brokenStepsArbOver(ids: readonly string[]): fc.Arbitrary<StepSpec[]> {
  return fc.array(
    fc.oneof(
      { weight: 10, arbitrary: brokenTurnArbOver(ids) },
      {
        weight: 4,
        arbitrary: fc.record({
          kind: fc.constant("tool" as const),
          id: resultIdArbOver(ids),
          name: fc.constantFrom("search", "calc"),
        }),
      },
      {
        weight: 3,
        arbitrary: fc.record({
          kind: fc.constant("late" as const),
          ids: fc.array(resultIdArbOver(ids), { minLength: 1, maxLength: 2 }),
        }),
      },
      { weight: 8, arbitrary: otherStepArb },
    ),
    { maxLength: 16, size: "max" },
  );
}

/**
 * The steps with an AI text answer written between a turn's results and a human message right
 * after them: Bedrock Converse and Mistral refuse a user message right after tool results.
 */
function withAnswers(steps: readonly StepSpec[]): StepSpec[] {
  return steps.flatMap((step, index) => {
    const before = steps[index - 1];
    const afterResults = before?.kind === "turn" && before.results.length > 0;
    return step.kind === "human" && afterResults ? [{ kind: "aiText" as const }, step] : [step];
  });
}

/**
 * Steps of a well-formed history: every call answered directly after its AI message, and an AI
 * text answer between the results and a human message that follows them.
 */
const cleanStepsArb: fc.Arbitrary<StepSpec[]> = fc
  .array(fc.oneof({ weight: 3, arbitrary: cleanTurnArb }, { weight: 2, arbitrary: otherStepArb }), {
    maxLength: 8,
  })
  .map(withAnswers);

function toolCall(call: CallSpec) {
  return {
    ...(call.id === undefined ? {} : { id: call.id }),
    name: call.name ?? "",
    args: { query: call.id ?? "" },
    type: "tool_call" as const,
  };
}

function invalidToolCall(call: CallSpec) {
  return {
    ...(call.id === undefined ? {} : { id: call.id }),
    ...(call.name === undefined ? {} : { name: call.name }),
    args: '{"query": ',
    error: "Unterminated JSON",
    type: "invalid_tool_call" as const,
  };
}

/**
 * An OpenAI-shaped raw call, whose arguments may not parse. Its id may be missing, which the
 * type does not allow but providers do send.
 */
function rawToolCall(call: CallSpec, parses: boolean): OpenAIToolCall {
  return {
    ...(call.id === undefined ? {} : { id: call.id }),
    type: "function",
    function: { name: call.name ?? "", arguments: parses ? '{"query":1}' : '{"query": ' },
  } as OpenAIToolCall;
}

/** `new AIMessage` warns when only raw calls are given; that is exactly what we mean to build. */
function quietly<T>(make: () => T): T {
  const warn = console.warn;
  console.warn = () => {};
  try {
    return make();
  } finally {
    console.warn = warn;
  }
}

function aiMessageOf(turn: TurnSpec): AIMessage {
  if (turn.raw) {
    const raw = [
      ...turn.calls.map((call) => rawToolCall(call, true)),
      ...turn.invalid.map((call) => rawToolCall(call, false)),
    ];
    return quietly(
      () =>
        new AIMessage({
          content: "",
          tool_calls: [],
          invalid_tool_calls: [],
          additional_kwargs: { tool_calls: raw },
        }),
    );
  }
  // With a raw shadow (OpenAI's shape) the invalid calls are never sent; without one, they are
  // sent as Anthropic `tool_use` content blocks, as ChatAnthropic keeps them.
  // A shadow is ignored only next to parsed calls: with none, converters send the raw list.
  const shadow = turn.shadow && turn.calls.length > 0;
  const toolUseOf = (call: CallSpec) =>
    call.id === undefined
      ? []
      : [{ type: "tool_use", id: call.id, name: call.name ?? "", input: {} }];
  const toolUses = [
    ...(turn.blocks ? turn.calls.flatMap(toolUseOf) : []),
    ...(shadow ? [] : turn.invalid.flatMap(toolUseOf)),
  ];
  return quietly(
    () =>
      new AIMessage({
        content:
          toolUses.length > 0
            ? toolUses
            : turn.calls.length + turn.invalid.length > 0
              ? ""
              : "thinking",
        tool_calls: turn.calls.map(toolCall),
        invalid_tool_calls: turn.invalid.map(invalidToolCall),
        additional_kwargs: shadow
          ? { tool_calls: [rawToolCall({ id: SHADOW_ID, name: "shadow" }, true)] }
          : {},
      }),
  );
}

function junkOf(which: 0 | 1 | 2 | 3): unknown {
  return [null, 42, "text", {}][which];
}

/**
 * Fresh messages for a spec, at most 40 of them (clean specs never reach the cut). Texts are
 * numbered from `counter.serial` on, which it advances, so that results stay unique in a history
 * built from several specs.
 */
export function materialize(
  steps: readonly StepSpec[],
  counter: { serial: number } = { serial: 0 },
): unknown[] {
  const history: unknown[] = [];
  let serial = counter.serial;
  const result = (id: string, name = "search") =>
    new ToolMessage({ content: `result ${serial++} of ${id}`, tool_call_id: id, name });
  for (const step of steps) {
    switch (step.kind) {
      case "turn":
        history.push(aiMessageOf(step));
        for (const id of step.results) history.push(result(id));
        break;
      case "tool":
        history.push(result(step.id, step.name));
        break;
      case "late":
        history.push(new HumanMessage(`still there? ${serial++}`));
        for (const id of step.ids) history.push(result(id));
        break;
      case "human":
        history.push(new HumanMessage(`go on ${serial++}`));
        break;
      case "system":
        history.push(new SystemMessage("You are helpful."));
        break;
      case "aiText":
        history.push(new AIMessage(`answer ${serial++}`));
        break;
      case "junk":
        history.push(junkOf(step.which));
        break;
    }
  }
  counter.serial = serial;
  return history.slice(0, MAX_MESSAGES);
}

/** A call as `id`, `''` for an empty id, `?` for a missing one. */
function describeCall(call: unknown, prefix: string): string {
  const id = (call as { id?: unknown } | null)?.id;
  return `${prefix}${typeof id === "string" ? id || "''" : "?"}`;
}

/** A compact picture of a message: `ai(a,!b,?)`, `ai(raw:a)`, `tool(a)`, `human`, `null`, ... */
function describeMessage(message: unknown): string {
  if (message === null || typeof message !== "object") return JSON.stringify(message);
  if (message instanceof AIMessage) {
    const raw = (message.additional_kwargs.tool_calls ?? []) as unknown[];
    const calls = [
      ...(message.tool_calls ?? []).map((call) => describeCall(call, "")),
      ...(message.invalid_tool_calls ?? []).map((call) => describeCall(call, "!")),
    ];
    if (calls.length === 0) calls.push(...raw.map((call) => describeCall(call, "raw:")));
    return calls.length === 0 ? "ai" : `ai(${calls.join(",")})`;
  }
  if (message instanceof ToolMessage) return `tool(${message.tool_call_id || "''"})`;
  if (message instanceof HumanMessage) return "human";
  if (message instanceof SystemMessage) return "system";
  return JSON.stringify(message);
}

/** Lets fast-check print a counterexample as `[ai(a,b), tool(b), human, ...]`. */
function printable(history: unknown[]): unknown[] {
  Object.defineProperty(history, fc.toStringMethod, {
    value: () => `[${history.map(describeMessage).join(", ")}]`,
  });
  return history;
}

/** Random broken histories of at most 40 messages. */
export const brokenHistoryArb: fc.Arbitrary<unknown[]> = brokenStepsArbOver(CALL_IDS).map((steps) =>
  printable(materialize(steps)),
);

/**
 * Random broken histories whose ids look like the ones the engine assigns (`tcr_<message>_<call>`),
 * as they do once a repaired history has been stored and grown.
 */
export const assignedLookingHistoryArb: fc.Arbitrary<unknown[]> = brokenStepsArbOver([
  "a",
  ...[0, 1, 2, 3].flatMap((message) => [1, 2].map((call) => `tcr_${message}_${call}`)),
]).map((steps) => printable(materialize(steps)));

/**
 * Random well-formed histories of at most 40 messages, well formed on every wire: each call is
 * answered in the group right after its AI message, and an AI text message stands between a tool
 * message and a human message that follows it (Bedrock Converse and Mistral want an assistant
 * turn there), so a repair for any target finds nothing to do.
 */
export const cleanHistoryArb: fc.Arbitrary<unknown[]> = cleanStepsArb.map((steps) =>
  printable(materialize(steps)),
);

/** Options of the engine: every orphans × misplaced combination, with or without a window. */
export const repairOptionsArb = fc.record({
  orphans: fc.constantFrom("drop" as const, "keep" as const),
  misplaced: fc.constantFrom("regroup" as const, "keep" as const),
  window: fc.option(fc.integer({ min: 1, max: 45 }), { nil: undefined }),
});
