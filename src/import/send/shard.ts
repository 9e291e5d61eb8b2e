/**
 * `--shard K/N`: several processes share one file. Every shard reads and keys the whole file
 * (so a duplicate is judged on the whole file and every shard agrees), then keeps only the
 * rows that fall in its part: a row with a key by a stable hash of that key, so a duplicate
 * lands with its first occurrence; a row without one (invalid) by its row number.
 */
import { hash } from 'node:crypto';
import { extname } from 'node:path';
import { UsageError } from '../../errors.js';

/** One part of a file that several processes import together: shard `index` of `count`. */
export interface Shard {
  /** 1-based. */
  index: number;
  /** How many shards the file is split into, 1 to 10000. */
  count: number;
}

/** `K/N`, 1 ≤ K ≤ N. */
export function parseShard(text: string, flag = '--shard'): Shard {
  const match = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(text);
  const shard = match ? { index: Number(match[1]), count: Number(match[2]) } : undefined;
  if (!shard || shard.count < 1 || shard.count > 10_000 || shard.index < 1 || shard.index > shard.count) {
    throw new UsageError(`${flag} takes K/N with 1 ≤ K ≤ N ≤ 10000 (e.g. 2/3), got "${text}"`, 'bad_option');
  }
  return shard;
}

/** The shard (1-based) a key belongs to: the first 32 bits of its SHA-256, modulo N. */
export function shardOfKey(key: string, count: number): number {
  return (hash('sha256', key, 'buffer').readUInt32BE(0) % count) + 1;
}

export function shardOfRow(row: number, count: number): number {
  return ((row - 1) % count) + 1;
}

/** `<results>` with `.shard-K-of-N` before its extension: `a.results.csv` → `a.results.shard-2-of-3.csv`. */
export function shardResultsPath(results: string, shard: Shard): string {
  const ext = extname(results);
  return `${results.slice(0, results.length - ext.length)}.shard-${shard.index}-of-${shard.count}${ext}`;
}

/** A shard's own file for an output path (results, --failed, --report); the path itself without a shard. */
export function shardPath<T extends string | undefined>(path: T, shard: Shard | undefined): T {
  return (path !== undefined && shard ? shardResultsPath(path, shard) : path) as T;
}
