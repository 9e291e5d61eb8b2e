/**
 * `--sort COLUMN[:desc]`: rows ordered client-side by any column, empty values last and ties in
 * created_at order; past one chunk of rows the sort goes through temp runs on disk (the
 * results file's external merge sort) that are removed after; a bad column is exit 2 before any
 * request.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flattenClient } from '../src/export/columns.js';
import { RowSorter } from '../src/export/sort.js';
import { type Sandbox, startSandbox } from '../src/sandbox/index.js';
import { parseCsv } from './export.helpers.js';
import { makeTempDir, runCliInProcess as runCli } from './helpers.js';

let sandbox: Sandbox;
let temp: Awaited<ReturnType<typeof makeTempDir>>;
let env: Record<string, string>;

beforeAll(async () => {
  sandbox = await startSandbox({ verifySignatures: false, seed: 250, seedRandom: 8 });
  sandbox.store.insert({ name: 'No currency Ltd', currency: null, created_at: '2024-05-05T00:00:00.000Z' });
  temp = await makeTempDir();
  env = { CCS_BASE_URL: sandbox.url, CCS_TOKEN: sandbox.token };
});
afterAll(async () => {
  await sandbox?.close();
  await temp?.cleanup();
});

/** The expected order: by `column` (empty last), ties by created_at as listed. */
function expectedOrder(column: 'country' | 'currency' | 'name', desc: boolean): string[] {
  const listed = [...sandbox.store.all()].sort((a, b) => a.created_at.localeCompare(b.created_at));
  const value = (c: (typeof listed)[number]) => c[column] ?? '';
  return listed
    .map((c, seq) => ({ c, seq }))
    .sort((a, b) => {
      const [x, y] = [value(a.c), value(b.c)];
      if (x !== y) {
        if (x === '') return 1;
        if (y === '') return -1;
        return (x < y ? -1 : 1) * (desc ? -1 : 1);
      }
      return a.seq - b.seq;
    })
    .map(({ c }) => c.id);
}

describe('--sort', () => {
  it.each([
    ['country', false],
    ['currency', true],
  ] as const)('%s (desc: %s): the CSV rows in that order, ties in created_at order, empty values last', async (column, desc) => {
    const out = join(temp.dir, `by-${column}.csv`);
    const result = await runCli(['export', '--out', out, '--sort', `${column}${desc ? ':desc' : ''}`, '--quiet'], { env });
    expect(result.code).toBe(0);
    expect(parseCsv(await readFile(out, 'utf8')).map((r) => r.id)).toEqual(expectedOrder(column, desc));
    expect((await readdir(temp.dir)).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });

  it('past a chunk of rows, through temp runs beside the report, removed after', async () => {
    const near = join(temp.dir, 'report.csv');
    const sorter = new RowSorter({ column: 'name', desc: false }, near, 4096);
    const clients = sandbox.store.all().map((c) => flattenClient({ ...c }));
    for (let i = 0; i < clients.length; i += 50) sorter.add(clients.slice(i, i + 50));
    expect(sorter.runs).toBeGreaterThan(5);
    expect((await readdir(temp.dir)).filter((name) => name.startsWith('.report.csv.'))).toHaveLength(sorter.runs);
    const names: string[] = [];
    await sorter.drain(async (batch) => {
      names.push(...batch.map((c) => c.name ?? ''));
    });
    expect(names).toEqual(clients.map((c) => c.name ?? '').sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    expect((await readdir(temp.dir)).filter((name) => name.startsWith('.report.csv.'))).toEqual([]);
  });

  it('an unknown column, documents or a bad order is exit 2 before any request', async () => {
    const requests = sandbox.stats.requests;
    const cases: [string, RegExp][] = [
      ['contry', /--sort: unknown column "contry" \(did you mean country\?\)/],
      ['documents', /--sort: documents is a list; sort by documents_count/],
      ['name:down', /--sort takes COLUMN or COLUMN:desc/],
    ];
    for (const [value, message] of cases) {
      const result = await runCli(['export', '--out', join(temp.dir, 'refused.csv'), '--sort', value], { env });
      expect(result.code, value).toBe(2);
      expect(result.stderr).toMatch(message);
    }
    expect(sandbox.stats.requests).toBe(requests);
  });
});
