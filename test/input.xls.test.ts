/**
 * .xls through SheetJS, and what it is given: the workbook stream out of its OLE container,
 * its records checked and its cells counted (biff-records.ts), formulas read by their cached
 * value; text saved as .xls counted; other formats SheetJS would guess at refused. The
 * producers' files are in input.sheets.test.ts; the bombs in input.workbook-bombs.test.ts.
 */
import { copyFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { BiffError, sanitizeBiff } from '../src/import/read/biff-records.js';
import { openRows } from '../src/import/read/index.js';
import { MAX_XLS_CELLS } from '../src/import/read/xls-source.js';
import { readAll, useInputFiles } from './input.helpers.js';
import { biffWorkbook, compoundFile, formula, label, number, record } from './workbook-bombs.js';

const files = useInputFiles();

const client = [label(1, 0, 'Ann'), label(1, 1, 'a@example.com'), label(1, 2, 'DE'), label(1, 3, 'Street 1')];

async function refusal(name: string, data: string | Buffer): Promise<unknown> {
  return openRows(await files.file(name, data)).catch((error: unknown) => error);
}

describe('BIFF records', () => {
  it('formulas read as their cached number or text; their tokens are not parsed, nor a formula too short to hold them', async () => {
    // Tokens SheetJS has no parser for; then a record whose tokens' length lies past its end,
    // on which SheetJS's token parser never returned.
    const tokens = Buffer.from([0xff, 0x40, 0, 0, 0, 0, 0, 0, 0]);
    const short = record(0x0006, Buffer.from('0500303036363603020e001300070010', 'hex'));
    const cells = [...client, number(1, 4, 42), formula(1, 5, 7, tokens), formula(1, 6, 'cached', tokens), short];
    for (const [name, bytes] of [
      ['in-container.xls', compoundFile(biffWorkbook(cells))],
      ['bare-stream.xls', biffWorkbook(cells)],
    ] as const) {
      const source = await openRows(await files.file(name, bytes));
      expect(source.info).toMatchObject({ format: 'xls', sheet: 'Clients' });
      expect((await readAll(source)).map((r) => r.values)).toEqual([['Ann', 'a@example.com', 'DE', 'Street 1', '42', '7', 'cached']]);
    }
  });

  it('records the values do not need (merged ranges here) are not read at all', async () => {
    const merges = Array.from({ length: 100 }, () => record(0x00e5, [0xff, 0xff]));
    const source = await openRows(await files.file('merges.xls', compoundFile(biffWorkbook([...client, ...merges]))));
    expect((await readAll(source)).map((r) => r.values)).toEqual([['Ann', 'a@example.com', 'DE', 'Street 1']]);
  });

  it('a text cell longer than its record is refused as damaged', async () => {
    const error = await refusal('long-label.xls', compoundFile(biffWorkbook([record(0x0204, [1, 0, 0, 0, 15, 0, 0xff, 0xff, 1])])));
    expect(error).toMatchObject({ code: 'input_xlsx', message: expect.stringMatching(/long-label\.xls: cannot read the workbook \(record 0x204 holds text longer than itself\): is it a valid \.xls file\?$/) });
  });

  it('cells are counted before SheetJS reads them: past the bound, refused', () => {
    const stream = biffWorkbook(Array.from({ length: 20 }, (_, i) => number(1 + i, 0, i)));
    expect(() => sanitizeBiff(Buffer.from(stream), 23)).toThrow(BiffError);
    expect(sanitizeBiff(Buffer.from(stream), 24).length).toBe(stream.length);
    // A MulRk record holds a cell per 6 bytes.
    const mulRk = record(0x00bd, Buffer.concat([Buffer.from([1, 0, 0, 0]), Buffer.alloc(6 * 10), Buffer.from([9, 0])]));
    expect(() => sanitizeBiff(biffWorkbook([mulRk]), 13)).toThrow(BiffError);
    expect(MAX_XLS_CELLS).toBe(4_000_000);
  });

  it('a container whose sectors loop, and one with no workbook stream, are damaged; an encrypted one is protected', async () => {
    expect(await refusal('loop.xls', compoundFile(biffWorkbook(client), true))).toMatchObject({
      code: 'input_xlsx',
      message: expect.stringContaining('cannot read the workbook (the sectors of a stream loop back on themselves)'),
    });
    const renamed = compoundFile(biffWorkbook(client));
    renamed.write('Nothing!', 512 * 2 + 128, 'utf16le');
    expect(await refusal('no-stream.xls', renamed)).toMatchObject({ message: expect.stringContaining('(no Workbook stream in the container)') });
    const encrypted = compoundFile(biffWorkbook(client));
    encrypted.write('EncryptedPackage', 512 * 2 + 128, 'utf16le');
    encrypted.writeUInt16LE(34, 512 * 2 + 128 + 0x40);
    expect(await refusal('encrypted.xlsx', encrypted)).toMatchObject({ code: 'input_protected' });
  });
});

describe('what else is saved as .xls', () => {
  it('HTML and Excel 2003 XML tables are read; their cells past the grid are refused', async () => {
    const html = '<html><body><table><tr><td>name</td><td>email</td><td>country</td><td>address</td></tr><tr><td>Ann</td><td>a@example.com</td><td>DE</td><td>x</td></tr></table></body></html>';
    expect((await readAll(await openRows(await files.file('web-export.xls', html)))).map((r) => r.values)).toEqual([['Ann', 'a@example.com', 'DE', 'x']]);
    const wide = html.replace('<td>x</td>', '<td colspan="100000">x</td><td>y</td>');
    expect(await refusal('wide.xls', wide)).toMatchObject({ code: 'input_xlsx', message: expect.stringContaining('has more than 16,384 columns in row 2, past the grid') });
  });

  it('text whose delimiters and tags could make more than the bound of cells is refused before SheetJS reads it', async () => {
    expect(await refusal('commas.xls', `name,email\n${','.repeat(MAX_XLS_CELLS)}`)).toMatchObject({
      code: 'input_too_large',
      message: expect.stringContaining('holds more than 4,000,000 cells, the most an .xls is read with'),
    });
    const spans = `<table>${'<tr><td rowspan="2">x</td></tr>'.repeat(1001)}</table>`;
    expect(await refusal('spans.xls', spans)).toMatchObject({ code: 'input_too_large', message: expect.stringContaining('more than 1,000 merged cells') });
  });

  it.each([
    ['sylk.xls', 'ID;PWXL;N;E\nC;Y1;X1;K"name"\nE\n', 'a SYLK file'],
    ['dif.xls', 'TABLE\n0,1\n""\n', 'a DIF file'],
    ['dbase.xls', Buffer.from([0x03, 0x7c, 0x01, 0x01, ...Array(60).fill(0)]), 'a dBASE file'],
    ['lotus.xls', Buffer.from([0x00, 0x00, 0x02, 0x00, 0x06, 0x04, ...Array(60).fill(0)]), 'a Lotus or Quattro Pro file'],
    ['rtf.xls', '{\\rtf1 hello}', 'an RTF document'],
  ])('%s is refused as a format of its own', async (name, data, what) => {
    expect(await refusal(name, data)).toMatchObject({ code: 'input_format', message: expect.stringContaining(`is ${what}, not an Excel workbook`) });
  });

  it('an .xlsx saved with an .xls name is read as the .xlsx it is', async () => {
    const path = files.path('really-xlsx.xls');
    await copyFile(new URL('../fixtures/input/clients.xlsx', import.meta.url), path);
    const source = await openRows(path);
    expect(source.info.format).toBe('xlsx');
    expect((await readAll(source)).length).toBeGreaterThan(0);
  });
});
