/**
 * `--split`: past Excel's row limit, or one sheet or file per month or status. An xlsx report
 * becomes one workbook of several sheets (read back with the suite's xlsx reader), a CSV or
 * JSONL report several files named after their part; every client is in exactly one part; a
 * split that cannot work is refused before any request, never after an export thrown away.
 */
import { readFileSync } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, type SandboxClient, startSandbox } from '../src/sandbox/index.js';
import { expectedIds, parseCsv } from './export.helpers.js';
import { namedSheetCells, sheetTabs } from './export.xlsx.helpers.js';
import { makeTempDir, runCliInProcess as runCli } from './helpers.js';

const H1 = ['--created-from', '2024-01-01', '--created-to', '2024-06-30'];
let sandbox: Sandbox;
let temp: Awaited<ReturnType<typeof makeTempDir>>;
let env: Record<string, string>;
let firstHalf: SandboxClient[];

beforeAll(async () => {
  sandbox = await startSandbox({ verifySignatures: false, seed: 300, seedRandom: 21 });
  temp = await makeTempDir();
  env = { CCS_BASE_URL: sandbox.url, CCS_TOKEN: sandbox.token };
  const ids = expectedIds(sandbox.store.all(), { fromMs: Date.parse('2024-01-01T00:00:00Z'), toMs: Date.parse('2024-06-30T23:59:59.999Z') });
  firstHalf = sandbox.store.all().filter((c) => ids.has(c.id));
});
afterAll(async () => {
  await sandbox?.close();
  await temp?.cleanup();
});

const idsOf = (rows: readonly (readonly unknown[])[]) => rows.slice(1).map((row) => String(row[0]));

describe('--split in one workbook', () => {
  it('month: a sheet per month of creation, in order, each holding its month; the summary lists them', async () => {
    const out = join(temp.dir, 'h1.xlsx');
    const result = await runCli(['export', '--out', out, ...H1, '--split', 'month', '--json', '--quiet'], { env });
    expect(result.code).toBe(0);
    const months = ['2024-01', '2024-02', '2024-03', '2024-04', '2024-05', '2024-06'];
    expect(await sheetTabs(out)).toEqual({ names: [...months, 'Summary'], active: 'Summary' });
    const seen: string[] = [];
    for (const month of months) {
      const rows = await namedSheetCells(out, month);
      expect(rows[0]![0]).toBe('id');
      const expected = firstHalf.filter((c) => c.created_at.startsWith(month)).map((c) => c.id);
      expect(new Set(idsOf(rows)), month).toEqual(new Set(expected));
      seen.push(...idsOf(rows));
    }
    expect(seen).toHaveLength(firstHalf.length);
    const summary = JSON.parse(result.stdout) as { parts: { name: string; rows: number }[] };
    expect(summary.parts.map((part) => part.name)).toEqual(months);
    expect(summary.parts.reduce((sum, part) => sum + part.rows, 0)).toBe(firstHalf.length);
  });

  it('status and rows:N: statuses interleave and still get one sheet each; N rows a sheet', async () => {
    const byStatus = join(temp.dir, 'status.xlsx');
    expect((await runCli(['export', '--out', byStatus, '--split', 'status', '--quiet'], { env })).code).toBe(0);
    const { names } = await sheetTabs(byStatus);
    expect(names.slice(0, -1).sort()).toEqual([...new Set(sandbox.store.all().map((c) => c.status))].sort());
    for (const status of names.slice(0, -1)) {
      const ids = idsOf(await namedSheetCells(byStatus, status));
      expect(new Set(ids), status).toEqual(new Set(sandbox.store.all().filter((c) => c.status === status).map((c) => c.id)));
    }
    const byRows = join(temp.dir, 'rows.xlsx');
    expect((await runCli(['export', '--out', byRows, '--split', 'rows:120', '--sheet-name', 'all', '--quiet'], { env })).code).toBe(0);
    expect((await sheetTabs(byRows)).names).toEqual(['all 1', 'all 2', 'all 3', 'Summary']);
    const sizes = await Promise.all(['all 1', 'all 2', 'all 3'].map(async (name) => (await namedSheetCells(byRows, name)).length - 1));
    expect(sizes).toEqual([120, 120, 60]);
  });

  it('no client: one header-only sheet and the summary', async () => {
    const out = join(temp.dir, 'empty.xlsx');
    const args = ['export', '--out', out, '--split', 'month', '--created-from', '2040-01-01', '--created-to', '2040-01-02', '--quiet'];
    expect((await runCli(args, { env })).code).toBe(0);
    expect((await sheetTabs(out)).names).toEqual(['clients', 'Summary']);
    expect(await namedSheetCells(out, 'clients')).toEqual([['id', 'name', 'email', 'country', 'address', 'currency', 'status', 'credit_status', 'created_at', 'bank_iban', 'bank_account_number', 'bank_swift_code', 'documents_count', 'documents']]);
  });
});

describe('--split into files', () => {
  it('CSV by status: NAME-STATUS.csv, each holding its status; JSONL.gz by rows', async () => {
    const dir = join(temp.dir, 'files');
    await mkdir(dir);
    const result = await runCli(['export', '--out', join(dir, 'all.csv'), '--split', 'status', '--quiet'], { env });
    expect(result.code).toBe(0);
    const statuses = [...new Set(sandbox.store.all().map((c) => c.status))].sort();
    expect(await readdir(dir)).toEqual(statuses.map((status) => `all-${status}.csv`));
    for (const status of statuses) {
      const records = parseCsv(await readFile(join(dir, `all-${status}.csv`), 'utf8'));
      expect(new Set(records.map((r) => r.id))).toEqual(expectedIds(sandbox.store.all(), { status: [status] }));
    }
    const gz = join(temp.dir, 'gz');
    await mkdir(gz);
    expect((await runCli(['export', '--out', join(gz, 'n.jsonl.gz'), '--split', 'rows:250', '--quiet'], { env })).code).toBe(0);
    expect(await readdir(gz)).toEqual(['n-1.jsonl.gz', 'n-2.jsonl.gz']);
    const lines = (name: string) => gunzipSync(readFileSync(join(gz, name))).toString('utf8').trim().split('\n');
    expect([lines('n-1.jsonl.gz').length, lines('n-2.jsonl.gz').length]).toEqual([250, 50]);
  });
});

describe('refused before any request', () => {
  it('rows:N past the sheet limit (xlsx_too_many_rows), a bad rule, a part file in the way, a split stream', async () => {
    const dir = join(temp.dir, 'refused');
    await mkdir(dir);
    await writeFile(join(dir, 'r-approved.csv'), 'last week');
    const requests = sandbox.stats.requests;
    const cases: [string[], RegExp][] = [
      [['--out', join(dir, 'big.xlsx'), '--split', 'rows:2000000'], /--split rows:2000000: an xlsx sheet holds 1048575 clients below its header.*\[xlsx_too_many_rows\]/],
      [['--out', join(dir, 'x.csv'), '--split', 'week'], /--split takes rows:N, month or status/],
      [['--out', join(dir, 'r.csv'), '--split', 'status'], /r-approved\.csv exists and a split export would write files named so/],
      [['--out', '-', '--split', 'status'], /a split CSV or JSONL export writes files: name one with --out/],
    ];
    for (const [args, message] of cases) {
      const result = await runCli(['export', ...args], { env });
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr).toMatch(message);
    }
    expect(sandbox.stats.requests).toBe(requests);
    expect(await readFile(join(dir, 'r-approved.csv'), 'utf8')).toBe('last week');
  });
});
