/**
 * `--new-since-last STATE`: the clients that *entered* the filter since the last run — new
 * clients, and older ones whose status changed into it — found by listing the whole filter and
 * dropping the ids already reported. The state holds those ids as 8-byte hashes (id-set.ts),
 * in two sorted runs: the ids of every file before the last one, and the last file's own, so
 * an `--overwrite` of the last file writes its clients again instead of leaving them in none.
 *
 * The file: a first line naming the format, one line of JSON (filters, counts, last output),
 * then the two runs of hashes, 8 bytes each, little-endian. Mode 0600, replaced atomically.
 */
import { type FileHandle, open } from 'node:fs/promises';
import { resolve } from 'node:path';
import { z } from 'zod';
import { UsageError } from '../errors.js';
import type { Client } from '../service/schemas.js';
import { HashList, idHash, ReportedIds, SortedIds } from './id-set.js';
import { checkStateFilters, type IncrementalRun, stateFilters } from './incremental.js';
import { openState, replaceState } from './state-file.js';

const MAGIC = 'ccs-bulk new-since-last state\n';

const metaSchema = z.object({
  version: z.literal(1),
  filters: z.object({ status: z.array(z.string()).nullable(), creditStatus: z.array(z.string()).nullable() }),
  /** Hashes reported by every run before the last one. */
  earlier: z.number().int().min(0),
  last: z.object({ out: z.string(), rows: z.number(), finishedAt: z.string(), added: z.number().int().min(0) }),
});

export type ReportedMeta = z.infer<typeof metaSchema>;

export interface ReportedState {
  meta: ReportedMeta;
  earlier: SortedIds;
  /** The ids written to the last run's file. */
  lastAdded: SortedIds;
}

const damaged = (path: string, what: string) =>
  new UsageError(
    `the state file ${path} is not a ccs-bulk --new-since-last state (${what}): restore it, or delete it to report every client in the filter again`,
    'state_invalid',
  );

/** The JSON line is short: this much of the file holds it with room to spare. */
const HEAD_BYTES = 64 * 1024;

/**
 * The state, or undefined before the first run. A damaged state is exit 2, never a silent full
 * export. The hashes are read straight into their arrays: one copy in memory, 8 bytes an id.
 */
export async function readReported(path: string): Promise<ReportedState | undefined> {
  const file = await openState(path, (at) => open(at, 'r'));
  if (file === undefined) return undefined;
  try {
    const head = Buffer.alloc(HEAD_BYTES);
    const { bytesRead } = await file.read(head, 0, HEAD_BYTES, 0);
    const meta = parseHead(path, head.subarray(0, bytesRead));
    const size = (await file.stat()).size;
    if (size !== meta.bodyStart + (meta.earlier + meta.last.added) * 8) throw damaged(path, 'length');
    const earlier = await readHashes(file, meta.bodyStart, meta.earlier);
    const lastAdded = await readHashes(file, meta.bodyStart + meta.earlier * 8, meta.last.added);
    if (!earlier || !lastAdded) throw damaged(path, 'ids not in order');
    return { meta, earlier, lastAdded };
  } finally {
    await file.close();
  }
}

function parseHead(path: string, bytes: Buffer): ReportedMeta & { bodyStart: number } {
  if (bytes.subarray(0, MAGIC.length).toString('latin1') !== MAGIC) {
    throw damaged(path, bytes[0] === 0x7b ? 'it is a --since-last state: use one state file per mode' : 'first line');
  }
  const end = bytes.indexOf(0x0a, MAGIC.length);
  if (end === -1) throw damaged(path, 'its JSON line');
  try {
    return { ...metaSchema.parse(JSON.parse(bytes.subarray(MAGIC.length, end).toString('utf8'))), bodyStart: end + 1 };
  } catch {
    throw damaged(path, 'its JSON line');
  }
}

async function readHashes(file: FileHandle, position: number, count: number): Promise<SortedIds | undefined> {
  const hashes = new BigUint64Array(count);
  const bytes = new Uint8Array(hashes.buffer);
  for (let done = 0; done < bytes.length; ) {
    const { bytesRead } = await file.read(bytes, done, bytes.length - done, position + done);
    if (bytesRead === 0) return undefined;
    done += bytesRead;
  }
  return SortedIds.checked(hashes);
}

/** A client already reported, as its page keeps it: the id alone. */
class Reported implements Client {
  [key: string]: unknown;
  constructor(readonly id: string) {}
}

export interface NewSinceLastSettings {
  status: readonly string[] | undefined;
  creditStatus: readonly string[] | undefined;
  createdFrom: string | undefined;
  createdTo: string | undefined;
}

/**
 * Every client in the filter is listed; those whose id was reported are dropped. When the last
 * run's file is replaced (`replay`), only the ids of the files before it count as reported.
 */
export function startNewSinceLast(
  path: string,
  state: ReportedState | undefined,
  settings: NewSinceLastSettings,
  started: Date,
  replay: boolean,
): IncrementalRun {
  const filters = stateFilters(settings.status, settings.creditStatus);
  if (state) checkStateFilters(path, state.meta.filters, filters);
  const reported = new ReportedIds(!state ? [] : replay ? [state.earlier] : [state.earlier, state.lastAdded]);
  const added = new HashList();
  /** The id's hash, or undefined when it was reported. */
  const unreported = (id: string): bigint | undefined => {
    const hash = idHash(id);
    return reported.has(hash) ? undefined : hash;
  };
  let skipped = 0;
  let written: { total: number; bytes: number } | undefined;
  return {
    createdFrom: settings.createdFrom,
    createdTo: settings.createdTo ?? started.toISOString(),
    // A page keeps a reported client as a stub, its id alone: the pages waiting for the writer
    // then hold little for a run that reports few clients (its writer is idle, the prefetch high).
    slim: (client: Client): Client => (unreported(client.id) === undefined ? new Reported(client.id) : client),
    select(clients: readonly Client[]) {
      const kept: Client[] = [];
      for (const client of clients) {
        // A new client's id is hashed again here: remembering each hash from the page's arrival
        // (a WeakMap) cost 30–50 MB more at 1M clients than the second hash costs CPU.
        const hash = client instanceof Reported ? undefined : unreported(client.id);
        if (hash === undefined) skipped++;
        else {
          kept.push(client);
          added.push(hash);
        }
      }
      return kept;
    },
    async save(out, rows) {
      const lastAdded = added.toSorted();
      const meta: ReportedMeta = {
        version: 1,
        filters,
        earlier: reported.size,
        last: { out: resolve(out), rows, finishedAt: new Date().toISOString(), added: lastAdded.size },
      };
      const head = Buffer.from(`${MAGIC}${JSON.stringify(meta)}\n`, 'utf8');
      const bytes = await writeAtomically(path, stateChunks(head, reported, lastAdded));
      written = { total: reported.size + lastAdded.size, bytes };
    },
    summary: () => ({
      mode: 'new-since-last',
      state: path,
      resumed: state !== undefined,
      previousBound: undefined,
      skippedAtBound: skipped,
      ...(replay && state && { replaced: { out: state.meta.last.out, from: settings.createdFrom ?? null } }),
      reported: written?.total,
      stateBytes: written?.bytes,
    }),
  };
}

/** The file's bytes in order: the head, every earlier id merged in order, the last run's ids. */
function* stateChunks(head: Buffer, reported: ReportedIds, lastAdded: SortedIds): Generator<Buffer> {
  yield head;
  yield* reported.chunks();
  yield* new ReportedIds([lastAdded]).chunks();
}

/**
 * Writes the chunks to a temp file beside `path`, flushed, then renamed over it: a crash leaves
 * the old state or the new one. The chunks are made as they are written (a generator's worth
 * of memory, not the file's). Returns the bytes written.
 */
function writeAtomically(path: string, chunks: Iterable<Buffer>): Promise<number> {
  return replaceState(path, (temp) => writeChunks(temp, chunks), 'the next run reports these clients again');
}

/** The chunks into a new file of mode 0600, flushed to disk; the bytes written. */
async function writeChunks(path: string, chunks: Iterable<Buffer>): Promise<number> {
  const file = await open(path, 'wx', 0o600);
  let bytes = 0;
  try {
    for (const chunk of chunks) {
      await file.write(chunk);
      bytes += chunk.length;
    }
    await file.datasync();
  } finally {
    await file.close();
  }
  return bytes;
}
