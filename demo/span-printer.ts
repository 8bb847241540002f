/**
 * `--traces`: one line per `repair_tool_calls` span, as it ends, instead of the SDK's console
 * exporter's multi-line objects, which would bury the progress bar.
 */
import {
  ATTR_DANGLING_COUNT,
  ATTR_GEN_AI_CONVERSATION_ID,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_OUTCOME,
  ATTR_TOOL_CALL_IDS,
  ATTR_TOOL_NAMES,
} from "tool-call-resilience/semconv";
import type { SpanProcessor } from "tool-call-resilience/setup";

type EndedSpan = Parameters<SpanProcessor["onEnd"]>[0];

/** Formats an ended span as one line: outcome, thread, model, the calls repaired, duration. */
function spanLine(span: EndedSpan): string {
  const attributes = span.attributes;
  const list = (value: unknown) => (Array.isArray(value) ? value.join(",") : String(value ?? ""));
  const [seconds, nanos] = span.duration;
  const micros = Math.round(seconds * 1e6 + nanos / 1e3);
  return [
    `span ${span.name}`,
    String(attributes[ATTR_OUTCOME]),
    String(attributes[ATTR_GEN_AI_CONVERSATION_ID]),
    String(attributes[ATTR_GEN_AI_REQUEST_MODEL]),
    `${String(attributes[ATTR_DANGLING_COUNT] ?? 0)} dangling:`,
    list(attributes[ATTR_TOOL_CALL_IDS]),
    `(${list(attributes[ATTR_TOOL_NAMES])})`,
    `${micros} µs`,
  ].join(" ");
}

/**
 * A span processor that prints each ended span through `print`.
 *
 * @example
 * await startTelemetry({ spanProcessors: [spanPrinter(console.log)] });
 */
export function spanPrinter(print: (line: string) => void): SpanProcessor {
  return {
    onStart() {},
    onEnd(span) {
      print(spanLine(span));
    },
    forceFlush: () => Promise.resolve(),
    shutdown: () => Promise.resolve(),
  };
}
