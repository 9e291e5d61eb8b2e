/**
 * What a run may do with a results file already at its path. An import's file is the record of
 * the clients it created (their ids, nowhere else on this side): a dry run (validate) never
 * writes into it, re-labels or replaces it, whatever its flags; an import replaces it only with
 * --overwrite, and keeps the old one (and its sidecar) beside it as a dated backup first.
 */
import { closeSync, constants, createReadStream, createWriteStream, fstatSync, fsyncSync, linkSync, openSync, rmSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { extname } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { UsageError } from '../../errors.js';
import { readRegular } from '../../infra/read-regular.js';
import { assertOwnExisting, createPrivate, fileStamp } from '../../infra/output-files.js';
import { shownPath } from '../../infra/printable.js';
import { tempBeside } from '../../infra/temp-files.js';
import { assertSameService, metaPath, readMeta, readMetaText, type ResultsMeta, writeMetaText } from './results-meta.js';
import { RESULT_COLUMNS } from './results-read.js';

/**
 * What stands at a results path: nothing; an import's record (its sidecar says import; or it
 * holds `created` lines whatever its sidecar says, as a file re-labelled by an older validate
 * --resume does; or it is a results file with no sidecar, from a version before them); a
 * validate's file (no sends); or some other file.
 */
export type Holding = 'none' | 'record' | 'validate' | 'other';

export async function holdingOf(path: string, meta = readMeta(path)): Promise<Holding> {
  const exists = await stat(path).then(
    () => true,
    () => false,
  );
  if (!exists) return 'none';
  if (meta?.writtenBy === 'import') return 'record';
  if (meta?.writtenBy === 'validate') return (await holdsCreated(path)) ? 'record' : 'validate';
  return looksLikeResults(path) ? 'record' : 'other';
}

export interface ResultsUsable {
  exists: boolean;
  /** The existing file was written by validate: it records no sends, so it is replaced. */
  replacesValidate: boolean;
  /** The existing file is an import's record being replaced (--overwrite): it is kept first (backupResults). */
  backup: boolean;
  /** The sidecar of the file being resumed: its last run's record of the input (source-changes.ts). */
  resumed?: ResultsMeta | undefined;
}

/**
 * Refuses an existing results file unless the run resumes or replaces it, or it was written by
 * validate (nothing sent, nothing to lose); --resume refuses a file written against another
 * service; a dry run refuses an import's record whatever its flags.
 */
export async function assertResultsUsable(
  path: string,
  options: { resume: boolean; overwrite: boolean; meta: ResultsMeta },
): Promise<ResultsUsable> {
  const meta = readMeta(path);
  const holding = await holdingOf(path, meta);
  const exists = holding !== 'none';
  if (!exists) return { exists, replacesValidate: false, backup: false };
  if (options.meta.writtenBy === 'validate' && holding === 'record') throw await dryRunRefusal(path, meta);
  if (options.overwrite) return { exists, replacesValidate: false, backup: holding === 'record' };
  if (options.resume) {
    // Resumed rows are skipped as created: only a file of this user's may say which.
    assertOwnExisting(path);
    assertSameService(path, meta, options.meta.service);
    return { exists, replacesValidate: false, backup: false, resumed: meta };
  }
  if (holding === 'validate') return { exists, replacesValidate: true, backup: false };
  throw new UsageError(
    `results file ${shownPath(path)} already exists${writtenBy(meta, holding)}: add --resume to continue that import, ` +
      'or --overwrite to start it again (an import\'s file is kept beside it as a dated .bak copy)',
    'results_exist',
  );
}

function writtenBy(meta: ResultsMeta | undefined, holding: Holding): string {
  if (meta?.writtenBy === 'import') return meta.service === undefined ? ' (written by an import)' : ` (written by an import against ${meta.service})`;
  if (meta?.writtenBy === 'validate' && holding === 'record') return ' (it holds created rows, though its sidecar says validate wrote it)';
  return '';
}

/**
 * A dry run never touches an import's record: it names a file of its own to use instead (no
 * flag that would resume into, re-label or replace the record is suggested).
 */
async function dryRunRefusal(path: string, meta: ResultsMeta | undefined): Promise<UsageError> {
  const what =
    meta?.writtenBy === 'import'
      ? `was written by an import${meta.service === undefined ? '' : ` against ${meta.service}`}`
      : meta?.writtenBy === 'validate'
        ? 'holds created rows (client ids), though its sidecar says validate wrote it'
        : 'is a results file with no sidecar saying validate wrote it: it may be an import\'s';
  return new UsageError(
    `results file ${shownPath(path)} ${what}. A dry run (validate) never writes into an import's results file; ` +
      `give it a file of its own: --results ${shownPath(await dryRunPath(path))} (ccs-bulk status ${shownPath(path)} shows where that import stands)`,
    'results_exist',
  );
}

/** `<input>.results.csv` → `<input>.validate.csv` (shards keep their part), else `.validate` before the extension; never an import's record. */
export async function dryRunPath(results: string): Promise<string> {
  const swapped = results.replace(/\.results((?:\.shard-\d+-of-\d+)?(?:\.[^./\\]*)?)$/, '.validate$1');
  const base = swapped !== results ? swapped : `${results.slice(0, results.length - extname(results).length)}.validate${extname(results)}`;
  const ext = extname(base);
  for (let n = 1; n < 100; n++) {
    const candidate = n === 1 ? base : `${base.slice(0, base.length - ext.length)}-${n}${ext}`;
    if ((await holdingOf(candidate)) !== 'record') return candidate;
  }
  return base;
}

/** Whether any line of the file is `<row>,created,…`: read as bytes, 64 KiB at a time (a false match only makes a run more careful). */
export async function holdsCreated(path: string): Promise<boolean> {
  const needle = Buffer.from(',created,');
  let tail: Buffer = Buffer.alloc(0);
  for await (const chunk of createReadStream(path, { highWaterMark: 65_536 })) {
    const bytes = tail.length > 0 ? Buffer.concat([tail, chunk as Buffer]) : (chunk as Buffer);
    for (let at = bytes.indexOf(needle); at >= 0; at = bytes.indexOf(needle, at + 1)) {
      if (rowNumberBefore(bytes, at)) return true;
    }
    tail = bytes.subarray(Math.max(0, bytes.length - 32));
  }
  return false;
}

/** Digits from the start of a line up to `at`. */
function rowNumberBefore(bytes: Buffer, at: number): boolean {
  let i = at - 1;
  while (i >= 0 && bytes[i]! >= 0x30 && bytes[i]! <= 0x39) i--;
  return i < at - 1 && i >= 0 && bytes[i] === 0x0a;
}

/** The file starts with a ccs-bulk results header (its first 4 KiB are enough). */
export function looksLikeResults(path: string): boolean {
  const head = readHead(path, 4096);
  return head !== undefined && head.replace(/^\uFEFF/, '').startsWith(RESULT_COLUMNS.join(','));
}

/** The first bytes of a regular file, read without following a link or waiting on a pipe. */
function readHead(path: string, bytes: number): string | undefined {
  return readRegular(path, bytes)?.text;
}

/** `a.results.csv` → `a.results.20250517-031500.bak.csv` (UTC), `-2`… when taken. */
export function backupName(results: string, at: Date, n = 1): string {
  const stamp = fileStamp(at);
  const ext = extname(results);
  return `${results.slice(0, results.length - ext.length)}.${stamp}${n > 1 ? `-${n}` : ''}.bak${ext}`;
}

/** backupName's names, for `ccs-bulk status`. */
export const BACKUP_NAME = /\.\d{8}-\d{6}(?:-\d+)?\.bak(?:\.[^./\\]*)?$/;

/**
 * Copies the results file (and its sidecar) to a dated name beside it before --overwrite
 * replaces it: a new private file (0600, O_EXCL: never through a link), written whole at a temp
 * name, then linked to its name (never over an existing file). Undefined when there is no
 * regular file to keep. A copy that fails stops the run before anything is replaced.
 */
export async function backupResults(path: string, at = new Date()): Promise<string | undefined> {
  let from: number;
  try {
    from = openSync(path, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0));
  } catch (error) {
    throw cannotKeep(path, error);
  }
  if (!fstatSync(from).isFile()) {
    closeSync(from);
    return undefined;
  }
  const temp = tempBeside(path);
  let to: number;
  try {
    to = createPrivate(temp);
  } catch (error) {
    closeSync(from);
    throw error;
  }
  try {
    await pipeline(createReadStream('', { fd: from }), createWriteStream('', { fd: to, autoClose: false }));
    fsyncSync(to);
    const backup = linkFree(temp, (n) => backupName(path, at, n));
    const meta = readMetaText(path);
    if (meta !== undefined) writeMetaText(metaPath(backup), meta);
    return backup;
  } catch (error) {
    throw error instanceof UsageError ? error : cannotKeep(path, error);
  } finally {
    closeSync(to);
    rmSync(temp, { force: true });
  }
}

/** Links `temp` to the first free name: link(2) never replaces a file, so two runs cannot take one name. */
function linkFree(temp: string, name: (n: number) => string): string {
  for (let n = 1; ; n++) {
    try {
      linkSync(temp, name(n));
      return name(n);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || n >= 1000) throw error;
    }
  }
}

function cannotKeep(path: string, error: unknown): UsageError {
  return new UsageError(
    `cannot keep a copy of ${shownPath(path)} before replacing it: ${(error as NodeJS.ErrnoException).code ?? error}; nothing was replaced`,
    'output_unwritable',
  );
}
