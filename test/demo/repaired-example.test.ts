/**
 * The repaired request the demo shows after its summary: taken from what a fake model of the fleet
 * really received, the middleware's repair applied, and cut down to the few messages around the
 * repair, one line each, as the README's first example prints them.
 */
import { setMaxListeners } from "node:events";
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { createFleet, type ModelRequestSeen } from "../../demo/fleet.js";
import {
  excerptLines,
  formatRepairedExample,
  type RepairedExample,
  repairedExample,
} from "../../demo/repaired-example.js";
import { danglingToolCallMiddleware, repairToolCalls } from "../../src/index.js";

const PLACEHOLDER = "[Tool call was interrupted and did not return a result.]";

function deployCall(id = "call_deploy_1") {
  return new AIMessage({
    content: "",
    tool_calls: [{ id, name: "deploy", args: {}, type: "tool_call" }],
  });
}

describe("the excerpt of a repaired request", () => {
  it("shows the user message, the call, its placeholder and the next user message, as the README does", () => {
    const { messages } = repairToolCalls(
      [
        new HumanMessage("Deploy billing, please."),
        deployCall(),
        new HumanMessage("Never mind. What happened?"),
      ],
      { target: "openai-completions" },
    );
    expect(excerptLines(messages)).toEqual([
      "human  Deploy billing, please.",
      "ai     calls deploy(call_deploy_1)",
      `tool   answers call_deploy_1: ${PLACEHOLDER}`,
      "human  Never mind. What happened?",
    ]);
  });

  it("shows the turn the repair inserted for providers that need one", () => {
    const { messages } = repairToolCalls(
      [new HumanMessage("Deploy billing, please."), deployCall(), new HumanMessage("And now?")],
      { target: "any" },
    );
    expect(excerptLines(messages)).toEqual([
      "human  Deploy billing, please.",
      "ai     calls deploy(call_deploy_1)",
      `tool   answers call_deploy_1: ${PLACEHOLDER}`,
      "ai     [No reply was written to the tool results above.]",
      "human  And now?",
    ]);
  });

  it("leaves out what came before the turn, tells the turn's earlier messages as one line, and stops at the next user message", () => {
    const { messages } = repairToolCalls(
      [
        new HumanMessage("An earlier turn."),
        new AIMessage("Done."),
        new HumanMessage("Check, then deploy."),
        new AIMessage({
          content: "",
          tool_calls: [{ id: "call_check", name: "check", args: {}, type: "tool_call" }],
        }),
        new ToolMessage({ content: "all green", tool_call_id: "call_check" }),
        deployCall(),
        new HumanMessage("What happened?"),
        new AIMessage("It was interrupted."),
      ],
      { target: "openai-completions" },
    );
    expect(excerptLines(messages)).toEqual([
      "human  Check, then deploy.",
      "…      2 earlier messages of the turn",
      "ai     calls deploy(call_deploy_1)",
      `tool   answers call_deploy_1: ${PLACEHOLDER}`,
      "human  What happened?",
    ]);
  });

  it("cuts a long content on one line", () => {
    const long = `Please ${"really ".repeat(20)}deploy\nbilling.`;
    const { messages } = repairToolCalls(
      [new HumanMessage(long), deployCall(), new HumanMessage("Well?")],
      { target: "openai-completions" },
    );
    const first = excerptLines(messages)?.[0] ?? "";
    expect(first).toMatch(/^human {2}Please really really .*…$/);
    expect(first.length).toBe("human  ".length + 72);
  });

  it("is undefined for a request the library inserted nothing in", () => {
    const clean = [
      new HumanMessage("Deploy billing, please."),
      deployCall(),
      new ToolMessage({ content: "deployed", tool_call_id: "call_deploy_1" }),
    ];
    expect(excerptLines(clean)).toBeUndefined();
    expect(repairedExample({ model: "gpt-4.1", thread: "thread-0001", messages: clean })).toBe(
      undefined,
    );
  });
});

describe("the example the demo prints", () => {
  it("names the model and the thread above the excerpt", () => {
    const example: RepairedExample = {
      model: "gpt-4.1",
      thread: "thread-0002",
      lines: ["human  Message 2 on thread-0002"],
    };
    expect(formatRepairedExample(example)).toBe(
      [
        "The run's first repaired request, as gpt-4.1 saw it on thread-0002:",
        "human  Message 2 on thread-0002",
      ].join("\n"),
    );
  });

  it("says so when no model call was repaired", () => {
    expect(formatRepairedExample(undefined)).toBe(
      "No model call was repaired in this run, so there is no repaired request to show.",
    );
  });

  it("is taken from a request a fake model of the fleet received, repaired by the middleware", async () => {
    const requests: ModelRequestSeen[] = [];
    let example: RepairedExample | undefined;
    // Every run interrupted: each thread's second turn starts with calls of its first dangling.
    const fleet = createFleet({
      threads: 3,
      concurrency: 3,
      turns: 2,
      seed: 1,
      interruptRate: () => 1,
      middleware: [danglingToolCallMiddleware({ persist: true, logger: false })],
      onModelRequest: (request) => {
        requests.push(request);
        example ??= repairedExample(request);
      },
    });
    const never = new AbortController().signal;
    setMaxListeners(100, never);
    await fleet.run({ noMoreRuns: never, cancel: never });

    expect(requests.length).toBeGreaterThan(0);
    expect(example).toBeDefined();
    const { model, thread, lines } = example as RepairedExample;
    const seen = requests.find((request) => request.thread === thread && request.model === model);
    expect(seen).toBeDefined();
    expect(lines[0]).toBe(`human  Message 1 on ${thread}`);
    expect(lines.at(-1)).toBe(`human  Message 2 on ${thread}`);
    const answers = lines.filter((line) => line.startsWith("tool   answers call_0_"));
    expect(answers.length).toBeGreaterThan(0);
    for (const answer of answers) expect(answer).toMatch(/: \[Tool call was interrupted/);
  });
});
