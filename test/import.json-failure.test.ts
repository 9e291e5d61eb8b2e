/**
 * --json on any failure: one JSON object on stdout (ok, exitCode, code, message, counts, the
 * resume or next command), whatever failed — a usage error after parsing, an input error, a
 * stopped import, a failed export of a config file's report. Real processes: main prints the
 * object for what a command throws.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'csv-stringify/sync';
import { describe, expect, it } from 'vitest';
import { startSandbox } from '../src/sandbox/index.js';
import { CLIENT_HEADER, runCli, runCliInProcess, useSandbox, validRows } from './helpers.js';

const ctx = useSandbox();

/** The one JSON object on stdout. */
function failure(stdout: string): Record<string, unknown> {
  const lines = stdout.trim().split('\n');
  expect(lines).toHaveLength(1);
  return JSON.parse(lines[0]!) as Record<string, unknown>;
}

describe('--json when a run fails', () => {
  it('a usage error and an input error: the code, the message and the exit code, on stdout', async () => {
    const usage = await runCli(['import', 'x.csv', '--shard', '4/3', '--json'], { env: ctx.env(), cwd: ctx.dir });
    expect(usage.code).toBe(2);
    expect(failure(usage.stdout)).toMatchObject({ ok: false, command: 'import', exitCode: 2, code: 'bad_option' });
    expect(usage.stderr).toContain('--shard takes K/N');

    const missing = await runCli(['import', join(ctx.dir, 'nowhere.csv'), '--json'], { env: ctx.env(), cwd: ctx.dir });
    expect(missing.code).toBe(2);
    const object = failure(missing.stdout);
    expect(object).toMatchObject({ ok: false, exitCode: 2, code: 'input_missing' });
    expect(object.message).toContain('nowhere.csv');
  });

  it('a stopped import: the summary with ok false, the stop code and message, the counts and the resume command', async () => {
    const input = join(ctx.dir, 'refused.csv');
    await writeFile(input, stringify([CLIENT_HEADER, ...validRows(3, 900)]));
    const run = await runCliInProcess(['import', input, '--json', '--quiet'], { env: { ...ctx.env(), CCS_TOKEN: 'lk_sandbox_not_this_one' } });
    expect(run.code).toBe(3);
    const object = failure(run.stdout);
    expect(object).toMatchObject({ ok: false, exitCode: 3, code: 'auth', counts: { not_attempted: 3 }, rows: 3 });
    expect(object.resumeCommand).toBe(`ccs-bulk import ${input} --json --quiet --resume`);
    // --quiet: the reason, then one line with the counts and the same way back.
    const [reason, counts, ...rest] = run.stderr.split('\n');
    expect(reason).toMatch(/^ccs-bulk: .*token.* \[auth\]$/);
    expect(counts).toBe(`ccs-bulk: import stopped (auth), exit 3: 0 created, 0 failed, 0 invalid, 0 duplicate, 3 not attempted; to continue: ccs-bulk import ${input} --json --quiet --resume`);
    expect(rest).toEqual(['']);
  });

  it("an export of a config file's report that fails: the object names the command that runs the report again", async () => {
    const down = await startSandbox({ verifySignatures: false });
    try {
      down.setFaults({ outage: { atMs: 0, forMs: 600_000, kind: '503' } });
      const config = join(ctx.dir, 'ccs-bulk.config.json');
      await writeFile(config, JSON.stringify({ reports: { nightly: { out: join(ctx.dir, 'nightly.csv') } } }));
      const run = await runCli(['export', '--config', config, '--report', 'nightly', '--json', '--quiet', '--outage-timeout', '0.5'], {
        env: { CCS_BASE_URL: down.url, CCS_TOKEN: down.token },
        cwd: ctx.dir,
      });
      expect(run.code).toBe(3);
      const object = failure(run.stdout);
      expect(object).toMatchObject({ ok: false, command: 'export', exitCode: 3, code: 'outage', nextCommand: `ccs-bulk export --config ${config} --report nightly` });
      expect(run.stderr).toContain(`to run it again: ccs-bulk export --config ${config} --report nightly`);
    } finally {
      await down.close();
    }
  }, 60_000);
});
