/**
 * The benchmark suite still runs: `bench/run.js --smoke` (its smallest sizes, with the run's key
 * pair instead of a fresh one), parts 0, 1 and 4, in child
 * processes against its own sandboxes, as `npm run bench` does. Figures are not asserted
 * (speed is the benchmark's business, not a test's); the machinery is: every row measured,
 * the floor posting the importer's exact bodies, the second-half figures, the results file.
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { makeTempDir, ROOT, writeKeyFile } from './helpers.js';

const run = promisify(execFile);

interface BenchRow {
  part: string;
  measure: string;
  figure: string;
  ratio?: number;
  result: 'pass' | 'MISS' | 'info' | 'ERROR';
  data?: Record<string, unknown>;
}

let temp: Awaited<ReturnType<typeof makeTempDir>>;
beforeAll(async () => {
  temp = await makeTempDir();
});
afterAll(() => temp.cleanup());

describe('npm run bench', () => {
  it('measures import against its floor and export against its baseline, and writes the results file', async () => {
    const out = join(temp.dir, 'results.json');
    const keyFile = await writeKeyFile(temp.dir, inject('signingKeys').privateKeyPem);
    const args = ['bench/run.js', '--smoke', '--rows', '40', '--only', 'import,export', '--key-file', keyFile, '--out', out];
    const { stdout } = await run(process.execPath, args, { cwd: ROOT, timeout: 110_000 });
    expect(stdout).toContain('| Part');

    const results = JSON.parse(await readFile(out, 'utf8')) as { parts: { name: string; rows: BenchRow[] }[] };
    expect(results.parts.map((part) => part.name)).toEqual(['signing', 'import', 'export']);
    const rows = results.parts.flatMap((part) => part.rows);
    expect(rows.filter((row) => row.result === 'ERROR')).toEqual([]);
    for (const row of rows.filter((r) => r.ratio !== undefined)) {
      expect(row.ratio, row.measure).toBeGreaterThan(0);
      expect(Number.isFinite(row.ratio), row.measure).toBe(true);
    }

    const replay = rows.find((row) => row.measure.startsWith("floor posts the importer's bodies"));
    expect(replay?.figure).toBe('20/20 replayed');
    expect(replay?.result).toBe('pass');

    const imported = rows.find((row) => row.measure.startsWith('import 40 rows'));
    expect(imported?.result).not.toBe('info');
    const steady = rows.find((row) => row.measure.includes('second half'));
    expect(steady?.figure).toMatch(/^-?[\d,]+ µs$/);

    const exported = rows.find((row) => row.part === '4 export');
    expect(exported?.figure).toMatch(/^[\d,]+ rows\/s$/);
  }, 120_000);
});
