/**
 * The reader thread (validate's large CSV and .xlsx files) reads exactly what the inline
 * reader reads: the same header, records, lines and errors, for every fixture, every fault
 * layout and random files; it stops early without a hang; and validate through it writes the
 * same results file as the inline pipeline.
 */
import { readdirSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { openRows, type ReadOptions } from '../src/import/read/index.js';
import { importClients } from '../src/import/run-import.js';
import { workbook } from './hostile.generate.js';
import { ROOT, runCliInProcess as runCli } from './helpers.js';
import { readUntilError, useInputFiles } from './input.helpers.js';
import { writeZip } from './zip.helpers.js';

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
  expect(threaded).toEqual(inline);
  return inline;
}

const fixtureDir = join(ROOT, 'fixtures', 'input');
const fixtures = ['', 'malformed', 'hostile', 'sheets']
  .flatMap((dir) => readdirSync(join(fixtureDir, dir), { withFileTypes: true }).filter((entry) => entry.isFile()))
  .map((entry) => join(entry.parentPath, entry.name))
  .filter((name) => !name.endsWith('.json'));

/**
 * An .xlsx of inline-string rows (a cell per value; `_x0000_` is a NUL), written as a
 * spreadsheet program would, with a shared-string table holding the header.
 */
function sheetFile(path: string, header: string[], rows: string[][]): string {
  const escape = (text: string) => text.replaceAll('&', '&amp;').replaceAll('<', '&lt;');
  const cell = (value: string) => `<c t="inlineStr"><is><t>${escape(value)}</t></is></c>`;
  const NS = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';
  writeZip(
    path,
    workbook(
      function* () {
        yield `<?xml version="1.0" encoding="UTF-8"?>\n<worksheet xmlns="${NS}"><sheetData><row>`;
        yield header.map((_, i) => `<c t="s"><v>${i}</v></c>`).join('');
        yield '</row>';
        for (const row of rows) yield `<row>${row.map(cell).join('')}</row>`;
        yield '</sheetData></worksheet>';
      },
      function* () {
        yield `<?xml version="1.0" encoding="UTF-8"?>\n<sst xmlns="${NS}">`;
        yield header.map((text) => `<si><t>${escape(text)}</t></si>`).join('');
        yield '</sst>';
      },
    ),
  );
  return path;
}

/** Hex that deflate cannot shrink much: a large .xlsx from few rows. */
function noise(i: number): string {
  let x = (i + 1) * 2654435761;
  let text = '';
  for (let k = 0; k < 5; k++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    text += x.toString(16).padStart(8, '0');
  }
  return text;
}

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

describe('a reader thread the consumer leaves', () => {
  it('stops reading and ends when the consumer stops after one batch', async () => {
    const lines = Array.from({ length: 200_000 }, (_, i) => `n${i},e${i}@example.com,DE`).join('\n');
    const big = await file('leave.csv', `name,email,country\n${lines}\n`);
    const source = await openRows(big, { thread: 'always' });
    let batches = 0;
    for await (const batch of source.batches) {
      expect(batch.length).toBeGreaterThan(0);
      batches++;
      break;
    }
    expect(batches).toBe(1);
    expect(source.bytesRead()).toBeLessThan((await stat(big)).size / 4);
    // The thread closes its file and ends when asked (a thread that does not is stopped after 5 s).
    const started = Date.now();
    await source.close();
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('ends when the consumer throws mid-file, and batches stop after close', async () => {
    const lines = Array.from({ length: 100_000 }, (_, i) => `n${i},e${i}`).join('\n');
    const source = await openRows(await file('throw.csv', `name,email\n${lines}\n`), { thread: 'always' });
    const failure = (async () => {
      for await (const batch of source.batches) if (batch[0]!.row > 1000) throw new Error('consumer failed');
    })();
    await expect(failure).rejects.toThrow('consumer failed');
    const started = Date.now();
    await source.close();
    expect(Date.now() - started).toBeLessThan(2000);
    let after = 0;
    for await (const batch of source.batches) after += batch.length;
    expect(after).toBe(0);
  });

  it('an importer that fails after opening the file still ends the thread', async () => {
    const lines = Array.from({ length: 100_000 }, (_, i) => `n${i},e${i}@example.com,FR,addr`).join('\n');
    const csv = await file('plan-throws.csv', `name,email,country,address\n${lines}\n`);
    const run = importClients({
      file: csv,
      dryRun: true,
      results: path('plan-throws.results.csv'),
      read: { thread: 'always' },
      onPlan: () => {
        throw new Error('onPlan failed');
      },
    });
    await expect(run).rejects.toThrow('onPlan failed');
  });

  it('closes before any batch is read', async () => {
    const source = await openRows(await file('close-early.csv', 'a,b\n1,2\n'), { thread: 'always' });
    expect(source.headers).toEqual(['a', 'b']);
    await source.close();
    await source.close();
  });
});

describe('validate of a large file (parsed on the reader thread)', () => {
  it('writes the same results file as the inline pipeline', async () => {
    // 9 MiB: over the 8 MiB from which validate parses on a second thread.
    const rows = Array.from(
      { length: 110_000 },
      (_, i) =>
        `"Zoë ${i}, Ltd",z${i % 90_000}@example.com,${i % 7 === 0 ? 'Narnia' : 'FR'},"${i} rue de la Paix\nParis",EUR,2024-0${1 + (i % 9)}-1${i % 10}`,
    );
    const csv = await file('large.csv', `name,email,country,address,currency,application_date\n${rows.join('\n')}\n`);
    expect((await stat(csv)).size).toBeGreaterThan(8 * 1024 * 1024);

    const cli = await runCli(['validate', csv, '--results', path('large.thread.csv'), '--quiet', '--json']);
    expect(cli.code).toBe(1);
    const summary = JSON.parse(cli.stdout) as { rows: number; counts: Record<string, number>; source: { thread?: boolean } };
    // A one-core machine parses inline: the results are the same either way.
    expect(summary.source.thread).toBe(availableParallelism() > 1 ? true : undefined);
    await importClients({ file: csv, dryRun: true, results: path('large.inline.csv'), read: { thread: 'never' } });

    expect(summary.rows).toBe(110_000);
    expect(summary.counts).toMatchObject({ invalid: 15_715, duplicate: 0 });
    // An option the reader refuses ends the run as it would inline: one line, exit 2.
    const refused = await runCli(['validate', csv, '--results', path('large.refused.csv'), '--encoding', 'no-such-encoding']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/^ccs-bulk: error: .*no-such-encoding/m);
    expect(refused.stderr).not.toMatch(/internal error|\n\s+at /);

    const threaded = await readFile(path('large.thread.csv'), 'utf8');
    expect(threaded).toBe(await readFile(path('large.inline.csv'), 'utf8'));
    expect(threaded.startsWith('row,outcome,')).toBe(true);
  });

  it('reads a large .xlsx on the thread and writes the same results file as the inline pipeline', async () => {
    const header = ['name', 'email', 'country', 'address', 'currency', 'application_date'];
    const rows = Array.from({ length: 40_000 }, (_, i) => [
      `Zoë ${i}`,
      `z${i}@example.com`,
      i % 9 === 0 ? 'Narnia' : 'FR',
      `${noise(i)} rue\nParis`,
      'EUR',
      `2024-0${1 + (i % 9)}-1${i % 10}`,
    ]);
    const xlsx = sheetFile(path('large.xlsx'), header, rows);
    // Over the 1 MiB from which validate reads an .xlsx on a second thread.
    expect((await stat(xlsx)).size).toBeGreaterThan(1024 * 1024);

    const cli = await runCli(['validate', xlsx, '--results', path('large-xlsx.thread.csv'), '--quiet', '--json']);
    expect(cli.code).toBe(1);
    const summary = JSON.parse(cli.stdout) as { rows: number; counts: Record<string, number>; source: { thread?: boolean } };
    expect(summary.source.thread).toBe(availableParallelism() > 1 ? true : undefined);
    await importClients({ file: xlsx, dryRun: true, results: path('large-xlsx.inline.csv'), read: { thread: 'never' } });
    expect(summary.rows).toBe(40_000);
    expect(summary.counts).toMatchObject({ valid: 35_555, invalid: 4445 });
    const threaded = await readFile(path('large-xlsx.thread.csv'), 'utf8');
    expect(threaded).toBe(await readFile(path('large-xlsx.inline.csv'), 'utf8'));
  });
});
