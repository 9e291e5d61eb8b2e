/**
 * Reading a results file back (--resume, `ccs-bulk status`): its records up to the last
 * complete line, streamed. A run killed mid-write leaves at worst a torn last line, which is
 * left out, as is a record cut inside a quoted multi-line field.
 */
import { closeSync, createReadStream, fstatSync, openSync, readSync } from 'node:fs';
import { CsvError, parse } from 'csv-parse';
import { UsageError } from '../../errors.js';

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

/** A ccs-bulk results file's header starts with its own columns, in order. */
export function isResultsHeader(record: readonly string[]): boolean {
  return RESULT_COLUMNS.every((column, i) => record[i] === column);
}

/** The file's records (header first) up to `complete` bytes (default: its last newline). */
export function readResultRecords(path: string, complete = completeLength(path)): AsyncIterable<string[]> {
  if (complete === 0) return (async function* () {})();
  const parser = createReadStream(path, { start: 0, end: complete - 1 }).pipe(
    parse({ relax_column_count: true, skip_empty_lines: true, bom: true }),
  );
  return tornTolerant(parser as AsyncIterable<string[]>);
}

/** Length of the file up to and including its last newline: a torn last line is left out. */
export function completeLength(path: string): number {
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
