/**
 * A `createAgent({ name: "researcher" })` invoked from a supervisor's tool: its model calls are
 * the researcher's, however it is invoked. Invoked with the parent's config (`sub.invoke(input,
 * config)`, which puts it in the parent's run, thread and stream), the run's metadata names the
 * supervisor: LangChain lets the caller's metadata win. The innermost agent's own name wins here:
 * `createAgent` names each answer after its agent, and a nested agent's model call is recorded
 * with that name once its answer is named.
 */
import { MemorySaver } from "@langchain/langgraph";
import { type AgentMiddleware, createAgent, createMiddleware, tool } from "langchain";
import { describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { danglingToolCallMiddleware } from "../../src/index.js";
import { ATTR_GEN_AI_AGENT_NAME, METRIC_MODEL_CALLS } from "../../src/telemetry/semconv.js";
import { aiAnswer, aiToolCall, humanTurn, onThread, scriptedModel } from "../helpers/agent.js";
import { metricsHarness } from "../helpers/telemetry.js";

/** How the supervisor's tool invokes the sub-agent. */
type Invocation = "with the parent's config" | "without a config";

/**
 * A supervisor whose tool `ask_researcher` runs a sub-agent; each agent has the middleware, both
 * report to one meter provider. The supervisor calls the tool once, then answers: 2 model calls.
 * The researcher calls `lookup` once, then answers: 2 model calls.
 */
async function supervisedRun(
  invocation: Invocation,
  researcherName: string | undefined,
  aroundResearcher: readonly AgentMiddleware[] = [],
) {
  const harness = metricsHarness();
  const ours = () =>
    danglingToolCallMiddleware({ logger: false, meterProvider: harness.meterProvider });
  const lookup = tool(async ({ query }) => `notes on ${query}`, {
    name: "lookup",
    description: "Looks up notes.",
    schema: z.object({ query: z.string() }),
  });
  const researcherMiddleware: AgentMiddleware[] = [...aroundResearcher, ours()];
  const researcher = createAgent({
    name: researcherName,
    model: scriptedModel(
      aiToolCall("r_ai_1", { id: "r_call_1", name: "lookup", args: { query: "Lisbon" } }),
      aiAnswer("r_ai_2", "Lisbon is sunny in May."),
    ),
    tools: [lookup],
    middleware: researcherMiddleware,
  });
  const askResearcher = tool(
    async ({ question }, config) => {
      const input = { messages: [humanTurn("r_h1", question)] };
      const result =
        invocation === "with the parent's config"
          ? await researcher.invoke(input, config)
          : await researcher.invoke(input);
      return String(result.messages.at(-1)?.content);
    },
    {
      name: "ask_researcher",
      description: "Asks the researcher.",
      schema: z.object({ question: z.string() }),
    },
  );
  const supervisor = createAgent({
    name: "supervisor",
    model: scriptedModel(
      aiToolCall("s_ai_1", { id: "s_call_1", name: "ask_researcher", args: { question: "May?" } }),
      aiAnswer("s_ai_2", "Go in May."),
    ),
    tools: [askResearcher],
    checkpointer: new MemorySaver(),
    middleware: [ours()],
  });
  await supervisor.invoke({ messages: [humanTurn("h1", "When to visit Lisbon?")] }, onThread("t"));
  // A nested agent's model calls are recorded on the next turn of the event loop, once
  // createAgent has named each answer after its agent.
  await new Promise((resolve) => setImmediate(resolve));
  return harness;
}

const byAgent = (name: string) => ({ [ATTR_GEN_AI_AGENT_NAME]: name });

describe("a sub-agent invoked from a supervisor's tool", () => {
  for (const invocation of ["with the parent's config", "without a config"] as const) {
    it(`records its model calls under its own name, invoked ${invocation}`, async () => {
      const harness = await supervisedRun(invocation, "researcher");
      // Ground truth: each agent made two model calls.
      expect(await harness.sum(METRIC_MODEL_CALLS, byAgent("supervisor"))).toBe(2);
      expect(await harness.sum(METRIC_MODEL_CALLS, byAgent("researcher"))).toBe(2);
      expect(await harness.sum(METRIC_MODEL_CALLS)).toBe(4);
    });
  }

  it("records its model calls under its own name when a middleware around them awaits after the answer", async () => {
    // An audit log written after each answer, say: createAgent names the answer only after it.
    const auditLog = createMiddleware({
      name: "AuditLog",
      wrapModelCall: async (request, handler) => {
        const answer = await handler(request);
        await new Promise((resolve) => setTimeout(resolve, 5));
        return answer;
      },
    });
    const harness = await supervisedRun("with the parent's config", "researcher", [auditLog]);
    await vi.waitFor(async () =>
      expect(await harness.sum(METRIC_MODEL_CALLS, byAgent("researcher"))).toBe(2),
    );
    expect(await harness.sum(METRIC_MODEL_CALLS, byAgent("supervisor"))).toBe(2);
  });

  it("records an unnamed sub-agent's calls under the nearest named agent around it", async () => {
    const harness = await supervisedRun("with the parent's config", undefined);
    expect(await harness.sum(METRIC_MODEL_CALLS, byAgent("supervisor"))).toBe(4);
  });
});
