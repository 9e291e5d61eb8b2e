/**
 * The reader thread (validate's large CSV and .xlsx files) reads exactly what the inline
 * reader reads: the same header, records, lines and errors, for every fixture, every fault
 * layout and random files. (Stopping early and validate through it: input.thread-validate.test.ts.)
 */
import { readdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { csvSafeCell } from '../src/infra/csv-text.js';
import { openRows, type ReadOptions } from '../src/import/read/index.js';
import { ROOT } from './helpers.js';
import { readUntilError, useInputFiles } from './input.helpers.js';
import { sheetFile } from './input.thread.helpers.js';

const { file, path } = useInputFiles();

/** Everything a reader gives for a file: what opening it says, then every record and the error. */
async function readWith(path: string, thread: 'never' | 'always', options: ReadOptions = {}) {
  let source;
  try {
    source = await openRows(path, { ...options, thread });
  } catch (error) {
    return { opened: false, error: describeError(error) };
  }
  const { records, error } = await readUntilError(source);
  await source.close();
  // A reader thread that is ahead sends each record's echo (the values as the results file writes them).
  for (const record of records) {
    if (record.echo === undefined) continue;
    const { bytes, start, end } = record.echo;
    expect(bytes.toString('utf8', start, end)).toBe(`${record.values.map((value) => `,${csvSafeCell(value)}`).join('')}\n`);
    delete record.echo;
  }
  const { thread: parsedOnThread, ...info } = source.info;
  expect(parsedOnThread === true).toBe(thread === 'always' && ['csv', 'xlsx'].includes(source.info.format));
  return {
    opened: true,
    info,
    headers: source.headers,
    records,
    bytesRead: error === undefined ? source.bytesRead() : undefined,
    error: error === undefined ? undefined : describeError(error),
  };
}

function describeError(error: unknown) {
  const e = error as { constructor: { name: string }; message: string; code?: string; file?: string; line?: number };
  return { type: e.constructor.name, message: e.message, code: e.code, file: e.file, line: e.line };
}

async function expectSameReading(path: string, options: ReadOptions = {}) {
  const inline = await readWith(path, 'never', options);
  const threaded = await readWith(path, 'always', options);
  // node's strict deep equality first (a third of toEqual's time on a large file, and stricter):
  // toEqual gives the verdict, and its diff, only when that fails.
  if (!isDeepStrictEqual(threaded, inline)) expect(threaded).toEqual(inline);
  return inline;
}

const fixtureDir = join(ROOT, 'fixtures', 'input');
const fixtures = ['', 'malformed', 'hostile', 'sheets']
  .flatMap((dir) => readdirSync(join(fixtureDir, dir), { withFileTypes: true }).filter((entry) => entry.isFile()))
  .map((entry) => join(entry.parentPath, entry.name))
  .filter((name) => !name.endsWith('.json'));

describe('the reader thread reads what the inline reader reads', () => {
  it.each(fixtures.map((name) => [name.slice(fixtureDir.length + 1), name]))('%s', async (_, fixture) => {
    await expectSameReading(fixture);
  });

  it('a missing file', async () => {
    const reading = await expectSameReading(path('nope.csv'));
    expect(reading.error).toMatchObject({ type: 'InputError', code: 'input_missing' });
  });

  it('an --encoding or --delimiter the reader cannot use is a UsageError from the thread too', async () => {
    const csv = await file('options.csv', 'a,b\n1,2\n');
    const encoding = await expectSameReading(csv, { encoding: 'no-such-encoding' });
    expect(encoding.error).toMatchObject({ type: 'UsageError' });
    const delimiter = await expectSameReading(csv, { delimiter: '\u{1F600}' });
    expect(delimiter.error).toMatchObject({ type: 'UsageError' });
  });

  it('faults past the first chunk: NUL, bad byte, cut character, unclosed quote, oversized record', async () => {
    const pad = `p,${'z'.repeat(70_000)}\n`;
    const many = Array.from({ length: 4000 }, (_, i) => `r${i},"q ""${i}""\r\nline two",é${i}`).join('\r\n');
    const cases: [string, Buffer, ReadOptions?][] = [
      ['nul-late.csv', Buffer.from(`h,e\n${pad}1,2\n3,4\n5,\0\n`)],
      ['bad-byte.csv', Buffer.concat([Buffer.from(`h,e\n${pad}1,2\n3,4\n5,`), Buffer.from([0xff, 0x0a])])],
      ['cut-end.csv', Buffer.concat([Buffer.from(`h,e\n${pad}1,2\n3,4\n5,6\n7,`), Buffer.from([0xe2, 0x82])])],
      ['crlf-quoted.csv', Buffer.from(`h,e,f\r\n${many}\r\n5,"open\r\n6,7\r\n`)],
      ['big-record.csv', Buffer.from(`a,b\n${pad}1,"${'y'.repeat(5000)}"\n`), { maxRecordSize: 4096 }],
      ['cp1252.csv', Buffer.from(`name;city\r\n${'Zo\xeb;Paris\r\n'.repeat(20_000)}`, 'latin1')],
      ['utf16.txt', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(`a\tb\n${'x\t\u00e9\n'.repeat(30_000)}`, 'utf16le')])],
      ['sep-line.csv', Buffer.from(`sep=;\na;b;;\n\n1;2;;\n ; \n3;4;x\n`)],
    ];
    for (const [name, bytes, options] of cases) {
      const reading = await expectSameReading(await file(name, bytes), options);
      expect(reading.opened, name).toBe(true);
    }
  });

  it('sheets past the first chunk: a NUL cell, a damaged cell, a sheet past the grid', async () => {
    const header = ['name', 'email', 'country'];
    const rows = Array.from({ length: 30_000 }, (_, i) => [`Zoë ${i} & Co`, `z${i}@example.com`, i % 2 ? 'FR' : '']);
    rows[20_000] = ['nul _x0000_ here', 'n@example.com', 'DE'];
    const good = await expectSameReading(sheetFile(path('nul.xlsx'), header, rows));
    expect(good.records).toHaveLength(30_000);
    expect(good.records![20_000]!.values[0]).toBe('nul \0 here');

    const damaged = rows.map((row, i) => (i === 25_000 ? ['x', 'y', 'z'] : row));
    const damagedPath = sheetFile(path('damaged.xlsx'), header, damaged);
    const bytes = await readFile(damagedPath);
    // The deflated stream cut short: the rows before the cut, then an InputError naming the file.
    const cut = await expectSameReading(await file('cut.xlsx', bytes.subarray(0, Math.floor(bytes.length * 0.7))));
    expect(cut.error).toMatchObject({ type: 'InputError', code: 'input_xlsx' });

    const wide = await expectSameReading(sheetFile(path('wide.xlsx'), header, [[...header], Array.from({ length: 16_385 }, () => 'x')]));
    expect(wide.error).toMatchObject({ type: 'InputError', code: 'input_xlsx' });
  });

  it('random files: quotes, separators, line breaks, blank and ragged rows, a fault anywhere', async () => {
    const cell = fc.oneof(
      fc.constantFrom('', ' ', 'é', 'Zoë', '"', '""', ',', 'a,b', '\n', '\r\n', '\r', 'x\u2028y', '\uFEFF'),
      fc.string({ unit: 'grapheme', maxLength: 12 }),
      fc.stringMatching(/^[a-z0-9]{0,60}$/),
    );
    const quote = (value: string) => (/[",\r\n]/.test(value) || value === '' ? `"${value.replaceAll('"', '""')}"` : value);
    const row = fc.array(cell, { minLength: 0, maxLength: 6 }).map((cells) => cells.map(quote).join(','));
    const csv = fc.record({
      rows: fc.array(row, { minLength: 1, maxLength: 300 }),
      repeat: fc.integer({ min: 1, max: 400 }),
      eol: fc.constantFrom('\n', '\r\n', '\r'),
      fault: fc.option(fc.record({ at: fc.double({ min: 0, max: 1, noNaN: true }), byte: fc.constantFrom(0x00, 0xff, 0x22) })),
    });
    let run = 0;
    await fc.assert(
      fc.asyncProperty(csv, async ({ rows, repeat, eol, fault }) => {
        const text = `name,email,city${eol}${Array.from({ length: repeat }, () => rows.join(eol)).join(eol)}${eol}`;
        let bytes = Buffer.from(text);
        if (fault) {
          const at = Math.floor(fault.at * bytes.length);
          bytes = Buffer.concat([bytes.subarray(0, at), Buffer.from([fault.byte]), bytes.subarray(at)]);
        }
        await expectSameReading(await file(`random-${run++}.csv`, bytes));
      }),
      { numRuns: 40, seed: 20261122 },
    );
  });
});
