/**
 * The results file: one line per row outcome, written as rows finish. Each line is one
 * synchronous write(2) of a whole CSV record, so a crash (even kill -9) leaves complete
 * lines, and at worst a torn last one, which resume drops. Mode 0600: it holds personal data.
 */
import { closeSync, createReadStream, fstatSync, fsyncSync, openSync, readSync, renameSync, rmSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { CsvError, parse } from 'csv-parse';
import { csvRecord, csvSafeCell, csvSafeRecord } from '../csv-text.js';
import { CcsError, UsageError } from '../errors.js';
import { KeySet } from './key-set.js';
import { unescapeFormula } from './normalize.js';
import type { FileLock } from '../lock.js';
import { tempBeside } from '../temp-files.js';
import { BlockWriter, lockOutput, openPrivate, writeFully } from './output-files.js';

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
}

export interface ResultsFile {
  path: string;
  /** Keys already `created` in the file being resumed. */
  created: KeySet;
  write(line: ResultLine): void;
  close(): void;
}

/** One results line (LF-terminated), built in one pass: it is written for every row. */
export function formatLine(line: ResultLine): string {
  let text =
    `${rowNumber(line.row)},${line.outcome},${optional(line.clientId)},${line.httpStatus ?? ''},${line.attempts ?? ''},` +
    `${optional(line.key)},${optional(line.errorType)},${optional(line.errorCode)},${optional(line.errorParam)},` +
    `${optional(line.errorMessage)},${optional(line.requestId)}`;
  for (const value of line.values) text += `,${csvSafeCell(value)}`;
  return `${text}\n`;
}

/** toFixed(0), not `${n}`: V8 caches number strings in the old generation (bench/README.md). */
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
}

/** Refuses an existing results file unless the run resumes or replaces it. */
export async function assertResultsUsable(path: string, options: { resume: boolean; overwrite: boolean }): Promise<boolean> {
  const exists = await stat(path).then(
    () => true,
    () => false,
  );
  if (exists && !options.resume && !options.overwrite) {
    throw new UsageError(
      `results file ${path} already exists: add --resume to continue that run, or --overwrite to replace it`,
      'results_exist',
    );
  }
  return exists;
}

export async function openResults(path: string, options: OpenResultsOptions): Promise<ResultsFile> {
  const lock = options.lock ?? lockOutput(path, 'results file');
  let fd: number;
  let created = new KeySet();
  try {
    const exists = await assertResultsUsable(path, options);
    // A file with no complete line (a crash while it was being created) records nothing.
    if (exists && options.resume && completeLength(path) > 0) {
      created = await compactForResume(path);
      fd = openPrivate(path, 'a');
    } else {
      fd = openPrivate(path, 'w');
      writeFully(fd, csvSafeRecord([...RESULT_COLUMNS, ...options.headers], '\n'), path);
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
      if (options.buffered) block.write(formatLine(line));
      else writeFully(fd, formatLine(line), path);
    },
    close() {
      try {
        block.flush();
        if (!options.buffered) fsyncSync(fd);
        closeSync(fd);
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
async function compactForResume(path: string): Promise<KeySet> {
  const complete = completeLength(path);
  const created = new KeySet();
  const temp = tempBeside(path);
  const out = openPrivate(temp, 'wx');
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
  closeSync(out);
  try {
    renameSync(temp, path);
  } catch (error) {
    rmSync(temp, { force: true });
    throw new UsageError(`cannot replace ${path}: ${(error as NodeJS.ErrnoException).code ?? error}`, 'output_unwritable');
  }
  return created;
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
