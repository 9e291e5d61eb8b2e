/** Shared by the reader fuzz tests: run counts, the read-or-refuse check, random rows. */
import fc from 'fast-check';
import { InputError } from '../src/errors.js';
import { openRows, type ReadOptions } from '../src/import/read/index.js';
import { readAll } from './input.helpers.js';

/** Runs per property: FUZZ_RUNS (`npm run test:fuzz` sets thousands), a quick 60 in the suite. */
export const RUNS = Number(process.env.FUZZ_RUNS ?? 60);
/** Per property: generous, since a run of `npm run test:fuzz` does thousands of files. */
export const TIMEOUT = Math.max(60_000, RUNS * 1_000);

/** Reads the whole file; any failure must be an InputError (a clear, expected refusal). */
export async function readOrRefuse(file: string, options: ReadOptions = {}): Promise<string[][] | InputError> {
  try {
    const source = await openRows(file, options);
    return (await readAll(source)).map((record) => record.values);
  } catch (error) {
    if (error instanceof InputError) return error;
    throw error;
  }
}

export const HEADER = ['name', 'email', 'country', 'address'];

/** Any text but NUL (refused as binary); rows are never blank (blank rows are skipped). */
const cell = fc
  .oneof(
    fc.string({ unit: 'grapheme', maxLength: 20 }),
    fc.constantFrom('"', '""', 'a,b', 'x\r\ny', 'line\nbreak', ' padded ', "'=1+1", '=SUM(A1)', '\u00e9\u00e8', '00123'),
  )
  .map((text) => text.replaceAll('\u0000', ''));

export const row = fc
  .array(cell, { minLength: HEADER.length, maxLength: HEADER.length })
  .filter((cells) => cells.some((c) => c.trim() !== ''));
