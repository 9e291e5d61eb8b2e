/** Every good fixture, saved the way a real tool saves it, reads as the same rows. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { openRows, type SourceInfo } from '../src/import/read/index.js';
import { readAll } from './input.helpers.js';

const dir = new URL('../fixtures/input/', import.meta.url);
const fixture = (name: string) => new URL(name, dir).pathname;
const expected = JSON.parse(readFileSync(new URL('expected.json', dir), 'utf8')) as {
  headers: string[];
  rows: string[][];
};

type Detected = Pick<SourceInfo, 'format' | 'encoding' | 'encodingSource' | 'delimiter' | 'delimiterSource'>;

const GOOD: Array<[string, Detected]> = [
  [
    'excel-semicolon-cp1252-crlf.csv',
    {
      format: 'csv',
      encoding: 'windows-1252',
      encodingSource: 'detected',
      delimiter: ';',
      delimiterSource: 'sniffed',
    },
  ],
  [
    'excel-semicolon-cp1252-crlf-sep.csv',
    {
      format: 'csv',
      encoding: 'windows-1252',
      encodingSource: 'detected',
      delimiter: ';',
      delimiterSource: 'sep-line',
    },
  ],
  [
    'utf8-bom.csv',
    { format: 'csv', encoding: 'utf-8', encodingSource: 'bom', delimiter: ',', delimiterSource: 'sniffed' },
  ],
  [
    'utf16le-tab.txt',
    {
      format: 'csv',
      encoding: 'utf-16le',
      encodingSource: 'bom',
      delimiter: '\t',
      delimiterSource: 'sniffed',
    },
  ],
  [
    'libreoffice.csv',
    {
      format: 'csv',
      encoding: 'utf-8',
      encodingSource: 'detected',
      delimiter: ',',
      delimiterSource: 'sniffed',
    },
  ],
  [
    'google-sheets.csv',
    {
      format: 'csv',
      encoding: 'utf-8',
      encodingSource: 'detected',
      delimiter: ',',
      delimiterSource: 'sniffed',
    },
  ],
  [
    'crm-pipe.csv',
    {
      format: 'csv',
      encoding: 'utf-8',
      encodingSource: 'detected',
      delimiter: '|',
      delimiterSource: 'sniffed',
    },
  ],
  [
    'clients.xlsx',
    {
      format: 'xlsx',
      encoding: 'utf-8',
      encodingSource: 'default',
      delimiter: ',',
      delimiterSource: 'default',
    },
  ],
];

describe('good fixtures', () => {
  it.each(GOOD)('%s reads as the expected rows, with what was detected', async (name, detected) => {
    const source = await openRows(fixture(name));
    expect(source.info).toMatchObject({ ...detected, file: fixture(name) });
    // Headers come as read (stray spaces, NBSP): the importer normalizes them.
    expect(source.headers.map((h) => h.trim())).toEqual(expected.headers);
    const records = await readAll(source);
    expect(records.map((r) => r.values.map((v) => v.trim()))).toEqual(expected.rows);
    expect(records.map((r) => r.row)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(source.bytesRead()).toBe(source.info.sizeBytes);
    await source.close();
  });

  it('keeps values exactly as read: accents, typographic quotes, quoted delimiters and newlines', async () => {
    const source = await openRows(fixture('google-sheets.csv'));
    const [first, second, , , fifth] = await readAll(source);
    expect(first?.values).toEqual(expected.rows[0]);
    expect(second?.values[3]).toBe('Flat 2\nThe Quay');
    expect(fifth?.values[0]).toBe('Prix €5 — "Le Best" SARL');
  });

  it('numbers physical lines, counting the sep= line and quoted line breaks', async () => {
    const source = await openRows(fixture('excel-semicolon-cp1252-crlf-sep.csv'));
    const records = await readAll(source);
    // sep=; is line 1, the header line 2, Renée's address spans lines 4-5.
    expect(records.map((r) => r.line)).toEqual([3, 4, 6, 7, 8, 9, 10]);
  });

  it('drops Excel trailing empty columns and rows but keeps the header cells as typed', async () => {
    const source = await openRows(fixture('excel-semicolon-cp1252-crlf.csv'));
    expect(source.headers).toEqual([
      'name',
      'email ',
      'country\u00a0',
      'address',
      'currency',
      'application_date',
      'customer_ref',
    ]);
    const records = await readAll(source);
    expect(records).toHaveLength(7);
    expect(records.every((r) => r.values.length === 7)).toBe(true);
  });

  it('removes a UTF-8 BOM glued to the first header', async () => {
    const source = await openRows(fixture('utf8-bom.csv'));
    expect(source.headers[0]).toBe('name');
    await source.close();
  });
});
