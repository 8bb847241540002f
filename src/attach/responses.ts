/**
 * Waiting for a model's answer without changing it: a response that is a value, a promise or a
 * stream goes back to the caller as it came, and the whole answer (a stream's chunks joined) is
 * handed to whoever counts it once the response has ended.
 */

/**
 * Calls `onEnd` once the handler's response has ended, sync, async or streamed, with the whole
 * answer (`undefined` when it failed), and returns the response unchanged: a promise settles as
 * it would, a stream is passed on chunk by chunk and its answer is its chunks joined. `onEnd`
 * throwing changes nothing for the caller.
 *
 * @example
 * ```ts
 * return settled(handler(request), (answer) => telemetry.recordResponse(call, answer));
 * ```
 */
export function settled<R>(response: R, onEnd: (answer: unknown) => void): R {
  const end = (answer: unknown) => {
    try {
      onEnd(answer);
    } catch {
      // Counting the answer never changes what the caller gets back.
    }
  };
  if (isPromiseLike(response)) {
    return response.then(
      (resolved) => {
        end(resolved);
        return resolved;
      },
      (error: unknown) => {
        end(undefined);
        throw error;
      },
    ) as R;
  }
  if (isAsyncGenerator(response)) return settledStream(response, end) as R;
  end(response);
  return response;
}

async function* settledStream(
  stream: AsyncGenerator<unknown>,
  onEnd: (answer: unknown) => void,
): AsyncGenerator<unknown> {
  let whole: unknown;
  let ended = false;
  try {
    for await (const chunk of stream) {
      whole = joined(whole, chunk);
      yield chunk;
    }
    ended = true;
  } finally {
    onEnd(ended ? whole : undefined);
  }
}

/** Message chunks joined the way LangChain joins them (`concat`); never throws. */
function joined(whole: unknown, chunk: unknown): unknown {
  if (whole === undefined) return chunk;
  try {
    const concat = (whole as { concat?: unknown }).concat;
    return typeof concat === "function" ? concat.call(whole, chunk) : chunk;
  } catch {
    return whole;
  }
}

const ASYNC_GENERATOR_PROTOTYPE = Object.getPrototypeOf(async function* () {}.prototype) as object;

/** Whether a value is an async generator object (not some other async iterable with methods). */
function isAsyncGenerator(value: unknown): value is AsyncGenerator<unknown> {
  if (typeof value !== "object" || value === null) return false;
  const own = Object.getPrototypeOf(value) as object | null;
  return own !== null && Object.getPrototypeOf(own) === ASYNC_GENERATOR_PROTOTYPE;
}

/**
 * Whether a value is a thenable, as `await` would treat it.
 *
 * @example
 * ```ts
 * isPromiseLike(Promise.resolve(1)); // true
 * isPromiseLike({ then: 1 }); // false
 * ```
 */
export function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as { then?: unknown }).then === "function"
  );
}
