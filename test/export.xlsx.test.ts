/**
 * `ccs-bulk export --format xlsx` as a user runs it (the built CLI): a workbook whose every
 * cell holds what the CSV export of the same clients holds, typed (dates, numbers, text, never
 * a formula), with a bold frozen header and an autofilter; streamed to a pipe as to a file;
 * refused where it cannot work; a failure leaves no file.
 */
import { spawn } from 'node:child_process';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli as runCliInProcess } from '../src/cli/cli.js';
import { UsageError } from '../src/errors.js';
import type { FlatClient } from '../src/export/columns.js';
import { createSheetEncoder, excelSerial, MAX_SHEET_ROWS, xmlText } from '../src/export/xlsx-sheet.js';
import { type Sandbox, startSandbox } from '../src/sandbox/index.js';
import { idRange, startFakeService } from './export.helpers.js';
import { asInWorkbook, cellText, sheetCells, zipParts } from './export.xlsx.helpers.js';
import { BIN, makeTempDir, ROOT, runCliInProcess as runCli } from './helpers.js';

const SEED = 300;
const TO = ['--created-to', '2029-12-31'];
let sandbox: Sandbox;
let temp: Awaited<ReturnType<typeof makeTempDir>>;
let env: Record<string, string>;
let xlsxPath: string;
let sheetXml: string;

const ODD = {
  id: 'cli_odd_text',
  name: 'bell\u0007 vt\u000b nul\u0000 cr\r end',
  email: 'odd.text@example.com',
  country: 'DE',
  address: 'literal _x0041_ and _x12_ & <tags>',
  created_at: '2025-06-30T12:00:00.000Z',
};
const LATE = '2025-06-30T23:59:59.999Z';

beforeAll(async () => {
  sandbox = await startSandbox({ verifySignatures: false, seed: SEED, seedRandom: 21 });
  sandbox.store.insert(ODD);
  sandbox.store.insert({ id: 'cli_late', name: "'=already quoted", created_at: LATE, email: 'late@example.com' });
  sandbox.store.insert({ id: 'cli_long', name: 'x'.repeat(32_768), created_at: '2030-01-01T00:00:00.000Z' });
  temp = await makeTempDir();
  env = { CCS_BASE_URL: sandbox.url, CCS_TOKEN: sandbox.token };
  xlsxPath = join(temp.dir, 'report.xlsx');
  const result = await runCli(['export', '--out', xlsxPath, '--json', '--quiet', ...TO], { env });
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  expect(JSON.parse(result.stdout)).toMatchObject({ format: 'xlsx', rows: SEED + 2 });
  sheetXml = (await zipParts(await readFile(xlsxPath))).get('xl/worksheets/sheet1.xml')!;
});
afterAll(async () => {
  await sandbox?.close();
  await temp?.cleanup();
});

describe('ccs-bulk export --format xlsx', () => {
  it('an --out ending in .xlsx is a workbook (the umask\'s mode) whose every cell equals the CSV export', async () => {
    const csvPath = join(temp.dir, 'same.csv');
    const csv = await runCli(['export', '--out', csvPath, '--no-escape-formulas', '--quiet', ...TO], { env });
    expect(csv.code).toBe(0);
    const records = parse(await readFile(csvPath, 'utf8'), { relax_quotes: false }) as string[][];
    const rows = await sheetCells(xlsxPath);

    expect((await stat(xlsxPath)).mode & 0o777).toBe(0o600);
    expect(rows).toHaveLength(SEED + 3);
    expect(rows.length).toBe(records.length);
    const header = records[0]!;
    expect(rows[0]).toEqual(header);
    let compared = 0;
    for (let r = 1; r < records.length; r++) {
      const record = records[r]!;
      const row = rows[r]!;
      expect(row.map(cellText), `row ${r + 1}`).toEqual(record.map(asInWorkbook));
      for (const [c, column] of header.entries()) {
        const cell = row[c];
        if (cell === null) continue;
        compared++;
        const type = column === 'created_at' ? Date : column === 'documents_count' ? Number : String;
        expect(cell?.constructor, `${column} of row ${r + 1}`).toBe(type);
      }
    }
    expect(compared).toBeGreaterThan(SEED * 10);
  });

  it('its XML: bold frozen header, an autofilter over every row, dates, identifiers as text, no formula', async () => {
    const parts = await zipParts(await readFile(xlsxPath));
    expect([...parts.keys()]).toEqual([
      '[Content_Types].xml',
      '_rels/.rels',
      'xl/workbook.xml',
      'xl/_rels/workbook.xml.rels',
      'xl/styles.xml',
      'xl/worksheets/sheet1.xml',
      'xl/worksheets/sheet2.xml',
    ]);
    // The data first (what import and pandas read by default), the summary last; the workbook opens on it.
    expect(parts.get('xl/workbook.xml')).toContain(
      '<workbookView activeTab="1"/></bookViews><sheets><sheet name="clients" sheetId="1" r:id="rId1"/><sheet name="Summary" sheetId="2" r:id="rId2"/></sheets>',
    );
    expect(sheetXml).toContain('<sheetView workbookViewId="0">');
    expect(parts.get('xl/worksheets/sheet2.xml')).toContain('<sheetView tabSelected="1" workbookViewId="0"/>');
    const styles = parts.get('xl/styles.xml')!;
    const xfs = [...styles.split('<cellXfs')[1]!.matchAll(/<xf [^>]*>/g)].map((m) => m[0]);
    const fonts = [...styles.matchAll(/<font>(.*?)<\/font>/g)].map((m) => m[1]);
    const styleOf = (s: string) => xfs[Number(s)]!;
    expect(fonts[Number(/fontId="(\d)"/.exec(styleOf('1'))![1])]).toContain('<b/>');
    expect(styleOf('2')).toContain('numFmtId="164"');
    // The cells say UTC (quoted text in the format: still a date for every reader).
    expect(styles).toContain('<numFmt numFmtId="164" formatCode="yyyy-mm-dd hh:mm:ss.000 &quot;UTC&quot;"/>');
    expect(styleOf('3')).toContain('numFmtId="49"');

    expect(sheetXml).toContain('<pane ySplit="1" topLeftCell="A2" activePane="bottomLeft" state="frozen"/>');
    expect(sheetXml).toContain(`<autoFilter ref="A1:N${SEED + 3}"/>`);
    const header = /<row r="1">(.*?)<\/row>/.exec(sheetXml)![1]!;
    expect(header.match(/<c r="[A-N]1" s="1" t="inlineStr">/g)).toHaveLength(14);
    expect(sheetXml.match(/<row /g)).toHaveLength(SEED + 3);
    const cells = [...sheetXml.matchAll(/<c r="([A-Z]+)(\d+)"([^>]*)>(.*?)<\/c>/g)];
    for (const [, column, row, attributes, body] of cells) {
      if (row === '1') continue;
      if (column === 'I') expect(`${attributes}${body}`).toMatch(/^ s="2"<v>\d+\.?\d*<\/v>$/);
      else if (column === 'M') expect(`${attributes}${body}`).toMatch(/^<v>\d+<\/v>$/);
      else if ('AJKL'.includes(column!)) expect(attributes).toBe(' s="3" t="inlineStr"');
      else expect(attributes).toBe(' t="inlineStr"');
    }
    for (const xml of parts.values()) expect(xml).not.toMatch(/<f[ >]|t="str"|t="s"/);
    expect(sheetXml).toContain('<t>=SUM(A1:A9)</t>');
    expect(sheetXml).toContain('<t>=HYPERLINK("http://x")</t>');
  });

  it('created_at is the UTC instant as an Excel serial (days since 1899-12-30), to the millisecond', async () => {
    const serial = (Date.parse(LATE) - Date.UTC(1899, 11, 30)) / 86_400_000;
    const late = new RegExp(`<c r="I(\\d+)" s="2"><v>${String(serial).replace('.', '\\.')}</v></c>`).exec(sheetXml);
    expect(late).not.toBeNull();
    const rows = await sheetCells(xlsxPath);
    expect((rows[Number(late![1]) - 1]![8] as Date).toISOString()).toBe(LATE);
    // A value that looks CSV-escaped keeps one more quote: import strips one.
    expect(rows[Number(late![1]) - 1]![1]).toBe("''=already quoted");
    expect(excelSerial('1900-03-01T00:00:00.000Z')).toBe(61);
    expect(excelSerial('2024-01-01T12:00:00Z')).toBe(45292.5);
    expect(excelSerial('2024-01-01T14:00:00+02:00')).toBe(45292.5);
    expect(excelSerial('2024-01-01T14:00:00+0200')).toBe(45292.5);
    expect(excelSerial('2024-01-01T12:00')).toBe(45292.5);
    for (const text of ['1900-02-28T00:00:00Z', '2024-01-01', 'soon', '2024-13-01T00:00:00Z']) {
      expect(excelSerial(text), text).toBeUndefined();
    }
  });

  it('text XML cannot hold is written as Excel and LibreOffice read it; CR survives', async () => {
    const row = new RegExp(`<row r="\\d+">(<c r="A\\d+" s="3" t="inlineStr"><is><t>${ODD.id}</t>.*?)</row>`).exec(sheetXml)!;
    expect(row[1]).toContain('<t>bell_x0007_ vt_x000B_ nul_x0000_ cr&#13; end</t>');
    expect(row[1]).toContain('<t>literal _x005F_x0041_ and _x005F_x12_ &amp; &lt;tags&gt;</t>');
    expect(xmlText('  a\tb\nc\r')).toBe('  a\tb\nc&#13;');
    expect(xmlText('_x00e9_ _X00E9_ _xZZ_ \ufffe')).toBe('_x005F_x00e9_ _X00E9_ _xZZ_ _xFFFE_');
    const rows = await sheetCells(xlsxPath);
    expect(rows.find((cells) => cells[0] === ODD.id)?.[1]).toContain('cr\r end');
  });

  it('--columns picks and orders the columns; --no-escape-formulas changes nothing', async () => {
    const out = join(temp.dir, 'picked.xlsx');
    const args = ['export', '--out', out, '--columns', 'created_at,name,documents_count', '--quiet', ...TO];
    expect((await runCli(args, { env })).code).toBe(0);
    const rows = await sheetCells(out);
    expect(rows[0]).toEqual(['created_at', 'name', 'documents_count']);
    expect(rows[1]![0]).toBeInstanceOf(Date);
    expect(typeof rows[1]![2]).toBe('number');
    const picked = (await zipParts(await readFile(out))).get('xl/worksheets/sheet1.xml')!;
    expect(picked).toContain(`<autoFilter ref="A1:C${SEED + 3}"/>`);

    const raw = join(temp.dir, 'raw.xlsx');
    const noEscape = ['export', '--out', raw, '--format', 'xlsx', '--no-escape-formulas', '--quiet', ...TO];
    expect((await runCli(noEscape, { env })).code).toBe(0);
    expect((await zipParts(await readFile(raw))).get('xl/worksheets/sheet1.xml')).toBe(sheetXml);
  });

  it('--out - streams the same workbook to a pipe; a terminal is refused', async () => {
    const piped = await runBinary(['export', '--out', '-', '--format', 'xlsx', '--quiet', ...TO], env);
    expect(piped.code).toBe(0);
    expect((await zipParts(piped.stdout)).get('xl/worksheets/sheet1.xml')).toBe(sheetXml);

    const tty = Object.assign(new (await import('node:stream')).PassThrough(), { isTTY: true });
    const io = { stdout: tty, stderr: new (await import('node:stream')).PassThrough() };
    const run = runCliInProcess(['export', '--format', 'xlsx'], env, io);
    await expect(run).rejects.toThrow(UsageError);
    await expect(run).rejects.toThrow(/an xlsx workbook is binary: name a file with --out report.xlsx/);
  });

  it('refuses --bom and a file name of another format (exit 2), writing nothing', async () => {
    const cases: [string[], RegExp][] = [
      [['--out', join(temp.dir, 'bom.xlsx'), '--bom'], /--bom applies to CSV only/],
      [['--out', join(temp.dir, 'text.xlsx'), '--format', 'csv'], /--format csv does not match .*text\.xlsx/],
      [['--out', join(temp.dir, 'book.csv'), '--format', 'xlsx'], /--format xlsx does not match .*book\.csv/],
    ];
    for (const [args, message] of cases) {
      const result = await runCli(['export', ...args], { env });
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr).toMatch(message);
    }
    expect(await readdir(temp.dir)).not.toContain('bom.xlsx');
    expect(await readdir(temp.dir)).not.toContain('book.csv');
  });

  it('a cell over 32,767 characters stops the export (exit 2), naming client and column; no file', async () => {
    const out = join(temp.dir, 'long.xlsx');
    const args = ['export', '--out', out, '--created-from', '2030-01-01', '--created-to', '2030-01-01'];
    const result = await runCli(args, { env });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/client cli_long: its name is 32768 characters, over the 32767 an xlsx cell holds/);
    expect((await readdir(temp.dir)).filter((name) => name.includes('long.xlsx'))).toEqual([]);
  });

  it('a service failure mid-export leaves neither the workbook nor its temp file', async () => {
    const dir = await makeTempDir();
    const fake = await startFakeService((page, size) =>
      page === 0 ? { ids: idRange('f', 0, size) } : { status: 400, error: { param: 'status' } },
    );
    try {
      const out = join(dir.dir, 'failed.xlsx');
      const result = await runCli(['export', '--out', out, '--quiet'], {
        env: { CCS_BASE_URL: fake.url, CCS_TOKEN: 'lk_sandbox_x' },
      });
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/export failed: .*failed\.xlsx was not written/);
      expect(await readdir(dir.dir)).toEqual([]);
    } finally {
      await fake.close();
      await dir.cleanup();
    }
  });

  it('a sheet holds 1,048,575 clients below its header; one more is a clear error', () => {
    const encoder = createSheetEncoder(['documents_count']);
    encoder.start();
    const batch = Array.from({ length: 1025 }, () => ({ documents_count: 0 }) as FlatClient);
    for (let written = 0; written < MAX_SHEET_ROWS - 1; written += batch.length) encoder.encode(batch);
    expect(() => encoder.encode(batch.slice(0, 1))).toThrow(/holds 1048575 clients below its header/);
  });
});

/** The built CLI with stdout kept as bytes (runCli decodes it as text). */
function runBinary(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: Buffer }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env: { ...process.env, ...env } });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.stderr.resume();
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout: Buffer.concat(chunks) }));
  });
}
