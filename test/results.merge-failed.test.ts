/**
 * A sharded run whose file has invalid rows, as a Kubernetes Indexed Job runs it (`--shards 3`
 * with JOB_COMPLETION_INDEX, `--accept-failed-rows`, `--failed`): every shard completes (exit 0),
 * its log's `run_started` names its own files, `results merge` refuses an existing output by
 * code and replaces it with `--overwrite` (keeping a copy), and `results merge --failed` makes the
 * shards' failed files one file in the input's order.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import { beforeAll, describe, expect, it } from 'vitest';
import { CLIENT_HEADER, runCliInProcess, useSandbox, validRows } from './helpers.js';

const ctx = useSandbox();
const ROWS = 30;
/** Data rows made invalid (an e-mail that is not one): spread over the shards by row number. */
const INVALID = [2, 9, 13, 14, 25];

let folder: string;
const at = () => ({ env: ctx.env(), cwd: folder });
const shardFiles = (name: (k: number) => string) => [1, 2, 3].map(name);

beforeAll(async () => {
  folder = join(ctx.dir, 'job');
  await mkdir(folder);
  const rows = validRows(ROWS, 700).map((row, i) => (INVALID.includes(i + 1) ? [row[0]!, `not-an-email-${i + 1}`, ...row.slice(2)] : row));
  writeFileSync(join(folder, 'clients.csv'), stringify([CLIENT_HEADER, ...rows]));
  // The Job's three pods, one index each.
  for (const index of [0, 1, 2]) {
    const run = await runCliInProcess(
      ['import', 'clients.csv', '--shards', '3', '--resume', '--accept-failed-rows', '--failed', 'fix-me.csv', '--log-file', `shard-${index}.log`, '--quiet'],
      { ...at(), env: { ...ctx.env(), JOB_COMPLETION_INDEX: String(index) } },
    );
    expect(run.code, run.stderr).toBe(0);
  }
}, 180_000);

describe('a sharded Job over a file with invalid rows', () => {
  it("each shard's run_started names its own results and failed files", () => {
    for (const index of [0, 1, 2]) {
      const started = readFileSync(join(folder, `shard-${index}.log`), 'utf8')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as Record<string, unknown>)
        .find((event) => event.event === 'run_started');
      expect(started).toMatchObject({
        shard: `${index + 1}/3`,
        results: `clients.csv.results.shard-${index + 1}-of-3.csv`,
        failed: `fix-me.shard-${index + 1}-of-3.csv`,
      });
    }
  });

  it('results merge --failed: one file of every invalid row, in the input\'s order, importable as it is', async () => {
    const run = await runCliInProcess(['results', 'merge', '--failed', ...shardFiles((k) => `fix-me.shard-${k}-of-3.csv`), '--out', 'fix-me.csv', '--json'], at());
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toBe(`Merged 3 failed files: ${INVALID.length} rows to fix\n  failed: fix-me.csv\n`);
    expect(JSON.parse(run.stdout)).toMatchObject({ out: 'fix-me.csv', rows: INVALID.length });
    const [header, ...lines] = parse(readFileSync(join(folder, 'fix-me.csv'))) as string[][];
    expect(header).toEqual([...CLIENT_HEADER, 'idempotency_key', 'error']);
    expect(lines.map((line) => line[1])).toEqual(INVALID.map((row) => `not-an-email-${row}`));
    expect(lines.map((line) => /\(data row (\d+)\)/.exec(line.at(-1)!)![1])).toEqual(INVALID.map(String));
    // The file to fix imports as it is: the rows are still invalid, and said so.
    const again = await runCliInProcess(['validate', 'fix-me.csv', '--quiet'], at());
    expect(again.stderr).not.toMatch(/error:/);
  });

  it('results merge --failed refuses a missing shard and files of different inputs', async () => {
    const missing = await runCliInProcess(['results', 'merge', '--failed', 'fix-me.shard-1-of-3.csv', 'fix-me.shard-3-of-3.csv', '--out', 'partial.csv'], at());
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('shard 2 of 3 is missing from the files given [results_merge]');
    writeFileSync(join(folder, 'other.shard-1-of-1.csv'), 'name,email,error\nA,a,bad\n');
    const other = await runCliInProcess(['results', 'merge', '--failed', 'fix-me.shard-1-of-3.csv', 'other.shard-1-of-1.csv', '--out', 'mixed.csv'], at());
    expect(other.code).toBe(2);
    expect(other.stderr).toContain('the files are shards of different splits (of 3, of 1) [results_merge]');
    expect(existsSync(join(folder, 'partial.csv')) || existsSync(join(folder, 'mixed.csv'))).toBe(false);
  });

  it('results merge: an existing --out is refused by code (output_exists, not EEXIST); --overwrite replaces it and keeps a copy', async () => {
    const files = shardFiles((k) => `clients.csv.results.shard-${k}-of-3.csv`);
    const first = await runCliInProcess(['results', 'merge', ...files, '--out', 'merged.csv'], at());
    // The invalid rows are in the merged record: exit 1 says so, as before.
    expect(first.code, first.stderr).toBe(1);
    expect(first.stderr).toContain(`Merged 3 files: ${ROWS} rows (${ROWS - INVALID.length} created, ${INVALID.length} invalid)`);
    const merged = readFileSync(join(folder, 'merged.csv'), 'utf8');

    const again = await runCliInProcess(['results', 'merge', ...files, '--out', 'merged.csv'], at());
    expect(again.code).toBe(2);
    expect(again.stderr).toBe(
      'ccs-bulk: error: --out merged.csv already exists: results merge never replaces a file silently; add --overwrite to replace it ' +
        '(the old one is kept beside it as a dated .bak copy), or name another file [output_exists]\n',
    );

    writeFileSync(join(folder, 'merged.csv'), 'an older merge\n');
    const replaced = await runCliInProcess(['results', 'merge', ...files, '--out', 'merged.csv', '--overwrite', '--json'], at());
    expect(replaced.code, replaced.stderr).toBe(1);
    expect(readFileSync(join(folder, 'merged.csv'), 'utf8')).toBe(merged);
    const backup = (JSON.parse(replaced.stdout) as { backup: string }).backup;
    expect(backup).toMatch(/^merged\.\d{8}-\d{6}\.bak\.csv$/);
    expect(readFileSync(join(folder, backup), 'utf8')).toBe('an older merge\n');
    expect(replaced.stderr).toContain(`  the file it replaced: ${backup}\n`);
    // Nothing else left beside it: no temp file.
    expect(readdirSync(folder).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });
});
