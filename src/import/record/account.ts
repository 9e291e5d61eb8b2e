/**
 * The end-of-run account, kept apart from the pipeline's counters: before a run may exit 0 or
 * 1, the reader must have reached the end of the input, and every data row from the first to
 * the last must have exactly one final outcome in the results file, read back from disk. A
 * row of another shard has none here; a row skipped as created earlier (--resume) has its
 * `created` line from the earlier run instead of a new one.
 */
import { createReadStream, statSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { parse } from 'csv-parse';
import { unescapeFormula } from '../row/normalize.js';
import { OUTCOMES } from './results.js';
import { isRetryableStatus } from '../../service/retry.js';

/**
 * A failed row the service refused for what it holds: a 4xx that neither a retry nor a resume
 * changes. Not 401/403 (the token: the run stops), not 404/405 (the address: no row is at fault),
 * not the retryable 408, 425 and 429.
 */
export function refusedRow(status: number | undefined): boolean {
  return status !== undefined && status >= 400 && status < 500 && !isRetryableStatus(status) && ![401, 403, 404, 405].includes(status);
}

/** What a row read owes the results file. */
export type RowDue = 'outcome' | 'other_shard' | 'created_earlier';

const UNSEEN = 0;
const CODES: Record<RowDue, number> = { outcome: 1, other_shard: 2, created_earlier: 3 };

/** Every row the pipeline was handed, in one byte each (10 M rows: 10 MB). */
export class RowLedger {
  #rows = new Uint8Array(4096);
  #last = 0;
  /** Keys of rows skipped as created earlier: their line is the earlier run's. */
  readonly #earlier = new Map<number, string>();

  read(row: number, due: RowDue, key?: string): void {
    if (row >= this.#rows.length) {
      const grown = new Uint8Array(Math.max(row + 1, this.#rows.length * 2));
      grown.set(this.#rows);
      this.#rows = grown;
    }
    this.#rows[row] = CODES[due];
    if (row > this.#last) this.#last = row;
    if (due === 'created_earlier' && key !== undefined) this.#earlier.set(row, key);
  }

  get last(): number {
    return this.#last;
  }

  dueAt(row: number): number {
    return this.#rows[row] ?? UNSEEN;
  }

  earlierKey(row: number): string | undefined {
    return this.#earlier.get(row);
  }

  get earlierCount(): number {
    return this.#earlier.size;
  }
}

/** The check's figures: in the summary, --json and the log's run_finished. */
export interface RunAccount {
  /** The input was read to its end and every row read has exactly one outcome in the results file; else see `problem`. */
  complete: boolean;
  /** The reader reached the end of the input (every byte; a workbook's last row). */
  inputEnd: boolean;
  /** Bytes of the input read. */
  bytesRead: number;
  /** The input's size in bytes (0 for rows from code). */
  sizeBytes: number;
  /** The last data row read. */
  rowsRead: number;
  /** Outcome lines this run wrote to the results file. */
  outcomesRecorded: number;
  /** Rows skipped as created earlier, each with its earlier `created` line. */
  createdEarlier: number;
  /** Rows read that belong to other shards (`shard`): none of their outcomes belong in this results file. */
  otherShardRows: number;
  /** The first row without exactly one outcome, when there is one. */
  firstMissing?: number;
  /** What is wrong, in words, when incomplete. */
  problem?: string;
}

export interface AccountInput {
  ledger: RowLedger;
  results: string;
  /** The results file's size when this run opened it: its own lines follow. */
  resultsStart: number;
  /** The loop took every batch the reader gave (not stopped, not interrupted). */
  readerDone: boolean;
  bytesRead: number;
  sizeBytes: number;
}

/** Reads the results file back and checks it against the ledger. */
export async function accountForRun(input: AccountInput): Promise<RunAccount> {
  const { ledger } = input;
  const last = ledger.last;
  const counts = new Uint8Array(last + 1);
  let outcomesRecorded = 0;
  let stray: number | undefined;
  await readRecordHeads(input.results, input.resultsStart, statSync(input.results).size, (row, outcome) => {
    if (!Number.isInteger(row) || row < 1 || row > last || !OUTCOMES.includes(outcome as never)) {
      stray ??= Number.isInteger(row) ? row : -1;
      return;
    }
    outcomesRecorded++;
    if (counts[row]! < 255) counts[row]!++;
  });
  const earlier = ledger.earlierCount > 0 ? await createdKeys(input.results, input.resultsStart) : new Set<string>();
  let firstMissing: number | undefined;
  let otherShardRows = 0;
  let problem: string | undefined;
  for (let row = 1; row <= last && firstMissing === undefined; row++) {
    const due = ledger.dueAt(row);
    const seen = counts[row]!;
    if (due === CODES.other_shard) {
      otherShardRows++;
      if (seen !== 0) problem = `row ${row} belongs to another shard but has an outcome here`;
    } else if (due === CODES.created_earlier) {
      const key = ledger.earlierKey(row);
      if (seen !== 0 || key === undefined || !earlier.has(key))
        problem = `row ${row} was skipped as created earlier, but the results file has no earlier created line for it`;
    } else if (due === UNSEEN) problem = `row ${row} never reached the pipeline`;
    else if (seen !== 1) problem = seen === 0 ? `row ${row} has no outcome in the results file` : `row ${row} has ${seen} outcomes in the results file`;
    if (problem !== undefined) firstMissing = row;
  }
  const inputEnd = input.readerDone && input.bytesRead >= input.sizeBytes;
  if (problem === undefined && stray !== undefined) problem = `the results file holds a line for row ${stray}, which was not read`;
  if (problem === undefined && !inputEnd) {
    problem = `the input was not read to its end (${input.bytesRead} of ${input.sizeBytes} bytes)`;
    firstMissing = last + 1;
  }
  return {
    complete: problem === undefined,
    inputEnd,
    bytesRead: input.bytesRead,
    sizeBytes: input.sizeBytes,
    rowsRead: last,
    outcomesRecorded,
    createdEarlier: ledger.earlierCount,
    otherShardRows,
    ...(firstMissing !== undefined && { firstMissing }),
    ...(problem !== undefined && { problem }),
  };
}

/** The results file's records between two byte offsets (this run's own lines, or the earlier ones). */
function lines(path: string, start: number, end: number): AsyncIterable<string[]> {
  if (end <= start) return (async function* () {})();
  return createReadStream(path, { start, end: end - 1 }).pipe(parse({ relax_column_count: true, skip_empty_lines: true }));
}

/**
 * The first two cells of each record between two byte offsets, the row as a number
 * (`Number()` of its text) and the outcome, without parsing the rest: a newline ends a record
 * when the quotes before it in the record are even (RFC 4180 quotes come in pairs). Several
 * times faster than a full parse, which read back a large validate's results file in about as
 * long as the validation took; called, not yielded, per record (an async generator's step per
 * record was most of the rest).
 */
async function readRecordHeads(
  path: string,
  start: number,
  end: number,
  each: (row: number, outcome: string) => void,
): Promise<void> {
  if (end <= start) return;
  // One buffer, refilled in place: a buffer per chunk read ~100 MB of garbage for a 1M-row
  // validate, and the peak RSS rose by 20 MB while the collector caught up.
  let buffer = Buffer.allocUnsafe(READ_CHUNK);
  let filled = 0;
  let scan = 0;
  let odd = false;
  const file = await open(path, 'r');
  try {
    for (let position = start; position < end; ) {
      if (filled === buffer.length) {
        // One record longer than the buffer (a long error message): room for more of it.
        const larger = Buffer.allocUnsafe(buffer.length * 2);
        buffer.copy(larger, 0, 0, filled);
        buffer = larger;
      }
      const { bytesRead } = await file.read(buffer, filled, Math.min(buffer.length - filled, end - position), position);
      if (bytesRead === 0) break;
      position += bytesRead;
      filled += bytesRead;
      let record = 0;
      // The next quote, found once per quote: looked up again for every record, a buffer with
      // few quotes would be scanned to its end once per line.
      let quote = buffer.indexOf(0x22, scan);
      for (let newline = buffer.indexOf(0x0a, scan); newline !== -1 && newline < filled; newline = buffer.indexOf(0x0a, scan)) {
        for (; quote !== -1 && quote < newline; quote = buffer.indexOf(0x22, quote + 1)) odd = !odd;
        scan = newline + 1;
        if (odd) continue;
        head(buffer, record, newline, each);
        record = newline + 1;
      }
      buffer.copyWithin(0, record, filled);
      filled -= record;
      scan -= record;
    }
  } finally {
    await file.close();
  }
  if (filled > 0) head(buffer, 0, filled, each);
}

/** The read-back's buffer: a 1M-row validate's results file is ~100 MB. */
const READ_CHUNK = 256 * 1024;

function head(buffer: Buffer, start: number, end: number, each: (row: number, outcome: string) => void): void {
  const first = buffer.indexOf(0x2c, start);
  if (first === -1 || first >= end) return each(rowOf(buffer, start, end), '');
  const second = buffer.indexOf(0x2c, first + 1);
  each(rowOf(buffer, start, first), buffer.toString('latin1', first + 1, second === -1 || second > end ? end : second));
}

/** `Number()` of the cell's text; digits alone (the results file's own rows) without making the text. */
function rowOf(buffer: Buffer, start: number, end: number): number {
  if (end - start < 1 || end - start > 15) return Number(buffer.toString('latin1', start, end));
  let row = 0;
  for (let i = start; i < end; i++) {
    const digit = buffer[i]! - 0x30;
    if (digit < 0 || digit > 9) return Number(buffer.toString('latin1', start, end));
    row = row * 10 + digit;
  }
  return row;
}

/** Keys of the earlier run's `created` lines (the part of the file before this run's). */
async function createdKeys(path: string, end: number): Promise<Set<string>> {
  const keys = new Set<string>();
  for await (const record of lines(path, 0, end)) {
    if (record[1] === 'created' && record[5]) keys.add(unescapeFormula(record[5]));
  }
  return keys;
}
