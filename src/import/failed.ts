/**
 * The --failed file: invalid and failed rows in the input's own columns plus `error`, so
 * a user can fix them in a spreadsheet and import the file again. Rewritten each run (it
 * lists this run's problems); mode 0600.
 */
import { closeSync, openSync, writeSync } from 'node:fs';
import { stringify } from 'csv-stringify/sync';
import { UsageError } from '../errors.js';

export interface FailedFile {
  write(values: readonly string[], error: string): void;
  close(): void;
}

export function openFailed(path: string, headers: readonly string[]): FailedFile {
  let fd: number;
  try {
    fd = openSync(path, 'w', 0o600);
  } catch (error) {
    throw new UsageError(
      `cannot write --failed ${path}: ${(error as NodeJS.ErrnoException).code ?? error}`,
      'output_unwritable',
    );
  }
  const width = headers.length;
  writeSync(fd, stringify([[...headers, 'error']]));
  return {
    write(values, error) {
      // `error` stays under its header: short rows are padded, extra fields follow it.
      const cells = [...values.slice(0, width)];
      while (cells.length < width) cells.push('');
      writeSync(fd, stringify([[...cells, error, ...values.slice(width)]]));
    },
    close() {
      closeSync(fd);
    },
  };
}
