/**
 * `ccs-bulk results merge`: the shards' results files as one, in row order, after checking
 * that together they hold every row exactly once (no row twice, none missing, no shard absent).
 */
import { closeSync, createReadStream } from 'node:fs';
import { basename } from 'node:path';
import { parse } from 'csv-parse';
import { csvRecord } from '../../infra/csv-text.js';
import { InputError, UsageError } from '../../errors.js';
import { createPrivate, writeFully } from '../../infra/output-files.js';
import { OUTCOMES, type Outcome, RESULT_COLUMNS } from './results.js';

export interface MergeSummary {
  out: string;
  files: string[];
  rows: number;
  counts: Record<Outcome, number>;
}

const mismatch = (message: string) => new InputError(message, 'results_merge');

export async function mergeResults(files: readonly string[], out: string): Promise<MergeSummary> {
  if (files.length === 0) throw new UsageError('results merge needs the shards\' results files', 'bad_option');
  checkShardNames(files);
  let header: string[] | undefined;
  // Row number → its line and the file it came from. Held in memory: one results line per row.
  const lines = new Map<number, { text: string; file: string }>();
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
        lines.set(row, { text: csvRecord(record, '\n'), file });
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
  const fd = createPrivate(out);
  try {
    writeFully(fd, csvRecord(header ?? [...RESULT_COLUMNS], '\n'), out);
    for (let row = 1; row <= lines.size; row++) writeFully(fd, lines.get(row)!.text, out);
  } finally {
    closeSync(fd);
  }
  return { out, files: [...files], rows: lines.size, counts };
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
function checkShardNames(files: readonly string[]): void {
  const shards = files.map((file) => /\.shard-(\d+)-of-(\d+)/.exec(basename(file)));
  if (shards.some((m) => m === null)) return;
  const counts = new Set(shards.map((m) => Number(m![2])));
  if (counts.size > 1) throw mismatch(`the files are shards of different splits (of ${[...counts].join(', of ')})`);
  const count = [...counts][0]!;
  const have = new Set(shards.map((m) => Number(m![1])));
  const absent = Array.from({ length: count }, (_, i) => i + 1).filter((k) => !have.has(k));
  if (absent.length > 0) throw mismatch(`shard ${absent.join(', ')} of ${count} is missing from the files given`);
}
