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
import { readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { z } from 'zod';
import { UsageError } from '../errors.js';
import type { Client } from '../service/schemas.js';
import { tempBeside } from '../temp-files.js';
import { HashList, idHash, SortedIds } from './id-set.js';
import { checkStateFilters, type IncrementalRun, stateFilters } from './incremental.js';

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

/** The state, or undefined before the first run. A damaged state is exit 2, never a silent full export. */
export async function readReported(path: string): Promise<ReportedState | undefined> {
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    throw new UsageError(`cannot read the state file ${path}: ${code ?? 'error'}`, 'state_invalid');
  }
  if (bytes.subarray(0, MAGIC.length).toString('latin1') !== MAGIC) {
    throw damaged(path, bytes[0] === 0x7b ? 'it is a --since-last state: use one state file per mode' : 'first line');
  }
  const end = bytes.indexOf(0x0a, MAGIC.length);
  let meta: ReportedMeta;
  try {
    meta = metaSchema.parse(JSON.parse(bytes.subarray(MAGIC.length, end).toString('utf8')));
  } catch {
    throw damaged(path, 'its JSON line');
  }
  const body = bytes.subarray(end + 1);
  if (end === -1 || body.length !== (meta.earlier + meta.last.added) * 8) throw damaged(path, 'length');
  const earlier = SortedIds.fromBuffer(body.subarray(0, meta.earlier * 8));
  const lastAdded = SortedIds.fromBuffer(body.subarray(meta.earlier * 8));
  if (!earlier || !lastAdded) throw damaged(path, 'ids not in order');
  return { meta, earlier, lastAdded };
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
  const reported = !state ? SortedIds.empty() : replay ? state.earlier : state.earlier.union(state.lastAdded);
  const added = new HashList();
  let skipped = 0;
  let written: { total: number; bytes: number } | undefined;
  return {
    createdFrom: settings.createdFrom,
    createdTo: settings.createdTo ?? started.toISOString(),
    select(clients: readonly Client[]) {
      const kept: Client[] = [];
      for (const client of clients) {
        const hash = idHash(client.id);
        if (reported.has(hash)) skipped++;
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
      const bytes = Buffer.concat([
        Buffer.from(`${MAGIC}${JSON.stringify(meta)}\n`, 'utf8'),
        reported.toBuffer(),
        lastAdded.toBuffer(),
      ]);
      await writeAtomically(path, bytes);
      written = { total: reported.size + lastAdded.size, bytes: bytes.length };
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

async function writeAtomically(path: string, bytes: Buffer): Promise<void> {
  const temp = tempBeside(path);
  try {
    await writeFile(temp, bytes, { mode: 0o600, flag: 'wx' });
    await rename(temp, path);
  } catch (error) {
    await unlink(temp).catch(() => {});
    throw new UsageError(
      `the export was written but the state file ${path} could not be: ${(error as NodeJS.ErrnoException).code ?? error}; ` +
        'the next run reports these clients again',
      'state_invalid',
    );
  }
}
