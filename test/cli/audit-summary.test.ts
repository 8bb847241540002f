/**
 * The words of the report when something went wrong: the summary line never says "no problems
 * found" beside an error, and a thread of a checkpointer is named in an error by its `thread_id`
 * alone. The report itself, and the command on a stand-in checkpointer: no PostgreSQL needed
 * (`audit-postgres.long.test.ts` runs the same against a real one).
 */
import { describe, expect, it, vi } from "vitest";
import type { AuditArguments } from "../../src/cli/arguments.js";
import type { Checkpointer } from "../../src/cli/postgres.js";
import { createProgress } from "../../src/cli/progress.js";
import { Report } from "../../src/cli/report.js";
import { audit } from "../helpers/cli.js";

/** The checkpointer the command opens: a stand-in, whose threads each test sets. */
const stored = vi.hoisted(() => ({
  items: [] as unknown[],
}));

vi.mock("../../src/cli/postgres.js", async (importOriginal) => ({
  ...(await importOriginal<typeof import("../../src/cli/postgres.js")>()),
  openCheckpointer: async (): Promise<Checkpointer> => ({
    source: "postgres://app:***@db/app",
    count: async () => stored.items.length,
    async *threads() {
      yield* stored.items as never[];
    },
    close: async () => {},
  }),
}));

const OPTIONS: AuditArguments = {
  input: "threads.jsonl",
  checkpointer: undefined,
  thread: undefined,
  fix: false,
  out: undefined,
  format: "text",
  locale: undefined,
};

/** A report of `threads.jsonl` that `fill` counts into; what its summary line says. */
function summaryOf(
  fill: (report: Report) => void,
  options: Partial<AuditArguments> = {},
): { stdout: string; stderr: string } {
  let stdout = "";
  let stderr = "";
  const io = {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
  };
  const report = new Report(
    "threads.jsonl",
    { ...OPTIONS, ...options },
    io,
    createProgress(io.stderr, undefined),
  );
  report.start();
  fill(report);
  report.finish();
  return { stdout, stderr };
}

const anError = { file: "threads.jsonl", line: 2, message: "Unexpected end of JSON input" };

describe("the summary line", () => {
  it('says "no problems found" when every thread was audited and none had any', () => {
    const { stdout } = summaryOf((report) => {
      report.summary.threads = 2;
      report.summary.messages = 4;
      report.summary.formats.openai = 2;
    });
    expect(stdout).toBe("Audited 2 thread(s), 4 message(s) (2 openai): no problems found.\n");
  });

  it('says "none with problems", not "no problems found", of the threads audited beside an error', () => {
    const { stdout, stderr } = summaryOf((report) => {
      report.summary.threads = 2;
      report.summary.messages = 4;
      report.summary.formats.openai = 2;
      report.error(anError);
    });
    expect(stderr).toBe("tool-call-resilience: threads.jsonl:2: Unexpected end of JSON input\n");
    expect(stdout).toBe(
      "Audited 2 thread(s), 4 message(s) (2 openai): none with problems. 1 error(s), on standard error.\n",
    );
  });

  it('says "No thread audited" when errors left no thread to audit', () => {
    const { stdout } = summaryOf((report) => {
      report.error(anError);
      report.error({ ...anError, line: 3 });
    });
    expect(stdout).toBe("No thread audited: 2 error(s), on standard error.\n");
  });

  it("says where --fix did not write", () => {
    const { stdout } = summaryOf((report) => report.error(anError), {
      fix: true,
      out: "fixed.jsonl",
    });
    expect(stdout).toBe(
      "No thread audited: 1 error(s), on standard error. Threads not written to fixed.jsonl.\n",
    );
  });

  it("still counts the problems found beside an error", () => {
    const { stdout } = summaryOf((report) => {
      report.summary.threads = 1;
      report.summary.messages = 2;
      report.summary.formats.openai = 1;
      report.summary.threadsWithProblems = 1;
      report.summary.problems.dangling = 1;
      report.error(anError);
    });
    expect(stdout).toBe(
      "Audited 1 thread(s), 2 message(s) (1 openai): 1 with problems: 1 dangling. 1 error(s), on standard error.\n",
    );
  });

  it("says it of an empty input, with no error, as before", () => {
    const { stdout } = summaryOf(() => {});
    expect(stdout).toBe("Audited 0 thread(s), 0 message(s): no problems found.\n");
  });
});

describe("a thread of a checkpointer, in an error", () => {
  it("is named by its thread_id, not its position: --thread nope", async () => {
    stored.items = [{ kind: "error", index: 0, id: "nope", message: "is not in the checkpointer" }];
    const run = await audit([
      "audit",
      "--checkpointer",
      "postgres://app:s3cret@db/app",
      "--thread",
      "nope",
    ]);
    expect(run).toEqual({
      code: 2,
      stdout: "No thread audited: 1 error(s), on standard error.\n",
      stderr:
        'tool-call-resilience: postgres://app:***@db/app: Thread "nope" is not in the checkpointer\n',
    });
  });

  it("is named by its thread_id when it cannot be audited, beside the threads that can", async () => {
    stored.items = [
      {
        kind: "thread",
        index: 0,
        id: "clean",
        messages: [{ type: "human", data: { content: "Hi" } }],
      },
      {
        kind: "thread",
        index: 1,
        id: "bogus",
        messages: [{ lc: 1, type: "constructor", id: ["bogus"], kwargs: {} }],
      },
    ];
    const run = await audit(["audit", "--checkpointer", "postgres://app:s3cret@db/app"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(
      /^tool-call-resilience: postgres:\/\/app:\*\*\*@db\/app: Thread "bogus" cannot be audited: Invalid namespace/,
    );
    expect(run.stdout).toBe(
      "Audited 1 thread(s), 1 message(s) (1 langchain): none with problems. 1 error(s), on standard error.\n",
    );
  });
});
