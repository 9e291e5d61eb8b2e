/**
 * An xlsx export with no `--split` past Excel's row limit: List Clients gives no total, so it
 * cannot be refused before; it goes on in a next sheet (`clients (2)`…) and says so (stderr,
 * the Summary sheet, `--json`'s warnings), instead of failing after the whole export. The limit
 * is lowered for the test (src/infra/inject.ts) so 300 sandbox clients overflow it; the real
 * one is pinned separately.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { injected } from '../src/infra/inject.js';
import { type Sandbox, startSandbox } from '../src/sandbox/index.js';
import { overflowSheetName } from '../src/export/sheet-overflow.js';
import { MAX_SHEET_ROWS } from '../src/export/xlsx-sheet.js';
import { namedSheetCells, sheetTabs } from './export.xlsx.helpers.js';
import { makeTempDir, runCliInProcess as runCli } from './helpers.js';

const HEADER = ['id', 'name', 'email', 'country', 'address', 'currency', 'status', 'credit_status', 'created_at', 'bank_iban', 'bank_account_number', 'bank_swift_code', 'documents_count', 'documents'];
let sandbox: Sandbox;
let temp: Awaited<ReturnType<typeof makeTempDir>>;
let env: Record<string, string>;

beforeAll(async () => {
  sandbox = await startSandbox({ verifySignatures: false, seed: 300, seedRandom: 21 });
  temp = await makeTempDir();
  env = { CCS_BASE_URL: sandbox.url, CCS_TOKEN: sandbox.token };
});
afterAll(async () => {
  await sandbox?.close();
  await temp?.cleanup();
});
afterEach(() => {
  injected.sheetRows = undefined;
});

describe('past the sheet limit, no --split', () => {
  it('goes on in "clients (2)", "clients (3)": every client in exactly one sheet, a header on each, said everywhere', async () => {
    injected.sheetRows = 120;
    const out = join(temp.dir, 'all.xlsx');
    const result = await runCli(['export', '--out', out, '--json'], { env });
    expect(result.code, result.stderr).toBe(0);
    const sheets = ['clients', 'clients (2)', 'clients (3)'];
    expect(await sheetTabs(out)).toEqual({ names: [...sheets, 'Summary'], active: 'Summary' });
    const seen: string[] = [];
    const sizes: number[] = [];
    for (const name of sheets) {
      const rows = await namedSheetCells(out, name);
      expect(rows[0], name).toEqual(HEADER);
      sizes.push(rows.length - 1);
      seen.push(...rows.slice(1).map((row) => String(row[0])));
    }
    expect(sizes).toEqual([120, 120, 60]);
    const all = sandbox.store.all().map((c) => c.id);
    expect(seen).toHaveLength(all.length);
    expect(new Set(seen)).toEqual(new Set(all));
    const summary = await namedSheetCells(out, 'Summary');
    expect(summary.find((row) => row[0] === 'Clients')?.[1]).toBe(all.length);
    const warning = summary.find((row) => row[0] === 'Warning')?.[1];
    expect(warning).toMatch(/more clients than an xlsx sheet holds \(120 below its header\): they go on in "clients \(2\)", "clients \(3\)"/);
    const json = JSON.parse(result.stdout) as { rows: number; warnings?: string[]; parts?: { name: string; rows: number }[] };
    expect(json.rows).toBe(all.length);
    expect(json.warnings).toEqual([warning]);
    expect(json.parts).toEqual([
      { name: 'clients', rows: 120 },
      { name: 'clients (2)', rows: 120 },
      { name: 'clients (3)', rows: 60 },
    ]);
    // No temp (draft, spooled sheets) left beside the report.
    expect(await readdir(temp.dir)).toEqual(['all.xlsx']);
  });

  it('a long --sheet-name keeps its number within 31 characters; the human summary says warning:', async () => {
    injected.sheetRows = 250;
    const out = join(temp.dir, 'named.xlsx');
    const name = 'Quarterly clients for review 25';
    const result = await runCli(['export', '--out', out, '--sheet-name', name, '--summary-sheet', 'first'], { env });
    expect(result.code, result.stderr).toBe(0);
    expect((await sheetTabs(out)).names).toEqual(['Summary', name, 'Quarterly clients for revie (2)']);
    expect(result.stderr).toMatch(/warning: more clients than an xlsx sheet holds \(250 below its header\)/);
    expect(result.stderr).toMatch(/part Quarterly clients for revie \(2\): 50 clients/);
  });

  it('exactly at the limit: one sheet, no warning', async () => {
    injected.sheetRows = 300;
    const out = join(temp.dir, 'exact.xlsx');
    const result = await runCli(['export', '--out', out, '--json', '--quiet'], { env });
    expect(result.code, result.stderr).toBe(0);
    expect((await sheetTabs(out)).names).toEqual(['clients', 'Summary']);
    expect((await namedSheetCells(out, 'clients')).length).toBe(301);
    const json = JSON.parse(result.stdout) as { warnings?: string[]; parts?: unknown };
    expect(json.warnings).toBeUndefined();
    expect(json.parts).toBeUndefined();
  });

  it('a workbook to a stream cannot add sheets once started: xlsx_too_many_rows, naming what works', async () => {
    injected.sheetRows = 100;
    const result = await runCli(['export', '--format', 'xlsx', '--out', '-'], { env });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/an xlsx sheet holds 100 clients below its header.*--out FILE\.xlsx.*\[xlsx_too_many_rows\]/);
  });
});

describe("Excel's limit itself", () => {
  it('is 1,048,575 clients below the header (1,048,576 rows); --split rows:N is checked against it before any request', async () => {
    expect(MAX_SHEET_ROWS).toBe(1_048_576);
    expect(overflowSheetName('clients', 2)).toBe('clients (2)');
    const requests = sandbox.stats.requests;
    const over = await runCli(['export', '--out', join(temp.dir, 'over.xlsx'), '--split', 'rows:1048576'], { env });
    expect(over.code).toBe(2);
    expect(over.stderr).toMatch(/holds 1048575 clients below its header.*\[xlsx_too_many_rows\]/);
    expect(sandbox.stats.requests).toBe(requests);
    const empty = ['--created-from', '2040-01-01', '--created-to', '2040-01-02', '--quiet'];
    const at = await runCli(['export', '--out', join(temp.dir, 'at.xlsx'), '--split', 'rows:1048575', ...empty], { env });
    expect(at.code, at.stderr).toBe(0);
  });
});
