/**
 * `ccs-bulk results merge`: the shards' results files as one, in row order, after checking
 * that together they hold every row exactly once (no row twice, none missing, no shard absent);
 * or the results of several sources of one migration as one report.
 */
import { closeSync, createReadStream, fsyncSync, linkSync, lstatSync, renameSync, rmSync } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import { parse } from 'csv-parse';
import { csvRecord } from '../../infra/csv-text.js';
import { InputError, UsageError } from '../../errors.js';
import { createPrivate, refuseLink, writeFully } from '../../infra/output-files.js';
import { shownPath } from '../../infra/printable.js';
import { tempBeside } from '../../infra/temp-files.js';
import { OUTCOMES, type Outcome, RESULT_COLUMNS } from './results.js';
import { backupResults } from './results-guard.js';
import { readMeta } from './results-meta.js';

export interface MergeSummary {
  out: string;
  files: string[];
  rows: number;
  counts: Record<Outcome, number>;
  /** The file `--overwrite` replaced, kept beside it under this name. */
  backup?: string | undefined;
  /** Several sources of one migration: each source's files, rows and counts (the merged file's `source` column). */
  sources?: SourceMerged[] | undefined;
}

export interface SourceMerged {
  source: string;
  files: string[];
  rows: number;
  counts: Record<Outcome, number>;
}

const mismatch = (message: string) => new InputError(message, 'results_merge');

/** One source's lines: its shards' (or its one file's), each row once, rows 1..n. */
interface Group {
  source: string;
  files: string[];
  header: string[];
  lines: Map<number, { record: string[]; file: string }>;
  counts: Record<Outcome, number>;
}

/**
 * The shards of one run (`….shard-K-of-N…`) → one results file in row order, as the run would
 * have written it. Files of several sources of one migration (the list, a --failed file
 * imported again, a second list…) → one report: a `source` column, then the result columns,
 * then every input column by name; refused only for true conflicts (a row twice within a source,
 * a shard or rows missing, one idempotency key created as two clients, one client created under
 * two keys).
 */
export async function mergeResults(files: readonly string[], out: string, options: { overwrite?: boolean | undefined } = {}): Promise<MergeSummary> {
  if (files.length === 0) throw new UsageError('results merge needs the shards\' results files', 'bad_option');
  const overwrite = options.overwrite === true;
  assertMergeOut(out, overwrite);
  const bySource = new Map<string, string[]>();
  for (const file of files) {
    const source = sourceOf(file);
    bySource.set(source, [...(bySource.get(source) ?? []), file]);
  }
  if (bySource.size === 1) return mergeShards(files, out, overwrite);
  const groups: Group[] = [];
  for (const [source, group] of bySource) groups.push(await readGroup(source, group));
  checkConflicts(groups);
  return writeMigration(groups, files, out, overwrite);
}

/**
 * Refused before anything is read: an existing `--out` without `--overwrite` (a merged file is
 * never replaced silently), a directory, a link.
 */
export function assertMergeOut(out: string, overwrite: boolean): void {
  refuseLink(out);
  let found;
  try {
    found = lstatSync(out);
  } catch {
    return;
  }
  if (found.isDirectory()) throw new UsageError(`--out ${shownPath(out)} is a directory; name a file`, 'output_unwritable');
  if (!overwrite) {
    throw new UsageError(
      `--out ${shownPath(out)} already exists: results merge never replaces a file silently; add --overwrite to replace it ` +
        '(the old one is kept beside it as a dated .bak copy), or name another file',
      'output_exists',
    );
  }
}

/**
 * Writes the merged file at a temp name beside `out`, then puts it in place: linked (never over a
 * file that appeared meanwhile), or with `overwrite` renamed over the old one, which is first
 * kept as a dated copy. Returns that copy's name.
 */
export async function commitMerged(out: string, overwrite: boolean, fill: (fd: number) => void): Promise<string | undefined> {
  const temp = tempBeside(out);
  const fd = createPrivate(temp);
  try {
    try {
      fill(fd);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    const backup = overwrite && lstatQuietly(out)?.isFile() === true ? await backupResults(out) : undefined;
    putInPlace(temp, out, overwrite);
    return backup;
  } finally {
    rmSync(temp, { force: true });
  }
}

function putInPlace(temp: string, out: string, overwrite: boolean): void {
  try {
    if (overwrite) renameSync(temp, out);
    else linkSync(temp, out);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // A file made at `out` since the check: refused as it would have been then.
    if (code === 'EEXIST') assertMergeOut(out, overwrite);
    throw new UsageError(`cannot write ${shownPath(out)}: ${code ?? String(error)}`, 'output_unwritable');
  }
}

function lstatQuietly(path: string) {
  try {
    return lstatSync(path);
  } catch {
    return undefined;
  }
}

async function mergeShards(files: readonly string[], out: string, overwrite: boolean): Promise<MergeSummary> {
  const group = await readGroup(sourceOf(files[0]!), files);
  const backup = await commitMerged(out, overwrite, (fd) => {
    writeFully(fd, csvRecord(group.header, '\n'), out);
    for (let row = 1; row <= group.lines.size; row++) writeFully(fd, csvRecord(group.lines.get(row)!.record, '\n'), out);
  });
  return { out, files: [...files], rows: group.lines.size, counts: group.counts, backup };
}

/** A results file's source: its sidecar's input, else its name less `.results…csv` and a shard's part. */
function sourceOf(file: string): string {
  const meta = readMeta(file);
  // The input as the import was given it, relative to where it ran.
  if (meta?.input !== undefined) return resolve(meta.runner?.cwd ?? dirname(file), meta.input);
  return resolve(file.replace(/\.shard-\d+-of-\d+/, '').replace(/(\.sandbox)?\.results(\.[^.]*)?\.csv$/i, ''));
}

async function readGroup(source: string, files: readonly string[]): Promise<Group> {
  checkShardNames(files);
  let header: string[] | undefined;
  // Row number → its record and the file it came from. Held in memory: one results line per row.
  const lines = new Map<number, { record: string[]; file: string }>();
  const counts = Object.fromEntries(OUTCOMES.map((o) => [o, 0])) as Record<Outcome, number>;
  for (const file of files) {
    let first = true;
    try {
      for await (const record of createReadStream(file).pipe(parse({ relax_column_count: true })) as AsyncIterable<string[]>) {
        if (first) {
          first = false;
          if (RESULT_COLUMNS.some((column, i) => record[i] !== column)) throw mismatch(`${file} is not a ccs-bulk results file (unexpected header)`);
          if (header !== undefined && record.join('\u0000') !== header.join('\u0000')) {
            throw mismatch(`${file} has other input columns than ${files[0]}: results of different files cannot be merged`);
          }
          header = record;
          continue;
        }
        const row = Number(record[0]);
        if (!Number.isInteger(row) || row < 1) throw mismatch(`${file}: "${record[0]}" is not a row number`);
        const earlier = lines.get(row);
        if (earlier) {
          throw mismatch(`row ${row} is in both ${earlier.file} and ${file}: shards of different runs, or a file given twice`);
        }
        lines.set(row, { record, file });
        const outcome = record[1] as Outcome;
        if (outcome in counts) counts[outcome]++;
      }
    } catch (error) {
      if (error instanceof InputError) throw error;
      throw mismatch(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
    }
  }
  const missing = missingRows(lines.size, lines);
  if (missing) throw mismatch(`rows ${missing} are in none of the files: a shard is missing or did not finish (resume it with --resume)`);
  return { source, files: [...files], header: header ?? [...RESULT_COLUMNS], lines, counts };
}

/**
 * What cannot both be true: one idempotency key created as two clients, or one client created
 * under two keys. (The same client under one key in two files is a replay: a --failed row that
 * had been created before it failed, imported again.)
 */
function checkConflicts(groups: readonly Group[]): void {
  const clientOfKey = new Map<string, { id: string; where: string }>();
  const keyOfClient = new Map<string, { key: string; where: string }>();
  for (const group of groups) {
    for (const { record, file } of group.lines.values()) {
      const [row, outcome, id, , , key] = record;
      if (outcome !== 'created' || !id || !key) continue;
      const where = `${file} row ${row}`;
      const earlier = clientOfKey.get(key);
      if (earlier !== undefined && earlier.id !== id) {
        throw mismatch(`idempotency key ${key} made client ${earlier.id} (${earlier.where}) and client ${id} (${where}): one key, two clients — were the files written against different services?`);
      }
      const claimed = keyOfClient.get(id);
      if (claimed !== undefined && claimed.key !== key) {
        throw mismatch(`client ${id} was created from two rows with different keys (${claimed.where}, ${where})`);
      }
      clientOfKey.set(key, { id, where });
      keyOfClient.set(id, { key, where });
    }
  }
}

async function writeMigration(groups: readonly Group[], files: readonly string[], out: string, overwrite: boolean): Promise<MergeSummary> {
  // Every input column by name, in the order first met.
  const inputColumns: string[] = [];
  for (const group of groups) {
    for (const name of group.header.slice(RESULT_COLUMNS.length)) if (!inputColumns.includes(name)) inputColumns.push(name);
  }
  const counts = Object.fromEntries(OUTCOMES.map((o) => [o, 0])) as Record<Outcome, number>;
  const backup = await commitMerged(out, overwrite, (fd) => {
    writeFully(fd, csvRecord(['source', ...RESULT_COLUMNS, ...inputColumns], '\n'), out);
    for (const group of groups) {
      const at = inputColumns.map((name) => group.header.indexOf(name, RESULT_COLUMNS.length));
      const name = basename(group.source);
      for (let row = 1; row <= group.lines.size; row++) {
        const { record } = group.lines.get(row)!;
        const cells = [name, ...RESULT_COLUMNS.map((_, i) => record[i] ?? ''), ...at.map((i) => (i < 0 ? '' : (record[i] ?? '')))];
        writeFully(fd, csvRecord(cells, '\n'), out);
      }
      for (const outcome of OUTCOMES) counts[outcome] += group.counts[outcome];
    }
  });
  const sources = groups.map(({ source, files: of, lines, counts: c }) => ({ source, files: of, rows: lines.size, counts: c }));
  return { out, files: [...files], rows: sources.reduce((sum, s) => sum + s.rows, 0), counts, sources, backup };
}

/** The first gap in 1..max as "A–B", when the rows are not exactly 1..n. */
function missingRows(n: number, lines: Map<number, unknown>): string | undefined {
  if (n === 0) return undefined;
  const max = Math.max(...lines.keys());
  if (max === n) return undefined;
  let row = 1;
  while (lines.has(row)) row++;
  let end = row;
  while (end < max && !lines.has(end + 1)) end++;
  return row === end ? `${row}` : `${row}–${end}`;
}

/** Files named `….shard-K-of-N…` must be shards of one N, each K once, none missing. */
export function checkShardNames(files: readonly string[]): void {
  const shards = files.map((file) => /\.shard-(\d+)-of-(\d+)/.exec(basename(file)));
  if (shards.some((m) => m === null)) return;
  const counts = new Set(shards.map((m) => Number(m![2])));
  if (counts.size > 1) throw mismatch(`the files are shards of different splits (of ${[...counts].join(', of ')})`);
  const count = [...counts][0]!;
  const have = new Set(shards.map((m) => Number(m![1])));
  const absent = Array.from({ length: count }, (_, i) => i + 1).filter((k) => !have.has(k));
  if (absent.length > 0) throw mismatch(`shard ${absent.join(', ')} of ${count} is missing from the files given`);
}
