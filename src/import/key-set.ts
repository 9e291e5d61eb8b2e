/**
 * The set of idempotency keys seen in a run, kept compact so memory stays flat: a Map of
 * a million 45-character keys costs ~100 MB, this 16 MB (12 bytes a slot, at most 80% full).
 * Each key is stored as a 64-bit fingerprint (the first 64 bits of its SHA-256; derived keys
 * already are SHA-256 hex) in an open-addressing table, with the 1-based row that first had
 * it. Two different keys share a fingerprint with probability ~n²/2⁶⁵ (3·10⁻⁸ for a million
 * rows).
 */
import { createHash } from 'node:crypto';

/** A key with its 64-bit fingerprint, as two unsigned 32-bit halves. */
export interface KeyPrint {
  key: string;
  hi: number;
  lo: number;
}

/** Exactly a derived key: a user's key that merely starts like one is hashed like any other. */
const DERIVED = /^ccsb_[0-9a-f]{40}$/;

/** The fingerprint of any key; `deriveKey` makes derived keys' prints straight from the digest. */
export function printOf(key: string): KeyPrint {
  if (DERIVED.test(key)) {
    return { key, hi: Number.parseInt(key.slice(5, 13), 16), lo: Number.parseInt(key.slice(13, 21), 16) };
  }
  const digest = createHash('sha256').update(key).digest();
  return { key, hi: digest.readUInt32BE(0), lo: digest.readUInt32BE(4) };
}

/** Slots are at most this full: linear probing stays short (about 13 probes for a new key, 3 for a known one). */
const LOAD = 0.8;

export class KeySet {
  #hi: Uint32Array;
  #lo: Uint32Array;
  /** 0 = empty slot; rows are 1-based. */
  #row: Int32Array;
  #size = 0;

  constructor(capacity = 1024) {
    this.#hi = new Uint32Array(capacity);
    this.#lo = new Uint32Array(capacity);
    this.#row = new Int32Array(capacity);
  }

  get size(): number {
    return this.#size;
  }

  /** How many keys fit before the table grows. */
  get room(): number {
    return Math.floor(this.#row.length * LOAD);
  }

  /**
   * Makes room for `count` keys at once. Growing doubles the table and holds the old one
   * while rehashing (3× its size for a moment); a caller that can estimate its row count
   * early sizes the table once instead.
   */
  reserve(count: number): void {
    const capacity = Math.ceil(count / LOAD) + 1;
    if (capacity > this.#row.length) this.#rehash(capacity);
  }

  /** The row that first had this key, or undefined. */
  get(key: string | KeyPrint): number | undefined {
    const { hi, lo } = typeof key === 'string' ? printOf(key) : key;
    const slot = this.#find(hi, lo);
    const row = this.#row[slot] ?? 0;
    return row === 0 ? undefined : row;
  }

  has(key: string | KeyPrint): boolean {
    return this.get(key) !== undefined;
  }

  /** Adds the key with its row unless present; returns the earlier row when it was. */
  add(key: string | KeyPrint, row: number): number | undefined {
    const { hi, lo } = typeof key === 'string' ? printOf(key) : key;
    const slot = this.#find(hi, lo);
    const existing = this.#row[slot] ?? 0;
    if (existing !== 0) return existing;
    this.#hi[slot] = hi;
    this.#lo[slot] = lo;
    this.#row[slot] = row;
    this.#size++;
    if (this.#size > this.#row.length * LOAD) this.#rehash(this.#row.length * 2);
    return undefined;
  }

  /**
   * Linear probing from a home slot scaled from the low 32 bits (any table size, not only
   * powers of two); returns the key's slot or the empty slot it would take.
   */
  #find(hi: number, lo: number): number {
    const capacity = this.#row.length;
    let slot = Math.floor(((lo >>> 0) * capacity) / 4_294_967_296);
    while (this.#row[slot] !== 0 && (this.#hi[slot] !== hi || this.#lo[slot] !== lo)) {
      slot = slot + 1 === capacity ? 0 : slot + 1;
    }
    return slot;
  }

  #rehash(capacity: number): void {
    const [hi, lo, row] = [this.#hi, this.#lo, this.#row];
    this.#hi = new Uint32Array(capacity);
    this.#lo = new Uint32Array(capacity);
    this.#row = new Int32Array(capacity);
    for (let i = 0; i < row.length; i++) {
      if (row[i] === 0) continue;
      const slot = this.#find(hi[i]!, lo[i]!);
      this.#hi[slot] = hi[i]!;
      this.#lo[slot] = lo[i]!;
      this.#row[slot] = row[i]!;
    }
  }
}
