/**
 * Output names and formats for scheduled reports: {date}/{datetime}/{report} in --out (UTC),
 * gzip by name or flag (still temp-then-rename), an existing file never replaced without
 * --overwrite, and an empty result as a header-only CSV with exit 0.
 */
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expandOutName } from '../src/export/out-name.js';
import { type Sandbox, startSandbox } from '../src/sandbox/index.js';
import { expectedIds, parseCsv } from './export.helpers.js';
import { makeTempDir, runCliInProcess as runCli } from './helpers.js';

let sandbox: Sandbox;
let temp: Awaited<ReturnType<typeof makeTempDir>>;
let env: Record<string, string>;

beforeAll(async () => {
  sandbox = await startSandbox({ verifySignatures: false, seed: 300, seedRandom: 5 });
  temp = await makeTempDir();
  env = { CCS_BASE_URL: sandbox.url, CCS_TOKEN: sandbox.token };
});
afterAll(async () => {
  await sandbox?.close();
  await temp?.cleanup();
});

describe('--out placeholders', () => {
  it.each([
    ['r-{date}.csv', 'r-2026-11-25.csv'],
    ['r-{datetime}.csv', 'r-2026-11-25T031500Z.csv'],
    ['{report}/{date}-{report}.jsonl.gz', 'weekly/2026-11-25-weekly.jsonl.gz'],
    ['plain.csv', 'plain.csv'],
  ])('%s → %s (UTC)', (pattern, expected) => {
    expect(expandOutName(pattern, new Date('2026-11-25T03:15:00.900Z'), 'weekly')).toBe(expected);
  });

  it('an unknown placeholder, or {report} without a report, is a usage error', () => {
    expect(() => expandOutName('r-{week}.csv', new Date(), 'x')).toThrow(/unknown placeholder \{week\}/);
    expect(() => expandOutName('{report}.csv', new Date(), undefined)).toThrow(/\{report\} needs --report NAME/);
  });

  it('the CLI writes the dated name and reports it', async () => {
    const result = await runCli(['export', '--out', join(temp.dir, 'approved-{date}.csv'), '--status', 'approved', '--json', '--quiet'], { env });
    expect(result.code).toBe(0);
    const summary = JSON.parse(result.stdout);
    const today = new Date().toISOString().slice(0, 10);
    expect(summary.out).toBe(join(temp.dir, `approved-${today}.csv`));
    expect(new Set(parseCsv(await readFile(summary.out, 'utf8')).map((r) => r.id))).toEqual(
      expectedIds(sandbox.store.all(), { status: ['approved'] }),
    );
  });
});

describe('gzip', () => {
  it('.csv.gz and .jsonl.gz are gzip streams of the same content; --gzip too; no temp file left', async () => {
    const dir = join(temp.dir, 'gz');
    const { mkdir } = await import('node:fs/promises');
    await mkdir(dir);
    const csv = await runCli(['export', '--out', join(dir, 'all.csv.gz'), '--quiet'], { env });
    expect(csv.code).toBe(0);
    const records = parseCsv(gunzipSync(await readFile(join(dir, 'all.csv.gz'))).toString('utf8'));
    expect(new Set(records.map((r) => r.id))).toEqual(expectedIds(sandbox.store.all()));
    const jsonl = await runCli(['export', '--out', join(dir, 'all.jsonl.gz'), '--quiet'], { env });
    expect(jsonl.code).toBe(0);
    const lines = gunzipSync(await readFile(join(dir, 'all.jsonl.gz'))).toString('utf8').trim().split('\n');
    expect(lines).toHaveLength(300);
    expect(JSON.parse(lines[0]!)).toHaveProperty('id');
    const flag = await runCli(['export', '--out', join(dir, 'flag.csv'), '--gzip', '--status', 'rejected'], { env });
    expect(flag.code).toBe(0);
    expect(flag.stderr).toMatch(/\(csv, gzip\)/);
    expect(gunzipSync(await readFile(join(dir, 'flag.csv'))).toString('utf8')).toMatch(/^id,name,/);
    expect((await readdir(dir)).sort()).toEqual(['all.csv.gz', 'all.jsonl.gz', 'flag.csv']);
    const xlsx = await runCli(['export', '--out', join(dir, 'r.xlsx'), '--gzip'], { env });
    expect(xlsx.code).toBe(2);
    expect(xlsx.stderr).toMatch(/already compressed/);
  });
});

describe('the summary a report reader wants', () => {
  it('counts by status and credit_status, in the human summary and --json, with the filter and window', async () => {
    const out = join(temp.dir, 'counted.csv');
    const result = await runCli(['export', '--out', out, '--status', 'approved,rejected', '--created-from', '2020-01-01', '--json'], { env });
    expect(result.code).toBe(0);
    const summary = JSON.parse(result.stdout);
    // Every cell of the statuses asked for, zeros included, with totals right and below.
    const expected: Record<string, Record<string, number>> = {};
    for (const status of ['approved', 'rejected', 'total']) expected[status] = { active: 0, inactive: 0, total: 0 };
    for (const c of sandbox.store.all()) {
      if (c.status !== 'approved' && c.status !== 'rejected') continue;
      for (const row of [expected[c.status]!, expected.total!]) {
        row[c.credit_status]!++;
        row.total!++;
      }
    }
    expect(summary.counts).toEqual(expected);
    expect(summary.filters).toMatchObject({ status: ['approved', 'rejected'], createdFrom: '2020-01-01T00:00:00.000Z' });
    expect(result.stderr).toMatch(/^ {2}status +active +inactive +total$/m);
    const approved = expected.approved!;
    expect(result.stderr).toMatch(
      new RegExp(`^ {2}approved +${approved.active ?? 0} +${approved.inactive ?? 0} +${(approved.active ?? 0) + (approved.inactive ?? 0)}$`, 'm'),
    );
    expect(result.stderr).toMatch(/^ {2}filters: status in approved,rejected$/m);
    // The window as sent, in UTC, both ends.
    expect(result.stderr).toMatch(/^ {2}created_at \(UTC\): 2020-01-01T00:00:00.000Z to \d{4}-\d\d-\d\dT[\d:.]+Z \(pinned to the export's start/m);
    // Tuning figures are for --json, not for the report's reader.
    expect(summary.prefetch).toMatchObject({ mode: 'auto' });
    expect(result.stderr).not.toMatch(/prefetch/);
    expect(result.stderr).toMatch(/: 2 pages of up to 100,/);
  });

  it('one page is "1 page"', async () => {
    const out = join(temp.dir, 'one-page.csv');
    sandbox.store.insert({ created_at: '2041-05-05T10:00:00.000Z' });
    const result = await runCli(['export', '--out', out, '--created-from', '2041-05-05', '--created-to', '2041-05-05'], { env });
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/^Exported 1 client in .*: 1 page of up to 100,/);
  });
});

describe('existing outputs and empty results', () => {
  it('an existing file is refused (exit 2, before any request) unless --overwrite', async () => {
    const out = join(temp.dir, 'kept.csv');
    await writeFile(out, 'last week');
    const requests = sandbox.stats.requests;
    const refused = await runCli(['export', '--out', out], { env });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/kept\.csv exists: an export never replaces a file silently; pass --overwrite/);
    expect(sandbox.stats.requests).toBe(requests);
    expect(await readFile(out, 'utf8')).toBe('last week');
    const replaced = await runCli(['export', '--out', out, '--overwrite', '--quiet'], { env });
    expect(replaced.code).toBe(0);
    expect(parseCsv(await readFile(out, 'utf8'))).toHaveLength(300);
  });

  it('no client matched: a header-only CSV, exit 0, said in the summary', async () => {
    const out = join(temp.dir, 'none.csv');
    const result = await runCli(['export', '--out', out, '--created-from', '2040-01-01', '--created-to', '2040-01-02', '--columns', 'id,status'], { env });
    expect(result.code).toBe(0);
    expect(await readFile(out, 'utf8')).toBe('id,status\r\n');
    expect(result.stderr).toMatch(/Exported 0 clients/);
    expect(result.stderr).toMatch(/no client matched: the file holds the header row only/);
  });
});
