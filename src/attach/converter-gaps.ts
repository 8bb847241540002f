/**
 * Bugs of a provider's own LangChain converter that make a history invalid whatever the repair
 * sends: the attachments, which know the model, tell of each once, with what works instead. The
 * engine alone (`repairToolCalls`) cannot know the model; the README says the same for it.
 */
import { fieldsOf, listOf } from "../core/fields.js";
import { MessageKind, messageKindOf } from "../core/messages.js";
import { log } from "./logging.js";
import type { RepairLogger } from "./options.js";
import { llmTypeOf } from "./target.js";

/** A converter's gap: the chat models it is in, the histories it breaks, and what to say. */
interface ConverterGap {
  /** The `_llmType()` of the chat models whose converter has it. */
  readonly llmType: string;
  /** Whether this history meets the gap. */
  readonly meets: (messages: readonly unknown[]) => boolean;
  readonly warning: string;
}

/** The names of the calls of each AI message that makes two or more. */
function* parallelCallNames(messages: readonly unknown[]): Generator<string[]> {
  for (const message of messages) {
    if (messageKindOf(message) !== MessageKind.Ai) continue;
    const calls = listOf(fieldsOf(message)?.tool_calls);
    if (calls.length > 1) yield calls.map((call) => String(fieldsOf(call)?.name));
  }
}

const GAPS: readonly ConverterGap[] = [
  {
    llmType: "googlegenerativeai",
    meets: (messages) => !parallelCallNames(messages).next().done,
    warning:
      'ChatGoogleGenerativeAI (@langchain/google-genai) sends each result of parallel tool calls as a turn of its own (langchainjs#10342), so Gemini refuses this history: "Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn." No repair can change what that converter sends. ChatVertexAI (@langchain/google-vertexai) sends the results in one turn.',
  },
  {
    llmType: "google",
    meets: (messages) => {
      for (const names of parallelCallNames(messages)) {
        if (new Set(names).size > 1) return true;
      }
      return false;
    },
    warning:
      "ChatVertexAI (@langchain/google-common) names each result of parallel tool calls after the message before it, not after its own call, so a turn that calls different tools at once reaches Gemini with responses named after the wrong function. No repair can change what that converter sends. Parallel calls of one tool are sent right.",
  },
];

/** The gaps each logger was told of: each at most once. */
const told = new WeakMap<RepairLogger, Set<ConverterGap>>();

/**
 * Tells the logger, once per gap, when the model's converter will break this history whatever the
 * repair sends. Never throws.
 */
export function warnOfConverterGaps(
  logger: RepairLogger,
  attachment: string,
  model: unknown,
  messages: readonly unknown[],
): void {
  try {
    const llmType = llmTypeOf(model);
    if (llmType === undefined) return;
    for (const gap of GAPS) {
      if (gap.llmType !== llmType) continue;
      const seen = told.get(logger) ?? new Set<ConverterGap>();
      if (seen.has(gap) || !gap.meets(messages)) continue;
      told.set(logger, seen.add(gap));
      log(logger, "warn", `${attachment}: ${gap.warning}`, { llmType });
    }
  } catch {
    // A model or history that cannot be read: nothing to tell.
  }
}
