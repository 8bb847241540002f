/**
 * What a thread id becomes as `gen_ai.conversation.id`, by the `threadIdAttribute` option: the
 * same on the per-thread metric and on the span, so that a thread on a dashboard leads to its
 * traces.
 */

/**
 * What a thread id becomes where it is recorded (the per-thread metric's and the span's
 * `gen_ai.conversation.id`): `"raw"` as it is, `"sha256"` its hex SHA-256, or what a function
 * makes of it.
 */
export type ThreadIdAttribute = "raw" | "sha256" | ((threadId: string) => string);

/**
 * A thread id as `threadIdAttribute` maps it.
 *
 * @throws when the mapping function throws or gives anything but a non-empty string, or SHA-256
 *   cannot be computed here
 *
 * @example
 * ```ts
 * mappedThreadId("sha256", "thread-1"); // 64 hex digits
 * mappedThreadId((id) => `tenant-a/${id}`, "thread-1"); // "tenant-a/thread-1"
 * ```
 */
export function mappedThreadId(mapping: ThreadIdAttribute, threadId: string): string {
  if (mapping === "raw") return threadId;
  if (mapping === "sha256") return sha256Hex(threadId);
  const id: unknown = mapping(threadId);
  if (typeof id !== "string" || id === "") {
    throw new TypeError(
      `threadIdAttribute returned ${typeof id === "string" ? "an empty string" : typeof id}, not a non-empty string; the thread is recorded without gen_ai.conversation.id`,
    );
  }
  return id;
}

/** What {@link sha256Hex} uses of `node:crypto`. */
interface NodeCrypto {
  createHash(algorithm: "sha256"): {
    update(text: string): { digest(encoding: "hex"): string };
  };
}

let nodeCrypto: NodeCrypto | undefined;

/**
 * The hex SHA-256 of a text, with Node's `crypto`, reached through `process.getBuiltinModule`
 * (on every Node.js the package supports) so that no entry point imports a Node built-in module.
 */
function sha256Hex(text: string): string {
  nodeCrypto ??= (
    globalThis.process as { getBuiltinModule?: (id: string) => unknown } | undefined
  )?.getBuiltinModule?.("node:crypto") as NodeCrypto | undefined;
  if (nodeCrypto === undefined) {
    throw new Error(
      'threadIdAttribute: "sha256" needs Node.js\'s crypto module, which this runtime lacks',
    );
  }
  return nodeCrypto.createHash("sha256").update(text).digest("hex");
}
