/**
 * Unattended exports: one run per output file and per state file (a second is refused, exit 2,
 * naming the first), the temp files of a killed run removed by the next, and --log-file: a JSON
 * line per attempt and run event, holding no secret and no client's data.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../src/sandbox/index.js';
import { parseCsv } from './export.helpers.js';
import { BIN, cliEnv, expectNoneOf, makeTempDir, ROOT, runCliInProcess as runCli, startTestSandbox } from './helpers.js';

let sandbox: Sandbox;
let temp: Awaited<ReturnType<typeof makeTempDir>>;
let env: Record<string, string>;

beforeAll(async () => {
  sandbox = await startTestSandbox({ seed: 400, seedRandom: 9 });
  temp = await makeTempDir();
  env = { CCS_BASE_URL: sandbox.url, CCS_TOKEN: sandbox.token };
});
afterAll(async () => {
  await sandbox?.close();
  await temp?.cleanup();
});

describe('one run per output and state file', () => {
  it('a second run on the same --out or the same --since-last state is refused, naming the first', async () => {
    const dir = join(temp.dir, 'locks');
    await mkdir(dir);
    const state = join(dir, 'state.json');
    sandbox.setFaults({ latencyMs: 200 });
    const requests = sandbox.stats.requests;
    const child = spawn(process.execPath, [BIN, 'export', '--out', join(dir, 'a.csv'), '--since-last', state, '--page-size', '10', '--prefetch', '1', '--quiet'], {
      env: cliEnv(env),
      stdio: 'ignore',
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    try {
      while (sandbox.stats.requests < requests + 2) await new Promise((resolve) => setTimeout(resolve, 20));
      const sameOut = await runCli(['export', '--out', join(dir, 'a.csv'), '--overwrite'], { env });
      expect(sameOut.code).toBe(2);
      expect(sameOut.stderr).toMatch(new RegExp(`the export file .*a\\.csv: it is in use by another ccs-bulk run \\(pid ${child.pid} `));
      const sameState = await runCli(['export', '--out', join(dir, 'b.csv'), '--since-last', state], { env });
      expect(sameState.code).toBe(2);
      expect(sameState.stderr).toMatch(new RegExp(`the state file .*state\\.json: it is in use by another ccs-bulk run \\(pid ${child.pid} `));
    } finally {
      sandbox.setFaults({ latencyMs: 0 });
    }
    expect(await exited).toBe(0);
    expect(JSON.parse(await readFile(state, 'utf8')).last.rows).toBe(400);
  }, 60_000);
});

describe('--log-file', () => {
  it('one JSON line per attempt and run event, with no token, key or client field in it', async () => {
    const log = join(temp.dir, 'night.log');
    sandbox.setFaults({ failRate: 0.3 });
    let result;
    try {
      result = await runCli(['export', '--out', join(temp.dir, 'logged.csv'), '--page-size', '50', '--log-file', log, '--quiet'], { env });
    } finally {
      sandbox.setFaults({ failRate: 0 });
    }
    expect(result.code).toBe(0);
    const failed = await runCli(['export', '--out', join(temp.dir, 'logged.csv'), '--log-file', log], { env });
    expect(failed.code).toBe(2);
    const text = await readFile(log, 'utf8');
    const lines = text.trim().split('\n').map((line) => JSON.parse(line));
    const attempts = lines.filter((line) => line.kind === 'attempt');
    expect(attempts.length).toBeGreaterThanOrEqual(9);
    expect(attempts.some((line) => line.status >= 500 && line.error !== undefined)).toBe(true);
    for (const line of attempts) {
      expect(line).toMatchObject({ operation: 'list_clients', command: 'export' });
      expect(typeof line.latency_ms).toBe('number');
      expect(typeof line.page).toBe('number');
      expect(typeof line.attempt).toBe('number');
      expect(line.time).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    }
    expect(attempts.some((line) => typeof line.request_id === 'string')).toBe(true);
    expect(lines.filter((line) => line.kind === 'run').map((line) => line.event)).toEqual([
      'run_started',
      'run_finished',
      'run_started',
      'run_failed',
    ]);
    expect(lines.at(-1)).toMatchObject({ error: 'output_exists', exit_code: 2 });
    // No secret, no personal data: the token, the key, any client's name or email.
    expectNoneOf(text, [sandbox.token, ...sandbox.store.all().flatMap((client) => [client.name, client.email])]);
  }, 60_000);
});

describe('a killed export leaves its temp file; the next run removes it', () => {
  it('kill -9 mid-export: the hidden temp stays; the same command again removes it (one stderr line) and completes', async () => {
    const dir = join(temp.dir, 'killed');
    await mkdir(dir);
    const out = join(dir, 'all.csv');
    const state = join(dir, 'state.json');
    const args = ['export', '--out', out, '--since-last', state, '--page-size', '10', '--prefetch', '1'];
    sandbox.setFaults({ latencyMs: 200 });
    const requests = sandbox.stats.requests;
    const child = spawn(process.execPath, [BIN, ...args, '--quiet'], { env: cliEnv(env), stdio: 'ignore' });
    const exited = new Promise((resolve) => child.on('exit', resolve));
    try {
      while (sandbox.stats.requests < requests + 3) await new Promise((resolve) => setTimeout(resolve, 20));
      child.kill('SIGKILL');
      await exited;
    } finally {
      sandbox.setFaults({ latencyMs: 0 });
    }
    const left = await readdir(dir);
    const killedTemp = left.find((name) => new RegExp(`^\\.all\\.csv\\.${child.pid}\\.[0-9a-f]{8}\\.tmp$`).test(name));
    expect(killedTemp).toBeDefined();
    expect(left).toContain('all.csv.lock');
    expect(left).not.toContain('all.csv');
    expect(left).not.toContain('state.json');
    // A kill inside the state's own write (microseconds wide) leaves its temp: made here as that run would have.
    const stateTemp = join(dir, `.state.json.${child.pid}.0badc0de.tmp`);
    await writeFile(stateTemp, '{"version":1,');
    // A temp file whose pid is alive is never removed, whatever its name.
    const live = `.all.csv.${process.pid}.00c0ffee.tmp`;
    await writeFile(join(dir, live), 'in use');

    const next = await runCli(args, { env });
    expect(next.code).toBe(0);
    // Matched on the notice's own words: a TMPDIR may itself be called "temp files".
    const notices = next.stderr.split('\n').filter((line) => / temp files? left by /.test(line));
    expect(notices).toHaveLength(1);
    expect(notices[0]).toMatch(/^ccs-bulk: removed 2 temp files left by a run that died: /);
    expect(notices[0]).toContain(join(dir, killedTemp!));
    expect(notices[0]).toContain(stateTemp);
    expect((await readdir(dir)).sort()).toEqual([live, 'all.csv', 'state.json']);
    const ids = parseCsv(await readFile(out, 'utf8')).map((row) => row.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.sort()).toEqual(sandbox.store.all().map((client) => client.id).sort());
    const saved = JSON.parse(await readFile(state, 'utf8')) as { last: { rows: number } };
    expect(saved.last.rows).toBe(ids.length);

    // --quiet: removed all the same, without a word.
    const dead = spawnSync(process.execPath, ['-e', '0']).pid!;
    await writeFile(join(dir, `.all.csv.${dead}.12345678.tmp`), 'x');
    const quiet = await runCli([...args, '--overwrite', '--quiet'], { env });
    expect(quiet.stderr).toBe('');
    expect(quiet.code).toBe(0);
    expect((await readdir(dir)).sort()).toEqual([live, 'all.csv', 'state.json']);
  }, 60_000);
});

describe('the README crontab line', () => {
  it('runs as written against the sandbox (token file and base URL swapped in), twice', async () => {
    const readme = await readFile(join(ROOT, 'README.md'), 'utf8');
    const line = /^15 3 \* \* \* .*$/m.exec(readme)?.[0];
    expect(line).toBeDefined();
    const command = line!.slice(line!.indexOf('ccs-bulk export') + 'ccs-bulk '.length);
    const args = [...command.matchAll(/'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2]!);
    const dir = join(temp.dir, 'cron');
    await mkdir(join(dir, 'state'), { recursive: true });
    await writeFile(join(dir, 'token'), sandbox.token, { mode: 0o600 });
    const run = args.map((arg, i) => (args[i - 1] === '--token-file' ? join(dir, 'token') : arg));
    const cron = { CCS_BASE_URL: sandbox.url };
    const first = await runCli(run, { env: cron, cwd: dir });
    expect(first.code).toBe(0);
    sandbox.store.insert({ status: 'approved', name: 'Cron Late' });
    // The same day's name exists: the second run of the day is refused, as documented.
    const again = await runCli(run, { env: cron, cwd: dir });
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/exists/);
    const files = await readdir(dir);
    expect(files.filter((f) => f.endsWith('.csv.gz'))).toHaveLength(1);
    expect(files).toContain('ccs-bulk.log');
  }, 60_000);
});
