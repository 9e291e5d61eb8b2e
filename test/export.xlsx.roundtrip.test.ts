/**
 * Export → import through an xlsx report, with the built CLI both ways (so it holds whatever
 * reader import uses): clients exported from sandbox A as a workbook and as CSV, each imported
 * into a fresh sandbox, come back alike — the same clients, the same idempotency keys, and
 * the fields import sends equal to A's (import trims values).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, type SandboxClient, startSandbox } from '../src/sandbox/index.js';
import { makeTempDir, runCliInProcess as runCli, sandboxEnv, writeKeyFile, startTestSandbox } from './helpers.js';

const SEED = 150;
let a: Sandbox;
let fromXlsx: Sandbox;
let fromCsv: Sandbox;
let temp: Awaited<ReturnType<typeof makeTempDir>>;

beforeAll(async () => {
  [a, fromXlsx, fromCsv] = await Promise.all([
    startSandbox({ verifySignatures: false, seed: SEED, seedRandom: 5 }),
    startTestSandbox(),
    startTestSandbox(),
  ]);
  const extra = { country: 'GB', created_at: '2025-03-03T03:03:03.003Z' };
  a.store.insert({ ...extra, name: "'=already quoted", email: 'quoted@example.com', address: "'+1 Main St" });
  a.store.insert({ ...extra, name: '@at Ltd', email: 'multi@example.com', address: 'Flat 2\r\nThe Quay\nLondon' });
  a.store.insert({ ...extra, name: '<b>R&D</b> "q" ]]>', email: 'markup@example.com', address: '-1 Minus Rd' });
  // Text that looks escaped already: an entity, and Excel's `_xHHHH_` escape (written as `_x005F_x…`).
  a.store.insert({ ...extra, name: 'Smith &amp; Sons', email: 'entity@example.com', address: '_x0041_ Row, _x005F_ Lane' });
  temp = await makeTempDir();
});
afterAll(async () => {
  await Promise.all([a?.close(), fromXlsx?.close(), fromCsv?.close()]);
  await temp?.cleanup();
});

async function exportTo(file: string): Promise<void> {
  const env = { CCS_BASE_URL: a.url, CCS_TOKEN: a.token };
  const result = await runCli(['export', '--out', file, '--quiet'], { env });
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
}

async function importInto(target: Sandbox, file: string, name: string): Promise<Record<string, string>[]> {
  const dir = join(temp.dir, name);
  const { mkdir } = await import('node:fs/promises');
  await mkdir(dir);
  const env = sandboxEnv(target, await writeKeyFile(dir, target.privateKeyPem));
  const results = join(dir, 'results.csv');
  const result = await runCli(['import', file, '--results', results, '--quiet'], { env, timeoutMs: 120_000 });
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  return parse(await readFile(results, 'utf8'), { columns: true, bom: true }) as Record<string, string>[];
}

const sent = (client: SandboxClient) => ({
  name: client.name,
  email: client.email,
  country: client.country,
  address: client.address,
  currency: client.currency,
});

describe('export → import through an xlsx report', () => {
  it('creates the same clients as the CSV export does, with the same keys, equal to the originals', async () => {
    const xlsx = join(temp.dir, 'clients.xlsx');
    const csv = join(temp.dir, 'clients.csv');
    await exportTo(xlsx);
    await exportTo(csv);
    const [viaXlsx, viaCsv] = await Promise.all([
      importInto(fromXlsx, xlsx, 'xlsx'),
      importInto(fromCsv, csv, 'csv'),
    ]);
    expect(viaXlsx).toHaveLength(SEED + 4);
    expect(viaXlsx.every((row) => row.outcome === 'created')).toBe(true);
    // Results are written as rows finish: compare them by row number.
    const keys = (rows: Record<string, string>[]) =>
      new Map(rows.map((row) => [Number(row.row), row.idempotency_key]));
    expect(keys(viaXlsx)).toEqual(keys(viaCsv));

    const byEmail = (sandbox: Sandbox) => new Map(sandbox.store.all().map((c) => [c.email, sent(c)]));
    const xlsxClients = byEmail(fromXlsx);
    expect(xlsxClients).toEqual(byEmail(fromCsv));
    for (const original of a.store.all()) {
      const trimmed = { ...sent(original), name: original.name.trim(), address: original.address.trim() };
      expect(xlsxClients.get(original.email), original.email).toEqual(trimmed);
    }
    expect(xlsxClients.get('quoted@example.com')).toMatchObject({ name: "'=already quoted", address: "'+1 Main St" });
    expect(xlsxClients.get('multi@example.com')?.address).toBe('Flat 2\r\nThe Quay\nLondon');
    expect(xlsxClients.get('markup@example.com')?.name).toBe('<b>R&D</b> "q" ]]>');
    expect(xlsxClients.get('entity@example.com')).toMatchObject({ name: 'Smith &amp; Sons', address: '_x0041_ Row, _x005F_ Lane' });
  });
});
