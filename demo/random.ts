/**
 * A small seeded generator (mulberry32): the same seed gives the same sequence on every machine,
 * so a demo run's conversations can be replayed with `--seed`.
 *
 * @example
 * const random = seeded(42);
 * random(); // a number in [0, 1), the same one for seed 42 every time
 */
export function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** Mixes a seed with further numbers into one seed, so each thread and turn has its own stream. */
export function seedOf(...parts: readonly number[]): number {
  let hash = 0x811c9dc5;
  for (const part of parts) {
    hash = Math.imul(hash ^ (part >>> 0), 0x01000193) >>> 0;
    hash = Math.imul(hash ^ (hash >>> 15), 0x2c1b3c6d) >>> 0;
  }
  return hash;
}
