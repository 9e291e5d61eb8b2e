/**
 * The set of idempotency keys seen in a run, kept compact so memory stays flat: a Map of
 * a million 45-character keys costs ~100 MB, this ~24 MB. Each key is stored as a 64-bit
 * fingerprint (the first 64 bits of its SHA-256; derived keys already are SHA-256 hex) in an
 * open-addressing table, with the 1-based row that first had it. Two different keys share a
 * fingerprint with probability ~n²/2⁶⁵ (3·10⁻⁸ for a million rows).
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

export class KeySet {
  #hi = new Uint32Array(1024);
  #lo = new Uint32Array(1024);
  /** 0 = empty slot; rows are 1-based. */
  #row = new Int32Array(1024);
  #size = 0;

  get size(): number {
    return this.#size;
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
    if (this.#size * 4 > this.#row.length * 3) this.#grow();
    return undefined;
  }

  /** Linear probing from the low bits; returns the key's slot or the empty slot it would take. */
  #find(hi: number, lo: number): number {
    const mask = this.#row.length - 1;
    let slot = lo & mask;
    while (this.#row[slot] !== 0 && (this.#hi[slot] !== hi || this.#lo[slot] !== lo)) slot = (slot + 1) & mask;
    return slot;
  }

  #grow(): void {
    const [hi, lo, row] = [this.#hi, this.#lo, this.#row];
    this.#hi = new Uint32Array(row.length * 2);
    this.#lo = new Uint32Array(row.length * 2);
    this.#row = new Int32Array(row.length * 2);
    for (let i = 0; i < row.length; i++) {
      if (row[i] === 0) continue;
      const slot = this.#find(hi[i]!, lo[i]!);
      this.#hi[slot] = hi[i]!;
      this.#lo[slot] = lo[i]!;
      this.#row[slot] = row[i]!;
    }
  }
}
