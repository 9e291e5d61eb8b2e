/** .xlsx through the streaming reader: cell values as the user sees them, sheets. */
import { copyFile, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InputError } from '../src/errors.js';
import { cellText, formatNumber, isDateFormat } from '../src/import/read/cell-text.js';
import { openRows } from '../src/import/read/index.js';
import { targetSheet } from '../src/import/read/sheet-choice.js';
import { makeTempDir } from './helpers.js';
import { readAll } from './input.helpers.js';
import { SHEETS } from './sheets.corpus.js';

const workbook = new URL('../fixtures/input/clients.xlsx', import.meta.url).pathname;

let temp: Awaited<ReturnType<typeof makeTempDir>>;
beforeAll(async () => {
  temp = await makeTempDir();
});
afterAll(() => temp.cleanup());

describe('a workbook read in full every time', () => {
  it('reads the shared strings in 300 of 300 reads, in one read each (the zip is read through its central directory)', async () => {
    for (let i = 0; i < 300; i++) {
      const source = await openRows(workbook);
      const records = await readAll(source);
      expect(source.headers.slice(0, 2), `read ${i + 1}`).toEqual(['name', 'email']);
      expect(records[0]?.values[0], `read ${i + 1}`).toBe('Zoë Œuvray-Müller');
    }
  });
});

describe('clients.xlsx, first sheet', () => {
  it('reads cells as displayed text: ISO dates, padded and long numbers, formulas, rich text, links', async () => {
    const source = await openRows(workbook);
    expect(source.info).toMatchObject({ format: 'xlsx', sheet: 'Clients' });
    const records = await readAll(source);
    const [zoe, renee, jose, bjorn, , soren] = records;
    expect(zoe?.values[0]).toBe('Zoë Œuvray-Müller'); // rich text runs joined
    expect(zoe?.values[1]).toBe('zoe.oeuvray@example.com'); // hyperlink → its text
    expect(zoe?.values[6]).toBe('00123'); // 123 formatted 00000
    expect(zoe?.values[5]).toBe('2024-03-15'); // date cell formatted d-mmm-yy
    expect(renee?.values[4]).toBe('EUR'); // formula → cached result
    expect(renee?.values[5]).toBe('2024-02-29');
    expect(jose?.values[6]).toBe('00042'); // text keeps its zeros
    expect(bjorn?.values[6]).toBe('1234567890123'); // no 1.23E+12
    expect(soren?.values[6]).toBe('99');
  });

  it('`line` is the sheet row; formatted empty cells and rows are dropped', async () => {
    const records = await readAll(await openRows(workbook));
    expect(records.map((r) => r.line)).toEqual([2, 3, 4, 5, 6, 7, 8]);
    expect(records.every((r) => r.values.length === 7)).toBe(true);
  });
});

describe('--sheet', () => {
  it.each(['Extras', 'extras', '2'])(
    '%j selects the Extras sheet, whose header is its first non-empty row',
    async (sheet) => {
      const source = await openRows(workbook, { sheet });
      expect(source.info.sheet).toBe('Extras');
      expect(source.headers).toEqual(['kind', 'value']);
      const records = await readAll(source);
      expect(records[0]).toEqual({ row: 1, line: 4, values: ['datetime', '2024-03-15T10:30:00'] });
      expect(Object.fromEntries(records.map((r) => r.values))).toEqual({
        datetime: '2024-03-15T10:30:00',
        boolean: 'TRUE',
        error: '#N/A',
        float: '0.3',
        huge: '1000000000000000000000',
        tiny: '0.0000001',
        fixed: '-1.50',
        'date-formula': '2024-02-29',
        'number-formula': '42',
      });
    },
  );

  it('an unknown sheet lists the sheets there are', async () => {
    const error = await openRows(workbook, { sheet: 'Customers' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InputError);
    expect(error).toMatchObject({ code: 'input_sheet' });
    expect((error as Error).message).toContain('no sheet "Customers"; the workbook has "Clients", "Extras"');
    const byNumber = await openRows(workbook, { sheet: '3' }).catch((e: unknown) => e);
    expect(byNumber).toMatchObject({ code: 'input_sheet' });
  });

  it('picks by exact name, loose name, then 1-based number', () => {
    const names = ['Clients', '2', 'Other '];
    expect(targetSheet(undefined, names)).toBe('Clients');
    expect(targetSheet('2', names)).toBe('2');
    expect(targetSheet('other', names)).toBe('Other ');
    expect(targetSheet('3', names)).toBe('Other ');
    expect(targetSheet('4', names)).toBeUndefined();
  });
});

/** Changes by `change` the uncompressed size the central directory gives `name` (a zip without zip64). */
function declareSize(zip: Buffer, name: string, change: number): void {
  const end = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  let at = zip.readUInt32LE(end + 16);
  for (let entry = 0; entry < zip.readUInt16LE(end + 10); entry++) {
    const length = zip.readUInt16LE(at + 28);
    if (zip.toString('utf8', at + 46, at + 46 + length) === name) {
      zip.writeUInt32LE(zip.readUInt32LE(at + 24) + change, at + 24);
      return;
    }
    at += 46 + length + zip.readUInt16LE(at + 30) + zip.readUInt16LE(at + 32);
  }
  throw new Error(`${name}: not in the central directory`);
}

describe('not really xlsx', () => {
  it('a CSV renamed .xlsx', async () => {
    const path = join(temp.dir, 'fake.xlsx');
    await writeFile(path, 'name,email\nA,a@x.io\n');
    const error = await openRows(path).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'input_format' });
    expect((error as Error).message).toMatch(/not an \.xlsx workbook.*\.csv extension/);
  });

  it('a corrupt zip', async () => {
    const path = join(temp.dir, 'broken.xlsx');
    await writeFile(path, Buffer.concat([Buffer.from('504b0304', 'hex'), Buffer.alloc(200, 7)]));
    const error = await openRows(path).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InputError);
  });

  it.each([
    [-1, /too many bytes/],
    [1, /not enough bytes/],
  ])('a sheet that inflates to other than the size its zip declares (%i) is refused', async (change, reason) => {
    const bytes = await readFile(join(SHEETS, 'openpyxl.xlsx'));
    declareSize(bytes, 'xl/worksheets/sheet1.xml', change);
    const path = join(temp.dir, `declared${change}.xlsx`);
    await writeFile(path, bytes);
    const error = await openRows(path).then(readAll).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'input_xlsx', message: expect.stringMatching(reason) });
  });

  it('an .xlsx named .csv is pointed at the .xlsx extension', async () => {
    const path = join(temp.dir, 'clients.csv');
    await copyFile(workbook, path);
    const error = await openRows(path).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'input_format' });
  });
});

describe('cellText', () => {
  it.each([
    [null, undefined, ''],
    ['00123', '@', '00123'],
    [1234567890123, undefined, '1234567890123'],
    [123456789012345680000, 'General', '123456789012346000000'],
    [1e21, undefined, '1000000000000000000000'],
    [0.1 + 0.2, undefined, '0.3'],
    [-0, undefined, '0'],
    [123, '00000', '00123'],
    [12.5, '0.00', '12.50'],
    [-0.001, '0.00', '0.00'],
    [45366, 'yyyy-mm-dd', '2024-03-15'],
    [45366.4375, 'dd/mm/yyyy hh:mm', '2024-03-15T10:30:00'],
    [45366, '[$-409]d-mmm-yy;@', '2024-03-15'],
    [0.25, '0%', '0.25'],
    [true, undefined, 'TRUE'],
    [false, undefined, 'FALSE'],
    [new Date(Date.UTC(2024, 1, 29)), undefined, '2024-02-29'],
    [{ richText: [{ text: 'a' }, { text: 'b' }] }, undefined, 'ab'],
    [{ formula: 'A1', result: 7 }, undefined, '7'],
    [{ formula: 'A1', result: 45366 }, 'yyyy-mm-dd', '2024-03-15'],
    [{ formula: 'A1' }, undefined, ''],
    [{ sharedFormula: 'A1', result: 'x' }, undefined, 'x'],
    [{ error: '#DIV/0!' }, undefined, '#DIV/0!'],
    [{ text: 'site', hyperlink: 'https://x.io' }, undefined, 'site'],
  ])('%j with format %j → %j', (value, numFmt, text) => {
    expect(cellText(value, numFmt, false)).toBe(text);
  });

  it('honours the 1904 date system', () => {
    expect(cellText(43904, 'yyyy-mm-dd', true)).toBe('2024-03-15');
  });

  it('knows a date format from a number format', () => {
    expect(isDateFormat('General')).toBe(false);
    expect(isDateFormat('0.00')).toBe(false);
    expect(isDateFormat('"Day" 0')).toBe(false);
    expect(isDateFormat('[Red]0.00')).toBe(false);
    expect(isDateFormat('mm-dd-yy')).toBe(true);
    expect(isDateFormat('h:mm:ss')).toBe(true);
  });

  it('never writes an exponent', () => {
    for (const n of [1e-10, 1.5e-7, 9.99e20, 1e22, -3.2e25, 2 ** 53])
      expect(formatNumber(n, undefined)).not.toMatch(/e/i);
  });
});
