/** Delimiters (sniffed, sep= line, option), line endings and quoting. */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UsageError } from '../src/errors.js';
import { openRows, type RowSource } from '../src/import/read/index.js';
import {
  chooseDelimiter,
  normalizeDelimiter,
  readSepLine,
  sniffDelimiter,
} from '../src/import/read/sniff-delimiter.js';
import { makeTempDir } from './helpers.js';
import { readAll } from './input.helpers.js';

let temp: Awaited<ReturnType<typeof makeTempDir>>;
beforeAll(async () => {
  temp = await makeTempDir();
});
afterAll(() => temp.cleanup());

let count = 0;
async function open(text: string, options = {}): Promise<RowSource> {
  const path = join(temp.dir, `f${++count}.csv`);
  await writeFile(path, text);
  return openRows(path, options);
}

describe('sniffDelimiter', () => {
  it.each([
    ['comma', 'a,b,c\n1,2,3\n', ','],
    ['semicolon with decimal commas', 'name;amount;city\nA;1,5;Paris\nB;2,25;Lyon\n', ';'],
    ['semicolon with unquoted commas in text', 'name;address\nA;12, rue X\nB;Rua Y, 100\n', ';'],
    ['tab', 'a\tb\tc\n1\t2\t3\n', '\t'],
    ['pipe', 'a|b|c\n1|2|3\n', '|'],
    ['comma, semicolons only inside quotes', 'a,b\n"x;y;z",2\n"p;q",3\n', ','],
    ['semicolon, commas only inside quotes', 'a;b\n"x,y,z";2\n"p,q";3\n', ';'],
    ['quoted line break holding other delimiters', 'a,b\n"line1;\nline2;x",2\n3,4\n', ','],
    ['a consistent count beats a higher but ragged one', 'a;b,c,d\n1;2\n3;4\n', ';'],
    ['title and blank line above a semicolon header', 'Client list — exported 2026-11-01\n\nName;Email\nA;a@x.io\nB;b@x.io\n', ';'],
    ['a title holding a comma above a tab header', 'Clients, November\nName\tEmail\nA\ta@x.io\nB, Jr\tb@x.io\n', '\t'],
  ])('%s', (_, text, delimiter) => {
    expect(sniffDelimiter(text, true)).toBe(delimiter);
  });

  it('finds nothing in a one-column file (the caller defaults to a comma)', () => {
    expect(sniffDelimiter('email\na@x.io\n', true)).toBeUndefined();
    expect(chooseDelimiter('email\na@x.io\n', undefined, true)).toEqual({
      delimiter: ',',
      source: 'default',
      sepLine: false,
    });
  });

  it('ignores a last line cut by the sample', () => {
    expect(sniffDelimiter('a;b\n1;2\n3;4\n"x,y,z,', false)).toBe(';');
  });
});

describe('sep= line', () => {
  it.each([
    ['sep=;\r\na;b', ';'],
    ['SEP=|\na|b', '|'],
    ['"sep=,"\na,b', ','],
    ['sep=\t\na\tb', '\t'],
    ['sep=;', ';'],
  ])('%j names %j', (text, delimiter) => {
    expect(readSepLine(text)).toBe(delimiter);
  });

  it('is not data: skipped, and the line numbers still count it', async () => {
    const source = await open('sep=;\r\nname;email\r\nA;a@x.io\r\n');
    expect(source.info).toMatchObject({ delimiter: ';', delimiterSource: 'sep-line' });
    expect(source.headers).toEqual(['name', 'email']);
    expect(await readAll(source)).toEqual([{ row: 1, line: 3, values: ['A', 'a@x.io'] }]);
  });

  it('is skipped even when --delimiter overrides it', async () => {
    const source = await open('sep=;\na|b\n1|2\n', { delimiter: '|' });
    expect(source.info).toMatchObject({ delimiter: '|', delimiterSource: 'option' });
    expect(source.headers).toEqual(['a', 'b']);
  });
});

describe('--delimiter', () => {
  it('overrides sniffing', async () => {
    const source = await open('a;b,c\n1;2,3\n', { delimiter: ',' });
    expect(source.info).toMatchObject({ delimiter: ',', delimiterSource: 'option' });
    expect(source.headers).toEqual(['a;b', 'c']);
  });

  it.each([
    ['tab', '\t'],
    ['\\t', '\t'],
    ['\t', '\t'],
    ['semicolon', ';'],
    [';', ';'],
  ])('accepts %j', (option, delimiter) => {
    expect(normalizeDelimiter(option)).toBe(delimiter);
  });

  it.each(['', ';;', '"', '\n'])('refuses %j', (option) => {
    expect(() => normalizeDelimiter(option)).toThrow(UsageError);
  });
});

describe('line endings and quoting', () => {
  it.each([
    ['LF', '\n'],
    ['CRLF', '\r\n'],
    ['CR (classic Mac)', '\r'],
  ])('%s', async (_, eol) => {
    const source = await open(['name,note', 'A,"x, y"', 'B,"multi', 'line"', 'C,z', ''].join(eol));
    const records = await readAll(source);
    expect(records.map((r) => r.values)).toEqual([
      ['A', 'x, y'],
      ['B', `multi${eol}line`],
      ['C', 'z'],
    ]);
    expect(records.map((r) => r.line)).toEqual([2, 3, 5]);
  });

  it('mixed endings (a CRLF file edited elsewhere) split where a user expects', async () => {
    const records = await readAll(await open('a,b\r\n1,2\n3,4\r5,6\r\n'));
    expect(records.map((r) => r.values)).toEqual([
      ['1', '2'],
      ['3', '4'],
      ['5', '6'],
    ]);
  });

  it('doubled quotes, delimiters and a last line without a line break', async () => {
    const records = await readAll(await open('a,b\n"say ""hi""","1,2"\n"",x'));
    expect(records.map((r) => r.values)).toEqual([
      ['say "hi"', '1,2'],
      ['', 'x'],
    ]);
  });

  it('never trims nor casts: spaces, NBSP and leading zeros stay', async () => {
    const records = await readAll(await open('id,name\n00123, Zoë\u00a0\n1e5,TRUE\n'));
    expect(records.map((r) => r.values)).toEqual([
      ['00123', ' Zoë\u00a0'],
      ['1e5', 'TRUE'],
    ]);
  });

  it('skips blank lines and whitespace-only rows; `row` counts data rows, `line` physical lines', async () => {
    const records = await readAll(await open('\n\nname,email\n\nA,a@x.io\n , \n,,\nB,b@x.io\n\n'));
    expect(records).toEqual([
      { row: 1, line: 5, values: ['A', 'a@x.io'] },
      { row: 2, line: 8, values: ['B', 'b@x.io'] },
    ]);
  });

  it('keeps header cells as read, dropping only trailing empty ones', async () => {
    const source = await open(' Name ,E-mail,,Country,,,\nA,a@x.io,,FR\n');
    expect(source.headers).toEqual([' Name ', 'E-mail', '', 'Country']);
    expect((await readAll(source))[0]?.values).toEqual(['A', 'a@x.io', '', 'FR']);
  });
});
