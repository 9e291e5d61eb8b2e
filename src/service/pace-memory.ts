/**
 * Pace memory: where `auto` settled against a service, kept between runs so that the next run
 * against it starts near there instead of ramping up from a few requests for seconds (a
 * nightly import or report starts at its pace). The start is half what was remembered, and
 * slow start doubles from there: re-probed, never trusted past a 429 (the first one cuts it as
 * in any run). One small file per service in the user's cache folder ($XDG_CACHE_HOME/ccs-bulk,
 * else ~/.cache/ccs-bulk), named by a hash of the service's address: a private folder (0700), a
 * private file (0600) replaced whole, read only when it is the user's own regular file, never
 * through a link. A memory that cannot be read or written is no memory: the run starts as if
 * none were kept, and says nothing (it is a head start, not an input).
 */
import { closeSync, constants, fstatSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { createHash } from 'node:crypto';
import { assertOwnFile, refuseLink, replacePrivate, writeFully } from '../infra/output-files.js';

const VERSION = 1;
/** Larger files are not a pace memory. */
const MAX_BYTES = 4096;

export type PaceKind = 'import' | 'export';

/** What a run left: where its limit settled, whether a 429 limit was met, and when. */
export interface Remembered {
  settled: number;
  throttled: boolean;
  at: string;
}

/** A service's pace memory: the file, and the service it is for (checked on reading). */
export interface PaceMemory {
  /** The JSON file the pace is kept in (created, private to the user, when first written). */
  path: string;
  /** The service it is for, as the results file records it (its base URL by default): a file written for another is ignored. */
  service: string;
}

/** The pace memory of `service` in the user's cache folder. */
export function paceMemoryFor(service: string, env: NodeJS.ProcessEnv = process.env): PaceMemory {
  const root = env.XDG_CACHE_HOME && env.XDG_CACHE_HOME.startsWith('/') ? env.XDG_CACHE_HOME : join(homedir(), '.cache');
  const name = createHash('sha256').update(service).digest('hex').slice(0, 24);
  return { path: join(root, 'ccs-bulk', `pace-${name}.json`), service };
}

/**
 * Pure: where a run starts, given what was remembered. Half the remembered pace (the service
 * may be busier today; slow start doubles back within a round trip if not), never below the
 * usual start nor above the bound.
 */
export function rememberedStart(remembered: Remembered | undefined, start: number, max: number): number {
  if (remembered === undefined) return Math.min(start, max);
  return Math.min(max, Math.max(start, Math.floor(remembered.settled / 2)));
}

/** What the memory holds for `kind`, or undefined (none, not ours, not this format, another service). */
export function recall(memory: PaceMemory, kind: PaceKind): Remembered | undefined {
  const file = readOwn(memory.path);
  return file?.service === memory.service ? file[kind] : undefined;
}

/** Keeps `entry` for `kind` (the other kind's kept as it was); quietly nothing when the file cannot be written. */
export function remember(memory: PaceMemory, kind: PaceKind, entry: Remembered): void {
  const old = readOwn(memory.path);
  const kept = old?.service === memory.service ? old : undefined;
  const file: MemoryFile = { pace_memory: VERSION, service: memory.service, ...kept, [kind]: entry };
  try {
    const folder = dirname(memory.path);
    refuseLink(folder);
    mkdirSync(folder, { recursive: true, mode: 0o700 });
    const fd = replacePrivate(memory.path);
    try {
      writeFully(fd, `${JSON.stringify(file)}\n`, memory.path);
    } finally {
      closeSync(fd);
    }
  } catch {
    // A head start, not an output: a cache folder that refuses it costs the next run its ramp.
  }
}

interface MemoryFile {
  pace_memory: number;
  service: string;
  import?: Remembered;
  export?: Remembered;
}

/** The file, if it is the user's own regular file (opened without following a link) in this format. */
function readOwn(path: string): MemoryFile | undefined {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
  } catch {
    return undefined;
  }
  try {
    const stats = fstatSync(fd);
    assertOwnFile(path, stats);
    if (stats.size > MAX_BYTES) return undefined;
    return parse(readFileSync(fd, 'utf8'));
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

function parse(text: string): MemoryFile | undefined {
  const value: unknown = JSON.parse(text);
  if (typeof value !== 'object' || value === null) return undefined;
  const file = value as Record<string, unknown>;
  if (file.pace_memory !== VERSION || typeof file.service !== 'string') return undefined;
  const parsed: MemoryFile = { pace_memory: VERSION, service: file.service };
  for (const kind of ['import', 'export'] as const) {
    const entry = entryOf(file[kind]);
    if (entry) parsed[kind] = entry;
  }
  return parsed;
}

function entryOf(value: unknown): Remembered | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { settled, throttled, at } = value as Record<string, unknown>;
  if (!Number.isInteger(settled) || (settled as number) < 1 || typeof throttled !== 'boolean' || typeof at !== 'string') return undefined;
  return { settled: settled as number, throttled, at };
}
