/** Broken and unusable files: refused with the line to fix, after the good rows before it. */
import { mkdir } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { InputError } from '../src/errors.js';
import { openRows } from '../src/import/read/index.js';
import { readUntilError, useInputFiles } from './input.helpers.js';

const fixture = (name: string) => new URL(`../fixtures/input/malformed/${name}`, import.meta.url).pathname;

const { file, path } = useInputFiles();

async function openError(path: string, options = {}): Promise<InputError> {
  const error = await openRows(path, options).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(InputError);
  return error as InputError;
}

describe('unbalanced quote', () => {
  it.each(['unbalanced-quote.csv', 'unbalanced-quote-then-quoted.csv'])(
    '%s: named at line 4 where the quote opened, after the rows before it',
    async (name) => {
      const source = await openRows(fixture(name));
      const { records, error } = await readUntilError(source);
      expect(records.map((r) => r.line)).toEqual([2, 3]);
      expect(error).toBeInstanceOf(InputError);
      expect(error).toMatchObject({ code: 'csv_unclosed_quote', line: 4, file: fixture(name), exitCode: 2 });
      expect((error as Error).message).toContain('line 4: unbalanced quote');
    },
  );

  it('is named at its line even after quoted CRLF line breaks', async () => {
    const path = await file('crlf-quoted.csv', 'a,b\r\n"x\r\ny",1\r\n"p\r\nq",2\r\n"open,3\r\nz,4\r\n');
    const { records, error } = await readUntilError(await openRows(path));
    expect(records.map((r) => r.line)).toEqual([2, 4]);
    expect(error).toMatchObject({ line: 6 });
  });

  it('a quote inside an unquoted field says how to fix it', async () => {
    const path = await file('inner-quote.csv', 'name,size\nok,1\npipe,5" wide\n');
    const { records, error } = await readUntilError(await openRows(path));
    expect(records).toHaveLength(1);
    expect(error).toMatchObject({ code: 'csv_bad_quote', line: 3 });
    expect((error as Error).message).toContain('(column 2)');
  });

  it('text after a closing quote', async () => {
    const path = await file('after-quote.csv', 'name,size\n"ok"x,1\n');
    const { error } = await readUntilError(await openRows(path));
    expect(error).toMatchObject({ code: 'csv_bad_quote', line: 2 });
  });
});

describe('ragged rows are data, not errors', () => {
  it('yields too many and too few fields as read, trimming only empty cells past the header', async () => {
    const source = await openRows(fixture('ragged.csv'));
    const { records, error } = await readUntilError(source);
    expect(error).toBeUndefined();
    expect(records.map((r) => r.values.length)).toEqual([7, 8, 4, 7, 7]);
    expect(records[1]?.values.at(-1)).toBe('extra');
  });
});

describe('record size bound', () => {
  it('a record over maxRecordSize is an InputError at its first line, after the rows before it', async () => {
    const path = await file('big-field.csv', `a,b\n1,x\n2,"${'y'.repeat(5000)}"\n3,z\n`);
    const { records, error } = await readUntilError(await openRows(path, { maxRecordSize: 1024 }));
    expect(records.map((r) => r.values[0])).toEqual(['1']);
    expect(error).toMatchObject({ code: 'record_too_large', line: 3 });
    expect((error as Error).message).toMatch(/larger than the limit of 1 KiB.*--max-record-size/);
  });

  it('an unquoted huge field too', async () => {
    const path = await file('big-plain.csv', `a,b\n1,${'y'.repeat(5000)}\n`);
    const { error } = await readUntilError(await openRows(path, { maxRecordSize: 1000 }));
    expect(error).toMatchObject({ code: 'record_too_large', line: 2 });
  });

  it('a record under the bound is fine', async () => {
    const path = await file('ok-field.csv', `a,b\n1,"${'y'.repeat(900)}"\n`);
    const { records, error } = await readUntilError(await openRows(path, { maxRecordSize: 1000 }));
    expect(error).toBeUndefined();
    expect(records[0]?.values[1]).toHaveLength(900);
  });
});

describe('binary content', () => {
  it('NUL bytes near the start are refused before any row, naming the line', async () => {
    const error = await openError(fixture('nul-bytes.csv'));
    expect(error).toMatchObject({ code: 'input_binary', line: 3 });
    expect(error.message).toContain('contains NUL bytes (line 3): is this really a CSV file?');
  });

  it('random binary is refused', async () => {
    const error = await openError(fixture('binary.csv'));
    expect(error.code).toBe('input_binary');
    expect(error.message).toMatch(/is this really a CSV file\?/);
  });

  it('control characters without NULs are refused too', async () => {
    const noise = Buffer.from(Array.from({ length: 2000 }, (_, i) => 1 + (i % 8)));
    const error = await openError(await file('controls.csv', Buffer.concat([Buffer.from('a,b\n'), noise])));
    expect(error).toMatchObject({ code: 'input_binary', line: 2 });
  });

  it('a NUL past the sniffed start fails at its line, after the rows before it', async () => {
    const lines = Array.from({ length: 3000 }, (_, i) => `r${i},${'x'.repeat(30)}`).join('\n');
    const path = await file('late-nul.csv', `a,b\n${lines}\nbad,x\0y\nafter,z\n`);
    const { records, error } = await readUntilError(await openRows(path));
    expect(records).toHaveLength(3000);
    expect(error).toMatchObject({ code: 'input_binary', line: 3002 });
  });

  // Invalid UTF-8 is a row's problem, not the file's: test/input.encoding.test.ts.
  it('every whole line before a NUL is a record, wherever the read chunks end', async () => {
    const pad = `p,${'z'.repeat(70_000)}\n`;
    const cases: [string, Buffer, string[], number][] = [
      // fault, records expected before it (first values), the fault's line
      ['nul-late.csv', Buffer.from(`h,e\n${pad}1,2\n3,4\n5,\0\n`), ['p', '1', '3'], 5],
      ['nul-line-start.csv', Buffer.from(`h,e\n${pad}1,2\n3,4\n\0`), ['p', '1', '3'], 5],
      ['crlf-quoted.csv', Buffer.from(`h,e\r\n${pad}1,2\r3,"4\r\n"\r\n5,\0\n`), ['p', '1', '3'], 6],
    ];
    for (const [name, bytes, firsts, line] of cases) {
      const { records, error } = await readUntilError(await openRows(await file(name, bytes)));
      expect(records.map((record) => record.values[0]), name).toEqual(firsts);
      expect(error, name).toMatchObject({ line });
    }
  });
});

describe('unusable files', () => {
  it('a missing file', async () => {
    expect(await openError(path('nope.csv'))).toMatchObject({ code: 'input_missing', exitCode: 2 });
  });

  it('a directory', async () => {
    await mkdir(path('folder.csv'));
    expect(await openError(path('folder.csv'))).toMatchObject({ code: 'input_not_file' });
  });

  it.each(['empty.csv', 'blank.csv'])('%s (0 bytes, or only a BOM and blank lines)', async (name) => {
    const error = await openError(fixture(name));
    expect(error).toMatchObject({ code: 'input_empty', file: fixture(name) });
    expect(error.message).toContain('is empty');
  });

  it('blank lines past the sample, then nothing', async () => {
    const error = await openError(await file('long-blank.csv', ' \n'.repeat(40_000)));
    expect(error).toMatchObject({ code: 'input_empty' });
  });

  it('a header-only file has headers and 0 records', async () => {
    const source = await openRows(fixture('header-only.csv'));
    expect(source.headers).toHaveLength(7);
    const { records, error } = await readUntilError(source);
    expect(records).toEqual([]);
    expect(error).toBeUndefined();
  });

  it('duplicate header names are kept as read, for the importer to report', async () => {
    const source = await openRows(fixture('duplicate-headers.csv'));
    expect(source.headers).toEqual(['name', 'email', 'Email', 'country', 'name']);
  });

  it.each([
    ['legacy.xls', /legacy\.xls: cannot read the workbook \(.*\): is it a valid \.xls file\?/],
    ['calc.ods', /calc\.ods: cannot read the workbook \(.*\): is it a valid \.ods file\?/],
  ])('a damaged %s is named as such', async (name, message) => {
    const error = await openError(fixture(name));
    expect(error.code).toBe('input_xlsx');
    expect(error.message).toMatch(message);
  });

  it.each([
    [
      'workbook-named.csv',
      /is a zip archive, not a CSV file: if it is an Excel workbook give it the \.xlsx extension/,
    ],
  ])('%s is refused with a way out', async (name, message) => {
    const error = await openError(fixture(name));
    expect(error.code).toBe('input_format');
    expect(error.message).toMatch(message);
  });

  it('an .xls saved with a .csv name is read as a workbook, by its magic bytes', async () => {
    const path = await file('renamed-xls.csv', Buffer.from('d0cf11e0a1b11ae1000000', 'hex'));
    expect((await openError(path)).message).toMatch(/cannot read the workbook .*valid \.xls file/);
  });

  it('a .numbers bundle (a directory on macOS) is refused by extension', async () => {
    await mkdir(path('clients.numbers'));
    expect((await openError(path('clients.numbers'))).message).toMatch(/Apple Numbers/);
  });
});

describe('stopping early', () => {
  it('close() releases the file mid-stream and is idempotent; the iterator then ends quietly', async () => {
    const lines = Array.from({ length: 20_000 }, (_, i) => `r${i},x`).join('\n');
    const source = await openRows(await file('long.csv', `a,b\n${lines}\n`));
    const iterator = source.batches[Symbol.asyncIterator]();
    expect((await iterator.next()).value?.[0]?.values).toEqual(['r0', 'x']);
    expect(source.bytesRead()).toBeLessThan(source.info.sizeBytes);
    await source.close();
    await source.close();
    expect((await iterator.next()).done).toBe(true);
  });

  it('breaking out of the loop stops reading', async () => {
    const lines = Array.from({ length: 50_000 }, (_, i) => `r${i},x`).join('\n');
    const source = await openRows(await file('long2.csv', `a,b\n${lines}\n`));
    for await (const batch of source.batches) {
      if (batch.some((record) => record.row === 10)) break;
    }
    expect(source.bytesRead()).toBeLessThan(source.info.sizeBytes);
    await source.close();
  });
});
