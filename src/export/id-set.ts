/**
 * A compact set of client ids for `--new-since-last`: each id is kept as the first 8 bytes of
 * its SHA-256 (a 64-bit number), sorted and packed, so 1M clients take 8 MB in memory and on
 * disk, and a lookup is a binary search. Two distinct ids share a hash with odds of about
 * n²/2⁶⁵ (1 in 37 million for 1M clients); such a client would be taken as already reported
 * (docs/decisions.md). Loading, looking up and saving keep one copy of the ids: 8 bytes each.
 */
import { hash } from 'node:crypto';
import { endianness } from 'node:os';

/** The state file is little-endian; a typed array is in the machine's order. */
const BIG_ENDIAN = endianness() === 'BE';

/** The first 8 bytes of the id's SHA-256: the same 64 bits as the pager's fingerprint of it. */
export function idHash(id: string): bigint {
  return hash('sha256', id, 'buffer').readBigUInt64BE(0);
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

  /** Hashes in any order, repeats allowed; sorted in place, no copy (the caller's array is taken). */
  static of(hashes: BigUint64Array): SortedIds {
    hashes.sort();
    let kept = 0;
    for (let i = 0; i < hashes.length; i++) {
      if (i === 0 || hashes[i] !== hashes[kept - 1]) hashes[kept++] = hashes[i]!;
    }
    return new SortedIds(hashes.subarray(0, kept));
  }

  /** The hashes, in order (read only). */
  get hashes(): BigUint64Array {
    return this.#hashes;
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

  /** 8 bytes a hash, little-endian (the state's form); undefined when the bytes are not sorted, distinct hashes. */
  static fromBuffer(buffer: Buffer): SortedIds | undefined {
    if (buffer.length % 8 !== 0) return undefined;
    const hashes = new BigUint64Array(buffer.length / 8);
    new Uint8Array(hashes.buffer).set(buffer);
    return SortedIds.checked(hashes);
  }

  /**
   * Hashes read as raw little-endian bytes into their own array (no second copy of a state);
   * undefined when they are not sorted and distinct.
   */
  static checked(hashes: BigUint64Array): SortedIds | undefined {
    if (BIG_ENDIAN) {
      const view = new DataView(hashes.buffer, hashes.byteOffset, hashes.byteLength);
      for (let i = 0; i < hashes.length; i++) hashes[i] = view.getBigUint64(i * 8, true);
    }
    for (let i = 1; i < hashes.length; i++) if (hashes[i]! <= hashes[i - 1]!) return undefined;
    return new SortedIds(hashes);
  }
}

/**
 * The ids already reported, as the state keeps them: disjoint sorted runs (the files before the
 * last one, the last one's own), looked up in each rather than merged into a third copy.
 */
export class ReportedIds {
  readonly #runs: readonly SortedIds[];

  constructor(runs: readonly SortedIds[]) {
    this.#runs = runs.filter((run) => run.size > 0);
  }

  get size(): number {
    return this.#runs.reduce((sum, run) => sum + run.size, 0);
  }

  has(hash: bigint): boolean {
    return this.#runs.some((run) => run.has(hash));
  }

  /** The runs merged in order, as little-endian bytes, a chunk at a time (memory stays flat). */
  *chunks(chunkHashes = 8192): Generator<Buffer> {
    const runs = this.#runs.map((run) => run.hashes);
    const at = runs.map(() => 0);
    let chunk = Buffer.alloc(chunkHashes * 8);
    let n = 0;
    for (;;) {
      let pick = -1;
      for (let r = 0; r < runs.length; r++) {
        if (at[r]! < runs[r]!.length && (pick === -1 || runs[r]![at[r]!]! < runs[pick]![at[pick]!]!)) pick = r;
      }
      if (pick === -1) break;
      chunk.writeBigUInt64LE(runs[pick]![at[pick]!++]!, n++ * 8);
      if (n === chunkHashes) {
        yield chunk;
        chunk = Buffer.alloc(chunkHashes * 8);
        n = 0;
      }
    }
    if (n > 0) yield chunk.subarray(0, n * 8);
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

  /** Sorted in place: call once, when the list is complete. */
  toSorted(): SortedIds {
    return SortedIds.of(this.#hashes.subarray(0, this.#length));
  }
}
