/**
 * A compact set of client ids for `--new-since-last`: each id is kept as the first 8 bytes of
 * its SHA-256 (a 64-bit number), sorted and packed, so 1M clients take 8 MB in memory and on
 * disk, and a lookup is a binary search. Two distinct ids share a hash with odds of about
 * n²/2⁶⁵ (1 in 37 million for 1M clients); such a client would be taken as already reported.
 */
import { createHash } from 'node:crypto';

export function idHash(id: string): bigint {
  return createHash('sha256').update(id, 'utf8').digest().readBigUInt64BE(0);
}

/** Sorted, duplicate-free hashes; built once, then only read. */
export class SortedIds {
  readonly #hashes: BigUint64Array;

  constructor(hashes: BigUint64Array) {
    this.#hashes = hashes;
  }

  static empty(): SortedIds {
    return new SortedIds(new BigUint64Array(0));
  }

  /** Hashes in any order, repeats allowed. */
  static of(hashes: BigUint64Array): SortedIds {
    const sorted = hashes.slice().sort();
    let kept = 0;
    for (let i = 0; i < sorted.length; i++) {
      if (i === 0 || sorted[i] !== sorted[kept - 1]) sorted[kept++] = sorted[i]!;
    }
    return new SortedIds(sorted.slice(0, kept));
  }

  get size(): number {
    return this.#hashes.length;
  }

  has(hash: bigint): boolean {
    const hashes = this.#hashes;
    let lo = 0;
    let hi = hashes.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const value = hashes[mid]!;
      if (value === hash) return true;
      if (value < hash) lo = mid + 1;
      else hi = mid;
    }
    return false;
  }

  /** The union, still sorted (a merge: no re-sort of the larger side). */
  union(other: SortedIds): SortedIds {
    const a = this.#hashes;
    const b = other.#hashes;
    const out = new BigUint64Array(a.length + b.length);
    let i = 0;
    let j = 0;
    let n = 0;
    while (i < a.length || j < b.length) {
      const x = i < a.length ? a[i]! : undefined;
      const y = j < b.length ? b[j]! : undefined;
      let next: bigint;
      if (y === undefined || (x !== undefined && x < y)) next = a[i++]!;
      else if (x === undefined || y < x) next = b[j++]!;
      else {
        next = x;
        i++;
        j++;
      }
      out[n++] = next;
    }
    return new SortedIds(out.slice(0, n));
  }

  /** 8 bytes a hash, little-endian. */
  toBuffer(): Buffer {
    const buffer = Buffer.alloc(this.#hashes.length * 8);
    for (let i = 0; i < this.#hashes.length; i++) buffer.writeBigUInt64LE(this.#hashes[i]!, i * 8);
    return buffer;
  }

  /** The inverse of toBuffer; undefined when the bytes are not sorted, distinct hashes. */
  static fromBuffer(buffer: Buffer): SortedIds | undefined {
    if (buffer.length % 8 !== 0) return undefined;
    const hashes = new BigUint64Array(buffer.length / 8);
    for (let i = 0; i < hashes.length; i++) {
      hashes[i] = buffer.readBigUInt64LE(i * 8);
      if (i > 0 && hashes[i]! <= hashes[i - 1]!) return undefined;
    }
    return new SortedIds(hashes);
  }
}

/** Hashes collected while an export writes: 8 bytes a client, grown by doubling. */
export class HashList {
  #hashes = new BigUint64Array(1024);
  #length = 0;

  push(hash: bigint): void {
    if (this.#length === this.#hashes.length) {
      const grown = new BigUint64Array(this.#hashes.length * 2);
      grown.set(this.#hashes);
      this.#hashes = grown;
    }
    this.#hashes[this.#length++] = hash;
  }

  get length(): number {
    return this.#length;
  }

  toSorted(): SortedIds {
    return SortedIds.of(this.#hashes.subarray(0, this.#length));
  }
}
