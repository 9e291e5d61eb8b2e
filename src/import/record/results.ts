/**
 * The results file: one line per row outcome, written as rows finish. Each line is one
 * synchronous write(2) of a whole CSV record, so a crash (even kill -9) leaves complete
 * lines, and at worst a torn last one, which resume drops. Mode 0600: it holds personal data.
 */
import { closeSync, fsyncSync, renameSync, rmSync } from 'node:fs';
import { csvRecord, csvSafeCell, csvSafeRecord } from '../../infra/csv-text.js';
import { CcsError, UsageError } from '../../errors.js';
import { PrintTable, quickPrint } from '../../infra/fingerprints.js';
import { KeySet } from '../row/key-set.js';
import { unescapeFormula } from '../row/normalize.js';
import type { FileLock } from '../../infra/lock.js';
import { tempBeside } from '../../infra/temp-files.js';
import { shownPath } from '../../infra/printable.js';
import { BlockWriter, createPrivate, lockOutput, refuseLink, replacePrivate, writeFully } from '../../infra/output-files.js';
import { earlierRunsOf, readMeta, type ResultsMeta } from './results-meta.js';
import { RunSidecar, type RunStop } from './run-sidecar.js';
import { assertResultsUsable, backupResults, type ResultsUsable } from './results-guard.js';
import { completeLength, isResultsHeader, readResultRecords, RESULT_COLUMNS } from './results-read.js';
import { sortResults } from './sort-results.js';
import { keepTrail, openTrail, type Trail } from './trail.js';
import type { ByteRange } from '../read/types.js';

export { RESULT_COLUMNS };
export type { RunStop };

export const OUTCOMES = [
  'created',
  'valid',
  'failed',
  'invalid',
  'duplicate',
  'existing',
  'skipped',
  'not_attempted',
] as const;
export type Outcome = (typeof OUTCOMES)[number];

export interface ResultLine {
  row: number;
  /** The row's line (CSV) or worksheet row, where a message or the --failed file names it. */
  line?: number | undefined;
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
  /** SHA-256 of the body sent for this row (trail.ts): a row that went out. */
  bodySha256?: string | undefined;
}

export interface ResultsFile {
  path: string;
  /** Keys already `created` in the file being resumed. */
  created: KeySet;
  /** Rows the file being resumed decided without a request (invalid, duplicate, existing): no answer of theirs was lost. */
  answered: RowBits;
  /** The client ids of its `created` lines (quickPrint prints): the clients this file's runs made. */
  createdIds: PrintTable;
  /** The import's file this run replaced (--overwrite), kept beside it (results-guard.ts backupResults). */
  backup: string | undefined;
  write(line: ResultLine): void;
  /**
   * How the run ended, for the sidecar (`ccs-bulk status`): said once every line is on disk, before
   * close. A file closed without it records a run that ended with an error.
   */
  end(stop: RunStop | undefined): void;
  /**
   * Flushes and closes; puts the lines in row order (sort-results.ts) unless `sort` is false;
   * records the run's end in the sidecar; releases the lock.
   * `beforeSort`: runs once every line is on disk, before the file is put in row order (still locked).
   */
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
  /** What the sidecar records (results-meta.ts): the command, the service, who runs it, the input. */
  meta: ResultsMeta;
  /** An input column not carried over (a re-imported --failed file's own `error`). */
  dropColumn?: number | undefined;
  /** assertResultsUsable's verdict, when the caller asked it already (planImport): not asked twice. */
  usable?: ResultsUsable | undefined;
  /** The input's SHA-256 being computed (provenance.ts hashFile): added to the sidecar once known. */
  sourceHash?: Promise<string | undefined> | undefined;
  /** Keep the trail beside the file (trail.ts): each line's time and body hash. An import's, not validate's. */
  trail?: boolean | undefined;
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

export async function openResults(path: string, options: OpenResultsOptions): Promise<ResultsFile> {
  const lock = options.lock ?? lockOutput(path, 'results file');
  let opened: OpenedFile;
  try {
    opened = await startFile(path, options);
  } catch (error) {
    lock.release();
    throw error;
  }
  const { fd, created, answered, createdIds, sidecar, trail } = opened;
  // Whether the lines are in row order so far: a file that is needs no sort at the end.
  let { lastRow, ordered } = opened;
  // Buffered (validate): lines are written 64 KiB at a time, with no fsync.
  // Unbuffered (import): one write(2) per finished row.
  const block = new BlockWriter(fd, path);
  return {
    path,
    created,
    answered,
    createdIds,
    backup: opened.backup,
    write(line) {
      if (line.row < lastRow) ordered = false;
      lastRow = line.row;
      sidecar.count(line.outcome);
      trail?.write(line.row, line.line, line.outcome, line.bodySha256);
      const { echo } = line;
      if (!options.buffered) writeFully(fd, formatLine(line, options.dropColumn), path);
      else if (echo !== undefined && options.dropColumn === undefined) block.writeLine(resultCells(line), echo);
      else block.write(formatLine(line, options.dropColumn));
    },
    end(stop) {
      sidecar.end(stop);
    },
    async close(closing = {}) {
      try {
        try {
          block.flush();
          if (!options.buffered) fsyncSync(fd);
        } finally {
          closeSync(fd);
          trail?.close();
        }
        await closing.beforeSort?.();
        if (!ordered && closing.sort !== false) await sortResults(path);
        // Before the lock goes: a file with no live lock and no end in its sidecar was killed.
        await sidecar.finish();
      } finally {
        lock.release();
      }
    },
  };
}

interface OpenedFile {
  fd: number;
  created: KeySet;
  answered: RowBits;
  createdIds: PrintTable;
  lastRow: number;
  ordered: boolean;
  backup: string | undefined;
  sidecar: RunSidecar;
  trail: Trail | undefined;
}

/** Continues the file (--resume: its created lines kept) or starts it afresh (an import's old one kept first, if replaced). */
async function startFile(path: string, options: OpenResultsOptions): Promise<OpenedFile> {
  const { exists, replacesValidate, backup: keep } = options.usable ?? (await assertResultsUsable(path, options));
  // A file with no complete line (a crash while it was being created) records nothing.
  if (exists && options.resume && !replacesValidate && completeLength(path) > 0) {
    const previous = readMeta(path);
    const kept = await compactForResume(path);
    const sidecar = new RunSidecar(path, { ...options.meta, resumed: true, earlierRuns: earlierRunsOf(previous) }, options.sourceHash);
    sidecar.count('created', kept.created.size);
    sidecar.open();
    const trail = options.trail ? openTrail(path, true) : undefined;
    return { ...kept, backup: undefined, sidecar, trail };
  }
  const backup = exists && keep ? await backupResults(path) : undefined;
  if (backup !== undefined) keepTrail(path, backup);
  const sidecar = new RunSidecar(path, options.meta, options.sourceHash);
  sidecar.open();
  const fd = replacePrivate(path);
  writeFully(fd, csvSafeRecord(resultsHeader(options.headers, options.dropColumn), '\n'), path);
  const trail = options.trail ? openTrail(path, false) : undefined;
  return { fd, created: new KeySet(), answered: new RowBits(), createdIds: new PrintTable(), lastRow: 0, ordered: true, backup, sidecar, trail };
}

/**
 * Resume: keep only the `created` lines of the old file (every other row is processed again
 * and gets a fresh line), drop a torn last line, and swap the file in atomically. So after
 * any number of crashes and resumes each row has at most one `created` line.
 */
async function compactForResume(
  path: string,
): Promise<{ created: KeySet; answered: RowBits; createdIds: PrintTable; lastRow: number; ordered: boolean; fd: number }> {
  const complete = completeLength(path);
  const created = new KeySet();
  const answered = new RowBits();
  const createdIds = new PrintTable();
  let lastRow = 0;
  let ordered = true;
  const temp = tempBeside(path);
  const out = createPrivate(temp);
  try {
    let header: string[] | undefined;
    for await (const record of readResultRecords(path, complete)) {
      if (header === undefined) {
        header = record;
        if (!isResultsHeader(record)) {
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
        if (record[2]) createdIds.add(quickPrint(unescapeFormula(record[2])));
        const row = Number(record[0]);
        if (row < lastRow) ordered = false;
        lastRow = row;
        writeFully(out, csvRecord(record, '\n'), temp);
      } else if (NEVER_SENT.has(record[1] ?? '')) answered.add(Number(record[0]));
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
  return { created, answered, createdIds, lastRow, ordered, fd: out };
}

/**
 * Outcomes of rows that were decided without a request: their client, if the service holds one,
 * was not made by this file's runs. (A `failed` or `not_attempted` row may have been created by a
 * request whose answer was lost.)
 */
const NEVER_SENT = new Set(['invalid', 'duplicate', 'existing', 'skipped']);

/** A set of row numbers, one bit each (10 M rows: 1.25 MB). */
export class RowBits {
  #bits = new Uint8Array(1024);

  add(row: number): void {
    if (!Number.isInteger(row) || row < 0) return;
    const at = row >>> 3;
    if (at >= this.#bits.length) {
      const grown = new Uint8Array(Math.max(at + 1, this.#bits.length * 2));
      grown.set(this.#bits);
      this.#bits = grown;
    }
    this.#bits[at]! |= 1 << (row & 7);
  }

  has(row: number): boolean {
    return ((this.#bits[row >>> 3] ?? 0) & (1 << (row & 7))) !== 0;
  }
}
