/**
 * offeredToolNames: the names of the tools a request offers, read from what each provider
 * package's real `bindTools` stores (and, through the wrapped model, passes as the `tools` call
 * option), and never a throw on junk. No network: binding tools only converts them.
 */
import { ChatAnthropic } from "@langchain/anthropic";
import { ChatBedrockConverse } from "@langchain/aws";
import { RunnableBinding } from "@langchain/core/runnables";
import { tool } from "@langchain/core/tools";
import { ChatGoogleGenerativeAI } from "@langchain/google-genai";
import { ChatVertexAI } from "@langchain/google-vertexai";
import { ChatGroq } from "@langchain/groq";
import { ChatMistralAI } from "@langchain/mistralai";
import { ChatOllama } from "@langchain/ollama";
import { ChatOpenAI } from "@langchain/openai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { offeredToolNames } from "../../src/telemetry/offered-tools.js";

const search = tool(async () => "no results", {
  name: "search",
  description: "Searches the web.",
  schema: z.object({ query: z.string() }),
});

const fetchPage = tool(async () => "<html></html>", {
  name: "fetch_page",
  description: "Fetches a web page.",
  schema: z.object({ url: z.string() }),
});

const BOTH_TOOLS = new Set(["search", "fetch_page"]);

/** Call options that may carry tools, as the bindings and models below keep them. */
type WithTools = { readonly tools?: readonly unknown[] } | undefined;

/** The tools a binding made by `withConfig({ tools })` passes: they are in its config. */
function toolsInConfigOf(bound: unknown): readonly unknown[] | undefined {
  expect(bound).toBeInstanceOf(RunnableBinding);
  return ((bound as RunnableBinding<unknown, unknown>).config as WithTools)?.tools;
}

/** The tools a binding made by `new RunnableBinding({ kwargs: { tools } })` passes. */
function toolsInKwargsOf(bound: unknown): readonly unknown[] | undefined {
  expect(bound).toBeInstanceOf(RunnableBinding);
  return ((bound as RunnableBinding<unknown, unknown>).kwargs as WithTools)?.tools;
}

/**
 * The tools of a model that binds by copying itself with new default call options, which the
 * model passes as call options at each call (`defaultOptions` is protected, so read by duck type).
 */
function toolsInDefaultOptionsOf(model: unknown): readonly unknown[] | undefined {
  expect(model).toBeInstanceOf(ChatOpenAI);
  return (model as { readonly defaultOptions?: WithTools }).defaultOptions?.tools;
}

describe("offeredToolNames reads what each provider's bindTools binds", () => {
  it("LangChain tools, as createAgent offers them: each one's `name`", () => {
    expect(offeredToolNames([search, fetchPage])).toEqual(BOTH_TOOLS);
  });

  it("ChatOpenAI (Chat Completions): { type: 'function', function: { name } } in its default options", () => {
    const model = new ChatOpenAI({ model: "gpt-4.1", apiKey: "test-key" });
    const tools = toolsInDefaultOptionsOf(model.bindTools([search, fetchPage]));
    expect(tools).toMatchObject([
      { type: "function", function: { name: "search" } },
      { type: "function", function: { name: "fetch_page" } },
    ]);
    expect(offeredToolNames(tools)).toEqual(BOTH_TOOLS);
  });

  it("ChatOpenAI (Responses API): raw Responses and custom tools kept as they are, built-in tools offer no name", () => {
    const model = new ChatOpenAI({ model: "gpt-4.1", apiKey: "test-key", useResponsesApi: true });
    const responsesFunction = {
      type: "function",
      name: "search",
      description: "Searches the web.",
      parameters: { type: "object", properties: {} },
    };
    const responsesCustom = { type: "custom", name: "run_sql", description: "Runs SQL." };
    const completionsCustom = { type: "custom", custom: { name: "run_python" } };
    const webSearch = { type: "web_search_preview" };
    const tools = toolsInDefaultOptionsOf(
      model.bindTools([responsesFunction, responsesCustom, completionsCustom, webSearch] as never),
    );
    expect(tools).toEqual([responsesFunction, responsesCustom, completionsCustom, webSearch]);
    expect(offeredToolNames(tools)).toEqual(new Set(["search", "run_sql", "run_python"]));
  });

  it("ChatAnthropic: { name, input_schema } in the binding's config", () => {
    const model = new ChatAnthropic({ model: "claude-sonnet-4-5", apiKey: "test-key" });
    const tools = toolsInConfigOf(model.bindTools([search, fetchPage]));
    expect(tools).toMatchObject([
      { name: "search", input_schema: { type: "object" } },
      { name: "fetch_page", input_schema: { type: "object" } },
    ]);
    expect(offeredToolNames(tools)).toEqual(BOTH_TOOLS);
  });

  it("ChatGoogleGenerativeAI (Gemini API): one { functionDeclarations: [{ name }, ...] } for all tools, in the binding's config", () => {
    const model = new ChatGoogleGenerativeAI({ model: "gemini-2.5-flash", apiKey: "test-key" });
    const tools = toolsInConfigOf(model.bindTools([search, fetchPage]));
    expect(tools).toMatchObject([
      { functionDeclarations: [{ name: "search" }, { name: "fetch_page" }] },
    ]);
    expect(offeredToolNames(tools)).toEqual(BOTH_TOOLS);
  });

  it("ChatGoogleGenerativeAI: a raw Gemini tool in snake_case kept as it is, next to a built-in tool without a name", () => {
    const model = new ChatGoogleGenerativeAI({ model: "gemini-2.5-flash", apiKey: "test-key" });
    const rawGeminiTool = { function_declarations: [{ name: "lookup", description: "Looks up." }] };
    const googleSearch = { googleSearch: {} };
    const tools = toolsInConfigOf(model.bindTools([rawGeminiTool, search, googleSearch] as never));
    expect(tools).toMatchObject([
      rawGeminiTool,
      googleSearch,
      { functionDeclarations: [{ name: "search" }] },
    ]);
    expect(offeredToolNames(tools)).toEqual(new Set(["lookup", "search"]));
  });

  it("ChatVertexAI: one { functionDeclarations: [{ name }, ...] } for all tools, in the binding's config", () => {
    const model = new ChatVertexAI({ model: "gemini-2.5-flash", apiKey: "test-key" });
    const tools = toolsInConfigOf(model.bindTools([search, fetchPage]));
    expect(tools).toMatchObject([
      { functionDeclarations: [{ name: "search" }, { name: "fetch_page" }] },
    ]);
    expect(offeredToolNames(tools)).toEqual(BOTH_TOOLS);
  });

  it("ChatBedrockConverse: { toolSpec: { name } } in the binding's config", () => {
    const model = new ChatBedrockConverse({
      model: "anthropic.claude-3-5-sonnet-20240620-v1:0",
      region: "us-east-1",
      credentials: { accessKeyId: "test-key-id", secretAccessKey: "test-secret" },
    });
    const tools = toolsInConfigOf(model.bindTools([search, fetchPage]));
    expect(tools).toMatchObject([
      { toolSpec: { name: "search", inputSchema: { json: { type: "object" } } } },
      { toolSpec: { name: "fetch_page", inputSchema: { json: { type: "object" } } } },
    ]);
    expect(offeredToolNames(tools)).toEqual(BOTH_TOOLS);
  });

  it("ChatMistralAI: { type: 'function', function: { name } } in the binding's kwargs", () => {
    const model = new ChatMistralAI({ model: "mistral-large-latest", apiKey: "test-key" });
    const tools = toolsInKwargsOf(model.bindTools([search, fetchPage]));
    expect(tools).toMatchObject([
      { type: "function", function: { name: "search" } },
      { type: "function", function: { name: "fetch_page" } },
    ]);
    expect(offeredToolNames(tools)).toEqual(BOTH_TOOLS);
  });

  it("ChatOllama: { type: 'function', function: { name } } in the binding's config", () => {
    const model = new ChatOllama({ model: "llama3.1", baseUrl: "http://127.0.0.1:1" });
    const tools = toolsInConfigOf(model.bindTools([search, fetchPage]));
    expect(tools).toMatchObject([
      { type: "function", function: { name: "search" } },
      { type: "function", function: { name: "fetch_page" } },
    ]);
    expect(offeredToolNames(tools)).toEqual(BOTH_TOOLS);
  });

  it("ChatGroq: { type: 'function', function: { name } } in the binding's config", () => {
    const model = new ChatGroq({ model: "llama-3.3-70b-versatile", apiKey: "test-key" });
    const tools = toolsInConfigOf(model.bindTools([search, fetchPage]));
    expect(tools).toMatchObject([
      { type: "function", function: { name: "search" } },
      { type: "function", function: { name: "fetch_page" } },
    ]);
    expect(offeredToolNames(tools)).toEqual(BOTH_TOOLS);
  });
});

describe("offeredToolNames computes once and shares", () => {
  it("gives the same set for the same tools list", () => {
    const tools = [{ toolSpec: { name: "search" } }];
    expect(offeredToolNames(tools)).toBe(offeredToolNames(tools));
  });

  it("reads a tools list once: a list changed afterwards keeps its first answer", () => {
    const tools: unknown[] = [{ name: "search" }];
    expect(offeredToolNames(tools)).toEqual(new Set(["search"]));
    tools.push({ name: "fetch_page" });
    expect(offeredToolNames(tools)).toEqual(new Set(["search"]));
  });

  it("gives one shared empty set for no tools, an empty list, or tools without names", () => {
    const none = offeredToolNames(undefined);
    expect(none.size).toBe(0);
    expect(offeredToolNames([])).toBe(none);
    expect(offeredToolNames([{ googleSearch: {} }, { type: "web_search_preview" }])).toBe(none);
  });
});

describe("offeredToolNames never throws on junk", () => {
  const throwing = () => {
    throw new Error("unreadable");
  };

  it("skips entries that are not tools, and keeps the tools beside them", () => {
    const junk = [null, undefined, 0, 42, "search", true, Symbol("tool"), [], {}, () => "tool"];
    expect(offeredToolNames([...junk, search])).toEqual(new Set(["search"]));
  });

  it("skips names that are empty or not strings", () => {
    const tools = [
      { name: "" },
      { name: 42 },
      { function: { name: null } },
      { toolSpec: { name: ["search"] } },
      { functionDeclarations: [{ name: {} }, null, 7] },
      { functionDeclarations: "search" },
    ];
    expect(offeredToolNames(tools).size).toBe(0);
  });

  it("skips entries whose getters throw, and keeps the tools beside them", () => {
    const tools = [
      Object.defineProperty({}, "name", { get: throwing }),
      Object.defineProperty({}, "function", { get: throwing }),
      { toolSpec: Object.defineProperty({}, "name", { get: throwing }) },
      Object.defineProperty({}, "functionDeclarations", { get: throwing }),
      search,
    ];
    expect(offeredToolNames(tools)).toEqual(new Set(["search"]));
  });

  it("skips revoked proxies and proxies whose traps throw", () => {
    const revoked = Proxy.revocable({ name: "search" }, {});
    revoked.revoke();
    const trapping = new Proxy({ name: "fetch_page" }, { get: throwing });
    expect(offeredToolNames([revoked.proxy, trapping, search])).toEqual(new Set(["search"]));
  });

  it("offers nothing for a tools list that is not an array or cannot be read", () => {
    const revokedList = Proxy.revocable([search], {});
    revokedList.revoke();
    const unreadableLength = new Proxy([search], {
      get: (target, property) =>
        property === "length" ? throwing() : Reflect.get(target, property),
    });
    const notLists = [null, 42, "search", { name: "search" }, revokedList.proxy, unreadableLength];
    for (const tools of notLists) {
      expect(offeredToolNames(tools as unknown as readonly unknown[]).size).toBe(0);
    }
  });

  it("keeps the names read before a tools list became unreadable", () => {
    const unreadableAfterOneTool = new Proxy([search, fetchPage], {
      get: (target, property) => (property === "1" ? throwing() : Reflect.get(target, property)),
    });
    expect(offeredToolNames(unreadableAfterOneTool)).toEqual(new Set(["search"]));
  });
});
