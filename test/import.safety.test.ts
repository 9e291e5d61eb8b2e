/** Pins the fixes from the code review: nothing destroys input, loses a row or leaks a secret. */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'csv-stringify/sync';
import { describe, expect, it } from 'vitest';
import { KeySet } from '../src/import/row/key-set.js';
import { BIN, CLIENT_HEADER, readResults, runCliInProcess as runCli, useSandbox, validRows } from './helpers.js';

const ctx = useSandbox({ retryAfterSeconds: 0 });
let n = 0;
async function csv(rows: string[][]): Promise<string> {
  const path = join(ctx.dir, `safety-${++n}.csv`);
  await writeFile(path, stringify(rows));
  return path;
}

describe('output paths', () => {
  it('refuses a results or failed file that is the input, leaving the input intact', async () => {
    const input = await csv([CLIENT_HEADER, ...validRows(20)]);
    const before = await readFile(input, 'utf8');
    for (const args of [
      ['--failed', input],
      ['--results', input, '--overwrite'],
      ['--results', input, '--resume'],
      ['--results', join(ctx.dir, 'same.csv'), '--failed', join(ctx.dir, 'same.csv')],
    ]) {
      const run = await runCli(['import', input, ...args], { env: ctx.env() });
      expect(run.code, run.stderr).toBe(2);
      expect(run.stderr).toMatch(/is the same file as/);
    }
    expect(await readFile(input, 'utf8')).toBe(before);
  });

  it('an unwritable --failed path leaves no results file behind', async () => {
    const input = await csv([CLIENT_HEADER, ...validRows(2)]);
    const run = await runCli(['validate', input, '--failed', join(ctx.dir, 'no-such-dir', 'f.csv')]);
    expect(run.code).toBe(2);
    await expect(stat(`${input}.results.csv`)).rejects.toThrow();
    expect((await runCli(['validate', input])).code).toBe(0);
  });

  it('makes an existing results or failed file private again', async () => {
    const input = await csv([CLIENT_HEADER, ...validRows(2), ['', 'bad', 'DE', 'S', 'EUR', '']]);
    const results = join(ctx.dir, 'open.results.csv');
    const failed = join(ctx.dir, 'open.failed.csv');
    await writeFile(results, 'old\n', { mode: 0o644 });
    await writeFile(failed, 'old\n', { mode: 0o644 });
    await chmod(results, 0o644);
    await chmod(failed, 0o644);
    const run = await runCli(['validate', input, '--results', results, '--failed', failed, '--overwrite']);
    expect(run.code).toBe(1);
    expect((await stat(results)).mode & 0o777).toBe(0o600);
    expect((await stat(failed)).mode & 0o777).toBe(0o600);
  });

  it('a disk that fills up mid-run stops cleanly (no stack trace) and resume finishes exactly once', async () => {
    const input = await csv([CLIENT_HEADER, ...validRows(100, 5000)]);
    const results = join(ctx.dir, 'full.results.csv');
    const env = { ...process.env, ...ctx.env() };
    // ulimit -f caps the size of files this process may write (in KiB): the results file hits
    // it after some 40 of its 100 rows.
    const child = spawn('bash', ['-c', `trap "" XFSZ; ulimit -f 8; exec "$0" "$@"`, process.execPath, BIN, 'import', input, '--results', results], { env });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    const code = await new Promise((resolve) => child.on('close', resolve));
    expect(code).toBe(1);
    expect(stderr).toMatch(/cannot write .*full\.results\.csv: EFBIG/);
    expect(stderr).not.toMatch(/\n\s+at /);
    const rest = await runCli(['import', input, '--results', results, '--resume', '--quiet'], { env: ctx.env() });
    expect(rest.code, rest.stderr).toBe(0);
    const created = (await readResults(results)).filter((l) => l[1] === 'created');
    expect(created).toHaveLength(100);
    expect(new Set(created.map((l) => l[0])).size).toBe(100);
  });
});

describe('failed rows keep their key', () => {
  it('a row whose answer was lost is re-imported from --failed under the same key: no second client', async () => {
    const input = await csv([CLIENT_HEADER, ['Bob', 'bob@example.com', 'DE', 'Street 1', 'EUR', '']]);
    const failed = join(ctx.dir, 'lost.failed.csv');
    ctx.sandbox.setFaults({ resetRate: 1 });
    const run = await runCli(['import', input, '--retries', '0', '--failed', failed], { env: ctx.env() });
    ctx.sandbox.setFaults({ resetRate: 0 });
    expect(run.code).toBe(1);
    const rows = (await readFile(failed, 'utf8')).split('\n');
    expect(rows[0]).toBe('name,email,country,address,currency,application_date,idempotency_key,error');
    expect(rows[1]).toMatch(/,ccsb_[0-9a-f]{40},/);
    const bobs = () => ctx.sandbox.store.all().filter((c) => c.email === 'bob@example.com').length;
    expect(bobs()).toBe(1); // created, though the answer never arrived
    // Edited in the spreadsheet, then imported again: Bob is on the service already, no second Bob.
    await writeFile(failed, (await readFile(failed, 'utf8')).replace('Street 1', 'Street 2'));
    const again = await runCli(['import', failed, '--json', '--quiet'], { env: ctx.env() });
    expect(JSON.parse(again.stdout).counts).toMatchObject({ existing: 1, created: 0 });
    expect(bobs()).toBe(1);
    // Without the person match the key still protects: the service refuses the changed body (409).
    const keyed = await runCli(['import', failed, '--json', '--quiet', '--identity', 'none', '--results', join(ctx.dir, 'lost.keyed.csv')], { env: ctx.env() });
    expect(JSON.parse(keyed.stdout).topErrors).toEqual([{ code: 'idempotency_conflict', count: 1 }]);
    expect(bobs()).toBe(1);
  });

  it('user keys that merely look derived are told apart', () => {
    const set = new KeySet();
    expect(set.add('ccsb_0123456789abcdef-order-1', 1)).toBeUndefined();
    expect(set.add('ccsb_0123456789abcdef-order-2', 2)).toBeUndefined();
    expect(set.add('ccsb_0123456789abcdef-order-1', 3)).toBe(1);
  });
});

describe('Ctrl-C while rows wait to retry', () => {
  it('records them not_attempted, keeps them out of --failed, and warns about no listeners', async () => {
    const input = await csv([CLIENT_HEADER, ...validRows(16, 9000)]);
    const results = join(ctx.dir, 'wait.results.csv');
    const failed = join(ctx.dir, 'wait.failed.csv');
    // The rows sit out the whole wait before they are recorded: long enough that a busy machine
    // delivers the interrupt within it. The 429s come after 300 ms of latency, so all 16 rows are
    // on the wire before the first one pauses the run (else the rest wait out that pause first).
    ctx.sandbox.setFaults({ throttleRate: 1, retryAfterSeconds: 10, latencyMs: 300 });
    // --identity none: the listing before the first row would meet the same 429s first.
    const child = spawn(process.execPath, [BIN, 'import', input, '--results', results, '--failed', failed, '--concurrency', '16', '--identity', 'none'], {
      env: { ...process.env, ...ctx.env() },
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    // Interrupt once every row has met its 429 and waits to retry (this run's: its results file
    // is made before it sends, so its signal handler is in place).
    const throttledBefore = ctx.sandbox.stats.faults.throttle;
    const poll = setInterval(() => {
      if (existsSync(results) && ctx.sandbox.stats.faults.throttle - throttledBefore >= 16) {
        clearInterval(poll);
        child.kill('SIGINT');
      }
    }, 20);
    const code = await new Promise((resolve) => child.on('close', resolve));
    clearInterval(poll);
    ctx.sandbox.setFaults({ throttleRate: 0, retryAfterSeconds: 0, latencyMs: 0 });
    expect(code).toBe(3);
    expect(stderr).not.toContain('MaxListenersExceededWarning');
    const lines = await readResults(results);
    expect(lines).toHaveLength(16);
    expect(lines.every((l) => l[1] === 'not_attempted')).toBe(true);
    expect((await readFile(failed, 'utf8')).trim().split('\n')).toHaveLength(1);
  });
});

describe('secrets in messages', () => {
  it('never prints a token, even one passed where a path belongs', async () => {
    const input = await csv([CLIENT_HEADER, ...validRows(1)]);
    const run = await runCli(['import', input, '--base-url', ctx.sandbox.url, '--token-file', 'lk_live_SECRETVALUE123'], {
      env: { CCS_SIGNING_KEY_FILE: ctx.keyFile },
    });
    expect(run.code).toBe(2);
    expect(run.stderr).not.toContain('SECRETVALUE123');
    const token = join(ctx.dir, 'token.txt');
    await writeFile(token, 'lk_live_SECRETVALUE123\n');
    const asInput = await runCli(['validate', token]);
    expect(asInput.code).toBe(2);
    expect(asInput.stderr).not.toContain('SECRETVALUE123');
  });

  it('a token with a newline is refused up front, not retried per row', async () => {
    const input = await csv([CLIENT_HEADER, ...validRows(3)]);
    const run = await runCli(['import', input, '--overwrite'], {
      env: { ...ctx.env(), CCS_TOKEN: `${ctx.sandbox.token}\nX-Evil: 1` },
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('CCS_TOKEN holds spaces or control characters');
  });
});
