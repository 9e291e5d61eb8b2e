/**
 * `ccs-bulk results merge --failed`: the shards' --failed files as one file to fix and import
 * again. Rows in the input's order (each `error` cell starts with the row's place in the
 * input), in the first file's delimiter and encoding; refused when the files have other columns,
 * a row is in two of them, or a shard is missing.
 */
import { lstatSync } from 'node:fs';
import { InputError, UsageError } from '../../errors.js';
import { openRows, type SourceInfo } from '../read/index.js';
import { openFailed } from './failed.js';
import { assertMergeOut, checkShardNames } from './merge-results.js';
import { backupResults } from './results-guard.js';

/** What `results merge --failed` wrote. */
export interface FailedMergeSummary {
  out: string;
  files: string[];
  /** Rows in the merged file (its header not counted). */
  rows: number;
  /** The file `--overwrite` replaced, kept beside it under this name. */
  backup?: string | undefined;
}

const mismatch = (message: string) => new InputError(message, 'results_merge');

/** The data row an `error` cell names at its head (failed.ts originOf). */
const DATA_ROW = /^[^\n]+? (?:line|row) \d+ \(data row (\d+)\): /;

interface FailedRow {
  values: string[];
  row: number;
  file: string;
}

export async function mergeFailed(files: readonly string[], out: string, options: { overwrite?: boolean | undefined } = {}): Promise<FailedMergeSummary> {
  if (files.length === 0) throw new UsageError("results merge --failed needs the shards' --failed files", 'bad_option');
  const overwrite = options.overwrite === true;
  assertMergeOut(out, overwrite);
  checkShardNames(files);
  const { headers, info, rows } = await readFailedFiles(files);
  // A row's place in the input orders the file; a row without one (an older file) goes last.
  rows.sort((a, b) => a.row - b.row);
  const backup = overwrite && isFile(out) ? await backupResults(out) : undefined;
  const width = headers.length - 1;
  const failed = openFailed(out, headers.slice(0, width), {
    addKeyColumn: false,
    delimiter: info.delimiter,
    encoding: info.format === 'csv' ? { name: info.encoding, bom: info.encodingSource === 'bom' } : undefined,
  });
  try {
    for (const { values } of rows) failed.write([...values.slice(0, width), ...values.slice(width + 1)], values[width] ?? '');
  } finally {
    failed.close();
  }
  return { out, files: [...files], rows: rows.length, backup };
}

async function readFailedFiles(files: readonly string[]): Promise<{ headers: string[]; info: SourceInfo; rows: FailedRow[] }> {
  let first: { headers: string[]; info: SourceInfo; file: string } | undefined;
  const rows: FailedRow[] = [];
  const seen = new Map<number, string>();
  for (const file of files) {
    const source = await openRows(file, { thread: 'never' });
    try {
      if (source.headers.at(-1) !== 'error') throw mismatch(`${file} is not a --failed file (its last column is not "error")`);
      first ??= { headers: source.headers, info: source.info, file };
      if (source.headers.join('\u0000') !== first.headers.join('\u0000')) {
        throw mismatch(`${file} has other columns than ${first.file}: failed files of different inputs cannot be merged`);
      }
      const errorAt = source.headers.length - 1;
      for await (const batch of source.batches) {
        for (const { values } of batch) {
          const place = DATA_ROW.exec(values[errorAt] ?? '');
          const row = place ? Number(place[1]) : Number.POSITIVE_INFINITY;
          const earlier = place ? seen.get(row) : undefined;
          if (earlier !== undefined) throw mismatch(`data row ${row} is in both ${earlier} and ${file}: failed files of different runs, or a file given twice`);
          if (place) seen.set(row, file);
          rows.push({ values, row, file });
        }
      }
    } finally {
      await source.close();
    }
  }
  return { headers: first!.headers, info: first!.info, rows };
}

function isFile(path: string): boolean {
  try {
    return lstatSync(path).isFile();
  } catch {
    return false;
  }
}
