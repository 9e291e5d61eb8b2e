/**
 * Fuzzing the readers (fast-check): random bytes never crash or hang a reader (every failure is
 * an InputError), and random CSV structures read back cell for cell (random workbooks: in
 * input.hostile-xlsx.test.ts). FUZZ_RUNS sets the runs per property (`npm run test:fuzz` runs
 * many more than the suite's default).
 */
import { writeFile } from 'node:fs/promises';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { HEADER, RUNS, readOrRefuse, row, TIMEOUT } from './fuzz.helpers.js';
import { useInputFiles } from './input.helpers.js';

const { path } = useInputFiles();
let files = 0;

describe('random bytes', () => {
  it.each(['csv', 'txt', 'xlsx'])('as .%s: read or refused with an InputError, never a crash', async (extension) => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.uint8Array({ maxLength: 4096 }),
          // Text-like bytes reach deeper into the parser than noise does.
          fc.array(fc.constantFrom(...'a,;\t|"\r\n\u00e9 x'.split('')), { maxLength: 400 }).map((chars) => Buffer.from(chars.join(''))),
          // A zip's signature first: the workbook path for .xlsx, the "is a zip" check for CSV.
          fc.uint8Array({ maxLength: 2048 }).map((tail) => Buffer.concat([Buffer.from([0x50, 0x4b, 0x03, 0x04]), tail])),
        ),
        async (bytes) => {
          const file = path(`bytes-${++files}.${extension}`);
          await writeFile(file, bytes);
          await readOrRefuse(file);
        },
      ),
      { numRuns: RUNS },
    );
  }, TIMEOUT);
});

describe('random CSV structures', () => {
  it('quoted, any delimiter, any line end: every cell reads back as written', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(row, { minLength: 1, maxLength: 30 }),
        fc.constantFrom(',', ';', '\t', '|'),
        fc.constantFrom('\n', '\r\n'),
        fc.boolean(),
        async (rows, delimiter, eol, bom) => {
          const quote = (text: string) => `"${text.replaceAll('"', '""')}"`;
          const text = [HEADER, ...rows].map((cells) => cells.map(quote).join(delimiter)).join(eol) + eol;
          const file = path(`structure-${++files}.csv`);
          await writeFile(file, (bom ? '\ufeff' : '') + text);
          const read = await readOrRefuse(file, { delimiter, encoding: 'utf-8' });
          expect(read).toEqual(rows);
        },
      ),
      { numRuns: RUNS },
    );
  }, TIMEOUT);
});
