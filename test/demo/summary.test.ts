/**
 * The demo's summary: figures read from a Prometheus scrape of the library's counters, compared
 * with the scripts' ground truth, and printed as a table per model and per tool.
 */
import { describe, expect, it } from "vitest";
import { parseExposition } from "../../demo/exposition.js";
import type { GroundTruth } from "../../demo/fleet.js";
import { disagreements, type Figures, figuresFrom, formatSummary } from "../../demo/summary.js";

const SCOPE = 'otel_scope_name="tool-call-resilience",otel_scope_version="0.1.0"';

/** A scrape as the OpenTelemetry Prometheus exporter writes it, trimmed to a few series. */
const SCRAPE = `# HELP target_info Target metadata
# TYPE target_info gauge
target_info{service_name="tool-call-resilience-demo"} 1
# HELP tool_call_resilience_model_calls_total Model calls seen by the middleware.
# TYPE tool_call_resilience_model_calls_total counter
tool_call_resilience_model_calls_total{gen_ai_provider_name="openai",gen_ai_request_model="gpt-4.1",gen_ai_agent_name="support_assistant",tool_call_resilience_outcome="clean",${SCOPE}} 10
tool_call_resilience_model_calls_total{gen_ai_provider_name="openai",gen_ai_request_model="gpt-4.1",gen_ai_agent_name="support_assistant",tool_call_resilience_outcome="repaired",${SCOPE}} 2
tool_call_resilience_model_calls_total{gen_ai_provider_name="anthropic",gen_ai_request_model="claude-sonnet-4-5",gen_ai_agent_name="support_assistant",tool_call_resilience_outcome="clean",${SCOPE}} 5
tool_call_resilience_model_calls_total{gen_ai_provider_name="gcp.gemini",gen_ai_request_model="gemini-2.5-flash",gen_ai_agent_name="support_assistant",tool_call_resilience_outcome="repaired",${SCOPE}} 1
# HELP tool_call_resilience_tool_calls_total Tool calls the models issued.
# TYPE tool_call_resilience_tool_calls_total counter
tool_call_resilience_tool_calls_total{gen_ai_provider_name="openai",gen_ai_request_model="gpt-4.1",gen_ai_tool_name="search_docs",${SCOPE}} 6
tool_call_resilience_tool_calls_total{gen_ai_provider_name="openai",gen_ai_request_model="gpt-4.1",gen_ai_tool_name="send_email",${SCOPE}} 4
tool_call_resilience_tool_calls_total{gen_ai_provider_name="anthropic",gen_ai_request_model="claude-sonnet-4-5",gen_ai_tool_name="run_sql",${SCOPE}} 5
tool_call_resilience_tool_calls_total{gen_ai_provider_name="gcp.gemini",gen_ai_request_model="gemini-2.5-flash",gen_ai_tool_name="search_docs",${SCOPE}} 2
# HELP tool_call_resilience_dangling_tool_calls_total Tool calls left without a result.
# TYPE tool_call_resilience_dangling_tool_calls_total counter
tool_call_resilience_dangling_tool_calls_total{gen_ai_provider_name="openai",gen_ai_request_model="gpt-4.1",gen_ai_tool_name="send_email",tool_call_resilience_reason="interrupted",${SCOPE}} 1
tool_call_resilience_dangling_tool_calls_total{gen_ai_provider_name="openai",gen_ai_request_model="gpt-4.1",gen_ai_tool_name="send_email",tool_call_resilience_reason="invalid_arguments",${SCOPE}} 1
tool_call_resilience_dangling_tool_calls_total{gen_ai_provider_name="gcp.gemini",gen_ai_request_model="gemini-2.5-flash",gen_ai_tool_name="search_docs",tool_call_resilience_reason="interrupted",${SCOPE}} 1
# HELP tool_call_resilience_repairs_total Repairs made.
# TYPE tool_call_resilience_repairs_total counter
tool_call_resilience_repairs_total{gen_ai_provider_name="openai",gen_ai_request_model="gpt-4.1",tool_call_resilience_repair_kind="placeholder_inserted",${SCOPE}} 2
tool_call_resilience_repairs_total{gen_ai_provider_name="gcp.gemini",gen_ai_request_model="gemini-2.5-flash",tool_call_resilience_repair_kind="placeholder_inserted",${SCOPE}} 1
tool_call_resilience_repairs_total{gen_ai_provider_name="openai",gen_ai_request_model="gpt-4.1",tool_call_resilience_repair_kind="orphan_dropped",${SCOPE}} 1
# HELP tool_call_resilience_thread_recent_dangling_tool_calls Dangling tool calls per thread in the window.
# UNIT tool_call_resilience_thread_recent_dangling_tool_calls {call}
# TYPE tool_call_resilience_thread_recent_dangling_tool_calls gauge
tool_call_resilience_thread_recent_dangling_tool_calls{gen_ai_conversation_id="thread-0001",gen_ai_request_model="gpt-4.1",${SCOPE}} 2
# HELP tool_call_resilience_repair_duration Time the repair took.
# TYPE tool_call_resilience_repair_duration histogram
tool_call_resilience_repair_duration_count{tool_call_resilience_outcome="repaired",${SCOPE}} 3
tool_call_resilience_repair_duration_sum{tool_call_resilience_outcome="repaired",${SCOPE}} 0.0026
tool_call_resilience_repair_duration_bucket{tool_call_resilience_outcome="repaired",${SCOPE},le="0.001"} 1
tool_call_resilience_repair_duration_bucket{tool_call_resilience_outcome="repaired",${SCOPE},le="+Inf"} 3
`;

/** What the scripts of the run behind {@link SCRAPE} say happened. */
function agreeingTruth(): GroundTruth {
  return {
    toolCalls: {
      "gpt-4.1": { search_docs: 6, send_email: 4 },
      "claude-sonnet-4-5": { run_sql: 5 },
      "gemini-2.5-flash": { search_docs: 2 },
    },
    dangling: {
      "gpt-4.1": { send_email: 2 },
      "gemini-2.5-flash": { search_docs: 1 },
    },
    danglingByThread: { "thread-0001": 2, "thread-0003": 1 },
    interruptions: { abort: 2, timeout: 1, interrupt: 1 },
    runs: 12,
    threads: 3,
  };
}

const FIGURES = figuresFrom(parseExposition(SCRAPE));

const NO_FIGURES: Figures = {
  modelCalls: 0,
  repairedModelCalls: 0,
  repairs: 0,
  repairsByKind: {},
  toolCalls: 0,
  dangling: 0,
  models: [],
  tools: [],
};

describe("figures read from a scrape", () => {
  it("totals model calls, repaired model calls, repairs, tool calls and dangling calls", () => {
    expect(FIGURES).toMatchObject({
      modelCalls: 18,
      repairedModelCalls: 3,
      repairs: 4,
      toolCalls: 17,
      dangling: 3,
    });
  });

  it("counts the repairs by kind, the kinds made only, sorted by name", () => {
    expect(FIGURES.repairsByKind).toEqual({ orphan_dropped: 1, placeholder_inserted: 3 });
  });

  it("gives one row per model, sorted by name, with its provider, summed over every other label", () => {
    expect(FIGURES.models).toEqual([
      { name: "claude-sonnet-4-5", provider: "anthropic", toolCalls: 5, dangling: 0, rate: 0 },
      { name: "gemini-2.5-flash", provider: "gcp.gemini", toolCalls: 2, dangling: 1, rate: 0.5 },
      { name: "gpt-4.1", provider: "openai", toolCalls: 10, dangling: 2, rate: 0.2 },
    ]);
  });

  it("gives one row per tool, sorted by name, over every model, without a provider", () => {
    expect(FIGURES.tools).toEqual([
      { name: "run_sql", toolCalls: 5, dangling: 0, rate: 0 },
      { name: "search_docs", toolCalls: 8, dangling: 1, rate: 0.125 },
      { name: "send_email", toolCalls: 4, dangling: 2, rate: 0.5 },
    ]);
  });

  it("gives zeros and no rows for a scrape without the library's series", () => {
    expect(figuresFrom(parseExposition('target_info{service_name="x"} 1\n'))).toEqual(NO_FIGURES);
  });
});

describe("comparison with the scripts' ground truth", () => {
  it("finds no disagreement when every model and tool agrees", () => {
    expect(disagreements(FIGURES, agreeingTruth())).toEqual([]);
  });

  it("names the model and the tool whose dangling calls differ, with both counts", () => {
    const truth = agreeingTruth();
    truth.dangling["gemini-2.5-flash"] = { search_docs: 2 };
    expect(disagreements(FIGURES, truth)).toEqual([
      "model gemini-2.5-flash: counted 2 tool calls / 1 dangling, the scripts say 2 / 2",
      "tool search_docs: counted 8 tool calls / 1 dangling, the scripts say 8 / 2",
    ]);
  });

  it("names a tool the scripts called that the counters never saw", () => {
    const truth = agreeingTruth();
    truth.toolCalls["gpt-4.1"] = { search_docs: 6, send_email: 4, fetch_page: 1 };
    expect(disagreements(FIGURES, truth)).toEqual([
      "model gpt-4.1: counted 10 tool calls / 2 dangling, the scripts say 11 / 2",
      "tool fetch_page: counted 0 tool calls / 0 dangling, the scripts say 1 / 0",
    ]);
  });

  it("names a model the counters saw that the scripts never ran", () => {
    const truth = agreeingTruth();
    delete truth.toolCalls["claude-sonnet-4-5"];
    expect(disagreements(FIGURES, truth)).toEqual([
      "model claude-sonnet-4-5: counted 5 tool calls / 0 dangling, the scripts say 0 / 0",
      "tool run_sql: counted 5 tool calls / 0 dangling, the scripts say 0 / 0",
    ]);
  });
});

describe("the printed summary", () => {
  const text = formatSummary(FIGURES, agreeingTruth());

  it("opens with the totals and their shares", () => {
    expect(text.split("\n")[0]).toBe(
      "18 model calls, 3 repaired (16.67%); 17 tool calls, 3 dangling (17.65%); 4 repairs",
    );
  });

  it("explains under the totals why repairs outnumber repaired model calls, with persist", () => {
    expect(text.split("\n")[1]).toBe(
      "4 repairs: 1 orphan_dropped, 3 placeholder_inserted. One model call repairs all of its thread's dangling calls at once, and with persist none is repaired twice.",
    );
  });

  it("says without persist that each later model call of a thread repairs its calls again", () => {
    expect(formatSummary(FIGURES, undefined, false).split("\n")[1]).toBe(
      "4 repairs: 1 orphan_dropped, 3 placeholder_inserted. One model call repairs all of its thread's dangling calls at once, and without persist each later model call of the thread repairs them again.",
    );
  });

  it("prints a table per model with its provider, names left-aligned and figures right-aligned", () => {
    expect(text).toContain(
      [
        "model              provider    tool calls  dangling    rate",
        "-----------------  ----------  ----------  --------  ------",
        "claude-sonnet-4-5  anthropic            5         0   0.00%",
        "gemini-2.5-flash   gcp.gemini           2         1  50.00%",
        "gpt-4.1            openai              10         2  20.00%",
      ].join("\n"),
    );
  });

  it("prints a table per tool", () => {
    expect(text).toContain(
      [
        "tool         tool calls  dangling    rate",
        "-----------  ----------  --------  ------",
        "run_sql               5         0   0.00%",
        "search_docs           8         1  12.50%",
        "send_email            4         2  50.00%",
      ].join("\n"),
    );
  });

  it("ends with the interruptions and the agreement line when the counters agree", () => {
    expect(text.split("\n").slice(-2)).toEqual([
      "Interrupted runs: 2 abort, 1 timeout, 1 interrupt, out of 12 runs on 3 threads.",
      "The counters agree with the scripts' ground truth for every model and every tool.",
    ]);
  });

  it("lists each disagreement when the counters disagree", () => {
    const truth = agreeingTruth();
    truth.dangling["gemini-2.5-flash"] = { search_docs: 2 };
    const disagreeing = formatSummary(FIGURES, truth);
    expect(disagreeing).not.toContain("The counters agree");
    expect(disagreeing).toContain(
      [
        "The counters disagree with the scripts' ground truth:",
        "  model gemini-2.5-flash: counted 2 tool calls / 1 dangling, the scripts say 2 / 2",
        "  tool search_docs: counted 8 tool calls / 1 dangling, the scripts say 8 / 2",
      ].join("\n"),
    );
  });

  it("compares nothing when there is no ground truth (a run stopped early)", () => {
    const stopped = formatSummary(FIGURES, undefined);
    expect(stopped).toContain("gpt-4.1            openai");
    expect(stopped).not.toContain("Interrupted runs");
    expect(stopped).not.toMatch(/The counters (agree|disagree)/);
  });

  it("shows a dash for the rates of a run without any call", () => {
    const row = { name: "gpt-4.1", provider: "openai", toolCalls: 0, dangling: 0, rate: null };
    const empty = formatSummary({ ...NO_FIGURES, models: [row] }, undefined);
    expect(empty.split("\n").slice(0, 2)).toEqual([
      "0 model calls, 0 repaired (-); 0 tool calls, 0 dangling (-); 0 repairs",
      "",
    ]);
    expect(empty).toMatch(/^gpt-4\.1 +openai +0 +0 +-$/m);
  });
});
