/**
 * The set of idempotency keys seen in a run, kept compact so memory stays flat: a Map of
 * a million 45-character keys costs ~100 MB, this 16 MB (12 bytes a slot, at most 80% full).
 * Each key is stored as a 64-bit fingerprint (the first 64 bits of its SHA-256; derived keys
 * already are SHA-256 hex) in the shared fingerprint table (../fingerprints.ts), with the
 * 1-based row that first had it. Two different keys share a fingerprint with probability
 * ~n²/2⁶⁵ (3·10⁻⁸ for a million rows).
 */
import { fingerprint, type Print, PrintTable } from '../../infra/fingerprints.js';

/** A key with its 64-bit fingerprint, as two unsigned 32-bit halves. */
export interface KeyPrint extends Print {
  key: string;
}

/** Exactly a derived key: a user's key that merely starts like one is hashed like any other. */
const DERIVED = /^ccsb_[0-9a-f]{40}$/;

/** The fingerprint of any key; `deriveKey` makes derived keys' prints straight from the digest. */
export function printOf(key: string): KeyPrint {
  if (DERIVED.test(key)) {
    return { key, hi: Number.parseInt(key.slice(5, 13), 16), lo: Number.parseInt(key.slice(13, 21), 16) };
  }
  return { key, ...fingerprint(key) };
}

export class KeySet {
  readonly #table: PrintTable;

  constructor(capacity = 1024) {
    this.#table = new PrintTable({ values: true, capacity });
  }

  get size(): number {
    return this.#table.size;
  }

  /** How many keys fit before the table grows. */
  get room(): number {
    return this.#table.room;
  }

  /** Makes room for `count` keys at once (see PrintTable.reserve). */
  reserve(count: number): void {
    this.#table.reserve(count);
  }

  /** The row that first had this key, or undefined. */
  get(key: string | KeyPrint): number | undefined {
    return this.#table.get(typeof key === 'string' ? printOf(key) : key);
  }

  has(key: string | KeyPrint): boolean {
    return this.get(key) !== undefined;
  }

  /** Adds the key with its row unless present; returns the earlier row when it was. */
  add(key: string | KeyPrint, row: number): number | undefined {
    return this.#table.add(typeof key === 'string' ? printOf(key) : key, row);
  }
}
