/**
 * fast-check generators of histories whose AI messages were made by every client the repair
 * targets, as each client makes them: ChatOpenAI on the Responses API (v0: `response_metadata.output`
 * with function, custom, computer and server-side items; v1: content blocks), ChatAnthropic (v0
 * `tool_use` blocks, server tools; v1), plain LangChain messages (the shapes of
 * `arbitraries.ts`), calls edited after the model answered (approve + reject), calls without ids
 * answered by results without ids (ToolNode), Anthropic `tool_result` blocks in human messages,
 * and any mix of them in one thread.
 */
import { AIMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import fc from "fast-check";
import { brokenStepsArbOver, materialize, type StepSpec } from "./arbitraries.js";
import { anthropicAIMessage, asOutputV1, responsesAIMessage } from "./client-messages.js";

/** Call ids: few, so that they get reused across turns and within a message. */
const WIRE_CALL_IDS = ["a", "b", "c"] as const;
/** The id of a computer call: its results are screenshots, which no other call's result is. */
const COMPUTER_ID = "cu";
/** A screenshot, as a computer-use tool returns it. */
const SCREENSHOT = "data:image/png;base64,iVBORw0KGgo=";

type Maker = "responses" | "responses-v1" | "anthropic" | "anthropic-v1";
type Kind = "function" | "custom" | "computer";

interface WireCallSpec {
  readonly id: string | undefined;
  readonly name: string | undefined;
  readonly kind: Kind;
  /** Arguments cut off: the client keeps the call in `invalid_tool_calls`. */
  readonly invalid: boolean;
}

/** What answers a turn: a result per entry, by the call it answers (or a stray id). */
interface ResultSpec {
  /** The index of the call it answers; -1 for a stray with `id`. */
  readonly call: number;
  readonly id: string;
}

/** An AI message made by a client, and what follows it. */
interface WireTurnSpec {
  readonly kind: "wire";
  readonly maker: Maker;
  readonly calls: readonly WireCallSpec[];
  /** A server-side tool call (web search, MCP...) with its result, in the same message. */
  readonly server: boolean;
  readonly text: boolean;
  /** Approve + reject: `tool_calls` set to the calls at these positions alone. */
  readonly kept: readonly number[] | undefined;
  readonly results: readonly ResultSpec[];
  /** The results as Anthropic `tool_result` blocks of one human message (Anthropic shapes). */
  readonly asBlocks: boolean;
  /** Text after the blocks in that human message. */
  readonly blockText: boolean;
}

/** Calls without ids (ToolNode, some OpenAI-compatible servers) and their results, in order. */
interface IdlessTurnSpec {
  readonly kind: "idless";
  readonly names: readonly string[];
  /** How many of the calls have a result (all, in order; or fewer, which is ambiguous). */
  readonly answered: number;
}

type WireStepSpec = WireTurnSpec | IdlessTurnSpec | StepSpec;

const idArb = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom<string | undefined>(...WIRE_CALL_IDS) },
  { weight: 1, arbitrary: fc.constantFrom<string | undefined>("", undefined) },
);
const nameArb = fc.oneof(
  { weight: 9, arbitrary: fc.constantFrom<string | undefined>("search", "calc") },
  { weight: 1, arbitrary: fc.constantFrom<string | undefined>("", undefined) },
);

const callArbFor = (maker: Maker): fc.Arbitrary<WireCallSpec> => {
  const kinds: Kind[] = maker.startsWith("responses")
    ? ["function", "custom", "computer"]
    : ["function"];
  return fc
    .record({
      id: idArb,
      name: nameArb,
      kind: fc.oneof(
        { weight: 6, arbitrary: fc.constant<Kind>("function") },
        { weight: 1, arbitrary: fc.constantFrom<Kind>(...kinds) },
      ),
      invalid: fc.oneof(
        { weight: 6, arbitrary: fc.constant(false) },
        { weight: 1, arbitrary: fc.constant(true) },
      ),
    })
    .map((call) =>
      call.kind === "computer" ? { ...call, id: COMPUTER_ID, invalid: false } : call,
    );
};

const wireTurnArb: fc.Arbitrary<WireTurnSpec> = fc
  .constantFrom<Maker>("responses", "responses-v1", "anthropic", "anthropic-v1")
  .chain((maker) =>
    fc
      .record({
        calls: fc.array(callArbFor(maker), { minLength: 1, maxLength: 3 }),
        server: fc.oneof(
          { weight: 4, arbitrary: fc.constant(false) },
          { weight: 1, arbitrary: fc.constant(true) },
        ),
        text: fc.boolean(),
        edit: fc.oneof(
          { weight: 4, arbitrary: fc.constant(false) },
          { weight: 1, arbitrary: fc.constant(true) },
        ),
        asBlocks: fc.oneof(
          { weight: 3, arbitrary: fc.constant(false) },
          { weight: maker.startsWith("anthropic") ? 2 : 0, arbitrary: fc.constant(true) },
        ),
        blockText: fc.boolean(),
      })
      .chain((turn) =>
        fc
          .record({
            answered: fc.shuffledSubarray([...turn.calls.keys()]),
            strays: fc.array(fc.constantFrom(...WIRE_CALL_IDS), { maxLength: 1 }),
            kept: fc.nat({ max: turn.calls.length - 1 }),
          })
          .map(({ answered, strays, kept }) => ({
            kind: "wire" as const,
            maker,
            calls: turn.calls,
            server: turn.server,
            text: turn.text,
            kept: turn.edit && turn.calls.length > 1 ? [kept] : undefined,
            results: [
              ...answered.map((call) => ({ call, id: turn.calls[call]?.id ?? "" })),
              ...strays.map((id) => ({ call: -1, id })),
            ],
            asBlocks: turn.asBlocks,
            blockText: turn.blockText,
          })),
      ),
  );

const idlessTurnArb: fc.Arbitrary<IdlessTurnSpec> = fc
  .array(fc.constantFrom("search", "calc"), { minLength: 1, maxLength: 3 })
  .chain((names) =>
    fc
      .oneof(
        { weight: 4, arbitrary: fc.constant(names.length) },
        { weight: 1, arbitrary: fc.nat({ max: names.length }) },
      )
      .map((answered) => ({ kind: "idless" as const, names, answered })),
  );

/** Steps of a broken history that mixes every client's shapes. */
const wireStepsArb: fc.Arbitrary<WireStepSpec[]> = fc
  .tuple(
    brokenStepsArbOver(WIRE_CALL_IDS),
    fc.array(
      fc.oneof({ weight: 4, arbitrary: wireTurnArb }, { weight: 1, arbitrary: idlessTurnArb }),
      {
        maxLength: 5,
      },
    ),
    fc.array(fc.nat(), { maxLength: 5 }),
  )
  .map(([steps, turns, at]) => {
    const mixed: WireStepSpec[] = [...steps];
    turns.forEach((turn, position) => {
      mixed.splice((at[position] ?? 0) % (mixed.length + 1), 0, turn);
    });
    return mixed;
  });

/** Item ids are unique across a history, as the API makes them. */
let items = 0;

function outputItem(call: WireCallSpec): Record<string, unknown> {
  const callId = call.id ?? "";
  items++;
  switch (call.kind) {
    case "custom":
      return {
        type: "custom_tool_call",
        id: `ctc_${items}`,
        call_id: callId,
        name: call.name ?? "",
        input: "TODO",
      };
    case "computer":
      return {
        type: "computer_call",
        id: `cu_${items}`,
        call_id: callId,
        action: { type: "screenshot" },
        pending_safety_checks: [],
        status: "completed",
      };
    default:
      return {
        type: "function_call",
        id: `fc_${items}`,
        call_id: callId,
        name: call.name ?? "",
        arguments: call.invalid ? '{"query":' : '{"query":"x"}',
        status: "completed",
      };
  }
}

function aiMessageOf(turn: WireTurnSpec): AIMessage {
  let message: AIMessage;
  if (turn.maker.startsWith("responses")) {
    message = responsesAIMessage([
      ...(turn.text
        ? [
            {
              type: "message",
              id: `msg_${++items}`,
              role: "assistant",
              status: "completed",
              content: [{ type: "output_text", text: "On it.", annotations: [] }],
            },
          ]
        : []),
      ...turn.calls.map(outputItem),
      ...(turn.server
        ? [
            {
              type: "web_search_call",
              id: `ws_${++items}`,
              status: "completed",
              action: { type: "search", query: "x" },
            },
          ]
        : []),
    ]);
  } else {
    message = anthropicAIMessage([
      ...(turn.text ? [{ type: "text", text: "On it." }] : []),
      ...(turn.server
        ? [
            {
              type: "server_tool_use",
              id: "srvtoolu_1",
              name: "web_search",
              input: { query: "x" },
            },
            { type: "web_search_tool_result", tool_use_id: "srvtoolu_1", content: [] },
          ]
        : []),
      ...turn.calls.map((call) => ({
        type: "tool_use",
        id: call.id ?? "",
        name: call.name ?? "",
        input: call.invalid ? '{"query":' : { query: "x" },
      })),
    ]);
    // ChatAnthropic keeps a call whose input was cut off out of tool_calls.
    const invalid = new Set(turn.calls.filter((call) => call.invalid).map((call) => call.id ?? ""));
    message.tool_calls = (message.tool_calls ?? []).filter((call) => !invalid.has(call.id ?? ""));
    message.invalid_tool_calls = turn.calls
      .filter((call) => call.invalid)
      .map((call) => ({
        id: call.id ?? "",
        name: call.name ?? "",
        args: '{"query":',
        error: "cut off",
        type: "invalid_tool_call" as const,
      }));
  }
  if (turn.maker.endsWith("v1")) message = asOutputV1(message);
  if (turn.kept !== undefined) {
    // What humanInTheLoopMiddleware does on approve + reject: tool_calls revised in place.
    const kept = turn.kept.map((position) => turn.calls[position]?.id);
    message.tool_calls = (message.tool_calls ?? []).filter((call) => kept.includes(call.id ?? ""));
  }
  return message;
}

/** Fresh messages for a spec. */
function materializeWire(steps: readonly WireStepSpec[]): unknown[] {
  const history: unknown[] = [];
  const counter = { serial: 0 };
  for (const step of steps) {
    if (step.kind === "wire") {
      const ai = aiMessageOf(step);
      history.push(ai);
      const v1 = step.maker.endsWith("v1");
      const results = step.results.map((result) => {
        const call = step.calls[result.call];
        const content =
          call?.kind === "computer" ? SCREENSHOT : `result ${counter.serial++} of ${result.id}`;
        // The Responses client picks the output type by these markers; a v1 message sends every
        // call as a function call.
        const kwargs =
          v1 || call === undefined || call.kind === "function"
            ? {}
            : call.kind === "custom"
              ? { customTool: true }
              : { type: "computer_call_output" };
        return { id: result.id, content, name: call?.name ?? "search", kwargs };
      });
      if (step.asBlocks && results.length > 0) {
        history.push(
          new HumanMessage({
            content: [
              ...results.map((result) => ({
                type: "tool_result",
                tool_use_id: result.id,
                content: result.content,
              })),
              ...(step.blockText ? [{ type: "text", text: `and go on ${counter.serial++}` }] : []),
            ],
          }),
        );
        continue;
      }
      for (const result of results) {
        history.push(
          new ToolMessage({
            content: result.content,
            tool_call_id: result.id,
            name: result.name,
            additional_kwargs: result.kwargs,
          }),
        );
      }
      continue;
    }
    if (step.kind === "idless") {
      history.push(
        new AIMessage({
          content: "",
          tool_calls: step.names.map((name, position) => ({
            name,
            args: { n: position },
            type: "tool_call" as const,
          })),
        }),
      );
      for (const name of step.names.slice(0, step.answered)) {
        history.push(
          new ToolMessage({
            content: `result ${counter.serial++} of an id-less ${name}`,
            tool_call_id: undefined as unknown as string,
            name,
          }),
        );
      }
      continue;
    }
    history.push(...materialize([step], counter));
  }
  return history;
}

/** A compact picture of a message for counterexamples: `resp(a,!b)`, `anth1(a)`, `tool(a)`... */
function describe(message: unknown): string {
  if (message === null || typeof message !== "object") return JSON.stringify(message);
  if (AIMessage.isInstance(message)) {
    const v1 = message.response_metadata?.output_version === "v1";
    const maker =
      message.response_metadata?.model_provider === "openai"
        ? "resp"
        : message.response_metadata?.model_provider === "anthropic"
          ? "anth"
          : "ai";
    const ids = (message.tool_calls ?? []).map((call) => call.id ?? "?").join(",");
    return `${maker}${v1 ? "1" : ""}(${ids})`;
  }
  if (ToolMessage.isInstance(message)) return `tool(${message.tool_call_id ?? "?"})`;
  if (HumanMessage.isInstance(message))
    return Array.isArray(message.content) ? "human[blocks]" : "human";
  if (SystemMessage.isInstance(message)) return "system";
  return "other";
}

/** Random broken histories of every client's shapes, fresh messages each run. */
export const wireHistoryArb: fc.Arbitrary<unknown[]> = wireStepsArb.map((steps) => {
  const history = materializeWire(steps);
  Object.defineProperty(history, fc.toStringMethod, {
    value: () => `[${history.map(describe).join(", ")}]`,
  });
  return history;
});
