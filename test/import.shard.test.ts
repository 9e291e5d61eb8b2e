import { spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'csv-stringify/sync';
import { describe, expect, it } from 'vitest';
import { shardOfKey, shardResultsPath } from '../src/import/send/shard.js';
import { startGate } from './gate.helpers.js';
import { BIN, CLIENT_HEADER, readResults, runCli as runCliChild, runCliInProcess as runCli, useSandbox, validRows } from './helpers.js';

const ctx = useSandbox({ latencyMs: 5 });

describe('--shard K/N: three processes on one file', () => {
  it('create every row exactly once, one shard killed and resumed alone; merge accounts for every row once', async () => {
    const rows = validRows(300);
    rows[9] = [...rows[4]!]; // row 10 repeats row 5: a duplicate, whichever shard row 5 is in
    rows[19] = ['', 'not-an-email', 'DE', 'Street', 'EUR', '2024-05-17']; // row 20 invalid
    const input = join(ctx.dir, 'shared.csv');
    await writeFile(input, stringify([CLIENT_HEADER, ...rows]));
    const results = join(ctx.dir, 'shared.results.csv');
    const args = (k: number) => ['import', input, '--results', results, '--shard', `${k}/3`, '--json', '--quiet'];
    const third = shardResultsPath(results, { index: 3, count: 3 });

    // Shard 3 starts with the others and is killed (kill -9) once it has created some rows; its
    // requests wait at a gate after the 40th, so the kill lands mid-run on any machine.
    const gate = await startGate(ctx.sandbox.url);
    gate.close(40);
    const victim = spawn(process.execPath, [BIN, ...args(3)], { env: { ...process.env, ...ctx.env(), CCS_BASE_URL: gate.url } });
    const killed = new Promise<NodeJS.Signals | null>((resolve) => victim.on('close', (_code, signal) => resolve(signal)));
    const poll = setInterval(async () => {
      const text = await readFile(third, 'utf8').catch(() => '');
      if (text.split(',created,').length > 30) {
        clearInterval(poll);
        victim.kill('SIGKILL');
      }
    }, 10);
    // Three processes, as three machines or jobs would run them.
    const [one, two] = await Promise.all([runCliChild(args(1), { env: ctx.env() }), runCliChild(args(2), { env: ctx.env() })]);
    expect(await killed).toBe('SIGKILL');
    clearInterval(poll);
    gate.drop();
    gate.open();
    // Row 20, invalid and without a key, belongs to shard 2 by its row number: exit 1 there.
    expect([one.code, two.code]).toEqual([0, 1]);
    // The resume goes through the gate too: a results file records the service it was written
    // against (the gate's URL), and --resume refuses another.
    const resumed = await runCli(['import', input, '--results', results, '--shard', '3/3', '--resume', '--json', '--quiet'], {
      env: { ...ctx.env(), CCS_BASE_URL: gate.url },
    }).finally(() => gate.stop());

    const summaries = [one, two, resumed].map((run) => JSON.parse(run.stdout));
    for (const [i, summary] of summaries.entries()) {
      expect(summary.shard).toMatchObject({ index: i + 1, count: 3 });
      expect(summary.rows + summary.shard.otherRows).toBe(300);
      expect(summary.results).toBe(shardResultsPath(results, { index: i + 1, count: 3 }));
    }
    expect(ctx.sandbox.store.size).toBe(298);

    const out = join(ctx.dir, 'merged.results.csv');
    const files = [1, 2, 3].map((k) => shardResultsPath(results, { index: k, count: 3 }));
    const merged = await runCli(['results', 'merge', ...files, '--out', out, '--json']);
    expect(merged.stderr).toContain('Merged 3 files: 300 rows');
    expect(JSON.parse(merged.stdout).counts).toMatchObject({ created: 298, duplicate: 1, invalid: 1 });
    const lines = await readResults(out);
    expect(lines.map((l) => Number(l[0]))).toEqual(Array.from({ length: 300 }, (_, i) => i + 1));
    // The duplicate is in the shard of its first occurrence, named by its line (row 5 starts on line 10: two lines a row).
    expect(lines[9]!.slice(1, 2)).toEqual(['duplicate']);
    expect(lines[9]![9]).toContain('line 10');
    const key = lines[4]![5]!;
    const shardFive = shardOfKey(key, 3);
    expect((await readResults(files[shardFive - 1]!)).some((l) => l[0] === '10')).toBe(true);
  }, 120_000);

  it('merge refuses a missing shard, a row twice, and a --shard it cannot read', async () => {
    const results = join(ctx.dir, 'shared.results.csv');
    const files = [1, 2, 3].map((k) => shardResultsPath(results, { index: k, count: 3 }));
    const missing = await runCli(['results', 'merge', files[0]!, files[1]!, '--out', join(ctx.dir, 'm1.csv')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('shard 3 of 3 is missing');
    const twice = await runCli(['results', 'merge', files[0]!, files[1]!, files[2]!, files[0]!, '--out', join(ctx.dir, 'm2.csv')]);
    expect(twice.code).toBe(2);
    expect(twice.stderr).toMatch(/row \d+ is in both/);
    const bad = await runCli(['import', 'x.csv', '--shard', '4/3'], { env: ctx.env() });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--shard takes K/N');
    const indexed = await runCli(['validate', join(ctx.dir, 'shared.csv'), '--shards', '3', '--json', '--quiet', '--overwrite'], {
      env: { ...ctx.env(), JOB_COMPLETION_INDEX: '1' },
    });
    expect(JSON.parse(indexed.stdout).shard).toMatchObject({ index: 2, count: 3 });
  });

  it('an Indexed Job shard with an invalid row: a stop resumes as --shard K/N, and --accept-failed-rows completes it (exit 0) once nothing is left', async () => {
    const rows = validRows(30, 7000);
    rows[4] = ['', 'not-an-email', 'DE', 'Street', 'EUR', '2024-05-17']; // row 5, no key: shard 2 of 3 by its row number
    const input = join(ctx.dir, 'job.csv');
    await writeFile(input, stringify([CLIENT_HEADER, ...rows]));
    const results = join(ctx.dir, 'job.results.csv');
    const failed = join(ctx.dir, 'job.fix.csv');
    // The Job's pod 1 (0-based) is shard 2 of 3; --max-errors 1 stops it at the invalid row.
    const stopped = await runCli(['import', input, '--results', results, '--shards', '3', '--max-errors', '1', '--json'], {
      env: { ...ctx.env(), JOB_COMPLETION_INDEX: '1' },
    });
    expect(stopped.code).toBe(3);
    const resume = `ccs-bulk import ${input} --results ${results} --max-errors 1 --json --shard 2/3 --resume`;
    expect(stopped.stderr).toContain(`to continue: ${resume}`);
    expect(stopped.stderr).toContain('(the same shard, 2 of 3: --shard 2/3 continues it inside the Job or outside it)');
    expect(JSON.parse(stopped.stdout)).toMatchObject({ ok: false, exitCode: 3, code: 'max_errors', resumeCommand: resume });

    // Resumed by hand, outside the Job: the rest is sent; the invalid row is still there (exit 1), and --quiet still says why.
    const rest = await runCli(['import', input, '--results', results, '--shard', '2/3', '--resume', '--quiet'], { env: ctx.env() });
    expect(rest.code, rest.stderr).toBe(1);
    expect(rest.stderr).toMatch(/^ccs-bulk: import finished with rows not imported \(rows_failed\), exit 1: \d+ created, 0 failed, 1 invalid, 0 duplicate.*; rows to fix: see /);
    expect(rest.stderr.trim().split('\n')).toHaveLength(1);

    // Nothing left to send: without the flag the pod would restart for ever; with it the Job completes.
    const done = await runCli(['import', input, '--results', results, '--shard', '2/3', '--resume', '--quiet', '--json', '--failed', failed, '--accept-failed-rows'], {
      env: ctx.env(),
    });
    expect(done.code, done.stderr).toBe(0);
    const summary = JSON.parse(done.stdout);
    expect(summary).toMatchObject({ ok: true, exitCode: 0, acceptedFailedRows: 1, counts: { invalid: 1, created: 0, failed: 0 } });
    expect(summary.counts.skipped).toBeGreaterThan(0);
    const fix = shardResultsPath(failed, { index: 2, count: 3 });
    expect(done.stderr).toBe(`ccs-bulk: 1 row not imported (1 invalid, 0 refused by the service), accepted by --accept-failed-rows: fix them in ${fix}\n`);
    expect(await readFile(fix, 'utf8')).toContain('not-an-email');

    // A failure a retry may fix is never accepted: a stop keeps its code.
    const refused = await runCli(['import', input, '--results', results, '--shard', '2/3', '--resume', '--quiet', '--accept-failed-rows'], {
      env: { ...ctx.env(), CCS_TOKEN: 'lk_sandbox_not_this_one' },
    });
    expect(refused.code).toBe(3);
  });
});
