/**
 * The repair through each provider's own LangChain chat model, with only the network call
 * replaced (`helpers/provider-captures.ts`), held to that provider's rules
 * (`helpers/provider-rules.ts`): over `repairToolCalls`, `withToolCallRepair` and the `createAgent`
 * middleware alike. What each converter sends unrepaired is `provider-captures.test.ts`'s.
 */
import {
  AIMessage,
  type BaseMessage,
  HumanMessage,
  SystemMessage,
  ToolMessage,
} from "@langchain/core/messages";
import { createAgent, tool } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { PLACEHOLDER_CATALOG, TURN_CATALOG } from "../src/core/locales.js";
import { danglingToolCallMiddleware, repairToolCalls, withToolCallRepair } from "../src/index.js";
import { readmeThread } from "./helpers/history.js";
import {
  CAPTURED_ANSWER,
  CAPTURED_PROVIDERS,
  type CapturedProvider,
  capturingModel,
  violationsOf,
} from "./helpers/provider-captures.js";

type Body = Record<string, unknown>;

const listOf = (value: unknown): Body[] => (Array.isArray(value) ? value : []);

const toolOf = (name: string) =>
  tool(async () => "done", {
    name,
    description: `The ${name} tool.`,
    schema: z.object({}).passthrough(),
  });
const TOOLS = ["deploy", "lookup", "search"].map(toolOf);

/** The three ways the package attaches to a chat model, each sending `history` once. */
const ENTRY_POINTS = {
  repairToolCalls: async (model: Capture["model"], history: BaseMessage[]) => {
    await model.invoke(repairToolCalls(history).messages as BaseMessage[]);
  },
  withToolCallRepair: async (model: Capture["model"], history: BaseMessage[]) => {
    await withToolCallRepair(model, { logger: false }).invoke(history);
  },
  "the createAgent middleware": async (model: Capture["model"], history: BaseMessage[]) => {
    const agent = createAgent({
      model,
      tools: TOOLS,
      middleware: [danglingToolCallMiddleware({ logger: false })],
    });
    const { messages } = await agent.invoke({ messages: history });
    expect(messages.at(-1)?.text).toBe(CAPTURED_ANSWER);
  },
} as const;
type Capture = ReturnType<typeof capturingModel>;
type EntryPoint = keyof typeof ENTRY_POINTS;

/** The one request `history` makes through this provider's model and entry point. */
async function sent(entry: EntryPoint, provider: CapturedProvider, history: BaseMessage[]) {
  const { model, requests } = capturingModel(provider);
  await ENTRY_POINTS[entry](model, history);
  expect(requests).toHaveLength(1);
  return requests[0] as Body;
}

/** A history trimmed at its head: it starts with a result whose call was cut off. */
function trimmedThread(withSystem: boolean): BaseMessage[] {
  return [
    ...(withSystem ? [new SystemMessage("You deploy services.")] : []),
    new ToolMessage({ content: "deployed", tool_call_id: "call_cut_off", name: "deploy" }),
    new AIMessage("Billing is deployed."),
    new HumanMessage("And the API?"),
  ];
}

describe.each(Object.keys(ENTRY_POINTS) as EntryPoint[])("through %s", (entry) => {
  describe("the README's thread, valid on every provider", () => {
    it.each(CAPTURED_PROVIDERS)("%s", async (provider) => {
      const body = await sent(entry, provider, readmeThread());
      expect(violationsOf(provider, body)).toEqual([]);
      // Every converter sends the call, now answered: Mistral's no longer drops it.
      expect(JSON.stringify(body)).toContain(PLACEHOLDER_CATALOG.en.interrupted);
      expect(JSON.stringify(body)).toContain("Never mind. What happened?");
    });
  });

  it("bedrock: the placeholder's result, then a synthetic assistant turn, then the user's text", async () => {
    const body = await sent(entry, "bedrock", readmeThread());
    const messages = listOf(body.messages);
    expect(messages.map((message) => message.role)).toEqual([
      "user",
      "assistant",
      "user",
      "assistant",
      "user",
    ]);
    expect(messages[2]?.content).toEqual([
      {
        toolResult: {
          toolUseId: "call_deploy_1",
          content: [{ text: PLACEHOLDER_CATALOG.en.interrupted }],
        },
      },
    ]);
    expect(messages[3]?.content).toEqual([{ text: TURN_CATALOG.en.reply }]);
  });

  it("mistral: the call and its placeholder are sent, an assistant turn before the user's", async () => {
    const body = await sent(entry, "mistral", readmeThread());
    expect(listOf(body.messages).map((message) => message.role)).toEqual([
      "user",
      "assistant",
      "tool",
      "assistant",
      "user",
    ]);
  });

  describe.each([true, false])("a trimmed history (system message: %s)", (withSystem) => {
    it("bedrock: starts with a synthetic user turn, the AI message kept", async () => {
      const body = await sent(entry, "bedrock", trimmedThread(withSystem));
      expect(violationsOf("bedrock", body)).toEqual([]);
      const messages = listOf(body.messages);
      expect(messages[0]).toEqual({ role: "user", content: [{ text: TURN_CATALOG.en.gap }] });
      expect(messages[1]).toEqual({
        role: "assistant",
        content: [{ text: "Billing is deployed." }],
      });
    });

    it.each(CAPTURED_PROVIDERS)("%s: valid, the orphan dropped", async (provider) => {
      const body = await sent(entry, provider, trimmedThread(withSystem));
      expect(violationsOf(provider, body)).toEqual([]);
      expect(JSON.stringify(body)).not.toContain("call_cut_off");
    });
  });

  it.each(["google-genai", "vertex", "mistral", "bedrock"] as const)(
    "%s: a call without a name is sent under its result's name",
    async (provider) => {
      const history = [
        new HumanMessage("Look x up."),
        new AIMessage({ content: "", tool_calls: [{ id: "call_1", name: "", args: {} }] }),
        new ToolMessage({ content: "x is 42", tool_call_id: "call_1", name: "lookup" }),
        new AIMessage("x is 42."),
      ];
      const body = await sent(entry, provider, history);
      expect(violationsOf(provider, body)).toEqual([]);
      const raw = JSON.stringify(body);
      expect(raw).toContain('"lookup"');
      expect(raw).not.toContain('"unknown"');
    },
  );

  // Two calls in one message are a parallel turn, which google-genai's converter splits (below).
  it.each(CAPTURED_PROVIDERS.filter((provider) => provider !== "google-genai"))(
    "%s: one result for two id-less calls of one tool is sent, not lost",
    async (provider) => {
      const history = [
        new HumanMessage("Search twice."),
        new AIMessage({
          content: "",
          tool_calls: [
            { name: "search", args: {} },
            { name: "search", args: {} },
          ] as unknown as AIMessage["tool_calls"],
        }),
        new ToolMessage({
          content: "the first search found it",
          tool_call_id: undefined as unknown as string,
          name: "search",
        }),
        new AIMessage("Found."),
      ];
      const body = await sent(entry, provider, history);
      expect(violationsOf(provider, body)).toEqual([]);
      expect(JSON.stringify(body)).toContain("the first search found it");
    },
  );
});

describe("an id reused in a later turn, each call answered", () => {
  const reused = (): BaseMessage[] => [
    new HumanMessage("Deploy billing, then the API."),
    new AIMessage({
      content: "",
      tool_calls: [{ id: "call_1", name: "deploy", args: { service: "billing" } }],
    }),
    new ToolMessage({ content: "billing deployed", tool_call_id: "call_1", name: "deploy" }),
    new AIMessage({
      content: "",
      tool_calls: [{ id: "call_1", name: "deploy", args: { service: "api" } }],
    }),
    new ToolMessage({ content: "api deployed", tool_call_id: "call_1", name: "deploy" }),
    new AIMessage("Both deployed."),
  ];

  it("is left as it is by the repair", () => {
    const history = reused();
    expect(repairToolCalls(history).messages).toBe(history);
  });

  it.each(["bedrock", "mistral"] as const)(
    "%s: goes out with the id in both turns, each answered right after its call",
    async (provider) => {
      const body = await sent("withToolCallRepair", provider, reused());
      expect(violationsOf(provider, body)).toEqual([]);
      const ids = JSON.stringify(body).match(/call_1|0001[a-zA-Z0-9]{5}/g) ?? [];
      expect(new Set(ids).size).toBe(1);
      expect(ids).toHaveLength(4);
    },
  );
});

describe("a converter that breaks parallel results whatever the repair sends", () => {
  const parallelThread = (second: string): BaseMessage[] => [
    new HumanMessage("Look x up and deploy billing."),
    new AIMessage({
      content: "",
      tool_calls: [
        { id: "call_a", name: "lookup", args: {} },
        { id: "call_b", name: second, args: {} },
      ],
    }),
    new ToolMessage({ content: "x is 42", tool_call_id: "call_a", name: "lookup" }),
    new HumanMessage("Go on."),
  ];

  /** Sends the thread twice through an attachment with a logger, and returns its warnings. */
  async function warningsOf(
    entry: "withToolCallRepair" | "the createAgent middleware",
    provider: CapturedProvider,
    history: BaseMessage[],
  ) {
    const { model, requests } = capturingModel(provider);
    const lines: string[] = [];
    const logger = { warn: (line: string) => void lines.push(line) };
    for (let call = 0; call < 2; call++) {
      if (entry === "withToolCallRepair") {
        await withToolCallRepair(model, { logger }).invoke(history);
      } else {
        const middleware = danglingToolCallMiddleware({ logger });
        await createAgent({ model, tools: TOOLS, middleware: [middleware] }).invoke({
          messages: history,
        });
      }
    }
    return { lines, body: requests.at(-1) as Body };
  }

  describe.each(["withToolCallRepair", "the createAgent middleware"] as const)("%s", (entry) => {
    it("google-genai: the results still go out a turn each; the logger is told once, with the issue", async () => {
      const { lines, body } = await warningsOf(entry, "google-genai", parallelThread("deploy"));
      expect(violationsOf("google-genai", body)).not.toEqual([]);
      const told = lines.filter((line) => line.includes("langchainjs#10342"));
      expect(told).toHaveLength(1);
      expect(told[0]).toContain("ChatVertexAI");
    });

    it("vertex: different tools called at once go out misnamed; the logger is told once", async () => {
      const { lines, body } = await warningsOf(entry, "vertex", parallelThread("deploy"));
      expect(violationsOf("vertex", body)).not.toEqual([]);
      expect(lines.filter((line) => line.includes("names each result"))).toHaveLength(1);
    });

    it("vertex: one tool called twice at once is valid, and nothing is said", async () => {
      const { lines, body } = await warningsOf(entry, "vertex", parallelThread("lookup"));
      expect(violationsOf("vertex", body)).toEqual([]);
      expect(lines.filter((line) => line.includes("names each result"))).toEqual([]);
    });

    it("other providers: nothing is said of a parallel turn", async () => {
      const { lines, body } = await warningsOf(entry, "bedrock", parallelThread("deploy"));
      expect(violationsOf("bedrock", body)).toEqual([]);
      expect(lines.filter((line) => line.includes("No repair can"))).toEqual([]);
    });
  });
});
