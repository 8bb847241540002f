/**
 * Whatever a Responses API `input` holds, what `repairResponsesInput` makes of it is an input the
 * API accepts: random lists of every kind of item (each call kind the application runs, their
 * outputs, built-in tools, MCP, reasoning, messages), with calls left dangling, orphan, late,
 * repeated and mistyped outputs, tool search outputs with and without `execution`, and missing,
 * empty and reused call ids. And it changes nothing it need not: real outputs it can pair are
 * kept, items that needed nothing come back as the same objects, a clean input as the same array,
 * and a repaired input stays as it is. Every property runs `FC_NUM_RUNS` times.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { repairResponsesInput } from "../../src/formats/index.js";
import { responsesViolations } from "../helpers/provider-rules.js";

// 10,000 runs in CI (`.ci/run` sets FC_NUM_RUNS); fewer in a plain `npm test`.
const RUNS = { numRuns: Number(process.env.FC_NUM_RUNS ?? 1_000) } as const;

const quiet = { logger: false } as const;

type Item = Record<string, unknown>;

/** The call types the application runs, and how an output of each looks. */
const CALL_TYPES = {
  function_call: {
    call: { name: "search", arguments: '{"q":"x"}' },
    output: { type: "function_call_output", output: "found" },
  },
  custom_tool_call: {
    call: { name: "run_sql", input: "select 1" },
    output: { type: "custom_tool_call_output", output: "1 row" },
  },
  computer_call: {
    call: { action: { type: "screenshot" }, pending_safety_checks: [], status: "completed" },
    output: {
      type: "computer_call_output",
      output: { type: "computer_screenshot", image_url: "data:image/png;base64,AA" },
    },
  },
  local_shell_call: {
    call: { action: { type: "exec", command: ["ls"], env: {} }, status: "completed" },
    output: { type: "local_shell_call_output", output: "a.txt" },
  },
  shell_call: {
    call: { action: { commands: ["ls"] } },
    output: {
      type: "shell_call_output",
      output: [{ stdout: "a.txt", stderr: "", outcome: { type: "exit", exit_code: 0 } }],
    },
  },
  apply_patch_call: {
    call: { operation: { type: "delete_file", path: "a.txt" }, status: "completed" },
    output: { type: "apply_patch_call_output", status: "completed" },
  },
  tool_search_call: {
    call: { execution: "client", arguments: { query: "calendar" } },
    output: { type: "tool_search_output", execution: "client", status: "completed", tools: [] },
  },
} as const;
type CallType = keyof typeof CALL_TYPES;
const callTypeArb = fc.constantFrom(...(Object.keys(CALL_TYPES) as CallType[]));

/** Few ids, so that they meet: reused, shared by two call types, answered twice. */
const callIdArb = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom("call_a", "call_b", "call_c", "call_d") },
  { weight: 1, arbitrary: fc.constantFrom("", undefined) },
);

const callArb = fc
  .record({ type: callTypeArb, callId: callIdArb, cut: fc.nat(9), nameless: fc.nat(9) })
  .map(({ type, callId, cut, nameless }): Item => {
    const call: Item = { type, call_id: callId, ...CALL_TYPES[type].call };
    if (callId === undefined) delete call.call_id;
    if (type === "function_call" && cut === 0) call.arguments = '{"q": "x';
    if ("name" in call && nameless === 0) call.name = "";
    return call;
  });

/** Half of the tool search outputs leave `execution` out, as the SDK's input type allows. */
const withoutExecution = (output: Item, bare: boolean): Item => {
  if (!bare || !("execution" in output)) return output;
  const { execution: _execution, ...rest } = output;
  return rest;
};

const outputArb = fc
  .record({ type: callTypeArb, callId: callIdArb, bare: fc.boolean() })
  .map(({ type, callId, bare }): Item => {
    const output: Item = withoutExecution({ ...CALL_TYPES[type].output, call_id: callId }, bare);
    if (callId === undefined) delete output.call_id;
    return output;
  });

/** What the API runs itself, the model's own items, and messages: nothing to answer (but orphans). */
const passingArb = fc.constantFrom<Item>(
  { role: "user", content: "go on" },
  { type: "message", role: "developer", content: [{ type: "input_text", text: "Be brief." }] },
  { role: "system", content: "Cite sources." },
  { type: "message", role: "assistant", status: "completed", content: [] },
  { role: "assistant", content: "On it." },
  { type: "reasoning", summary: [] },
  { type: "web_search_call", status: "completed", action: { type: "search" } },
  { type: "file_search_call", queries: ["x"], status: "completed" },
  { type: "code_interpreter_call", code: "1+1", outputs: [], status: "completed" },
  { type: "image_generation_call", result: null, status: "completed" },
  { type: "mcp_call", name: "book", arguments: "{}", server_label: "cal", output: "ok" },
  { type: "mcp_list_tools", server_label: "cal", tools: [] },
  { type: "mcp_approval_request", name: "pay", arguments: "{}", server_label: "cal" },
  { type: "mcp_approval_response", approval_request_id: "mr_x", approve: true },
  { type: "tool_search_call", call_id: "call_a", execution: "server", arguments: {} },
  { type: "tool_search_output", call_id: "call_b", execution: "server", tools: [] },
  // A shell call in the API's own container, and the output the API gave it.
  {
    type: "shell_call",
    call_id: "call_h",
    action: { commands: ["ls"] },
    environment: { type: "container_reference", container_id: "cntr_1" },
  },
  { ...CALL_TYPES.shell_call.output, call_id: "call_h" },
);

/** Each item a fresh object with an item id of its own (or none), as the API gives them. */
function withItemIds(items: readonly Item[], ids: readonly boolean[]): Item[] {
  return items.map((item, index) => {
    const copy = structuredClone(item);
    if (ids[index % ids.length] && !("role" in item && item.type === undefined)) {
      copy.id = `item_${index}`;
    }
    return copy;
  });
}

const idsArb = fc.array(fc.boolean(), { minLength: 1, maxLength: 5 });

const inputArb = fc
  .tuple(
    fc.array(
      fc.oneof(
        { weight: 4, arbitrary: callArb },
        { weight: 4, arbitrary: outputArb },
        { weight: 3, arbitrary: passingArb },
      ),
      { maxLength: 24 },
    ),
    idsArb,
  )
  .map(([items, ids]) => withItemIds(items, ids));

/** An input the API accepts: turns of parallel calls, each answered after it in any order. */
const cleanInputArb = fc
  .tuple(
    fc.array(
      fc.record({
        // Without outputs: an output among them would answer no call of the input.
        before: fc.array(
          passingArb.filter((item) => !String(item.type).endsWith("_output")),
          { maxLength: 2 },
        ),
        calls: fc.uniqueArray(
          fc.tuple(fc.constantFrom("call_a", "call_b", "call_c"), callTypeArb),
          {
            minLength: 1,
            maxLength: 3,
            selector: ([callId]) => callId,
          },
        ),
        reasoningBetween: fc.boolean(),
        order: fc.nat(),
        bare: fc.boolean(),
      }),
      { maxLength: 5 },
    ),
    idsArb,
  )
  .map(([turns, ids]) => {
    const items: Item[] = [];
    for (const { before, calls, reasoningBetween, order, bare } of turns) {
      items.push(...before);
      calls.forEach(([callId, type], position) => {
        if (position > 0 && reasoningBetween) items.push({ type: "reasoning", summary: [] });
        items.push({ type, call_id: callId, ...CALL_TYPES[type].call });
      });
      const outputs = calls.map(([callId, type]) =>
        withoutExecution({ ...CALL_TYPES[type].output, call_id: callId }, bare),
      );
      // Any order: a rotation of the turn's outputs.
      const start = order % outputs.length;
      items.push(...outputs.slice(start), ...outputs.slice(0, start));
    }
    return withItemIds(items, ids);
  });

const isCall = (item: Item) =>
  Object.hasOwn(CALL_TYPES, String(item.type)) &&
  (item.type !== "tool_search_call" || item.execution === "client") &&
  (item.type !== "shell_call" || item.environment === undefined);
/**
 * Whether an item of the input is an output that answers a call the application runs: a tool
 * search output when it says `execution: "client"`, or when a client tool search call of the input
 * has its `call_id`, whatever it says.
 */
const isOutput = (item: Item, input: readonly Item[]) =>
  Object.values(CALL_TYPES).some(({ output }) => output.type === item.type) &&
  (item.type !== "tool_search_output" ||
    item.execution === "client" ||
    input.some(
      (call) =>
        call.type === "tool_search_call" &&
        call.execution === "client" &&
        call.call_id === item.call_id,
    ));
const callTypeOf = (output: Item) =>
  (Object.keys(CALL_TYPES) as CallType[]).find(
    (type) => CALL_TYPES[type].output.type === output.type,
  );

/**
 * The outputs the API itself would pair with one call and one call only: their `call_id` is on
 * exactly one call of the input, of their own type and before them, and on no other output.
 */
function unambiguousOutputs(input: readonly Item[]): Item[] {
  return input.filter((item, index) => {
    if (!isOutput(item, input) || typeof item.call_id !== "string" || item.call_id === "") {
      return false;
    }
    const sharing = input.filter(
      (other) => (isCall(other) || isOutput(other, input)) && other.call_id === item.call_id,
    );
    const calls = sharing.filter(isCall);
    return (
      sharing.length === 2 &&
      calls.length === 1 &&
      calls[0]?.type === callTypeOf(item) &&
      input.indexOf(calls[0] as Item) < index
    );
  });
}

describe("repairResponsesInput on random inputs", () => {
  it("leaves nothing the API refuses, keeps every output it can pair, and mutates nothing", () => {
    fc.assert(
      fc.property(inputArb, (input) => {
        const before = structuredClone(input);
        const { messages } = repairResponsesInput(input, quiet);
        expect(responsesViolations(messages)).toEqual([]);
        const kept = new Set<unknown>(messages);
        for (const output of unambiguousOutputs(input)) expect(kept.has(output)).toBe(true);
        expect(input).toEqual(before);
      }),
      RUNS,
    );
  });

  it("passes every item but calls and outputs on as the same object, in its order", () => {
    fc.assert(
      fc.property(inputArb, (input) => {
        const { messages } = repairResponsesInput(input, quiet);
        const passing = input.filter((item) => !isCall(item) && !isOutput(item, input));
        const passed = messages.filter((item) => passing.includes(item as Item));
        expect(passed).toHaveLength(passing.length);
        for (const [index, item] of passed.entries()) expect(item).toBe(passing[index]);
        // Calls stay where they were, the same object unless given an id or a name.
        const calls = messages.filter((item) => isCall(item as Item)) as Item[];
        const inputCalls = input.filter(isCall);
        expect(calls).toHaveLength(inputCalls.length);
        calls.forEach((call, index) => {
          const original = inputCalls[index] as Item;
          if (call === original) return;
          expect({ ...call, call_id: original.call_id, name: original.name }).toEqual(original);
        });
      }),
      RUNS,
    );
  });

  it("is idempotent: a repaired input comes back as the same array", () => {
    fc.assert(
      fc.property(inputArb, (input) => {
        const { messages } = repairResponsesInput(input, quiet);
        const again = repairResponsesInput(messages, quiet);
        expect(again.messages).toBe(messages);
        expect(again.repairs).toEqual([]);
      }),
      RUNS,
    );
  });

  it("returns a clean input as the very same array, with no repairs", () => {
    fc.assert(
      fc.property(cleanInputArb, (input) => {
        expect(responsesViolations(input)).toEqual([]);
        const result = repairResponsesInput(input, quiet);
        expect(result.messages).toBe(input);
        expect(result.repairs).toEqual([]);
      }),
      RUNS,
    );
  });

  it("keeps, after an item reference or on a stored response, the outputs whose call it cannot see", () => {
    fc.assert(
      fc.property(inputArb, fc.nat(), fc.boolean(), (input, at, stored) => {
        const referring = stored
          ? input
          : [
              ...input.slice(0, at % (input.length + 1)),
              { type: "item_reference", id: "ref_0" },
              ...input.slice(at % (input.length + 1)),
            ];
        const { messages } = repairResponsesInput(referring, quiet, {
          continuesStoredResponse: stored,
        });
        // Where the outputs start that may answer a call the input does not show.
        const from = stored ? 0 : referring.findIndex((item) => item.type === "item_reference") + 1;
        const unseen = referring.filter(
          (item, index) =>
            index >= from &&
            isOutput(item, referring) &&
            typeof item.call_id === "string" &&
            item.call_id !== "" &&
            !referring.some(
              (call) =>
                isCall(call) && call.call_id === item.call_id && call.type === callTypeOf(item),
            ),
        );
        for (const output of unseen) expect(messages).toContain(output);
        // What the API would still refuse is those outputs alone, whose calls it holds itself.
        for (const violation of responsesViolations(messages)) {
          expect(violation.message).toMatch(/^No tool call found for .* output with call_id /);
        }
      }),
      RUNS,
    );
  });

  it("under any policy, never throws, mutates nothing, and keeps its repair as it is", () => {
    const policyArb = fc.record({
      orphans: fc.constantFrom("drop" as const, "keep" as const),
      misplaced: fc.constantFrom("regroup" as const, "keep" as const),
      markSynthetic: fc.boolean(),
    });
    fc.assert(
      fc.property(inputArb, policyArb, fc.integer({ min: 1, max: 30 }), (input, policy, window) => {
        const before = structuredClone(input);
        const options = { ...quiet, ...policy };
        const { messages } = repairResponsesInput(input, options);
        expect(repairResponsesInput(messages, options).messages).toBe(messages);
        expect(() => repairResponsesInput(input, { ...options, window })).not.toThrow();
        expect(input).toEqual(before);
      }),
      RUNS,
    );
  });
});
