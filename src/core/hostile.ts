/**
 * Entries that cannot be read without throwing: getters that throw, proxies whose traps throw,
 * revoked proxies. The engine reads messages directly, for speed; when a history holds such an
 * entry and a read throws, it runs again over a shielded history in which each of them is replaced
 * by a stand-in that reads as junk, and the originals are put back in its output. Nothing here runs
 * for an ordinary history.
 */

type Fields = Record<string, unknown>;

function isObject(value: unknown): value is Fields {
  return value !== null && (typeof value === "object" || typeof value === "function");
}

/**
 * Reads what the engine may read of one call, content block or output item, and copies it as a
 * repair would.
 */
function touchCall(call: unknown): void {
  if (!isObject(call)) return;
  void call.id;
  void call.name;
  void call.type;
  void call.input;
  void call.args;
  void call.call_id;
  void call.arguments;
  void call.action;
  void call.isCustomTool;
  void call.isComputerTool;
  void call.tool_use_id;
  void call.content;
  void call.is_error;
  const fn = call.function;
  if (isObject(fn)) {
    void fn.name;
    void fn.arguments;
  }
  void { ...call };
}

function touchCalls(list: unknown): void {
  if (!Array.isArray(list)) return;
  for (let index = 0; index < list.length; index++) touchCall(list[index]);
}

/**
 * Whether every field of a history entry that the engine reads or copies can be read without
 * throwing. Primitives and nullish entries can: they are junk, and read as such. A getter that
 * throws on `type`, say, makes the entry unsafe; a `HumanMessage` is safe.
 */
function readsSafely(entry: unknown): boolean {
  if (!isObject(entry)) return true;
  try {
    void entry.type;
    void entry.role;
    void entry.tool_call_id;
    void entry.name;
    const metadata = entry.response_metadata;
    if (isObject(metadata)) {
      void metadata.output_version;
      touchCalls(metadata.output);
      void { ...metadata };
    }
    touchCalls(entry.tool_calls);
    touchCalls(entry.invalid_tool_calls);
    const kwargs = entry.additional_kwargs;
    if (isObject(kwargs)) {
      touchCalls(kwargs.tool_calls);
      void kwargs.__openai_custom_tool_call_ids__;
      void kwargs.customTool;
      void { ...kwargs };
    }
    touchCalls(entry.content);
    const serialized = entry.lc_kwargs;
    if (isObject(serialized)) void { ...serialized };
    // What a copy of the message reads: its prototype and descriptors, or its spread.
    Object.getPrototypeOf(entry);
    Object.getOwnPropertyDescriptors(entry);
    void { ...entry };
    return true;
  } catch {
    return false;
  }
}

/** A history with unreadable entries replaced by stand-ins, and the way back to the originals. */
export interface ShieldedHistory<T> {
  readonly messages: readonly T[];
  /** The output of a repair of `messages`, with each stand-in replaced by its original. */
  restore<U>(output: readonly U[]): Array<T | U>;
}

/**
 * The history with each entry that cannot be read without throwing replaced by a stand-in that reads
 * as junk; `undefined` when the array itself cannot be read (an index getter or a proxy that
 * throws).
 *
 * @example
 * ```ts
 * const shielded = shieldHistory(history);
 * if (shielded !== undefined) return shielded.restore(repairToolCalls(shielded.messages).messages);
 * ```
 */
export function shieldHistory<T>(history: readonly T[]): ShieldedHistory<T> | undefined {
  const originals = new Map<unknown, T>();
  let messages: T[];
  try {
    messages = new Array(history.length);
    for (let index = 0; index < history.length; index++) {
      const entry = history[index] as T;
      if (readsSafely(entry)) {
        messages[index] = entry;
        continue;
      }
      const standIn = Object.freeze({ unreadable: index }) as T;
      originals.set(standIn, entry);
      messages[index] = standIn;
    }
  } catch {
    return undefined;
  }
  return {
    messages,
    restore: (output) =>
      output.map((message) => (originals.has(message) ? (originals.get(message) as T) : message)),
  };
}
