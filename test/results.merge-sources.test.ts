/**
 * `results merge` over several sources of one migration (the list, its --failed file fixed and
 * imported again, a second list with other columns): one report with a `source` column and every
 * input column by name; refused only for true conflicts.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { runCliInProcess, useSandbox } from './helpers.js';

const ctx = useSandbox();

async function migration(): Promise<{ folder: string; files: string[] }> {
  const folder = join(ctx.dir, 'migration');
  await mkdir(folder);
  const at = { env: ctx.env(), cwd: folder };
  writeFileSync(join(folder, 'clients.csv'), 'name,email,country,address\nAda,ada@m.example,DE,A 1\nBob,not-an-email,DE,B 2\nCy,cy@m.example,FR,C 3\n');
  expect((await runCliInProcess(['import', 'clients.csv', '--failed', 'fix.csv', '--quiet'], at)).code).toBe(1);
  writeFileSync(join(folder, 'fix.csv'), readFileSync(join(folder, 'fix.csv'), 'utf8').replace('not-an-email', 'bob@m.example'));
  expect((await runCliInProcess(['import', 'fix.csv', '--quiet'], at)).code).toBe(0);
  writeFileSync(join(folder, 'more.csv'), 'Kundennr,name,email,country,address\nK-7,Dee,dee@m.example,AT,D 4\n');
  expect((await runCliInProcess(['import', 'more.csv', '--quiet'], at)).code).toBe(0);
  return { folder, files: ['clients.csv.results.csv', 'fix.csv.results.csv', 'more.csv.results.csv'] };
}

describe('results merge: several sources of one migration', () => {
  it('one report: a source column, the result columns, every input column by name; counts by source', async () => {
    const { folder, files } = await migration();
    const run = await runCliInProcess(['results', 'merge', ...files, '--out', 'migration.csv', '--json'], { cwd: folder });
    // A row still invalid in the first list (it was fixed in fix.csv): the report shows it, exit 1.
    expect(run.code, run.stderr).toBe(1);
    expect(run.stderr).toContain('Merged 3 files of 3 sources: 5 rows (4 created, 1 invalid)');
    expect(run.stderr).toMatch(/clients\.csv: 3 rows \(2 created, 1 invalid\) from clients\.csv\.results\.csv/);
    const summary = JSON.parse(run.stdout) as { sources: { source: string; rows: number }[] };
    expect(summary.sources.map((s) => [s.source.split('/').at(-1), s.rows])).toEqual([['clients.csv', 3], ['fix.csv', 1], ['more.csv', 1]]);
    const [header, ...lines] = parse(readFileSync(join(folder, 'migration.csv'))) as string[][];
    expect(header!.slice(0, 3)).toEqual(['source', 'row', 'outcome']);
    // fix.csv's own idempotency_key column (the --failed file added it) is written input.idempotency_key, as in its results file.
    expect(header!.slice(12)).toEqual(['name', 'email', 'country', 'address', 'input.idempotency_key', 'Kundennr']);
    expect(lines.map((l) => [l[0], l[1], l[2], l[12]])).toEqual([
      ['clients.csv', '1', 'created', 'Ada'],
      ['clients.csv', '2', 'invalid', 'Bob'],
      ['clients.csv', '3', 'created', 'Cy'],
      ['fix.csv', '1', 'created', 'Bob'],
      ['more.csv', '1', 'created', 'Dee'],
    ]);
    expect(lines.at(-1)!.at(-1)).toBe('K-7');
  });

  it('refuses one idempotency key created as two clients, naming both lines', async () => {
    const folder = join(ctx.dir, 'migration');
    const text = readFileSync(join(folder, 'fix.csv.results.csv'), 'utf8');
    const [, id] = /\n1,created,([^,]+),/.exec(text)!;
    writeFileSync(join(folder, 'copy.csv.results.csv'), text.replace(id!, 'cli_someone_else'));
    const run = await runCliInProcess(['results', 'merge', 'fix.csv.results.csv', 'copy.csv.results.csv', '--out', 'conflict.csv'], { cwd: folder });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(new RegExp(`made client ${id} \\(fix\\.csv\\.results\\.csv row 1\\) and client cli_someone_else \\(copy\\.csv\\.results\\.csv row 1\\)`));
    expect(run.stderr).toContain('[results_merge]');
  });
});
