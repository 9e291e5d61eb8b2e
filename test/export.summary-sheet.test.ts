/**
 * The summary an analyst hands on with the report: a month-end xlsx report carries a Summary
 * sheet (window, filters, time zone, when and by which version, the total, status × credit
 * status with every cell, by country, by month and ISO week) read back by the test suite's
 * reader and by LibreOffice where it is installed (openpyxl where it is); the counts equal the
 * sandbox's own; `--json` lists the zero cells and a total; CSV gets the same summary as a
 * companion file on request; `--country` filters after paging and `--columns` relabels headers.
 */
import { execFile } from 'node:child_process';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, type SandboxClient, startSandbox } from '../src/sandbox/index.js';
import { parseCsv } from './export.helpers.js';
import { type Cell, namedSheetCells, sheetCells, sheetTabs } from './export.xlsx.helpers.js';
import { makeTempDir, runCliInProcess as runCli } from './helpers.js';

const run = promisify(execFile);
const JANUARY = ['--created-from', '2025-01-01', '--created-to', '2025-01-31'];
const FROM = Date.parse('2025-01-01T00:00:00.000Z');
const TO = Date.parse('2025-01-31T23:59:59.999Z');

let sandbox: Sandbox;
let temp: Awaited<ReturnType<typeof makeTempDir>>;
let env: Record<string, string>;
let january: SandboxClient[];

beforeAll(async () => {
  sandbox = await startSandbox({ verifySignatures: false, seed: 400, seedRandom: 9 });
  // The month's edges: the last instant of December and the first of February stay out.
  sandbox.store.insert({ created_at: '2024-12-31T23:59:59.999Z', country: 'DE' });
  sandbox.store.insert({ created_at: '2025-01-01T00:00:00.000Z', country: 'DE', status: 'approved', credit_status: 'active' });
  sandbox.store.insert({ created_at: '2025-01-31T23:59:59.999Z', country: 'FR', status: 'rejected', credit_status: 'inactive' });
  sandbox.store.insert({ created_at: '2025-02-01T00:00:00.000Z', country: 'FR' });
  january = sandbox.store.all().filter((c) => Date.parse(c.created_at) >= FROM && Date.parse(c.created_at) <= TO);
  temp = await makeTempDir();
  env = { CCS_BASE_URL: sandbox.url, CCS_TOKEN: sandbox.token };
});
afterAll(async () => {
  await sandbox?.close();
  await temp?.cleanup();
});

/** The expected status × credit status table of `clients`, every cell, totals right and below. */
function crossCounts(clients: readonly SandboxClient[]): Record<string, Record<string, number>> {
  const statuses = ['pending_review', 'pending_documents', 'document_review', 'rejected', 'approved'];
  const table: Record<string, Record<string, number>> = {};
  for (const status of [...statuses, 'total']) table[status] = { active: 0, inactive: 0, total: 0 };
  for (const client of clients) {
    for (const row of [table[client.status]!, table.total!]) {
      row[client.credit_status]!++;
      row.total!++;
    }
  }
  return table;
}

/** Rows of the summary after the row whose first cell is `title`, up to the next empty row. */
function section(rows: readonly (readonly Cell[])[], title: string): Cell[][] {
  const start = rows.findIndex((row) => row[0] === title);
  expect(start, title).toBeGreaterThanOrEqual(0);
  const out: Cell[][] = [];
  for (let i = start + 1; i < rows.length && rows[i]!.some((cell) => cell !== null); i++) out.push([...rows[i]!]);
  return out;
}

const valueOf = (rows: readonly (readonly Cell[])[], label: string) => rows.find((row) => row[0] === label)?.[1];

describe('the month-end xlsx report', () => {
  let file: string;
  let summary: Record<string, unknown>;
  beforeAll(async () => {
    file = join(temp.dir, 'month-end.xlsx');
    const result = await runCli(['export', '--out', file, ...JANUARY, '--json', '--quiet'], { env });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    summary = JSON.parse(result.stdout) as Record<string, unknown>;
  });

  it('keeps the clients as the first sheet and opens on a Summary sheet after it', async () => {
    expect(await sheetTabs(file)).toEqual({ names: ['clients', 'Summary'], active: 'Summary' });
    const ids = (await sheetCells(file)).slice(1).map((row) => row[0]);
    expect(new Set(ids)).toEqual(new Set(january.map((c) => c.id)));
  });

  it('says what it covers, when and by what it was made, and counts exactly what the file holds', async () => {
    const rows = await namedSheetCells(file, 'Summary');
    expect(rows[0]![0]).toBe('ccs-bulk export');
    expect(valueOf(rows, 'File')).toBe(file);
    expect((valueOf(rows, 'Created from (inclusive)') as Date).toISOString()).toBe('2025-01-01T00:00:00.000Z');
    const to = rows.find((row) => row[0] === 'Created to (inclusive)')!;
    expect((to[1] as Date).toISOString()).toBe('2025-01-31T23:59:59.999Z');
    expect(to[2]).toBe('2025-01-31T23:59:59.999Z');
    expect(valueOf(rows, 'Time zone')).toBe('UTC');
    expect([valueOf(rows, 'Status'), valueOf(rows, 'Credit status'), valueOf(rows, 'Country')]).toEqual(['all', 'all', 'all']);
    const madeAt = valueOf(rows, 'Made at') as Date;
    expect(Math.abs(madeAt.getTime() - Date.now())).toBeLessThan(120_000);
    const { version } = JSON.parse(await readFile(join(import.meta.dirname, '..', 'package.json'), 'utf8')) as { version: string };
    expect(valueOf(rows, 'Made by')).toBe(`ccs-bulk ${version}`);
    expect(valueOf(rows, 'Clients')).toBe(january.length);

    const expected = crossCounts(january);
    const cross = section(rows, 'Status × credit status');
    expect(cross.map((row) => row[0])).toEqual(['pending_review', 'pending_documents', 'document_review', 'rejected', 'approved', 'Total']);
    for (const row of cross) {
      const key = row[0] === 'Total' ? 'total' : String(row[0]);
      expect(row.slice(1, 4), key).toEqual([expected[key]!.active, expected[key]!.inactive, expected[key]!.total]);
    }
    const countries = new Map(section(rows, 'By country').map((row) => [row[0], row[1]]));
    for (const code of new Set(january.map((c) => c.country))) {
      expect(countries.get(code), code).toBe(january.filter((c) => c.country === code).length);
    }
    expect(section(rows, 'By month created (UTC)')).toEqual([['2025-01', january.length, null, null]]);
    const weeks = section(rows, 'By ISO week created (UTC)');
    expect(weeks[0]![0]).toBe('2025-W01');
    expect(weeks[weeks.length - 1]![0]).toBe('2025-W05');
    expect(weeks.reduce((sum, row) => sum + (row[1] as number), 0)).toBe(january.length);
    // --json holds the same figures, the zero cells and the totals included.
    expect(summary.counts).toEqual(expected);
    expect(summary.byMonth).toEqual({ '2025-01': january.length });
  });

  it('reads the same in LibreOffice where it is installed, and in openpyxl where that is', async () => {
    // The suite's own reader always: the other readers add to it where they are installed.
    expect(valueOf(await namedSheetCells(file, 'Summary'), 'Clients')).toBe(january.length);
    const checked: string[] = [];
    const office = await run('soffice', ['--version']).then(() => true, () => false);
    if (office) {
      const out = join(temp.dir, 'lo');
      await mkdir(out);
      // A profile of its own: another soffice running on the machine would take the job otherwise.
      const profile = `-env:UserInstallation=file://${join(temp.dir, 'lo-profile')}`;
      const csvFilter = 'csv:Text - txt - csv (StarCalc):44,34,76,1,,0,false,true,false,false,false,-1';
      await run('soffice', [profile, '--headless', '--convert-to', csvFilter, '--outdir', out, file], { timeout: 120_000 });
      const text = await readFile(join(out, 'month-end-Summary.csv'), 'utf8');
      const lines = text.split(/\r?\n/);
      expect(lines).toContain(`Clients,${january.length},,`);
      const total = crossCounts(january).total!;
      expect(lines).toContain(`Total,${total.active},${total.inactive},${total.total}`);
      expect(lines).toContain('Time zone,UTC,dates and months are UTC,');
      checked.push('LibreOffice');
    }
    const python = await run('python3', ['-c', 'import openpyxl']).then(() => true, () => false);
    if (python) {
      const script = 'import sys, openpyxl\nbook = openpyxl.load_workbook(sys.argv[1])\nprint(book.sheetnames, book.active.title)\nfor row in book["Summary"].iter_rows(values_only=True):\n  if row[0] == "Clients": print(row[1])';
      const { stdout } = await run('python3', ['-c', script, file]);
      expect(stdout).toBe(`['clients', 'Summary'] Summary\n${january.length}\n`);
      checked.push('openpyxl');
    }
    console.log(`summary sheet read back with exceljs${checked.map((reader) => `, ${reader}`).join('')}${python ? '' : ' (openpyxl is not installed: checked without it)'}${office ? '' : ' (LibreOffice is not installed: checked without it)'}`);
    // LibreOffice starts slowly on a busy machine.
  }, 240_000);
});

describe('summary options, headers and the country filter', () => {
  it('--summary-sheet first puts it first, none leaves it out; --sheet-name and --columns name what people read', async () => {
    const first = join(temp.dir, 'first.xlsx');
    const args = ['--columns', 'id:Client ID,credit_status:Credit status,created_at:Created (UTC)', '--sheet-name', 'January 2025'];
    expect((await runCli(['export', '--out', first, ...JANUARY, '--summary-sheet', 'first', ...args, '--quiet'], { env })).code).toBe(0);
    expect(await sheetTabs(first)).toEqual({ names: ['Summary', 'January 2025'], active: 'Summary' });
    const data = await namedSheetCells(first, 'January 2025');
    expect(data[0]).toEqual(['Client ID', 'Credit status', 'Created (UTC)']);
    expect(data[1]![2]).toBeInstanceOf(Date);
    const none = join(temp.dir, 'none.xlsx');
    expect((await runCli(['export', '--out', none, ...JANUARY, '--summary-sheet', 'none', '--quiet'], { env })).code).toBe(0);
    expect(await sheetTabs(none)).toEqual({ names: ['clients'], active: 'clients' });
  });

  it('--country DE,France keeps those clients (paging the whole window, and saying so); counts follow', async () => {
    const out = join(temp.dir, 'de-fr.xlsx');
    const requests = sandbox.stats.requests;
    const result = await runCli(['export', '--out', out, ...JANUARY, '--country', 'DE,France', '--json'], { env });
    expect(result.code).toBe(0);
    const kept = january.filter((c) => c.country === 'DE' || c.country === 'FR');
    expect(kept.length).toBeGreaterThan(1);
    expect(kept.length).toBeLessThan(january.length);
    expect(new Set((await sheetCells(out)).slice(1).map((row) => row[0]))).toEqual(new Set(kept.map((c) => c.id)));
    expect(result.stderr).toMatch(/--country DE,FR is applied here, after paging: the service has no country filter/);
    const summary = JSON.parse(result.stdout) as { country: string[]; counts: unknown; account: { skipped: number; received: number } };
    expect(summary.country).toEqual(['DE', 'FR']);
    expect(summary.counts).toEqual(crossCounts(kept));
    expect(summary.account.received).toBe(january.length);
    expect(summary.account.skipped).toBe(january.length - kept.length);
    // The whole window was paged: as many pages as without the filter.
    expect(sandbox.stats.requests - requests).toBeGreaterThanOrEqual(Math.ceil(january.length / 100));
    const rows = await namedSheetCells(out, 'Summary');
    expect(rows.find((row) => row[0] === 'Country')?.slice(1, 3)).toEqual([
      'DE, FR',
      'filtered by ccs-bulk after paging: the service has no country filter, the whole window was read',
    ]);
  });

  it('an unknown country, header or sheet name is exit 2 before any request', async () => {
    const requests = sandbox.stats.requests;
    const cases: [string[], RegExp][] = [
      [['--country', 'DE,Atlantis'], /--country: unknown country "Atlantis"/],
      [['--country', 'Germnay'], /--country: unknown country "Germnay" \(did you mean Germany \(DE\)\?\)/],
      [['--country', 'XX'], /--country: "XX" is not an ISO 3166 country code/],
      [['--columns', 'id:,name'], /--columns: "id:" has an empty header/],
      [['--columns', 'id:Name,name:Name'], /--columns: two columns are headed "Name"/],
      [['--sheet-name', 'a/b'], /--sheet-name "a\/b": a sheet name cannot hold/],
      [['--sheet-name', 'x'.repeat(32)], /--sheet-name must be 1 to 31 characters/],
    ];
    for (const [args, message] of cases) {
      const result = await runCli(['export', '--out', join(temp.dir, 'refused.xlsx'), ...args], { env });
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr).toMatch(message);
    }
    expect(sandbox.stats.requests).toBe(requests);
  });
});

describe('a saved report', () => {
  it('holds headers (a comma in one), the country filter, the sheets and the summary place', async () => {
    const dir = join(temp.dir, 'saved');
    await mkdir(dir);
    const config = join(dir, 'ccs-bulk.config.json');
    const monthly = {
      columns: ['id:Client ID', 'name:Name, legal', 'country:Country'],
      country: ['DE', 'France'],
      createdFrom: '2025-01-01',
      createdTo: '2025-01-31',
      sheetName: 'Clients',
      summarySheet: 'first',
      out: 'january-{report}.xlsx',
    };
    await writeFile(config, JSON.stringify({ reports: { monthly } }));
    const result = await runCli(['export', '--config', config, '--report', 'monthly', '--quiet'], { env });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const file = join(dir, 'january-monthly.xlsx');
    expect(await sheetTabs(file)).toEqual({ names: ['Summary', 'Clients'], active: 'Summary' });
    const rows = await namedSheetCells(file, 'Clients');
    expect(rows[0]).toEqual(['Client ID', 'Name, legal', 'Country']);
    expect(new Set(rows.slice(1).map((row) => row[2]))).toEqual(new Set(['DE', 'FR']));
    const summary = await namedSheetCells(file, 'Summary');
    expect(summary[0]).toEqual(['ccs-bulk export', 'report monthly', null, null]);
  });
});

describe('the summary of a CSV report', () => {
  it('--summary-file writes NAME.summary.csv beside it, with the same figures; CSV headers relabelled', async () => {
    const dir = join(temp.dir, 'csv');
    await mkdir(dir);
    const out = join(dir, 'january.csv');
    const args = ['export', '--out', out, ...JANUARY, '--summary-file', '--columns', 'id:Client ID,status', '--json', '--quiet'];
    const result = await runCli(args, { env });
    expect(result.code).toBe(0);
    expect((await readdir(dir)).sort()).toEqual(['january.csv', 'january.summary.csv']);
    expect(JSON.parse(result.stdout)).toMatchObject({ summaryFile: join(dir, 'january.summary.csv'), headers: ['Client ID', 'status'] });
    expect(Object.keys(parseCsv(await readFile(out, 'utf8'))[0]!)).toEqual(['Client ID', 'status']);
    const text = await readFile(join(dir, 'january.summary.csv'), 'utf8');
    expect(text.startsWith('\uFEFFccs-bulk export,')).toBe(true);
    const lines = text.slice(1).split('\r\n');
    expect(lines).toContain(`Clients,${january.length}`);
    expect(lines).toContain('Created from (inclusive),2025-01-01T00:00:00.000Z,2025-01-01T00:00:00.000Z');
    const total = crossCounts(january).total!;
    expect(lines).toContain(`Total,${total.active},${total.inactive},${total.total}`);
    const again = await runCli(args, { env });
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/january\.csv exists/);
  });
  it("a ';' report's summary file uses ';' too: it opens in the same Excel", async () => {
    const dir = join(temp.dir, 'csv-semicolon');
    await mkdir(dir);
    const out = join(dir, 'januar.csv');
    const result = await runCli(['export', '--out', out, ...JANUARY, '--summary-file', '--delimiter', ';', '--quiet'], { env });
    expect(result.code).toBe(0);
    const lines = (await readFile(join(dir, 'januar.summary.csv'), 'utf8')).slice(1).split('\r\n');
    expect(lines[0]).toMatch(/^ccs-bulk export;*$/);
    expect(lines).toContain(`Clients;${january.length}`);
    const total = crossCounts(january).total!;
    expect(lines).toContain(`Total;${total.active};${total.inactive};${total.total}`);
  });
});
