/**
 * The benchmark's workloads: chat histories of an exact length and a known shape, built from real
 * LangChain message instances (the peer only recognizes instances), the same for every contender.
 */
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";

/**
 * How a history is broken, if at all.
 * - `clean`: every call answered right after its AI message;
 * - `one-dangling`: clean, but the last call of the history was never answered (the user pressed stop);
 * - `ten-percent-dangling`: every tenth call left unanswered;
 * - `parallel`: AI messages make three calls at once, all answered;
 * - `parallel-one-dangling`: as `parallel`, with one of the last three parallel calls unanswered.
 */
export const SHAPES = [
  "clean",
  "one-dangling",
  "ten-percent-dangling",
  "parallel",
  "parallel-one-dangling",
] as const;
export type Shape = (typeof SHAPES)[number];

/** A built workload: the history and what is in it. */
export interface Workload {
  readonly shape: Shape;
  readonly messages: readonly BaseMessage[];
  /** How many tool calls the AI messages make in all. */
  readonly calls: number;
  /** How many of them have no result. */
  readonly dangling: number;
  /**
   * How many synthetic replies a repair for every wire (target `"any"`, the default) writes: one
   * per turn whose unanswered calls the user's "stop" follows, between the turn's last result or
   * placeholder and that user message. A repair for the OpenAI or Anthropic clients writes none.
   */
  readonly turns: number;
}

const TOOLS = ["search_docs", "run_sql", "fetch_page", "send_email"] as const;

/**
 * Builds a history of exactly `size` messages: turns of a human question, an AI message making one
 * call (three for the parallel shapes), their results and an AI answer, topped up with human
 * messages where a whole turn no longer fits. A dangling call's result is replaced by a human
 * message after the turn's results, so the size stays exact and the break is where a user's
 * "stop" would leave it (and where a repair for every wire writes a synthetic reply before it).
 *
 * @example
 * ```ts
 * const { messages, dangling } = buildHistory(10_000, "one-dangling"); // 10,000 messages, 1 dangling
 * ```
 */
export function buildHistory(size: number, shape: Shape): Workload {
  const width = shape === "parallel" || shape === "parallel-one-dangling" ? 3 : 1;
  const turnLength = width + 3;
  const turns = Math.floor(size / turnLength);
  const calls = turns * width;
  const unanswered = unansweredCallIndexes(shape, calls, width);
  const messages: BaseMessage[] = [];
  let call = 0;
  let stoppedTurns = 0;
  for (let turn = 0; turn < turns; turn++) {
    messages.push(new HumanMessage({ id: `h${turn}`, content: `Question ${turn}?` }));
    const ids: string[] = [];
    const toolCalls = [];
    for (let slot = 0; slot < width; slot++) {
      const id = `call_${turn}_${slot}`;
      ids.push(id);
      toolCalls.push({
        id,
        name: TOOLS[(turn + slot) % TOOLS.length] as string,
        args: { query: `q${turn}` },
        type: "tool_call" as const,
      });
    }
    messages.push(new AIMessage({ id: `a${turn}`, content: "", tool_calls: toolCalls }));
    let stopped = 0;
    for (const [slot, id] of ids.entries()) {
      if (unanswered.has(call++)) {
        stopped++;
      } else {
        const name = toolCalls[slot]?.name;
        messages.push(
          new ToolMessage({
            id: `t${turn}_${slot}`,
            tool_call_id: id,
            name,
            content: `Result ${turn}.`,
          }),
        );
      }
    }
    if (stopped > 0) stoppedTurns++;
    for (let stop = 0; stop < stopped; stop++) {
      messages.push(new HumanMessage({ id: `stop${turn}_${stop}`, content: "Stop." }));
    }
    messages.push(new AIMessage({ id: `r${turn}`, content: `Answer ${turn}.` }));
  }
  while (messages.length < size) {
    messages.push(new HumanMessage({ id: `pad${messages.length}`, content: "And then?" }));
  }
  return { shape, messages, calls, dangling: unanswered.size, turns: stoppedTurns };
}

function unansweredCallIndexes(shape: Shape, calls: number, width: number): Set<number> {
  const indexes = new Set<number>();
  if (calls === 0) return indexes;
  switch (shape) {
    case "clean":
    case "parallel":
      break;
    case "one-dangling":
      indexes.add(calls - 1);
      break;
    case "parallel-one-dangling":
      // The middle call of the last parallel group.
      indexes.add(calls - width + 1);
      break;
    case "ten-percent-dangling":
      for (let index = 9; index < calls; index += 10) indexes.add(index);
      break;
  }
  return indexes;
}
