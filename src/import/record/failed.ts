/**
 * The --failed file: invalid and failed rows in the input's own columns plus `error`, so
 * a user can fix them in a spreadsheet and import the file again as it is. Failed rows carry the
 * idempotency key they were sent with (an added `idempotency_key` column when the input has
 * none): such a row may have been created before the failure, so re-importing it replays the
 * same client (or, if it was edited, gets a 409) instead of creating a second one.
 * It is written as the input was: the same delimiter, and the same encoding when that encoding
 * can hold every value (else the file becomes UTF-8 with a BOM, which Excel and ccs-bulk both
 * read). A spreadsheet's rows are written as a CSV in UTF-8 with a BOM.
 * Rewritten each run (it lists this run's problems): a new private (0600) file renamed over
 * the old one, never written into it or through a link.
 */
import { closeSync, constants, fstatSync, fsyncSync, openSync, readSync, renameSync, rmSync } from 'node:fs';
import { UsageError } from '../../errors.js';
import { csvSafeRecordWith } from '../../infra/csv-text.js';
import { tempBeside } from '../../infra/temp-files.js';
import type { Field } from '../fields.js';
import { writeFixItWorkbook } from '../fix-it/fix-it-workbook.js';
import { createPrivate, lockOutput, replacePrivate, writeFully } from '../../infra/output-files.js';
import { createDecoder } from '../read/index.js';
import { encoderFor, type TextEncoding, UTF8_WITH_BOM } from './text-encoder.js';

/** Where a row stands in the input: its data row, and its line (CSV) or worksheet row as the sheet shows it. */
export interface RowPlace {
  row: number;
  line: number;
}

export interface FailedFile {
  /**
   * `param`: the field the service named in its error, to mark in a workbook. `place`: the row in
   * this run's input, written at the head of `error` (originOf keeps the first input's across re-imports).
   */
  write(values: readonly string[], error: string, key?: string, param?: string, place?: RowPlace): void;
  /** Rows written (0: the file holds only its header). */
  readonly rows: number;
  /** The encoding the file ended up in, and whether it had to leave the input's. */
  readonly encoding: { name: string; changed: boolean };
  close(): void;
}

export interface FailedOptions {
  addKeyColumn: boolean;
  /** The input's delimiter (',' for a spreadsheet). */
  delimiter: string;
  /** The input's encoding as read (undefined: a spreadsheet, written as UTF-8 with a BOM). */
  encoding: { name: string; bom: boolean } | undefined;
  /** An input column not carried over (a re-imported --failed file's own `error`). */
  dropColumn?: number | undefined;
  /** Which input column feeds which field: a workbook marks the cells at fault. */
  columns?: Partial<Record<Field, number>> | undefined;
  /** Fields built from several columns: a workbook marks each of their columns. */
  composites?: Partial<Record<Field, { parts: readonly { column: number }[] }>> | undefined;
  /** The input's name and how its rows are counted on screen ('line' for CSV, 'row' for a worksheet). */
  source?: { name: string; word: 'line' | 'row' } | undefined;
}

/**
 * `clients.csv line 14 (data row 12): ` — where a failed row came from. A re-imported --failed file's
 * own `error` cell starts with the first input's place: that one is kept, so a row fixed over
 * several rounds still names the file and line it was first read from.
 */
export function originOf(values: readonly string[], place: RowPlace | undefined, options: FailedOptions): string {
  const { dropColumn, source } = options;
  const earlier = dropColumn === undefined ? undefined : ORIGIN.exec(values[dropColumn] ?? '')?.[0];
  if (earlier !== undefined) return earlier;
  if (place === undefined || source === undefined) return '';
  return `${source.name} ${source.word} ${place.line} (data row ${place.row}): `;
}

/** The place originOf writes, at the head of an `error` cell. */
const ORIGIN = /^[^\n]+? (?:line|row) \d+ \(data row \d+\): /;

export function openFailed(path: string, headers: readonly string[], options: FailedOptions): FailedFile {
  const lock = lockOutput(path, '--failed');
  if (/\.xlsx$/i.test(path)) return lockedWorkbook(path, headers, options, lock);
  let fd: number;
  try {
    fd = replacePrivate(path);
  } catch (error) {
    lock.release();
    throw error;
  }
  const { dropColumn } = options;
  const carry = (values: readonly string[]) => (dropColumn === undefined ? values : values.filter((_, i) => i !== dropColumn));
  const width = headers.length;
  const wanted = options.encoding && encoderFor(options.encoding.name, options.encoding.bom);
  let encoding: TextEncoding = wanted ?? UTF8_WITH_BOM;
  const state = { rows: 0, changed: options.encoding !== undefined && wanted === undefined };
  const put = (cells: readonly string[]) => {
    const text = csvSafeRecordWith(cells, options.delimiter, '\n');
    let bytes = encoding.encode(text);
    if (bytes === undefined) {
      // A value the input's encoding cannot hold: the lines so far become UTF-8 (with a BOM).
      const transcoded = transcodeToUtf8(path, fd, encoding.name);
      closeSync(fd);
      fd = transcoded;
      encoding = UTF8_WITH_BOM;
      state.changed = true;
      bytes = encoding.encode(text)!;
    }
    writeFully(fd, bytes, path);
  };
  const keyColumn = options.addKeyColumn ? ['idempotency_key'] : [];
  try {
    if (encoding.bom.length > 0) writeFully(fd, encoding.bom, path);
    put([...carry(headers), ...keyColumn, 'error']);
  } catch (error) {
    closeSync(fd);
    lock.release();
    throw error;
  }
  return {
    write(values, error, key, _param, place) {
      // `error` stays under its header: short rows are padded, extra fields follow it.
      const cells = [...values.slice(0, width)];
      while (cells.length < width) cells.push('');
      const keyCell = options.addKeyColumn ? [key ?? ''] : [];
      put([...carry(cells), ...keyCell, originOf(values, place, options) + error, ...values.slice(width)]);
      state.rows++;
    },
    get rows() {
      return state.rows;
    },
    get encoding() {
      return { name: encoding.name, changed: state.changed };
    },
    close() {
      try {
        closeSync(fd);
      } finally {
        lock.release();
      }
    },
  };
}

/**
 * Rewrites the file open as `written` at `path` (in `from`) as UTF-8 with a BOM, atomically;
 * returns the new file, open for writing at its end.
 */
function transcodeToUtf8(path: string, written: number, from: string): number {
  const temp = tempBeside(path);
  const out = createPrivate(temp);
  let input: number | undefined;
  try {
    input = openSync(path, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
    // The file read is the one this run wrote, not one swapped in under its name.
    const [ours, read] = [fstatSync(written), fstatSync(input)];
    if (ours.ino !== read.ino || ours.dev !== read.dev) throw new UsageError(`${path} was replaced while the run wrote it`, 'output_foreign');
    // Only a single-byte encoding can fail to hold a value: no BOM, no sequence across chunks.
    const decoder = createDecoder(from);
    writeFully(out, UTF8_WITH_BOM.bom, temp);
    const chunk = Buffer.allocUnsafe(65_536);
    for (;;) {
      const count = readSync(input, chunk, 0, chunk.length, null);
      if (count === 0) break;
      writeFully(out, Buffer.from(decoder.decode(chunk.subarray(0, count)), 'utf8'), temp);
    }
    fsyncSync(out);
    renameSync(temp, path);
  } catch (error) {
    closeSync(out);
    rmSync(temp, { force: true });
    throw error;
  } finally {
    if (input !== undefined) closeSync(input);
  }
  return out;
}

/** `--failed fix-me.xlsx`: the fix-it workbook, under the same lock as the CSV. */
function lockedWorkbook(
  path: string,
  headers: readonly string[],
  options: FailedOptions,
  lock: { release(): void },
): FailedFile {
  let workbook: ReturnType<typeof writeFixItWorkbook>;
  try {
    // A re-imported workbook's own `error` column (the last) is not carried over.
    const kept = options.dropColumn === undefined ? headers : headers.filter((_, i) => i !== options.dropColumn);
    workbook = writeFixItWorkbook(path, kept, { addKeyColumn: options.addKeyColumn, columns: options.columns, composites: options.composites });
  } catch (error) {
    lock.release();
    throw error;
  }
  let rows = 0;
  return {
    write(values, error, key, param, place) {
      const kept = options.dropColumn === undefined ? values : values.filter((_, i) => i !== options.dropColumn);
      workbook.write(kept, error, key, param, originOf(values, place, options));
      rows++;
    },
    get rows() {
      return rows;
    },
    encoding: { name: 'xlsx', changed: false },
    close() {
      try {
        workbook.close();
      } finally {
        lock.release();
      }
    },
  };
}
