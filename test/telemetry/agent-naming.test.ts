/** whenAgentNamed: the agent's name, read from an answer once createAgent has named it. */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { whenAgentNamed } from "../../src/telemetry/agent-naming.js";

describe("whenAgentNamed", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("gives the name an answer carries on the next turn of the event loop", async () => {
    const record = vi.fn();
    whenAgentNamed({ type: "ai", name: "researcher" }, record);
    expect(record).not.toHaveBeenCalled();
    await vi.advanceTimersToNextTimerAsync();
    expect(record).toHaveBeenCalledWith("researcher");
  });

  it("gives a name written after a later wait, once it is there", async () => {
    const answer: { type: string; name?: string } = { type: "ai" };
    const record = vi.fn();
    whenAgentNamed(answer, record);
    await vi.advanceTimersToNextTimerAsync();
    answer.name = "writer";
    await vi.runAllTimersAsync();
    expect(record).toHaveBeenCalledOnce();
    expect(record).toHaveBeenCalledWith("writer");
  });

  it('gives undefined for the name "model" createAgent gives an unnamed agent', async () => {
    const record = vi.fn();
    whenAgentNamed({ type: "ai", name: "model" }, record);
    await vi.runAllTimersAsync();
    expect(record).toHaveBeenCalledWith(undefined);
  });

  it("gives undefined once the last wait passes without a name, and calls back only once", async () => {
    const record = vi.fn();
    whenAgentNamed({ type: "ai" }, record);
    await vi.runAllTimersAsync();
    expect(record).toHaveBeenCalledOnce();
    expect(record).toHaveBeenCalledWith(undefined);
  });

  it("reads the name from a command's update and from a structured answer's messages", async () => {
    const fromCommand = vi.fn();
    const fromStructured = vi.fn();
    whenAgentNamed({ update: { messages: [{ type: "ai", name: "planner" }] } }, fromCommand);
    whenAgentNamed(
      { messages: [{ type: "human" }, { type: "ai", name: "critic" }] },
      fromStructured,
    );
    await vi.runAllTimersAsync();
    expect(fromCommand).toHaveBeenCalledWith("planner");
    expect(fromStructured).toHaveBeenCalledWith("critic");
  });

  it("takes an answer whose name cannot be read as unnamed", async () => {
    const record = vi.fn();
    const hostile = {
      type: "ai",
      get name(): string {
        throw new Error("unreadable");
      },
    };
    whenAgentNamed(hostile, record);
    await vi.runAllTimersAsync();
    expect(record).toHaveBeenCalledWith(undefined);
  });
});
