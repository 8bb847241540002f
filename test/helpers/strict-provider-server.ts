/**
 * A strict stand-in for the OpenAI (Chat Completions and Responses) and Anthropic APIs on
 * 127.0.0.1, for the real clients (`ChatOpenAI`, with or without `useResponsesApi`, and
 * `ChatAnthropic`) pointed at it by base URL. It checks each request body with the provider's
 * tool-calling rules and answers as the provider does: 400 with the provider's error body and
 * text, or an answer: the next one a test scripted, else a call of `search` for a
 * {@link SEARCH_PROMPT}, else a plain text. Like the providers, an answer names a dated snapshot
 * of the model it was asked for. The OpenAI routes stream that answer as server-sent events for
 * `stream: true`, in each API's event format. Every body it received is kept for the tests.
 */
import { once } from "node:events";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import {
  anthropicViolations,
  openAIViolations,
  responsesViolations,
  type Violation,
} from "./provider-rules.js";

/** The text every accepted request is answered with, but the one below. */
export const COMPLETION_TEXT = "All set.";

/**
 * A last user message that starts with this is answered (by the OpenAI route) with a call of the
 * `search` tool, the rest of the message as its query: a turn that makes a tool call.
 */
export const SEARCH_PROMPT = "Please search for ";

/** The APIs the server stands in for. */
export type ServedApi = "openai" | "responses" | "anthropic";

/** A request the server received. */
export interface ReceivedRequest {
  readonly provider: ServedApi;
  /** The body as sent, unparsed: what went over the wire. */
  readonly raw: string;
  readonly body: { readonly messages?: unknown[]; readonly input?: unknown[] } & Record<
    string,
    unknown
  >;
  readonly status: number;
}

/** A scripted call; `rawArguments` sends arguments as they are (say, cut off), not `args`. */
export interface ScriptedCall {
  readonly id: string;
  readonly name: string;
  readonly args: Record<string, unknown>;
  readonly rawArguments?: string;
}

/** An answer a test scripts: tool calls (parallel, in order), or a text. */
export type ScriptedAnswer =
  | { readonly calls: readonly ScriptedCall[] }
  | { readonly text: string };

function argumentsOf(call: ScriptedCall): string {
  return call.rawArguments ?? JSON.stringify(call.args);
}

export interface StrictProviderServer {
  /** For `new ChatOpenAI({ configuration: { baseURL } })`. */
  readonly openAIBaseURL: string;
  /** For `new ChatAnthropic({ anthropicApiUrl })`. */
  readonly anthropicApiUrl: string;
  readonly received: ReceivedRequest[];
  /** Queues the answer to the next accepted request to this API. */
  script(api: ServedApi, answer: ScriptedAnswer): void;
  close(): Promise<void>;
}

/** Starts the server on a free port of 127.0.0.1. */
export async function startStrictProviderServer(): Promise<StrictProviderServer> {
  const received: ReceivedRequest[] = [];
  const scripts: Record<ServedApi, ScriptedAnswer[]> = { openai: [], responses: [], anthropic: [] };
  const server = createServer((request, response) => {
    void handle(request, response, received, scripts).catch((error: unknown) => {
      send(response, 500, { error: { message: String(error) } });
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;
  return {
    openAIBaseURL: `${origin}/v1`,
    anthropicApiUrl: origin,
    received,
    script: (api, answer) => {
      scripts[api].push(answer);
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

/** OpenAI's 400 for a request that breaks its rules (both of its APIs answer alike). */
function sendOpenAIError(response: ServerResponse, violation: Violation): void {
  send(response, 400, {
    error: {
      message: violation.message,
      type: "invalid_request_error",
      param: violation.param,
      code: null,
    },
  });
}

async function handle(
  request: IncomingMessage,
  response: ServerResponse,
  received: ReceivedRequest[],
  scripts: Record<ServedApi, ScriptedAnswer[]>,
): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks).toString("utf8");
  const body = JSON.parse(raw) as ReceivedRequest["body"];
  const path = new URL(request.url ?? "/", "http://localhost").pathname;
  const messages = Array.isArray(body.messages) ? body.messages : [];

  if (request.method === "POST" && path === "/v1/chat/completions") {
    const [violation] = openAIViolations(messages);
    const status = violation === undefined ? 200 : 400;
    received.push({ provider: "openai", raw, body, status });
    if (violation !== undefined) {
      sendOpenAIError(response, violation);
      return;
    }
    const scripted = answerOf(scripts.openai, messages.at(-1), received.length);
    if (body.stream === true) {
      sendEvents(response, chatCompletionEvents(scripted, body, received.length));
      return;
    }
    const answer =
      "text" in scripted
        ? {
            message: { role: "assistant", content: scripted.text, refusal: null },
            finish: "stop",
          }
        : {
            message: {
              role: "assistant",
              content: null,
              refusal: null,
              tool_calls: scripted.calls.map((call) => ({
                id: call.id,
                type: "function",
                function: { name: call.name, arguments: argumentsOf(call) },
              })),
            },
            finish: "tool_calls",
          };
    send(response, 200, {
      id: `chatcmpl-${received.length}`,
      object: "chat.completion",
      created: Math.floor(Date.now() / 1000),
      model: answeredModel(body.model, "openai"),
      choices: [
        { index: 0, message: answer.message, logprobs: null, finish_reason: answer.finish },
      ],
      usage: CHAT_USAGE,
    });
    return;
  }

  if (request.method === "POST" && path === "/v1/messages") {
    const [violation] = anthropicViolations(messages);
    const status = violation === undefined ? 200 : 400;
    received.push({ provider: "anthropic", raw, body, status });
    if (violation !== undefined) {
      send(response, 400, {
        type: "error",
        error: { type: "invalid_request_error", message: violation.message },
      });
      return;
    }
    if (body.stream === true) throw new Error("this server does not stream");
    const scripted = answerOf(scripts.anthropic, undefined, received.length);
    send(response, 200, {
      id: `msg_${received.length}`,
      type: "message",
      role: "assistant",
      model: answeredModel(body.model, "anthropic"),
      content:
        "text" in scripted
          ? [{ type: "text", text: scripted.text }]
          : scripted.calls.map((call) => ({
              type: "tool_use",
              id: call.id,
              name: call.name,
              input: call.args,
            })),
      stop_reason: "text" in scripted ? "end_turn" : "tool_use",
      stop_sequence: null,
      usage: { input_tokens: 10, output_tokens: 3 },
    });
    return;
  }

  if (request.method === "POST" && path === "/v1/responses") {
    const input = Array.isArray(body.input) ? body.input : [];
    const [violation] = responsesViolations(input);
    const status = violation === undefined ? 200 : 400;
    received.push({ provider: "responses", raw, body, status });
    if (violation !== undefined) {
      sendOpenAIError(response, violation);
      return;
    }
    const last = input.at(-1) as { role?: unknown; content?: unknown } | undefined;
    const scripted = answerOf(scripts.responses, last, received.length);
    const serial = received.length;
    if (body.stream === true) {
      sendEvents(response, responsesEvents(scripted, body, serial));
      return;
    }
    send(response, 200, {
      id: `resp_${serial}`,
      object: "response",
      created_at: Math.floor(Date.now() / 1000),
      model: answeredModel(body.model, "openai"),
      status: "completed",
      error: null,
      incomplete_details: null,
      output: responsesOutput(scripted, serial),
      usage: RESPONSES_USAGE,
    });
    return;
  }

  send(response, 404, { error: { message: `no route for ${request.method} ${path}` } });
}

/**
 * The model name an answer gives, as the providers give it: a dated snapshot of the requested
 * model (`gpt-4.1-2025-04-14`, `claude-sonnet-4-5-20250929`), not the alias the client asked for.
 */
function answeredModel(requested: unknown, provider: "openai" | "anthropic"): string {
  const name = typeof requested === "string" ? requested : "unknown";
  return provider === "openai" ? `${name}-2025-04-14` : `${name}-20250929`;
}

/** The next scripted answer, else a search call for a search prompt, else the plain text. */
function answerOf(queue: ScriptedAnswer[], lastMessage: unknown, serial: number): ScriptedAnswer {
  const scripted = queue.shift();
  if (scripted !== undefined) return scripted;
  const query = searchQueryOf(lastMessage);
  if (query === undefined) return { text: COMPLETION_TEXT };
  return { calls: [{ id: `call_${serial}`, name: "search", args: { query } }] };
}

function searchQueryOf(message: unknown): string | undefined {
  const fields = message as { role?: unknown; content?: unknown } | undefined;
  if (fields?.role !== "user" || typeof fields.content !== "string") return undefined;
  return fields.content.startsWith(SEARCH_PROMPT)
    ? fields.content.slice(SEARCH_PROMPT.length)
    : undefined;
}

/** One server-sent event: its `event:` name (the Responses API names them), and its data. */
type ServerEvent = { readonly event?: string; readonly data: unknown };

/** Sends a stream as the OpenAI APIs do: server-sent events, then `[DONE]` for Chat Completions. */
function sendEvents(response: ServerResponse, events: readonly ServerEvent[]): void {
  response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  for (const { event, data } of events) {
    const name = event === undefined ? "" : `event: ${event}\n`;
    const text = typeof data === "string" ? data : JSON.stringify(data);
    response.write(`${name}data: ${text}\n\n`);
  }
  response.end();
}

/** The usage every Chat Completions answer reports. */
const CHAT_USAGE = { prompt_tokens: 10, completion_tokens: 3, total_tokens: 13 };

/**
 * A Chat Completions answer as `stream: true` sends it: a role chunk, the text in a delta or
 * each call's id and name then its arguments, the finish reason, the usage (with
 * `stream_options.include_usage`), and `[DONE]`.
 */
function chatCompletionEvents(
  scripted: ScriptedAnswer,
  body: ReceivedRequest["body"],
  serial: number,
): ServerEvent[] {
  const head = {
    id: `chatcmpl-${serial}`,
    object: "chat.completion.chunk",
    created: Math.floor(Date.now() / 1000),
    model: answeredModel(body.model, "openai"),
  };
  const chunk = (delta: unknown, finish: string | null = null): ServerEvent => ({
    data: { ...head, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] },
  });
  const events = [chunk({ role: "assistant", content: "" })];
  if ("text" in scripted) {
    events.push(chunk({ content: scripted.text }));
  } else {
    scripted.calls.forEach((call, index) => {
      const named = { index, id: call.id, type: "function" };
      events.push(
        chunk({ tool_calls: [{ ...named, function: { name: call.name, arguments: "" } }] }),
      );
      events.push(chunk({ tool_calls: [{ index, function: { arguments: argumentsOf(call) } }] }));
    });
  }
  events.push(chunk({}, "text" in scripted ? "stop" : "tool_calls"));
  if ((body.stream_options as { include_usage?: unknown } | undefined)?.include_usage === true) {
    events.push({ data: { ...head, choices: [], usage: CHAT_USAGE } });
  }
  events.push({ data: "[DONE]" });
  return events;
}

/** The usage every Responses answer reports. */
const RESPONSES_USAGE = {
  input_tokens: 10,
  input_tokens_details: { cached_tokens: 0 },
  output_tokens: 3,
  output_tokens_details: { reasoning_tokens: 0 },
  total_tokens: 13,
};

/** A Responses answer's output items: a message, or a `function_call` per call. */
function responsesOutput(scripted: ScriptedAnswer, serial: number) {
  if ("text" in scripted) {
    const content = [{ type: "output_text", text: scripted.text, annotations: [] }];
    return [
      { type: "message", id: `msg_${serial}`, role: "assistant", status: "completed", content },
    ];
  }
  return scripted.calls.map((call, position) => ({
    type: "function_call",
    id: `fc_${serial}_${position}`,
    call_id: call.id,
    name: call.name,
    arguments: argumentsOf(call),
    status: "completed",
  }));
}

/**
 * A Responses API answer as `stream: true` sends it: `response.created`; per output item, the item
 * added, its text or its arguments as a delta, the item done; `response.completed` with the
 * output and the usage.
 */
function responsesEvents(
  scripted: ScriptedAnswer,
  body: ReceivedRequest["body"],
  serial: number,
): ServerEvent[] {
  const events: ServerEvent[] = [];
  const emit = (type: string, fields: Record<string, unknown>) =>
    events.push({ event: type, data: { type, sequence_number: events.length, ...fields } });
  const response = {
    id: `resp_${serial}`,
    object: "response",
    created_at: Math.floor(Date.now() / 1000),
    model: answeredModel(body.model, "openai"),
    status: "in_progress",
    output: [],
  };
  emit("response.created", { response });
  const output = responsesOutput(scripted, serial);
  output.forEach((item, output_index) => {
    const where = { item_id: item.id, output_index };
    if ("content" in item) {
      const started = { ...item, status: "in_progress", content: [] };
      emit("response.output_item.added", { output_index, item: started });
      const delta = item.content[0]?.text ?? "";
      emit("response.output_text.delta", { ...where, content_index: 0, delta, logprobs: [] });
    } else {
      const started = { ...item, arguments: "", status: "in_progress" };
      emit("response.output_item.added", { output_index, item: started });
      emit("response.function_call_arguments.delta", { ...where, delta: item.arguments });
    }
    emit("response.output_item.done", { output_index, item });
  });
  const completed = { ...response, status: "completed", output, usage: RESPONSES_USAGE };
  emit("response.completed", { response: completed });
  return events;
}

function send(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
  });
  response.end(text);
}
