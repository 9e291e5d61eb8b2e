/**
 * An import's results file is the record of the clients it created (their ids are nowhere else
 * on this side): no dry run writes into it, re-labels or replaces it, whatever its flags, and
 * its refusal never suggests a flag that would; --overwrite keeps the old file and its sidecar
 * beside it as a dated, private copy before it starts again.
 */
import { lstatSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'csv-stringify/sync';
import { describe, expect, it } from 'vitest';
import { backupName, backupResults } from '../src/import/record/results-guard.js';
import { CLIENT_HEADER, readResults, runCliInProcess, startTestSandbox, useSandbox, validRows } from './helpers.js';

const ctx = useSandbox();

let files = 0;
/** A folder of its own for each test: every file the runs leave is looked at. */
async function folderWith(rows: string[][]): Promise<{ folder: string; input: string; results: string }> {
  const folder = join(ctx.dir, `case-${++files}`);
  const { mkdir } = await import('node:fs/promises');
  await mkdir(folder);
  const input = join(folder, 'v.csv');
  await writeFile(input, stringify([CLIENT_HEADER, ...rows]));
  return { folder, input, results: `${input}.results.csv` };
}

const created = async (results: string) => (await readResults(results)).filter((line) => line[1] === 'created');

describe("a dry run and an import's results file", () => {
  it('stopped import → validate → validate --resume → validate (and --overwrite, import --resume --dry-run): every created line and the sidecar stay', async () => {
    const { folder, input, results } = await folderWith(validRows(20, 100));
    // A token refused after 5 clients: the import stops (exit 3) with 5 created lines.
    const refusing = await startTestSandbox({ authFailAfter: 5 });
    const env = { ...ctx.env(), CCS_BASE_URL: refusing.url, CCS_TOKEN: refusing.token };
    try {
      const stopped = await runCliInProcess(['import', input, '--concurrency', '1'], { env });
      expect(stopped.code, stopped.stderr).toBe(3);
    } finally {
      await refusing.close();
    }
    expect(await created(results)).toHaveLength(5);
    const record = readFileSync(results);
    const sidecar = readFileSync(`${results}.meta.json`);
    expect(JSON.parse(sidecar.toString())).toMatchObject({ written_by: 'import', service: refusing.url });

    for (const args of [
      ['validate', input],
      ['validate', input, '--resume'],
      ['validate', input],
      ['validate', input, '--overwrite'],
      ['import', input, '--resume', '--dry-run'],
      ['import', input, '--dry-run', '--overwrite'],
    ]) {
      const run = await runCliInProcess(args, {});
      expect(run.code, `${args.join(' ')}: ${run.stderr}`).toBe(2);
      expect(run.stderr).toContain(`results file ${results} was written by an import against ${refusing.url}`);
      // The way out names a file of the dry run's own, never a flag that writes into the record.
      expect(run.stderr).toContain(`--results ${join(folder, 'v.csv.validate.csv')}`);
      expect(run.stderr).not.toMatch(/--resume|--overwrite/);
      expect(run.stderr).toContain('[results_exist]');
      expect(readFileSync(results).equals(record)).toBe(true);
      expect(readFileSync(`${results}.meta.json`).equals(sidecar)).toBe(true);
    }
    expect(await created(results)).toHaveLength(5);
    expect(JSON.parse(readFileSync(`${results}.meta.json`, 'utf8'))).toMatchObject({ written_by: 'import', service: refusing.url });

    // Doing what the message says works, and still leaves the record as it was.
    const own = await runCliInProcess(['validate', input, '--results', join(folder, 'v.csv.validate.csv')], {});
    expect(own.code, own.stderr).toBe(0);
    expect((await readResults(join(folder, 'v.csv.validate.csv'))).map((line) => line[1])).toEqual(Array(20).fill('valid'));
    expect(readFileSync(results).equals(record)).toBe(true);
    expect(readFileSync(`${results}.meta.json`).equals(sidecar)).toBe(true);
  });

  it('a record an older validate --resume re-labelled (created lines, sidecar saying validate) is refused by validate and by a plain import, and --resume continues it', async () => {
    const { input, results } = await folderWith(validRows(6, 200));
    const first = await runCliInProcess(['import', input, '--quiet'], { env: ctx.env() });
    expect(first.code, first.stderr).toBe(0);
    // What the older validate --resume left: the created lines, under a sidecar that says validate.
    writeFileSync(`${results}.meta.json`, `${JSON.stringify({ ccs_bulk_results: 1, written_by: 'validate', service: null, input, started_at: '' })}\n`);
    const record = readFileSync(results);

    const validate = await runCliInProcess(['validate', input], {});
    expect(validate.code).toBe(2);
    expect(validate.stderr).toContain('holds created rows (client ids), though its sidecar says validate wrote it');
    expect(validate.stderr).not.toMatch(/--resume|--overwrite/);
    const before = ctx.sandbox.store.size;
    const plain = await runCliInProcess(['import', input], { env: ctx.env() });
    expect(plain.code).toBe(2);
    expect(plain.stderr).toMatch(/already exists \(it holds created rows.*--resume.*\[results_exist\]/);
    expect(readFileSync(results).equals(record)).toBe(true);

    const resumed = await runCliInProcess(['import', input, '--resume', '--json', '--quiet'], { env: ctx.env() });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(JSON.parse(resumed.stdout).counts).toMatchObject({ created: 0, skipped: 6 });
    expect(ctx.sandbox.store.size).toBe(before);
    expect(await created(results)).toHaveLength(6);
    expect(JSON.parse(readFileSync(`${results}.meta.json`, 'utf8'))).toMatchObject({ written_by: 'import', service: ctx.sandbox.url });
  });
});

describe('--overwrite of an import', () => {
  it("keeps the old file and its sidecar beside it (dated, 0600), says so, and starts again", async () => {
    const { folder, input, results } = await folderWith(validRows(3, 300));
    expect((await runCliInProcess(['import', input, '--quiet'], { env: ctx.env() })).code).toBe(0);
    const record = readFileSync(results);
    const sidecar = readFileSync(`${results}.meta.json`);
    const trail = readFileSync(`${results}.trail.csv`);

    const again = await runCliInProcess(['import', input, '--overwrite'], { env: ctx.env() });
    expect(again.code, again.stderr).toBe(0);
    const backups = readdirSync(folder).filter((name) => /^v\.csv\.results\.\d{8}-\d{6}\.bak\.csv$/.test(name));
    expect(backups).toHaveLength(1);
    const backup = join(folder, backups[0]!);
    expect(again.stderr).toContain(`the import's old file is kept as ${backup}`);
    expect(readFileSync(backup).equals(record)).toBe(true);
    expect(readFileSync(`${backup}.meta.json`).equals(sidecar)).toBe(true);
    expect(statSync(backup).mode & 0o777).toBe(0o600);
    expect(statSync(`${backup}.meta.json`).mode & 0o777).toBe(0o600);
    // The trail (each line's time and body hash) moves with it; the new run starts its own.
    expect(readFileSync(`${backup}.trail.csv`).equals(trail)).toBe(true);
    expect(readFileSync(`${results}.trail.csv`, 'utf8').split('\n').filter(Boolean)).toHaveLength(4);
    // The new file is this run's: the same three clients, found on the service already.
    expect((await readResults(results)).map((line) => line[1])).toEqual(expect.arrayContaining([expect.stringMatching(/^(created|existing)$/)]));
    expect(await readResults(results)).toHaveLength(3);
    expect(readFileSync(`${results}.meta.json`).equals(sidecar)).toBe(false);

    // A validate's file records no sends: replacing it keeps nothing.
    const dry = await folderWith(validRows(2, 350));
    expect((await runCliInProcess(['validate', dry.input], {})).code).toBe(0);
    expect((await runCliInProcess(['import', dry.input, '--overwrite', '--quiet'], { env: ctx.env() })).code).toBe(0);
    expect(readdirSync(dry.folder).filter((name) => name.includes('.bak'))).toEqual([]);
  });

  it('a link planted at the backup name is never written through: the copy takes the next name', async () => {
    const { folder, input, results } = await folderWith(validRows(2, 400));
    expect((await runCliInProcess(['import', input, '--quiet'], { env: ctx.env() })).code).toBe(0);
    const at = new Date('2025-05-17T03:15:00Z');
    const victim = join(folder, 'victim.txt');
    writeFileSync(victim, 'untouched\n');
    symlinkSync(victim, backupName(results, at));
    const kept = await backupResults(results, at);
    expect(kept).toBe(join(folder, 'v.csv.results.20250517-031500-2.bak.csv'));
    expect(readFileSync(victim, 'utf8')).toBe('untouched\n');
    expect(lstatSync(backupName(results, at)).isSymbolicLink()).toBe(true);
    expect(readFileSync(kept!).equals(readFileSync(results))).toBe(true);
    expect(lstatSync(kept!).nlink).toBe(1);
    // No temp file is left beside it.
    expect(readdirSync(folder).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });
});
