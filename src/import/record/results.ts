/**
 * The results file: one line per row outcome, written as rows finish. Each line is one
 * synchronous write(2) of a whole CSV record, so a crash (even kill -9) leaves complete
 * lines, and at worst a torn last one, which resume drops. Mode 0600: it holds personal data.
 */
import { closeSync, createReadStream, fstatSync, fsyncSync, openSync, readSync, renameSync, rmSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { CsvError, parse } from 'csv-parse';
import { csvRecord, csvSafeCell, csvSafeRecord } from '../../infra/csv-text.js';
import { CcsError, UsageError } from '../../errors.js';
import { KeySet } from '../row/key-set.js';
import { unescapeFormula } from '../row/normalize.js';
import type { FileLock } from '../../infra/lock.js';
import { tempBeside } from '../../infra/temp-files.js';
import { shownPath } from '../../infra/printable.js';
import { assertOwnExisting, BlockWriter, createPrivate, lockOutput, refuseLink, replacePrivate, writeFully } from '../../infra/output-files.js';
import { assertSameService, readMeta, type ResultsMeta, writeMeta } from './results-meta.js';
import { sortResults } from './sort-results.js';
import type { ByteRange } from '../read/types.js';

export const RESULT_COLUMNS = [
  'row',
  'outcome',
  'client_id',
  'http_status',
  'attempts',
  'idempotency_key',
  'error_type',
  'error_code',
  'error_param',
  'error_message',
  'request_id',
] as const;

export const OUTCOMES = [
  'created',
  'valid',
  'failed',
  'invalid',
  'duplicate',
  'skipped',
  'not_attempted',
] as const;
export type Outcome = (typeof OUTCOMES)[number];

export interface ResultLine {
  row: number;
  outcome: Outcome;
  clientId?: string | undefined;
  httpStatus?: number | undefined;
  attempts?: number | undefined;
  key?: string | undefined;
  errorType?: string | undefined;
  errorCode?: string | undefined;
  errorParam?: string | undefined;
  errorMessage?: string | undefined;
  requestId?: string | undefined;
  values: readonly string[];
  /** The line's end (`values` as this file writes them, then LF) when the reader made it (RawRecord.echo). */
  echo?: ByteRange | undefined;
}

export interface ResultsFile {
  path: string;
  /** Keys already `created` in the file being resumed. */
  created: KeySet;
  write(line: ResultLine): void;
  /** Flushes and closes; puts the lines in row order (sort-results.ts) unless `sort` is false; releases the lock. */
  /** `beforeSort`: runs once every line is on disk, before the file is put in row order (still locked). */
  close(options?: { sort?: boolean; beforeSort?: () => Promise<void> }): Promise<void>;
}

/** One results line (LF-terminated), built in one pass: it is written for every row. */
export function formatLine(line: ResultLine, dropColumn?: number): string {
  const { values, echo } = line;
  let text = resultCells(line);
  if (echo !== undefined && dropColumn === undefined) return text + echo.bytes.toString('utf8', echo.start, echo.end);
  for (let i = 0; i < values.length; i++) if (i !== dropColumn) text += `,${csvSafeCell(values[i]!)}`;
  return `${text}\n`;
}

/** The line's own columns, up to the input's values. */
function resultCells(line: ResultLine): string {
  return (
    `${rowNumber(line.row)},${line.outcome},${optional(line.clientId)},${line.httpStatus ?? ''},${line.attempts ?? ''},` +
    `${optional(line.key)},${optional(line.errorType)},${optional(line.errorCode)},${optional(line.errorParam)},` +
    `${optional(line.errorMessage)},${optional(line.requestId)}`
  );
}

/**
 * A row number. Not `String(row)` or `${row}`, though three times faster: V8 keeps the string
 * of each number converted that way in its number-string cache, in the old generation, and a
 * million rows' numbers were promoted, ~25 MB of the peak (bench/README.md, validate's peak RSS).
 */
function rowNumber(row: number): string {
  return row.toFixed(0);
}

function optional(value: string | undefined): string {
  return value === undefined ? '' : csvSafeCell(value);
}

export interface OpenResultsOptions {
  headers: readonly string[];
  resume: boolean;
  overwrite: boolean;
  /** Collect lines and write them in 64 KiB blocks (validate: nothing on the service to match). */
  buffered?: boolean;
  /** The file's lock, taken by the caller before it decided anything; taken here when absent. Released on close. */
  lock?: FileLock | undefined;
  /** What the sidecar records (results-meta.ts): the command and the service. */
  meta: ResultsMeta;
  /** An input column not carried over (a re-imported --failed file's own `error`). */
  dropColumn?: number | undefined;
}

/**
 * The header: the result columns, then the input's. An input column named like a result column
 * (a re-imported results or --failed file's `idempotency_key`) is written `input.<name>`, so no
 * header appears twice.
 */
export function resultsHeader(headers: readonly string[], dropColumn?: number): string[] {
  const taken = new Set<string>(RESULT_COLUMNS);
  const input = headers
    .filter((_, i) => i !== dropColumn)
    .map((header) => (taken.has(header.trim().toLowerCase()) ? `input.${header}` : header));
  return [...RESULT_COLUMNS, ...input];
}

export interface ResultsUsable {
  exists: boolean;
  /** The existing file was written by validate: it records no sends, so it is replaced. */
  replacesValidate: boolean;
}

/**
 * Refuses an existing results file unless the run resumes or replaces it, or it was written by
 * validate (nothing sent, nothing to lose); --resume refuses a file written against another service.
 */
export async function assertResultsUsable(
  path: string,
  options: { resume: boolean; overwrite: boolean; meta: ResultsMeta },
): Promise<ResultsUsable> {
  const exists = await stat(path).then(
    () => true,
    () => false,
  );
  if (!exists || options.overwrite) return { exists, replacesValidate: false };
  const meta = readMeta(path);
  if (options.resume) {
    // Resumed rows are skipped as created: only a file of this user's may say which.
    assertOwnExisting(path);
    assertSameService(path, meta, options.meta.service);
    return { exists, replacesValidate: false };
  }
  if (meta?.writtenBy === 'validate') return { exists, replacesValidate: true };
  const by = meta?.service === undefined ? '' : ` (written by an import against ${meta.service})`;
  throw new UsageError(
    `results file ${shownPath(path)} already exists${by}: add --resume to continue that import, or --overwrite to replace it`,
    'results_exist',
  );
}

export async function openResults(path: string, options: OpenResultsOptions): Promise<ResultsFile> {
  const lock = options.lock ?? lockOutput(path, 'results file');
  let fd: number;
  let created = new KeySet();
  // Whether the lines are in row order so far: a file that is needs no sort at the end.
  let lastRow = 0;
  let ordered = true;
  try {
    const { exists, replacesValidate } = await assertResultsUsable(path, options);
    // A file with no complete line (a crash while it was being created) records nothing.
    if (exists && options.resume && !replacesValidate && completeLength(path) > 0) {
      const kept = await compactForResume(path);
      ({ created, lastRow, ordered, fd } = kept);
      writeMeta(path, options.meta);
    } else {
      writeMeta(path, options.meta);
      fd = replacePrivate(path);
      writeFully(fd, csvSafeRecord(resultsHeader(options.headers, options.dropColumn), '\n'), path);
    }
  } catch (error) {
    lock.release();
    throw error;
  }
  // Buffered (validate): lines are written 64 KiB at a time, with no fsync.
  // Unbuffered (import): one write(2) per finished row.
  const block = new BlockWriter(fd, path);
  return {
    path,
    created,
    write(line) {
      if (line.row < lastRow) ordered = false;
      lastRow = line.row;
      const { echo } = line;
      if (!options.buffered) writeFully(fd, formatLine(line, options.dropColumn), path);
      else if (echo !== undefined && options.dropColumn === undefined) block.writeLine(resultCells(line), echo);
      else block.write(formatLine(line, options.dropColumn));
    },
    async close(closing = {}) {
      try {
        try {
          block.flush();
          if (!options.buffered) fsyncSync(fd);
        } finally {
          closeSync(fd);
        }
        await closing.beforeSort?.();
        if (!ordered && closing.sort !== false) await sortResults(path);
      } finally {
        lock.release();
      }
    },
  };
}

/**
 * Resume: keep only the `created` lines of the old file (every other row is processed again
 * and gets a fresh line), drop a torn last line, and swap the file in atomically. So after
 * any number of crashes and resumes each row has at most one `created` line.
 */
async function compactForResume(path: string): Promise<{ created: KeySet; lastRow: number; ordered: boolean; fd: number }> {
  const complete = completeLength(path);
  const created = new KeySet();
  let lastRow = 0;
  let ordered = true;
  const temp = tempBeside(path);
  const out = createPrivate(temp);
  try {
    let header: string[] | undefined;
    const parser = createReadStream(path, { start: 0, end: complete - 1 }).pipe(
      parse({ relax_column_count: true, skip_empty_lines: true, bom: true }),
    );
    const records = tornTolerant(parser as AsyncIterable<string[]>);
    for await (const record of records) {
      if (header === undefined) {
        header = record;
        if (RESULT_COLUMNS.some((column, i) => record[i] !== column)) {
          throw new UsageError(
            `${path} is not a ccs-bulk results file (unexpected header); cannot --resume it`,
            'results_foreign',
          );
        }
        writeFully(out, csvRecord(record, '\n'), temp);
        continue;
      }
      // Written formula-escaped (a key from the input may start with = + - @).
      const key = record[5] === undefined ? undefined : unescapeFormula(record[5]);
      if (record[1] === 'created' && key) {
        created.add(key, 1);
        const row = Number(record[0]);
        if (row < lastRow) ordered = false;
        lastRow = row;
        writeFully(out, csvRecord(record, '\n'), temp);
      }
    }
    if (header === undefined) {
      throw new UsageError(
        `${path} is empty; use --overwrite to start a fresh results file`,
        'results_foreign',
      );
    }
    fsyncSync(out);
  } catch (error) {
    closeSync(out);
    rmSync(temp, { force: true });
    if (error instanceof CcsError) throw error;
    throw new UsageError(`cannot read results file ${path} to resume: ${(error as Error).message}`, 'results_unreadable');
  }
  try {
    refuseLink(path);
    renameSync(temp, path);
  } catch (error) {
    closeSync(out);
    rmSync(temp, { force: true });
    if (error instanceof CcsError) throw error;
    throw new UsageError(`cannot replace ${shownPath(path)}: ${(error as NodeJS.ErrnoException).code ?? error}`, 'output_unwritable');
  }
  // The compacted file stays open and is appended to: the name is never opened again for writing.
  return { created, lastRow, ordered, fd: out };
}

/** Length of the file up to and including its last newline: a torn last line is left out. */
function completeLength(path: string): number {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (error) {
    throw new UsageError(`cannot read results file ${path}: ${(error as NodeJS.ErrnoException).code ?? error}`, 'results_unreadable');
  }
  try {
    let end = fstatSync(fd).size;
    const chunk = Buffer.alloc(65_536);
    while (end > 0) {
      const start = Math.max(0, end - chunk.length);
      const read = readSync(fd, chunk, 0, end - start, start);
      const at = chunk.subarray(0, read).lastIndexOf(0x0a);
      if (at >= 0) return start + at + 1;
      end = start;
    }
    return 0;
  } finally {
    closeSync(fd);
  }
}

/** A kill can cut a line inside a quoted multi-line field: that torn record is dropped. */
async function* tornTolerant(records: AsyncIterable<string[]>): AsyncIterable<string[]> {
  try {
    yield* records;
  } catch (error) {
    if (error instanceof CsvError && error.code === 'CSV_QUOTE_NOT_CLOSED') return;
    throw error;
  }
}
