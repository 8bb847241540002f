/**
 * The bounded memory that lets a dangling call be counted once although it is repaired again on
 * every later model call of its thread.
 */

/** Default number of counted calls remembered per process (see `countOnceMemory`). */
export const DEFAULT_COUNT_ONCE_MEMORY = 10_000;

/**
 * A set of keys that holds at most `capacity` of them and forgets the least recently seen first.
 * A `Map` keeps insertion order, so a key seen again is moved to the end and the first key is the
 * oldest; no dependency is needed for that.
 *
 * @example
 * ```ts
 * const memory = new CountOnceMemory(2);
 * memory.firstSighting("a"); // true
 * memory.firstSighting("a"); // false
 * ```
 */
export class CountOnceMemory {
  readonly #seen = new Map<string, true>();

  /** @param capacity - how many keys to remember; 0 remembers none, so every sighting is first */
  constructor(readonly capacity: number) {}

  /** `true` the first time a key is seen (or again once it was forgotten), `false` after that. */
  firstSighting(key: string): boolean {
    if (this.#seen.delete(key)) {
      this.#seen.set(key, true);
      return false;
    }
    if (this.capacity === 0) return true;
    if (this.#seen.size >= this.capacity) {
      const oldest = this.#seen.keys().next();
      if (!oldest.done) this.#seen.delete(oldest.value);
    }
    this.#seen.set(key, true);
    return true;
  }

  /** How many keys are remembered now. */
  get size(): number {
    return this.#seen.size;
  }
}

/**
 * The memories shared by every middleware that keeps the default capacity, one per destination
 * (a meter provider, or a logger for its warnings), so that agents built per request still count
 * each call once per process.
 */
const sharedMemories = new WeakMap<object, CountOnceMemory>();

/**
 * The default-capacity memory of a destination, shared across middleware instances.
 *
 * @example
 * ```ts
 * sharedCountOnceMemory(meterProvider) === sharedCountOnceMemory(meterProvider); // true
 * ```
 */
export function sharedCountOnceMemory(destination: object): CountOnceMemory {
  let memory = sharedMemories.get(destination);
  if (memory === undefined) {
    memory = new CountOnceMemory(DEFAULT_COUNT_ONCE_MEMORY);
    sharedMemories.set(destination, memory);
  }
  return memory;
}
