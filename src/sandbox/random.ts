/**
 * A small seeded PRNG so that seeding and injected faults repeat exactly for a given
 * `seedRandom`: a flaky test can be replayed. Not for secrets (ids handed to callers that
 * must not be guessable use node:crypto instead).
 */

export type Random = () => number;

/** mulberry32: 32-bit state, fast, good enough spread for test data and fault rolls. */
export function createRandom(seed: number): Random {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** An integer in [min, max]. */
export function randomInt(random: Random, min: number, max: number): number {
  return min + Math.floor(random() * (max - min + 1));
}

export function pick<T>(random: Random, items: readonly T[]): T {
  const item = items[Math.floor(random() * items.length)];
  if (item === undefined) throw new RangeError('pick from an empty list');
  return item;
}

const HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'));

/** `length` lowercase hex digits drawn from `random` (a table lookup per byte: seeding makes millions). */
export function randomHex(random: Random, length: number): string {
  let out = '';
  for (let i = 0; i < length; i += 2) out += HEX[Math.floor(random() * 256)];
  return out.length === length ? out : out.slice(0, length);
}
