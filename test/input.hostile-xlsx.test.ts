/**
 * Hostile workbooks (zip bombs, a gigabyte of shared strings, random and damaged workbooks) and
 * the corpus cases that wait on a reader change (each names it under `pending` in the
 * manifest): see test/hostile.corpus.ts and test/fuzz.helpers.ts.
 */
import { writeFile } from 'node:fs/promises';
import ExcelJS from 'exceljs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { HEADER, RUNS, readOrRefuse, row, TIMEOUT } from './fuzz.helpers.js';
import { useSandbox } from './helpers.js';
import { hostileCases, testHostileCases } from './hostile.corpus.js';
import { useInputFiles } from './input.helpers.js';

const ctx = useSandbox();

testHostileCases(ctx, hostileCases((entry) => entry.xlsx === true || entry.pending !== undefined), 120_000);

const { path } = useInputFiles();
let files = 0;

describe('random xlsx structures', () => {
  it('workbooks of random text cells (and random damage to them) read back or are refused', async () => {
    await fc.assert(
      fc.asyncProperty(
        // XML normalizes a raw CR in text to LF (exceljs writes it raw): not a reader matter.
        fc.array(row.map((cells) => cells.map((text) => text.replaceAll('\r', ''))), { minLength: 1, maxLength: 20 }),
        fc.option(fc.tuple(fc.nat(), fc.integer({ min: 1, max: 255 })), { nil: undefined }),
        async (rows, damage) => {
          const workbook = new ExcelJS.Workbook();
          const sheet = workbook.addWorksheet('Clients');
          for (const cells of [HEADER, ...rows]) sheet.addRow(cells);
          const bytes = Buffer.from(await workbook.xlsx.writeBuffer());
          if (damage) bytes[damage[0] % bytes.length]! ^= damage[1];
          const file = path(`workbook-${++files}.xlsx`);
          await writeFile(file, bytes);
          const read = await readOrRefuse(file);
          // An omitted cell is an empty cell: a row's trailing empty cells may not be listed.
          const trimmed = (cells: string[]) => cells.slice(0, cells.findLastIndex((text) => text !== '') + 1);
          if (damage === undefined) expect((read as string[][]).map(trimmed)).toEqual(rows.map(trimmed));
        },
      ),
      { numRuns: Math.max(5, Math.floor(RUNS / 4)) },
    );
  }, TIMEOUT);
});
