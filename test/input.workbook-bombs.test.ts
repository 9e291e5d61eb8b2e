/**
 * Workbook bombs: a kilobyte or so of .ods, .xls or .xlsx that declares gigabytes or work
 * without end (a row of a thousand cells repeated ten thousand times, merged ranges and text
 * lengths SheetJS believed, records too short for their fields on which it never returned, a
 * sector chain that loops, a column spanned a hundred million times, a part that inflates past
 * any real one). Each is refused, or read for what it really holds, without expanding
 * what it declares: read in a child process under a 96-MB heap that would die of any of
 * them read as declared, and through `ccs-bulk validate` with its peak RSS measured.
 */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTempDir, ROOT } from './helpers.js';
import { RSS_LIMIT_MIB, runCliMeasured } from './hostile.helpers.js';
import { odsBombs, odsEndlessTag, textBombs, writeOds, xlsBombs, xlsxBombs } from './workbook-bombs.js';

interface Bomb {
  name: string;
  write(path: string): void;
  /** The refusal's code and the words it must hold; or the records a defused file reads as. */
  refused?: { code: string; says: string };
  records?: number;
}

const BOMBS: Bomb[] = [
  { name: 'repeats.ods', write: (path) => writeOds(path, () => [odsBombs.repeats()]), refused: { code: 'input_too_large', says: 'rows 2–10,001: what it writes once and repeats' } },
  { name: 'columns.ods', write: (path) => writeOds(path, () => [odsBombs.columns()]), refused: { code: 'input_xlsx', says: 'more than 16,384 columns in row 2' } },
  { name: 'spaces.ods', write: (path) => writeOds(path, () => [odsBombs.spaces()]), refused: { code: 'input_too_large', says: 'more than 64 Mi characters of text' } },
  { name: 'endless-tag.ods', write: (path) => writeOds(path, odsEndlessTag), refused: { code: 'input_xlsx', says: 'a tag runs on past 4 Mi characters' } },
  { name: 'merges.xls', write: (path) => writeFileSync(path, xlsBombs.merges()), records: 0 },
  { name: 'labels.xls', write: (path) => writeFileSync(path, xlsBombs.labels()), refused: { code: 'input_xlsx', says: 'holds text longer than itself' } },
  { name: 'short-formula.xls', write: (path) => writeFileSync(path, xlsBombs.shortFormula()), records: 0 },
  { name: 'empty-string.xls', write: (path) => writeFileSync(path, xlsBombs.emptyString()), refused: { code: 'input_xlsx', says: 'record 0x7 is shorter than its own fields' } },
  { name: 'sector-loop.xls', write: (path) => writeFileSync(path, xlsBombs.cycle()), refused: { code: 'input_xlsx', says: 'the sectors of a stream loop back' } },
  { name: 'column-span.xls', write: (path) => writeFileSync(path, textBombs.xmlSpan()), refused: { code: 'input_xlsx', says: 'span more than 16,384 columns' } },
  { name: 'cell-index.xls', write: (path) => writeFileSync(path, textBombs.xmlIndex()), refused: { code: 'input_xlsx', says: 'more than 16,384 columns in row 2' } },
  { name: 'colspan.xls', write: (path) => writeFileSync(path, textBombs.htmlWide()), refused: { code: 'input_xlsx', says: 'more than 16,384 columns in row 2' } },
  { name: 'styles.xlsx', write: xlsxBombs.styles, refused: { code: 'input_too_large', says: 'its part xl/styles.xml inflates to 65.0 MiB, past the 64 MiB' } },
  { name: 'workbook.xlsx', write: xlsxBombs.workbook, refused: { code: 'input_too_large', says: 'its part xl/workbook.xml inflates to 17.0 MiB, past the 16 MiB' } },
  { name: 'endless-tag.xlsx', write: xlsxBombs.endlessTag, refused: { code: 'input_xlsx', says: 'a tag runs on past 4 Mi characters' } },
  { name: 'dimension.xlsx', write: xlsxBombs.dimension, records: 1 },
];

// Reads each file with openRows and reports what came out or stopped it, and the most memory
// the process's JavaScript held at once for it (heap plus Buffers), sampled every millisecond.
// SheetJS is loaded first: its code and tables are not the file's.
const READ = `
const { openRows } = await import(${JSON.stringify(join(ROOT, 'dist', 'import', 'read', 'index.js'))});
await import('@e965/xlsx');
await import('@e965/xlsx/dist/cpexcel.full.mjs');
const held = () => { const m = process.memoryUsage(); return m.heapUsed + m.external; };
const results = [];
for (const file of process.argv.slice(1)) {
  globalThis.gc();
  const before = held();
  let peak = before;
  const sample = setInterval(() => (peak = Math.max(peak, held())), 1);
  let records = 0;
  let error;
  try {
    const source = await openRows(file);
    for await (const batch of source.batches) {
      peak = Math.max(peak, held());
      records += batch.length;
    }
  } catch (e) {
    error = { name: e.constructor.name, code: e.code, message: e.message };
  }
  peak = Math.max(peak, held());
  clearInterval(sample);
  results.push({ file, records, error, heldGrowth: peak - before });
}
console.log(JSON.stringify(results));
`;

interface ReadResult {
  file: string;
  records: number;
  error?: { name: string; code: string; message: string };
  heldGrowth: number;
}

let temp: Awaited<ReturnType<typeof makeTempDir>>;
const paths = new Map<string, string>();
const figures: string[] = [];
beforeAll(async () => {
  temp = await makeTempDir();
  for (const bomb of BOMBS) {
    const path = join(temp.dir, bomb.name);
    bomb.write(path);
    paths.set(bomb.name, path);
  }
});
afterAll(async () => {
  if (figures.length > 0) console.log(`workbook bombs (file, size, exit, seconds, peak RSS MiB):\n${figures.join('\n')}`);
  await temp.cleanup();
});

describe('read in a process of their own', () => {
  it('each is refused, or read for what it holds, without expanding what it declares', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ['--max-old-space-size=96', '--expose-gc', '--input-type=module', '-e', READ, ...paths.values()], {
      cwd: ROOT,
      timeout: 120_000,
    });
    const results = JSON.parse(stdout) as ReadResult[];
    console.log(`workbook bombs, held by the reader (MiB): ${results.map((r, i) => `${BOMBS[i]!.name} ${(r.heldGrowth / 1_048_576).toFixed(1)}`).join(', ')}`);
    for (const [index, bomb] of BOMBS.entries()) {
      const result = results[index]!;
      if (bomb.refused) {
        expect(result.error, bomb.name).toMatchObject({ name: 'InputError', code: bomb.refused.code });
        expect(result.error?.message, bomb.name).toContain(bomb.refused.says);
        expect(result.error?.message.startsWith(`${paths.get(bomb.name)}`), bomb.name).toBe(true);
      } else {
        expect(result.error, bomb.name).toBeUndefined();
        expect(result.records, bomb.name).toBe(bomb.records);
      }
      // What the reader held, not the process's RSS (see input.memory.test.ts): a bomb read as
      // declared holds gigabytes; the largest here holds a 4 Mi-character tag before refusing it.
      expect(result.heldGrowth, bomb.name).toBeLessThan(48 * 1024 * 1024);
    }
  }, 150_000);
});

describe('ccs-bulk validate', () => {
  it.for(BOMBS)('$name: exit 2 naming the file (0 when defused), under RSS_LIMIT_MIB', { timeout: 60_000 }, async (bomb) => {
    const path = paths.get(bomb.name)!;
    const run = await runCliMeasured(['validate', path, '--results', join(temp.dir, `${bomb.name}.results.csv`)], { timeoutMs: 45_000 });
    const { size } = await stat(path);
    figures.push(
      `  ${bomb.name.padEnd(20)} ${String(size).padStart(7)} B  ${run.code}  ${(run.elapsedMs / 1000).toFixed(2).padStart(5)} s  ${run.peakRssMiB.toFixed(0).padStart(4)}`,
    );
    expect(run.signal).toBeNull();
    if (bomb.refused) {
      expect(run.code, run.stderr).toBe(2);
      // Before the header, the error line ends in its code; after it, the run's summary names the cause.
      expect(run.stderr).toContain(`${path}: `);
      expect(run.stderr).toContain(bomb.refused.says);
    } else {
      expect(run.code, run.stderr).toBe(0);
    }
    expect(run.stderr).not.toMatch(/\n\s+at /);
    expect(run.peakRssMiB).toBeLessThan(RSS_LIMIT_MIB);
  });
});
