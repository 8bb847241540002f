/**
 * The recording rules the dashboards read, beyond the alerts' own, so that every panel queries a
 * recorded series and each query stays short enough to read in Explore. Each rule is built on the
 * raw series or on a rule before it, and keeps the labels its level says: `instance:` one process
 * (`processLabels`) and the attributes the dashboards filter by, `process:` one process and no
 * attribute (the *Instance health* table), `model:`, `tool:`, `thread:`, `model_reason:` and the
 * like the attributes named, summed over the processes. Every one keeps `job` and whatever else
 * says where a process runs (`topologyLabels`).
 */
import { type BundleConfig, bundleConfig, selectorOf } from "./config.js";
import {
  labels,
  overflowSelector,
  type SeriesKey,
  scopeLabels,
  series,
  seriesSelector,
  values,
} from "./names.js";
import type { RecordingRule } from "./prometheus-rules.js";
import { share } from "./promql.js";

/** The counters counted over a dashboard's time range and rated per process. */
type Counted = "toolCalls" | "danglingToolCalls" | "modelCalls";

/** A series' name without its type suffix, as recorded names write it. */
function metricOf(key: SeriesKey): string {
  return series[key].replace(/_(total|bucket)$/, "");
}

/** The names of the dashboards' recorded series; rates over the first paging pair's short window. */
function recordsOf(config: BundleConfig) {
  const window = config.burnRate.page[0]?.short ?? "5m";
  const perToolCall = `process:${metricOf("danglingToolCalls")}_per_tool_calls`;
  return {
    rateWindow: window,
    /**
     * What a counter grew by since the previous evaluation of the rules: summed over a time range
     * (`sum_over_time`), exactly what was counted in it.
     */
    increase: (level: "instance" | "model" | "tool", key: Counted) =>
      `${level}:${metricOf(key)}:increase`,
    /** When each process's newest model-call sample was taken. */
    lastSample: `process:${series.modelCalls}:timestamp`,
    /** A process's rate of `key` over `window`, every attribute summed away. */
    processRate: (key: Counted, over: string) => `process:${metricOf(key)}:rate${over}`,
    /** The share of a process's tool calls that dangled over `over`. */
    processRatio: (over: string) => `${perToolCall}:ratio_rate${over}`,
    /** The same share over every other process of the job and topology. */
    peersRatio: (over: string) => `${perToolCall}:peers_ratio_rate${over}`,
    /** A process's overflow series: one per instrument past its cardinality limit, else 0. */
    overflowSeries: "process:tool_call_resilience_overflow_series:count",
    danglingByReason: `model_reason:${metricOf("danglingToolCalls")}:rate${window}`,
    repairsByKind: `model_kind:${metricOf("repairs")}:rate${window}`,
    modelCallsByOutcome: `model_agent_outcome:${metricOf("modelCalls")}:rate${window}`,
    repairedRatio: `model:tool_call_resilience_repaired_model_calls_per_model_calls:ratio_rate${window}`,
    durationBuckets: `outcome_le:tool_call_resilience_repair_duration_seconds_bucket:rate${window}`,
    /** Each thread's recent dangling calls, summed over the processes that report it. */
    threads: `thread:${series.threadRecentDanglingToolCalls}:sum`,
  } as const;
}

/** The names of the dashboards' recorded series, with {@link bundleConfig}. */
export const dashboardRecords = recordsOf(bundleConfig);

/** The recording rules of the dashboards, in evaluation order, after the alerts' own. */
export function dashboardRecordingRules(config: BundleConfig): RecordingRule[] {
  const names = recordsOf(config);
  const selector = selectorOf(config);
  const raw = (key: SeriesKey) => seriesSelector(key, ...selector, `${labels.overflow}!="true"`);
  const rate = (key: SeriesKey, window = names.rateWindow) => `rate(${raw(key)}[${window}])`;
  const without = (away: readonly string[], expr: string) =>
    `sum without (${away.join(", ")}) (${expr})`;
  const processes = [...config.processLabels];
  const scope = [...scopeLabels];
  const { provider, model, agent, tool, outcome, reason } = labels;
  const attributes: Record<Counted, string[]> = {
    toolCalls: [provider, model, tool],
    danglingToolCalls: [provider, model, tool, reason],
    modelCalls: [provider, model, agent, outcome],
  };
  const rules: [string, string][] = [];

  // Each counter summed within each process (whose series all start from 0 together), and the sum
  // compared with the one recorded at the previous evaluation: the difference, or the whole sum
  // for a process first seen or restarted. A process killed since keeps what it counted; one
  // silent for longer than an hour counts again from 0.
  const zero: Record<Counted, (counted: string) => string | undefined> = {
    toolCalls: () => undefined,
    danglingToolCalls: () => `${names.increase("instance", "toolCalls")} * 0`,
    modelCalls: (counted) =>
      `label_replace(${without([outcome], counted)} * 0, "${outcome}", "${values.outcomeFailedOpen}", "", "")`,
  };
  for (const [key, away] of [
    ["toolCalls", []],
    ["danglingToolCalls", [reason]],
    ["modelCalls", [agent]],
  ] as const) {
    const total = `instance:${series[key]}:sum`;
    // A recorded sample is stamped with its evaluation's time: 1ms before it is the one before.
    const increase = `(${total} - last_over_time(${total}[1h] offset 1ms)) >= 0 or ${total}`;
    const counted = `${names.increase("instance", key)}_counted`;
    const zeroes = zero[key](counted);
    rules.push(
      [total, without([...away, ...scope], raw(key))],
      ...(zeroes === undefined
        ? [[names.increase("instance", key), increase] as [string, string]]
        : [
            [counted, increase] as [string, string],
            [names.increase("instance", key), `${counted} or ${zeroes}`] as [string, string],
          ]),
      [
        names.increase("model", key),
        without(
          [...processes, ...(key === "modelCalls" ? [] : [tool])],
          names.increase("instance", key),
        ),
      ],
    );
    if (key !== "modelCalls") {
      rules.push([
        names.increase("tool", key),
        without([...processes, provider, model], names.increase("instance", key)),
      ]);
    }
  }

  const perProcess = [...scope, ...attributes.modelCalls].join(", ");
  rules.push([names.lastSample, `max without (${perProcess}) (timestamp(${raw("modelCalls")}))`]);
  const instanceWindow = config.instanceOutlier.window;
  for (const [key, window] of [
    ["modelCalls", names.rateWindow],
    ["modelCalls", instanceWindow],
    ["toolCalls", instanceWindow],
    ["danglingToolCalls", instanceWindow],
  ] as const) {
    rules.push([
      names.processRate(key, window),
      without([...scope, ...attributes[key]], rate(key, window)),
    ]);
  }
  const toolCalls = names.processRate("toolCalls", instanceWindow);
  const dangling = names.processRate("danglingToolCalls", instanceWindow);
  /** The job's figure less the process's own, one per process. */
  const peers = (figure: string) => {
    rules.push([
      `${figure}_peers`,
      `${without(processes, figure)} - ignoring (${processes.join(", ")}) group_right () ${figure}`,
    ]);
    return `${figure}_peers`;
  };
  const overflow = `count without (${[...scope, labels.overflow].join(", ")}) (${overflowSelector(...selector)})`;
  rules.push(
    [names.processRatio(instanceWindow), share(dangling, toolCalls)],
    [names.peersRatio(instanceWindow), share(peers(dangling), peers(toolCalls))] as [
      string,
      string,
    ],
    [names.overflowSeries, `${overflow} or ${names.lastSample} * 0`],
  );

  const everywhere = [...processes, ...scope];
  const perModel = (name: string, matchers: string) => {
    rules.push([name, without([agent, outcome], `${names.modelCallsByOutcome}${matchers}`)]);
    return name;
  };
  rules.push(
    [names.danglingByReason, without([...everywhere, tool], rate("danglingToolCalls"))],
    [names.repairsByKind, without(everywhere, rate("repairs"))],
    [names.modelCallsByOutcome, without(everywhere, rate("modelCalls"))],
  );
  const repaired = perModel(
    `model:tool_call_resilience_repaired_model_calls:rate${names.rateWindow}`,
    `{${outcome}="${values.outcomeRepaired}"}`,
  );
  const all = perModel(`model:${metricOf("modelCalls")}:rate${names.rateWindow}`, "");
  rules.push(
    [names.repairedRatio, share(repaired, all)],
    [names.durationBuckets, without(everywhere, rate("repairDurationBucket"))],
    [names.threads, without(everywhere, raw("threadRecentDanglingToolCalls"))],
  );
  return rules.map(([record, expr]) => ({ record, expr }));
}
