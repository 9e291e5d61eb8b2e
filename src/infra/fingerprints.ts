/**
 * A compact set of 64-bit fingerprints, for sets of strings that grow with the input: import's
 * idempotency keys (import/key-set.ts, with the row that first had each key) and the ids an
 * export wrote (export/page.ts, prints alone). A Set or Map of a million 40-character strings
 * costs 100–150 MB; this table 8 bytes a slot (12 with values), at most 80% full.
 *
 * Open addressing with linear probing; the print 0:0 marks an empty slot, so a real 0:0 is
 * stored as 0:1 (one more print in 2⁶⁴ shares a slot: nothing next to the odds below). Two
 * different strings share a print with probability ~n²/2⁶⁵ (2.7·10⁻⁸ for a million): a caller
 * decides what a false "already there" means for it.
 */
import { hash } from 'node:crypto';

/** A 64-bit fingerprint as two unsigned 32-bit halves. */
export interface Print {
  hi: number;
  lo: number;
}

/** The first 64 bits of the text's SHA-256. */
export function fingerprint(text: string): Print {
  const digest = hash('sha256', text, 'buffer');
  return { hi: digest.readUInt32BE(0), lo: digest.readUInt32BE(4) };
}

/**
 * A fast 64-bit print (two 32-bit multiply-xor states, mixed at the end: cyrb53's scheme, all 64
 * bits kept), ~20× cheaper than a SHA-256 call on a short id. For ids a service made, where a
 * false match costs nothing silent (the export's pager writes and counts it); keys a user
 * chooses, and prints that persist (the --new-since-last state), take SHA-256.
 */
export function quickPrint(text: string): Print {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507);
  h1 ^= Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507);
  h2 ^= Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return { hi: h2 >>> 0, lo: h1 >>> 0 };
}

/** The low half as stored: 0:0 is the empty slot's mark. */
function loOf(print: Print): number {
  return print.hi === 0 && print.lo === 0 ? 1 : print.lo;
}

/** Slots are at most this full: linear probing stays short (about 13 probes for a new print, 3 for a known one). */
const LOAD = 0.8;

export class PrintTable {
  /**
   * Each slot's hi, lo (and value) side by side, `#stride` numbers a slot: a probe reads one
   * cache line, where three arrays cost three misses on a table of a million keys.
   */
  #slots: Uint32Array;
  readonly #stride: 2 | 3;
  #capacity: number;
  #size = 0;

  constructor(options: { values?: boolean; capacity?: number } = {}) {
    this.#capacity = options.capacity ?? 1024;
    this.#stride = options.values ? 3 : 2;
    this.#slots = new Uint32Array(this.#capacity * this.#stride);
  }

  get size(): number {
    return this.#size;
  }

  /** How many prints fit before the table grows. */
  get room(): number {
    return Math.floor(this.#capacity * LOAD);
  }

  /** Bytes held by the table's arrays. */
  get bytes(): number {
    return this.#slots.byteLength;
  }

  /**
   * Makes room for `count` prints at once. Growing doubles the table and holds the old one
   * while rehashing (3× its size for a moment); a caller that can estimate its count early
   * sizes the table once instead.
   */
  reserve(count: number): void {
    const capacity = Math.ceil(count / LOAD) + 1;
    if (capacity > this.#capacity) this.#rehash(capacity);
  }

  has(print: Print): boolean {
    return this.#used(this.#find(print.hi, loOf(print)));
  }

  /** The value stored with the print (0 in a table without values), or undefined. */
  get(print: Print): number | undefined {
    const at = this.#find(print.hi, loOf(print));
    return this.#used(at) ? this.#value(at) : undefined;
  }

  /** Adds the print with its value unless present; returns the earlier value when it was. */
  add(print: Print, value = 0): number | undefined {
    const lo = loOf(print);
    const at = this.#find(print.hi, lo);
    if (this.#used(at)) return this.#value(at);
    this.#put(at, print.hi, lo, value);
    this.#size++;
    if (this.#size > this.#capacity * LOAD) this.#rehash(this.#capacity * 2);
    return undefined;
  }

  /** A slot's value: signed, as stored (import's rows); 0 without values. */
  #value(at: number): number {
    return this.#stride === 3 ? this.#slots[at + 2]! | 0 : 0;
  }

  #put(at: number, hi: number, lo: number, value: number): void {
    this.#slots[at] = hi;
    this.#slots[at + 1] = lo;
    if (this.#stride === 3) this.#slots[at + 2] = value;
  }

  /** `at`: a slot's first number (its index × stride). */
  #used(at: number): boolean {
    return this.#slots[at] !== 0 || this.#slots[at + 1] !== 0;
  }

  /**
   * The print's slot (its first number), or the empty slot it would take: linear probing from
   * a home slot scaled from the low 32 bits (any table size, not only powers of two).
   */
  #find(hi: number, lo: number): number {
    const slots = this.#slots;
    const stride = this.#stride;
    const end = slots.length;
    let at = Math.floor(((lo >>> 0) * this.#capacity) / 4_294_967_296) * stride;
    while ((slots[at] !== 0 || slots[at + 1] !== 0) && (slots[at] !== hi || slots[at + 1] !== lo)) {
      at += stride;
      if (at === end) at = 0;
    }
    return at;
  }

  #rehash(capacity: number): void {
    const old = this.#slots;
    const stride = this.#stride;
    this.#capacity = capacity;
    this.#slots = new Uint32Array(capacity * stride);
    for (let at = 0; at < old.length; at += stride) {
      const hi = old[at]!;
      const lo = old[at + 1]!;
      if (hi === 0 && lo === 0) continue;
      this.#put(this.#find(hi, lo), hi, lo, stride === 3 ? old[at + 2]! | 0 : 0);
    }
  }
}
