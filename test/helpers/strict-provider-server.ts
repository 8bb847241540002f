/**
 * A strict stand-in for the OpenAI and Anthropic APIs on 127.0.0.1, for the real clients
 * (`ChatOpenAI`, `ChatAnthropic`) pointed at it by base URL. It checks each request body with the
 * provider's tool-calling rules and answers as the provider does: 400 with the provider's error
 * body and text, or a plain text completion. Every body it received is kept for the tests.
 */
import { once } from "node:events";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { anthropicViolations, openAIViolations } from "./provider-rules.js";

/** The text every accepted request is answered with, but the one below. */
export const COMPLETION_TEXT = "All set.";

/**
 * A last user message that starts with this is answered (by the OpenAI route) with a call of the
 * `search` tool, the rest of the message as its query: a turn that makes a tool call.
 */
export const SEARCH_PROMPT = "Please search for ";

/** A request the server received. */
export interface ReceivedRequest {
  readonly provider: "openai" | "anthropic";
  /** The body as sent, unparsed: what went over the wire. */
  readonly raw: string;
  readonly body: { readonly messages?: unknown[] } & Record<string, unknown>;
  readonly status: number;
}

export interface StrictProviderServer {
  /** For `new ChatOpenAI({ configuration: { baseURL } })`. */
  readonly openAIBaseURL: string;
  /** For `new ChatAnthropic({ anthropicApiUrl })`. */
  readonly anthropicApiUrl: string;
  readonly received: ReceivedRequest[];
  close(): Promise<void>;
}

/** Starts the server on a free port of 127.0.0.1. */
export async function startStrictProviderServer(): Promise<StrictProviderServer> {
  const received: ReceivedRequest[] = [];
  const server = createServer((request, response) => {
    void handle(request, response, received).catch((error: unknown) => {
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
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

async function handle(
  request: IncomingMessage,
  response: ServerResponse,
  received: ReceivedRequest[],
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
      send(response, 400, {
        error: {
          message: violation.message,
          type: "invalid_request_error",
          param: violation.param,
          code: null,
        },
      });
      return;
    }
    if (body.stream === true) throw new Error("this server does not stream");
    const query = searchQueryOf(messages.at(-1));
    const answer =
      query === undefined
        ? {
            message: { role: "assistant", content: COMPLETION_TEXT, refusal: null },
            finish: "stop",
          }
        : {
            message: {
              role: "assistant",
              content: null,
              refusal: null,
              tool_calls: [
                {
                  id: `call_${received.length}`,
                  type: "function",
                  function: { name: "search", arguments: JSON.stringify({ query }) },
                },
              ],
            },
            finish: "tool_calls",
          };
    send(response, 200, {
      id: `chatcmpl-${received.length}`,
      object: "chat.completion",
      created: Math.floor(Date.now() / 1000),
      model: body.model,
      choices: [
        { index: 0, message: answer.message, logprobs: null, finish_reason: answer.finish },
      ],
      usage: { prompt_tokens: 10, completion_tokens: 3, total_tokens: 13 },
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
    send(response, 200, {
      id: `msg_${received.length}`,
      type: "message",
      role: "assistant",
      model: body.model,
      content: [{ type: "text", text: COMPLETION_TEXT }],
      stop_reason: "end_turn",
      stop_sequence: null,
      usage: { input_tokens: 10, output_tokens: 3 },
    });
    return;
  }

  send(response, 404, { error: { message: `no route for ${request.method} ${path}` } });
}

function searchQueryOf(message: unknown): string | undefined {
  const fields = message as { role?: unknown; content?: unknown } | undefined;
  if (fields?.role !== "user" || typeof fields.content !== "string") return undefined;
  return fields.content.startsWith(SEARCH_PROMPT)
    ? fields.content.slice(SEARCH_PROMPT.length)
    : undefined;
}

function send(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
  });
  response.end(text);
}
