/**
 * Telemetry: dangling tool calls counted per model, per tool and per thread, served to Prometheus.
 *
 * `startTelemetry()` starts the OpenTelemetry Node SDK with a Prometheus endpoint. Three threads
 * run on one agent: one finishes normally, two are left with a `deploy` call nobody approved and
 * then go on for two more messages each. The middleware repairs every later model call of those
 * threads but counts each dangling call once. The example then scrapes its own endpoint, as
 * Prometheus would, and prints what it found.
 *
 * Run it: `npx tsx examples/telemetry.ts` (set `METRICS_PORT` to use another port than 9464)
 */
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { interrupt, MemorySaver } from "@langchain/langgraph";
import { createAgent, tool } from "langchain";
import { danglingToolCallMiddleware } from "tool-call-resilience";
import { startTelemetry } from "tool-call-resilience/setup";
import { z } from "zod";

const telemetry = await startTelemetry({
  port: Number(process.env.METRICS_PORT ?? 9464),
  serviceName: "telemetry-example",
});

try {
  const deploy = tool(
    async ({ service }) =>
      interrupt({ question: `Deploy ${service}?` }) ? "deployed" : "cancelled",
    {
      name: "deploy",
      description: "Deploys a service after a human approves it.",
      schema: z.object({ service: z.string() }),
    },
  );
  const status = tool(async ({ service }) => `${service} is healthy`, {
    name: "status",
    description: "Tells whether a service is healthy.",
    schema: z.object({ service: z.string() }),
  });

  // A scripted model named like a real one, so the metrics carry a meaningful model label.
  const model = Object.assign(fakeModel(), { model: "gpt-4.1" });
  const callTool = (id: string, name: string) =>
    new AIMessage({ id, content: "", tool_calls: [{ id, name, args: { service: "billing" } }] });
  const reply = (id: string) => new AIMessage({ id, content: "Here is where things stand." });

  const agent = createAgent({
    name: "ops_assistant",
    model,
    tools: [deploy, status],
    checkpointer: new MemorySaver(),
    middleware: [danglingToolCallMiddleware({ logger: false })],
  });

  const turn = (thread: string, text: string) =>
    agent.invoke({ messages: [new HumanMessage(text)] }, { configurable: { thread_id: thread } });

  // A healthy thread: the tool answers, the model replies.
  model.respond(callTool("call_status_1", "status")).respond(reply("reply_1"));
  await turn("thread-healthy", "Is billing healthy?");

  // Two threads left waiting for an approval that never comes, then continued twice each.
  for (const thread of ["thread-a", "thread-b"]) {
    model.respond(callTool(`call_deploy_${thread}`, "deploy"));
    await turn(thread, "Deploy billing.");
    for (const [index, text] of ["Never mind.", "What happened?"].entries()) {
      model.respond(reply(`reply_${thread}_${index}`));
      await turn(thread, text);
    }
  }

  const exposition = await (await fetch(telemetry.metricsUrl)).text();
  console.log(`Scraped ${telemetry.metricsUrl}:`);
  for (const line of exposition.split("\n")) {
    if (line.startsWith("tool_call_resilience_") && !line.includes("_repair_duration")) {
      console.log(`  ${line.replace(/,?otel_scope_(name|version)="[^"]*"/g, "")}`);
    }
  }

  const total = (name: string) =>
    exposition
      .split("\n")
      .filter((line) => line.startsWith(`${name}{`))
      .reduce((sum, line) => sum + Number(line.split(" ").at(-1)), 0);
  const dangling = total("tool_call_resilience_dangling_tool_calls_total");
  const issued = total("tool_call_resilience_tool_calls_total");
  console.log(`Dangling rate: ${dangling} of ${issued} tool calls left without a result.`);
} finally {
  await telemetry.shutdown();
}
