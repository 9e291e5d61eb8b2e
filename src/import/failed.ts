/**
 * The --failed file: invalid and failed rows in the input's own columns plus `error`, so
 * a user can fix them in a spreadsheet and import the file again. Failed rows carry the
 * idempotency key they were sent with (an added `idempotency_key` column when the input has
 * none): such a row may have been created before the failure, so re-importing it replays the
 * same client (or, if it was edited, gets a 409) instead of creating a second one.
 * Rewritten each run (it lists this run's problems); mode 0600.
 */
import { closeSync } from 'node:fs';
import { csvSafeRecord } from '../csv-text.js';
import type { Field } from './fields.js';
import { writeFixItWorkbook } from './fix-it-workbook.js';
import { lockOutput, openPrivate, writeFully } from './output-files.js';

export interface FailedFile {
  /** `param`: the field the service named in its error, to mark in a workbook. */
  write(values: readonly string[], error: string, key?: string, param?: string): void;
  close(): void;
}

export function openFailed(
  path: string,
  headers: readonly string[],
  options: { addKeyColumn: boolean; columns?: Partial<Record<Field, number>> },
): FailedFile {
  const lock = lockOutput(path, '--failed');
  if (/\.xlsx$/i.test(path)) return lockedWorkbook(path, headers, options, lock);
  let fd: number;
  try {
    fd = openPrivate(path, 'w');
  } catch (error) {
    lock.release();
    throw error;
  }
  const width = headers.length;
  const keyColumn = options.addKeyColumn ? ['idempotency_key'] : [];
  writeFully(fd, csvSafeRecord([...headers, ...keyColumn, 'error'], '\n'), path);
  return {
    write(values, error, key) {
      // `error` stays under its header: short rows are padded, extra fields follow it.
      const cells = [...values.slice(0, width)];
      while (cells.length < width) cells.push('');
      const keyCell = options.addKeyColumn ? [key ?? ''] : [];
      writeFully(fd, csvSafeRecord([...cells, ...keyCell, error, ...values.slice(width)], '\n'), path);
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

/** `--failed fix-me.xlsx`: the fix-it workbook, under the same lock as the CSV. */
function lockedWorkbook(
  path: string,
  headers: readonly string[],
  options: { addKeyColumn: boolean; columns?: Partial<Record<Field, number>> },
  lock: { release(): void },
): FailedFile {
  let workbook: FailedFile;
  try {
    workbook = writeFixItWorkbook(path, headers, options);
  } catch (error) {
    lock.release();
    throw error;
  }
  return {
    write: (values, error, key, param) => workbook.write(values, error, key, param),
    close() {
      try {
        workbook.close();
      } finally {
        lock.release();
      }
    },
  };
}
