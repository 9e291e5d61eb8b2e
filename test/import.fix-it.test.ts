import { execFile, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import ExcelJS from 'exceljs';
import { parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import { describe, expect, it } from 'vitest';
import { markCells } from '../src/import/fix-it/fix-it-workbook.js';
import { openRows } from '../src/import/read/index.js';
import { readAll } from './input.helpers.js';
import { readResults, ROOT, useSandbox, runCliInProcess } from './helpers.js';

const ctx = useSandbox();
const execFileAsync = promisify(execFile);

const HEADER = ['Full Name', 'E-mail', 'Country', 'Address', 'Currency', 'Ref'];
const ROWS = [
  ['Good One', 'good@example.com', 'DE', 'Street 1', 'EUR', '001'],
  ['Ann Typo', 'ann@gmial.com', 'Germny', 'Street 2', 'EUR0', '007'],
  ['', 'bob@example.com', 'FR', '=1+1', 'EUR', '0042'],
  ['Short', 'short@example.com'],
];

async function validateInto(name: string): Promise<{ input: string; failed: string }> {
  const input = join(ctx.dir, `${name}.csv`);
  await writeFile(input, stringify([HEADER, ...ROWS]));
  const failed = join(ctx.dir, `${name}-fix-me.xlsx`);
  const run = await runCliInProcess(['validate', input, '--failed', failed], { env: ctx.env() });
  expect(run.code).toBe(1);
  return { input, failed };
}

describe('the fix-it workbook (--failed fix-me.xlsx)', () => {
  it("holds the input's columns and values as text, plus error, readable by our own reader", async () => {
    const { failed } = await validateInto('values');
    const source = await openRows(failed);
    // idempotency_key as in the CSV: the input has no key column of its own.
    expect(source.headers).toEqual([...HEADER, 'idempotency_key', 'error']);
    const records = await readAll(source);
    expect(records.map((r) => r.values.slice(0, 6))).toEqual([ROWS[1], ROWS[2], [...ROWS[3]!, '', '', '', '']]);
    // Each line opens with where the row came from: the input's name, its line and its data row.
    expect(records[0]!.values[7]).toBe(
      'values.csv line 3 (data row 2): ' +
      'email: mistyped domain "gmial.com" (did you mean ann@gmail.com?); ' +
        'country: unknown country "Germny" (did you mean Germany (DE)?); ' +
        'currency: not an ISO 4217 currency code ("EUR0"; did you mean EUR?)',
    );
    expect(records[2]!.values[7]).toMatch(/^values\.csv line 5 \(data row 4\): row has 2 fields but the header has 6; country: required, but empty/);
  });

  it('fills and comments the cells that failed, freezes a bold header with an autofilter, never a formula', async () => {
    const { failed } = await validateInto('styles');
    const book = new ExcelJS.Workbook();
    await book.xlsx.readFile(failed);
    const sheet = book.worksheets[0]!;
    expect(sheet.views[0]).toMatchObject({ state: 'frozen', ySplit: 1 });
    expect(sheet.autoFilter).toBe('A1:H4');
    expect(sheet.getCell('A1').font?.bold).toBe(true);
    const red = (ref: string) => (sheet.getCell(ref).fill as { fgColor?: { argb?: string } } | undefined)?.fgColor?.argb;
    const note = (ref: string) => {
      const n = sheet.getCell(ref).note;
      return typeof n === 'string' ? n : n?.texts?.map((t) => t.text).join('');
    };
    expect([red('B2'), red('C2'), red('E2')]).toEqual(['FFFFC7CE', 'FFFFC7CE', 'FFFFC7CE']);
    expect([red('A2'), red('D2'), red('F2')]).toEqual([undefined, undefined, undefined]);
    expect(note('C2')).toBe('unknown country "Germny" (did you mean Germany (DE)?)\nFix: type "Germany" or "DE".');
    expect(note('B2')).toBe('mistyped domain "gmial.com" (did you mean ann@gmail.com?)\nFix: type "ann@gmail.com".');
    // An empty cell that is the problem is marked too; a row-level problem marks `error`.
    expect([red('A3'), note('A3')]).toEqual(['FFFFC7CE', 'required, but empty\nFix: fill in this cell.']);
    expect(note('H4')).toBe('row has 2 fields but the header has 6');
    // Text, never a number or a formula: leading zeros and `=` survive.
    expect([sheet.getCell('F2').value, sheet.getCell('F3').value, sheet.getCell('D3').value]).toEqual([
      '007',
      '0042',
      '=1+1',
    ]);
    expect(sheet.getCell('D3').formula).toBeUndefined();
  });

  it('imports again with no flags once fixed, the error column ignored', async () => {
    const { failed } = await validateInto('again');
    const book = new ExcelJS.Workbook();
    await book.xlsx.readFile(failed);
    const sheet = book.worksheets[0]!;
    sheet.getCell('B2').value = 'ann@gmail.com';
    sheet.getCell('C2').value = 'Germany';
    sheet.getCell('E2').value = 'EUR';
    sheet.getCell('A3').value = 'Bob';
    sheet.getRow(4).values = ['Short', 'short@example.com', 'PL', 'Street 4', 'PLN', '004', '', 'old error'];
    await book.xlsx.writeFile(failed);
    const before = ctx.sandbox.store.size;
    const run = await runCliInProcess(['import', failed, '--json', '--quiet'], { env: ctx.env() });
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout).counts).toMatchObject({ created: 3, invalid: 0 });
    expect(ctx.sandbox.store.size - before).toBe(3);
    const lines = await readResults(`${failed}.results.csv`);
    const emails = lines.map((line) => ctx.sandbox.store.get(line[2]!)?.email);
    expect(emails).toEqual(expect.arrayContaining(['ann@gmail.com', 'bob@example.com', 'short@example.com']));
  });

  it("marks a row the service refused on the cell its error's param names", async () => {
    const header = 'name,email,country,address,idempotency_key\n';
    const first = join(ctx.dir, 'conflict-1.csv');
    await writeFile(first, `${header}Kim,kim@example.com,DE,Street 1,fix-it-conflict-1\n`);
    expect((await runCliInProcess(['import', first], { env: ctx.env() })).code).toBe(0);
    // Same key, another body: the service answers 409 with param idempotency_key.
    const second = join(ctx.dir, 'conflict-2.csv');
    await writeFile(second, `${header}Kim Changed,kim@example.com,DE,Street 1,fix-it-conflict-1\n`);
    const failed = join(ctx.dir, 'conflict-fix-me.xlsx');
    // --identity none: Kim's person is on the service already, and would be matched before sending.
    const run = await runCliInProcess(['import', second, '--failed', failed, '--json', '--quiet', '--identity', 'none'], { env: ctx.env() });
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stdout).counts).toMatchObject({ failed: 1 });
    const book = new ExcelJS.Workbook();
    await book.xlsx.readFile(failed);
    const sheet = book.worksheets[0]!;
    // The input has its own key column: no column is added, `error` is F.
    expect(sheet.getRow(1).values).toEqual([undefined, 'name', 'email', 'country', 'address', 'idempotency_key', 'error']);
    const fill = (ref: string) => (sheet.getCell(ref).fill as { fgColor?: { argb?: string } } | undefined)?.fgColor?.argb;
    expect([fill('E2'), fill('F2'), fill('A2')]).toEqual(['FFFFC7CE', undefined, undefined]);
    const note = sheet.getCell('E2').note;
    // The error cell opens with where the row came from; the comment is the service's error alone.
    const text = typeof note === 'string' ? note : note?.texts?.map((t) => t.text).join('');
    expect(sheet.getCell('F2').value).toBe(`${basename(second)} line 2 (data row 1): ${text}`);
    expect(String(sheet.getCell('F2').value)).toMatch(/idempotency/);
  });

  it('marks every column of a field built from several: each part of an empty address, each part of an empty name', async () => {
    // A Salesforce contacts report: name and address are each put together from several columns.
    const header = ['First Name', 'Last Name', 'Email', 'Mailing Street', 'Mailing City', 'Mailing State/Province', 'Mailing Zip/Postal Code', 'Mailing Country'];
    const input = join(ctx.dir, 'composite-parts.csv');
    await writeFile(
      input,
      stringify([
        header,
        ['Dev', 'Patel', 'dev.parts@example.com', '', '', ' ', '', 'United Kingdom'],
        ['', '', 'nobody.parts@example.com', '5 Main St', 'Boston', 'MA', '02110', 'United States'],
      ]),
    );
    const failed = join(ctx.dir, 'composite-parts-fix-me.xlsx');
    const run = await runCliInProcess(['validate', input, '--failed', failed], { env: ctx.env() });
    expect(run.code, run.stderr).toBe(1);
    const book = new ExcelJS.Workbook();
    await book.xlsx.readFile(failed);
    const sheet = book.worksheets[0]!;
    const red = (ref: string) => (sheet.getCell(ref).fill as { fgColor?: { argb?: string } } | undefined)?.fgColor?.argb;
    const note = (ref: string) => {
      const n = sheet.getCell(ref).note;
      return typeof n === 'string' ? n : n?.texts?.map((t) => t.text).join('');
    };
    // Row 2: the address (D to G) is empty, every part marked; the name and the country are not.
    expect(['D2', 'E2', 'F2', 'G2'].map(red)).toEqual(Array(4).fill('FFFFC7CE'));
    expect(['A2', 'B2', 'C2', 'H2'].map(red)).toEqual(Array(4).fill(undefined));
    expect(note('F2')).toBe('required, but empty\nFix: fill in this cell.\n(address is built from 4 columns, each marked: this is one)');
    // Row 3: the name's two parts.
    expect(['A3', 'B3'].map(red)).toEqual(['FFFFC7CE', 'FFFFC7CE']);
    expect(['D3', 'E3', 'F3', 'G3'].map(red)).toEqual(Array(4).fill(undefined));
    expect(note('B3')).toBe('required, but empty\nFix: fill in this cell.\n(name is built from 2 columns, each marked: this is one)');
  });

  it('matches the committed fixture that openpyxl read (scripts/fix-it-check.py)', async () => {
    const dir = join(ROOT, 'fixtures', 'fix-it');
    const failed = join(ctx.dir, 'fixture-fix-me.xlsx');
    const run = await runCliInProcess(['validate', join(dir, 'clients.csv'), '--failed', failed, '--results', join(ctx.dir, 'r.csv')], {
      env: ctx.env(),
    });
    expect(run.code).toBe(1);
    // Byte for byte (the writer is deterministic), so openpyxl's reading below is of this output.
    expect((await readFile(failed)).equals(await readFile(join(dir, 'fix-me.xlsx')))).toBe(true);
    const openpyxl = await readFile(join(dir, 'openpyxl.txt'), 'utf8');
    expect(openpyxl).toContain('C4 fill=FFFFC7CE type=s value="Germny" comment="unknown country \\"Germny\\" (did you mean Germany (DE)?)\\nFix: type \\"Germany\\" or \\"DE\\"."');
    expect(openpyxl).toContain('frozen=A2');
    expect(openpyxl).toContain('autofilter=A1:J8');
    expect(openpyxl).toContain('D7 fill=none type=s value="=HYPERLINK(\\"x\\")"');
    expect(openpyxl).toContain('G2 fill=none type=s value="000102"');
  });
});

describe('the workbook in LibreOffice (scripts/make-fix-it-fixture.js)', () => {
  const dir = join(ROOT, 'fixtures', 'fix-it');
  const hasSoffice = spawnSync('soffice', ['--version'], { stdio: 'ignore', timeout: 60_000 }).status === 0;
  if (!hasSoffice) console.log('import.fix-it: the live LibreOffice conversion is skipped: no soffice here (apt-get install libreoffice-calc-nogui)');

  it('reads every cell as written: leading zeros, a formula-looking value as text, dates, the error column', async () => {
    const input = parse(await readFile(join(dir, 'clients.csv'))) as string[][];
    const seen = parse(await readFile(join(dir, 'libreoffice.csv'))) as string[][];
    expect(seen[0]).toEqual([...input[0]!, 'idempotency_key', 'error']);
    // Every input row but the valid first one, cell for cell, and a reason in `error`.
    expect(seen.slice(1).map((row) => row.slice(0, input[0]!.length))).toEqual(input.slice(2));
    expect(seen.slice(1).every((row) => row.at(-1)!.length > 0)).toBe(true);
    expect(seen.find((row) => row[0] === 'Formula')![3]).toBe('=HYPERLINK("x")');
  });

  it('saved back by LibreOffice, it validates to the same rows, outcomes and keys as the workbook ccs-bulk wrote', async () => {
    const outcomes = async (workbook: string, name: string) => {
      const results = join(ctx.dir, `${name}.results.csv`);
      const run = await runCliInProcess(['validate', workbook, '--results', results, '--quiet'], { env: ctx.env() });
      expect(run.code, run.stderr).toBe(1);
      return (await readResults(results)).map((line) => line.slice(0, 6).join(','));
    };
    const ours = await outcomes(join(dir, 'fix-me.xlsx'), 'ours');
    expect(ours).toHaveLength(7);
    expect(await outcomes(join(dir, 'libreoffice-resaved.xlsx'), 'resaved')).toEqual(ours);
  });

  it.skipIf(!hasSoffice)('soffice --headless reads this build\'s workbook as the committed reading (where LibreOffice is installed)', async () => {
    const failed = join(ctx.dir, 'lo-fix-me.xlsx');
    const run = await runCliInProcess(['validate', join(dir, 'clients.csv'), '--failed', failed, '--results', join(ctx.dir, 'lo.csv')], {
      env: ctx.env(),
    });
    expect(run.code).toBe(1);
    const profile = pathToFileURL(join(ctx.dir, 'lo-profile')).href;
    const outdir = join(ctx.dir, 'lo');
    await execFileAsync('soffice', ['--headless', '--norestore', `-env:UserInstallation=${profile}`, '--convert-to', 'csv', '--outdir', outdir, failed], {
      timeout: 120_000,
    });
    expect(await readFile(join(outdir, 'lo-fix-me.csv'), 'utf8')).toBe(await readFile(join(dir, 'libreoffice.csv'), 'utf8'));
  }, 150_000);
});

describe('limits of a sheet', () => {
  it('stops the run (output_failed) on a value longer than a cell holds, naming the column', async () => {
    const input = join(ctx.dir, 'long.csv');
    const long = 'x'.repeat(40_000);
    await writeFile(input, `name,email,country,address,notes\nA,a@example.com,Germny,S 1,${long}\n`);
    const failed = join(ctx.dir, 'long-fix-me.xlsx');
    const run = await runCliInProcess(['validate', input, '--failed', failed], { env: ctx.env() });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('holds over 32767 characters in "notes"');
    expect(run.stderr).toContain('[output_failed]');
    // Closed as a workbook all the same, without the refused row, and no temp file left behind.
    expect(await readAll(await openRows(failed))).toEqual([]);
    expect((await readdir(ctx.dir)).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });
});

describe('flat memory', () => {
  it('writes 100,000 failed rows with the JavaScript heap capped at 32 MB', { timeout: 180_000 }, async () => {
    const failed = join(ctx.dir, 'many-fix-me.xlsx');
    // A writer that kept the rows (or the comments) would run out of heap long before the end.
    const script = `
      const { writeFixItWorkbook } = await import(${JSON.stringify(pathToFileURL(join(ROOT, 'dist/import/fix-it/fix-it-workbook.js')).href)});
      const book = writeFixItWorkbook(${JSON.stringify(failed)}, ['name', 'email', 'country', 'ref'],
        { addKeyColumn: true, columns: { name: 0, email: 1, country: 2 } });
      for (let i = 0; i < 100000; i++) {
        book.write(['Client ' + i, 'c' + i + '@gmial.com', 'Germny', String(i).padStart(8, '0')],
          'email: mistyped domain "gmial.com" (did you mean c' + i + '@gmail.com?); country: unknown country "Germny" (did you mean Germany (DE)?)');
      }
      book.close();`;
    const child = spawn(process.execPath, ['--max-old-space-size=32', '--input-type=module', '-e', script], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const [code] = (await once(child, 'exit')) as [number | null];
    expect(stderr).toBe('');
    expect(code).toBe(0);
    let rows = 0;
    let last: string[] = [];
    for await (const batch of (await openRows(failed)).batches) {
      rows += batch.length;
      last = batch[batch.length - 1]?.values ?? last;
    }
    expect(rows).toBe(100_000);
    expect(last.slice(0, 4)).toEqual(['Client 99999', 'c99999@gmial.com', 'Germny', '00099999']);
  });
});

describe('markCells', () => {
  const columns: Record<string, number> = { email: 1, country: 2, '"Notes"': 5 };
  const columnOf = (subject: string) => columns[subject];
  it.each([
    ['country: unknown country "X"', undefined, [[2, 'unknown country "X"']]],
    ['email: bad; country: worse; with a semicolon', undefined, [[1, 'bad'], [2, 'worse; with a semicolon']]],
    ['row has 2 fields but the header has 6; email: bad', undefined, [[9, 'row has 2 fields but the header has 6'], [1, 'bad']]],
    ['"Notes": byte 0xE9 is not valid UTF-8', undefined, [[5, 'byte 0xE9 is not valid UTF-8']]],
    ['address: required, but empty', undefined, [[9, 'address: required, but empty']]], // no such column
    ['422 invalid_country: not a country', 'country', [[2, '422 invalid_country: not a country']]],
    ['500 server_error', undefined, [[9, '500 server_error']]],
  ])('%j (param %j)', (error, param, expected) => {
    expect([...markCells(error, param, columnOf, 9)]).toEqual(expected);
  });

  it('marks each column of a field built from several, for a row check and for the service naming it', () => {
    const parts = (subject: string) => (subject === 'address' ? [3, 4, 6] : columnOf(subject));
    expect([...markCells('address: required, but empty; email: bad', undefined, parts, 9)]).toEqual([
      [3, 'required, but empty'],
      [4, 'required, but empty'],
      [6, 'required, but empty'],
      [1, 'bad'],
    ]);
    expect([...markCells('422 invalid_address: too long', 'address', parts, 9)].map(([column]) => column)).toEqual([3, 4, 6]);
  });
});
