/**
 * The check of a fleet of workers, on scrapes written by hand: a worker that lived to the end must
 * count exactly what it did (with `persist`, its dangling calls, repairs and threads too); a killed
 * worker's last scrape may miss what it did since, reported as lost, but never count more; without
 * `persist` the extra repairs are the overcount measured, not a disagreement.
 */
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { parseExposition } from "../../demo/exposition.js";
import { emptyTruth, type GroundTruth } from "../../demo/fleet.js";
import { checkFleet, formatFleetCheck, type ReportedWorker } from "../../demo/fleet-report.js";
import { danglingAtEnd } from "../../demo/workers.js";

const MODEL = 'gen_ai_provider_name="openai",gen_ai_request_model="gpt-4.1"';

/** A worker's scrape: tool calls and dangling calls of one tool, repairs, one thread's gauge. */
function scrapeOf(counts: {
  toolCalls: number;
  dangling: number;
  repairs: number;
  thread?: readonly [string, number];
}) {
  return parseExposition(
    [
      `tool_call_resilience_tool_calls_total{${MODEL},gen_ai_tool_name="run_sql"} ${counts.toolCalls}`,
      counts.dangling === 0
        ? ""
        : `tool_call_resilience_dangling_tool_calls_total{${MODEL},gen_ai_tool_name="run_sql",tool_call_resilience_reason="interrupted"} ${counts.dangling}`,
      `tool_call_resilience_repairs_total{${MODEL},tool_call_resilience_repair_kind="placeholder_inserted"} ${counts.repairs}`,
      counts.thread === undefined
        ? ""
        : `tool_call_resilience_thread_recent_dangling_tool_calls{${MODEL},gen_ai_conversation_id="${counts.thread[0]}"} ${counts.thread[1]}`,
    ].join("\n"),
  );
}

/** What the scripts say a worker did: tool calls and dangling calls of `run_sql`, on one thread. */
function truthOf(toolCalls: number, dangling: number, thread = "thread-0001"): GroundTruth {
  const truth = emptyTruth();
  truth.toolCalls["gpt-4.1"] = { run_sql: toolCalls };
  if (dangling > 0) {
    truth.dangling["gpt-4.1"] = { run_sql: dangling };
    truth.danglingByThread[thread] = dangling;
  }
  return truth;
}

function worker(
  name: string,
  truth: GroundTruth,
  scrape: ReturnType<typeof scrapeOf>,
  killedAt?: number,
): ReportedWorker {
  return { name, pid: 1, killedAt, truth, exposition: scrape };
}

describe("checkFleet", () => {
  it("agrees when every worker that lived counted exactly what it did", () => {
    const check = checkFleet(
      [
        worker(
          "worker-1",
          truthOf(10, 2),
          scrapeOf({ toolCalls: 10, dangling: 2, repairs: 2, thread: ["thread-0001", 2] }),
        ),
        worker("worker-2", truthOf(7, 0), scrapeOf({ toolCalls: 7, dangling: 0, repairs: 0 })),
      ],
      true,
    );
    expect(check.problems).toEqual([]);
    expect(check.lost).toEqual({ toolCalls: 0, dangling: 0 });
    expect(check.overcount).toEqual({ dangling: 0, repairs: 0, threadDangling: 0 });
  });

  it("with persist, names a worker that counted a dangling call twice, its repairs and its thread", () => {
    const check = checkFleet(
      [
        worker(
          "worker-2",
          truthOf(10, 2),
          scrapeOf({ toolCalls: 10, dangling: 3, repairs: 3, thread: ["thread-0001", 3] }),
        ),
      ],
      true,
    );
    expect(check.problems).toEqual([
      "worker-2: model gpt-4.1: counted 10 tool calls / 3 dangling, the scripts say 10 / 2",
      "worker-2: tool run_sql: counted 10 tool calls / 3 dangling, the scripts say 10 / 2",
      "worker-2: 3 repairs counted for 2 dangling calls",
      "worker-2: thread thread-0001: 3 counted, 2 happened",
    ]);
    expect(check.overcount).toEqual({ dangling: 1, repairs: 1, threadDangling: 1 });
  });

  it("reports what a killed worker's last scrape missed as lost, not as a disagreement", () => {
    const check = checkFleet(
      [
        worker(
          "worker-1",
          truthOf(12, 3),
          scrapeOf({ toolCalls: 9, dangling: 1, repairs: 1 }),
          4.2,
        ),
      ],
      true,
    );
    expect(check.problems).toEqual([]);
    expect(check.lost).toEqual({ toolCalls: 3, dangling: 2 });
    expect(formatFleetCheck(check, truthOf(12, 3))).toContain(
      "† killed with SIGKILL at 4.2 s: its last scrape missed 3 tool calls and 2 dangling calls",
    );
  });

  it("names a killed worker that counted more than it did", () => {
    const check = checkFleet(
      [worker("worker-1", truthOf(5, 0), scrapeOf({ toolCalls: 8, dangling: 0, repairs: 0 }), 2)],
      true,
    );
    expect(check.problems).toEqual([
      "worker-1 (killed): model gpt-4.1 counted 8 / 0, more than the 5 tool calls / 0 dangling calls it saw",
      "worker-1 (killed): tool run_sql counted 8 / 0, more than the 5 tool calls / 0 dangling calls it saw",
    ]);
  });

  it("counts a worker that only saw dangling calls, without tool calls of its own", () => {
    const truth = emptyTruth();
    truth.dangling["gpt-4.1"] = { run_sql: 2 };
    truth.danglingByThread["thread-0001"] = 2;
    const scrape = parseExposition(
      [
        `tool_call_resilience_dangling_tool_calls_total{${MODEL},gen_ai_tool_name="run_sql",tool_call_resilience_reason="interrupted"} 2`,
        `tool_call_resilience_repairs_total{${MODEL},tool_call_resilience_repair_kind="placeholder_inserted"} 2`,
        `tool_call_resilience_thread_recent_dangling_tool_calls{${MODEL},gen_ai_conversation_id="thread-0001"} 2`,
      ].join("\n"),
    );
    expect(checkFleet([worker("worker-4", truth, scrape)], true).problems).toEqual([]);
  });

  it("without persist, the extra repairs and dangling counts are the overcount; only tool calls must agree", () => {
    const check = checkFleet(
      [
        worker(
          "worker-1",
          truthOf(10, 2),
          scrapeOf({ toolCalls: 10, dangling: 3, repairs: 9, thread: ["thread-0001", 3] }),
        ),
      ],
      false,
    );
    expect(check.problems).toEqual([]);
    expect(check.overcount).toEqual({ dangling: 1, repairs: 7, threadDangling: 1 });
    expect(formatFleetCheck(check, truthOf(10, 2))).toContain(
      "Without persist, over 2 dangling calls: 1 counted more than once (50.0%), 7 repairs beyond one per dangling call",
    );
    const miscounted = checkFleet(
      [worker("worker-1", truthOf(10, 2), scrapeOf({ toolCalls: 11, dangling: 2, repairs: 2 }))],
      false,
    );
    expect(miscounted.problems).toHaveLength(2);
  });

  it("names dangling calls counted under a reason the fleet never produces", () => {
    const scrape = parseExposition(
      `tool_call_resilience_tool_calls_total{${MODEL},gen_ai_tool_name="run_sql"} 1\n` +
        `tool_call_resilience_dangling_tool_calls_total{${MODEL},gen_ai_tool_name="run_sql",tool_call_resilience_reason="invalid_arguments"} 1`,
    );
    const truth = truthOf(1, 1);
    expect(checkFleet([worker("worker-1", truth, scrape)], false).problems).toContain(
      'worker-1: 1 dangling calls counted with reason "invalid_arguments"',
    );
  });
});

describe("danglingAtEnd", () => {
  const calls = (...ids: string[]) =>
    ids.map((id) => ({ id, name: "run_sql", args: {}, type: "tool_call" as const }));

  it("is the calls of the last AI message that no result answers", () => {
    const history = [
      new HumanMessage({ id: "h1", content: "hi" }),
      new AIMessage({ id: "a1", content: "", tool_calls: calls("c1", "c2") }),
      new ToolMessage({ tool_call_id: "c1", content: "done" }),
      new HumanMessage({ id: "h2", content: "again" }),
    ];
    expect(danglingAtEnd(history)).toEqual([{ id: "c2", name: "run_sql" }]);
  });

  it("is nothing once a later AI message answered over them, or without AI messages", () => {
    const history = [
      new AIMessage({ id: "a1", content: "", tool_calls: calls("c1") }),
      new HumanMessage({ id: "h2", content: "again" }),
      new AIMessage({ id: "a2", content: "Here you are." }),
    ];
    expect(danglingAtEnd(history)).toEqual([]);
    expect(danglingAtEnd([new HumanMessage("hi")])).toEqual([]);
  });
});
