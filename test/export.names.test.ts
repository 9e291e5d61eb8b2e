/**
 * Names, messages and modes of report files: unknown placeholders refused in any case; the log's
 * run_started with the filled-in name and run_failed with the path and message; "the existing
 * file keeps its old content" only when there was one; report files with the umask's mode or
 * --file-mode / fileMode, while the state and the log stay 0600.
 */
import { mkdir, readFile, readdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expandOutName } from '../src/export/out-name.js';
import { type Sandbox, startSandbox } from '../src/sandbox/index.js';
import { exportCli, idRange, startFakeService } from './export.helpers.js';
import { expectNoneOf, makeTempDir } from './helpers.js';

let sandbox: Sandbox;
let temp: Awaited<ReturnType<typeof makeTempDir>>;
let env: Record<string, string>;

beforeAll(async () => {
  sandbox = await startSandbox({ verifySignatures: false, seed: 40, seedRandom: 2 });
  temp = await makeTempDir();
  env = { CCS_BASE_URL: sandbox.url, CCS_TOKEN: sandbox.token };
});
afterAll(async () => {
  await sandbox?.close();
  await temp?.cleanup();
});

const logLines = async (file: string) => (await readFile(file, 'utf8')).trim().split('\n').map((line) => JSON.parse(line));

describe('--out placeholders in any case', () => {
  it.each([
    ['appr-{Date}.csv', /unknown placeholder \{Date\} \(placeholders are lower case: \{date\}\)/],
    ['appr-{DATETIME}.csv', /unknown placeholder \{DATETIME\} \(placeholders are lower case: \{datetime\}\)/],
    ['appr-{week}.csv', /unknown placeholder \{week\}; placeholders are \{date\}, \{datetime\}, \{report\}/],
    ['appr-{ date }.csv', /unknown placeholder \{ date \}/],
    ['appr-{}.csv', /unknown placeholder \{\}/],
  ])('%s is refused', (name, message) => {
    expect(() => expandOutName(name, new Date(), 'weekly')).toThrow(message);
  });
});

describe('what a failed run says, and logs', () => {
  it('run_started has the filled-in name; run_failed the path and the message; no "old content" without an old file', async () => {
    const fake = await startFakeService((page, size) => (page === 0 ? { ids: idRange('f', 0, size) } : { status: 400, error: { param: 'status' } }));
    const dir = join(temp.dir, 'log');
    await mkdir(dir);
    const log = join(dir, 'ccs-bulk.log');
    const out = join(dir, 'approved-{date}.csv');
    try {
      const result = await exportCli(['export', '--out', out, '--log-file', log, '--quiet'], { CCS_BASE_URL: fake.url, CCS_TOKEN: 'lk_sandbox_secret' });
      expect(result.code).toBe(1);
      const filled = out.replace('{date}', new Date().toISOString().slice(0, 10));
      expect(result.stderr).toContain(`ccs-bulk: export failed: ${filled} was not written\n`);
      expect(result.stderr).not.toMatch(/old content/);
      const [started, failed] = (await logLines(log)).filter((line) => line.kind === 'run');
      expect(started).toMatchObject({ event: 'run_started', out: filled });
      expect(failed).toMatchObject({ event: 'run_failed', out: filled, exit_code: 1 });
      expect(failed.message).toMatch(/refused/);
      expectNoneOf(await readFile(log, 'utf8'), ['lk_sandbox_secret']);
    } finally {
      await fake.close();
    }
  });

  it('an output that cannot be created: run_failed names the filled-in path and says why', async () => {
    const log = join(temp.dir, 'unwritable.log');
    await writeFile(join(temp.dir, 'a-file'), '');
    const out = join(temp.dir, 'a-file', 'approved-{date}.csv');
    const result = await exportCli(['export', '--out', out, '--log-file', log], env);
    expect(result.code).toBe(2);
    expect(result.stderr).not.toMatch(/was not written/);
    const failed = (await logLines(log)).find((line) => line.event === 'run_failed');
    expect(failed).toMatchObject({ out: out.replace('{date}', new Date().toISOString().slice(0, 10)), error: 'output_unwritable' });
    expect(failed.message).toMatch(/ENOTDIR/);
  });

  it('errors found before the run starts print no "was not written" line', async () => {
    for (const args of [
      ['--out', join(temp.dir, 'r.xlsx.gz')],
      ['--out', join(temp.dir, '{report}.csv')],
      ['--out', join(temp.dir, 'r-{Date}.csv')],
    ]) {
      const result = await exportCli(['export', ...args], env);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr).not.toMatch(/was not written/);
    }
  });

  it('a failure mid-run over an existing file (--overwrite) says that file keeps its old content', async () => {
    const fake = await startFakeService((page, size) => (page === 0 ? { ids: idRange('f', 0, size) } : { status: 400, error: { param: 'status' } }));
    try {
      const out = join(temp.dir, 'kept.csv');
      await writeFile(out, 'last week');
      const result = await exportCli(['export', '--out', out, '--overwrite', '--quiet'], { CCS_BASE_URL: fake.url, CCS_TOKEN: 'lk_sandbox_x' });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`ccs-bulk: export failed: ${out} was not written (the existing file keeps its old content)\n`);
      expect(await readFile(out, 'utf8')).toBe('last week');
    } finally {
      await fake.close();
    }
  });
});

describe('the window as understood', () => {
  it('a date-time without a zone is taken as UTC and said so; a month is the whole month; both bounds printed in UTC', async () => {
    const result = await exportCli(
      ['export', '--out', join(temp.dir, 'window.csv'), '--created-from', '2025-01-01 10:00', '--created-to', '2025-02'],
      env,
    );
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/^ {2}created_at \(UTC\): 2025-01-01T10:00:00.000Z to 2025-02-28T23:59:59.999Z$/m);
    expect(result.stderr).toMatch(/^ {2}--created-from "2025-01-01 10:00" has no time zone: taken as UTC \(2025-01-01T10:00:00.000Z\)$/m);
  });
});

describe('file modes', () => {
  it('reports are private (0600) by default, whatever the umask; fileMode in the config or --file-mode shares them; state and log stay 0600', async () => {
    const dir = join(temp.dir, 'modes');
    await mkdir(dir);
    const config = join(dir, 'ccs-bulk.config.json');
    await writeFile(config, JSON.stringify({ export: { fileMode: '640' }, reports: { shared: { status: 'approved', columns: ['id'] } } }));
    const state = join(dir, 'state.json');
    const log = join(dir, 'run.log');
    const plain = await exportCli(['export', '--out', join(dir, 'plain.csv'), '--since-last', state, '--log-file', log, '--quiet'], env);
    expect(plain.code).toBe(0);
    expect((await stat(join(dir, 'plain.csv'))).mode & 0o777).toBe(0o600);
    expect((await stat(state)).mode & 0o777).toBe(0o600);
    expect((await stat(log)).mode & 0o777).toBe(0o600);
    const fromConfig = await exportCli(['export', '--config', config, '--report', 'shared', '--out', join(dir, 'group.csv'), '--quiet'], env);
    expect(fromConfig.code).toBe(0);
    expect((await stat(join(dir, 'group.csv'))).mode & 0o777).toBe(0o640);
    const fromFlag = await exportCli(['export', '--out', join(dir, 'all.xlsx'), '--file-mode', '0644', '--quiet'], env);
    expect(fromFlag.code).toBe(0);
    expect((await stat(join(dir, 'all.xlsx'))).mode & 0o777).toBe(0o644);
    for (const bad of ['755', '400', 'rw-r-----', '1640']) {
      const refused = await exportCli(['export', '--out', join(dir, `bad-${bad}.csv`), '--file-mode', bad], env);
      expect(refused.code, bad).toBe(2);
      expect(refused.stderr).toMatch(/--file-mode .*octal permission bits/);
    }
    expect((await readdir(dir)).filter((name) => name.startsWith('bad-'))).toEqual([]);
  });
});
