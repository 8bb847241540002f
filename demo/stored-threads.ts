/**
 * The fleet's threads read back from the checkpointer after the run and checked: no message lost
 * (every turn's user message, in order, and every answer of every turn that ended), and nothing a
 * provider would refuse once the middleware has repaired the history, by the audit's own code.
 */
import { AIMessage, type BaseMessage, HumanMessage } from "@langchain/core/messages";
import { auditThread, problemsLeft } from "../src/cli/audit-thread.js";
import { danglingAtEnd, type ThreadRecord } from "./workers.js";

/** What the check of the stored threads found. */
export interface StoredThreadsCheck {
  readonly threads: number;
  readonly messages: number;
  /** Calls the last turn of a thread left dangling, to be repaired on its next turn. */
  readonly waiting: number;
  /** Dangling calls still stored (without `persist`, where the repair is not written back). */
  readonly unrepaired: number;
  /** One line per thing wrong; empty when every thread is whole and valid after repair. */
  readonly problems: readonly string[];
}

/**
 * Reads each thread back with `read` and checks it against what its turns should have stored.
 *
 * @param read - the thread's stored messages
 * @param persist - whether the middleware wrote its repairs back: then only the calls of the last
 *   turn may still dangle
 */
export async function checkStoredThreads(
  records: readonly ThreadRecord[],
  read: (thread: ThreadRecord["thread"]) => Promise<readonly BaseMessage[]>,
  persist: boolean,
): Promise<StoredThreadsCheck> {
  const problems: string[] = [];
  let messages = 0;
  let waiting = 0;
  let unrepaired = 0;
  for (const record of records) {
    const id = record.thread.id;
    const stored = await read(record.thread);
    messages += stored.length;
    const humans = stored.filter((message) => HumanMessage.isInstance(message)).map((m) => m.id);
    const expected = record.turns.map((turn) => turn.human);
    if (JSON.stringify(humans) !== JSON.stringify(expected)) {
      problems.push(
        `${id}: stored user messages ${JSON.stringify(humans)}, its turns sent ${JSON.stringify(expected)}`,
      );
    }
    for (const turn of record.turns) {
      if (turn.answers === undefined) continue;
      const answers = stored.filter(
        (message) =>
          AIMessage.isInstance(message) && message.id?.startsWith(`${turn.human}:ai-`) === true,
      ).length;
      if (answers !== turn.answers) {
        problems.push(`${id}: ${turn.human} stored ${answers} answers of ${turn.answers}`);
      }
    }
    const pending = new Set(danglingAtEnd(stored).map((call) => call.id));
    waiting += pending.size;
    const audit = await auditThread(
      stored.map((message) => message.toDict()),
      {},
      "langchain",
    );
    for (const repair of audit.repairs) {
      if (repair.kind === "placeholder_inserted") {
        if (pending.has(repair.toolCallId ?? "")) continue;
        unrepaired += 1;
        if (persist) problems.push(`${id}: call ${repair.toolCallId} still dangles in the store`);
        continue;
      }
      // Without persist the store keeps what happened: the synthetic reply that tool results
      // followed by a user message need (after a stop, or a worker killed once its tools ran) is
      // written into each model call's request only.
      if (repair.kind === "turn_inserted" && !persist) continue;
      problems.push(`${id}: ${repair.kind} for call ${repair.toolCallId}`);
    }
    const left = await problemsLeft(audit, JSON.parse(JSON.stringify(audit.messages)), {});
    const remaining = Object.entries(left).filter(([, count]) => count > 0);
    if (remaining.length > 0) {
      problems.push(`${id}: after repair still ${JSON.stringify(Object.fromEntries(remaining))}`);
    }
  }
  return { threads: records.length, messages, waiting, unrepaired, problems };
}

/** The check as a line or two of the summary. */
export function formatStoredThreads(check: StoredThreadsCheck, persist: boolean): string {
  const head = `Read back from PostgreSQL: ${check.threads} threads, ${check.messages} messages; ${check.waiting} calls of last turns wait for the next one${persist ? "" : `, ${check.unrepaired} repaired calls still dangle in the store (no persist)`}.`;
  return check.problems.length === 0
    ? `${head}\nNo message lost, and every thread is valid for the providers once repaired.`
    : `${head}\nStored threads with problems:\n  ${check.problems.join("\n  ")}`;
}
