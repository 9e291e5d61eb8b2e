import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'csv-stringify/sync';
import { describe, expect, it } from 'vitest';
import { startSandbox } from '../src/sandbox/index.js';
import { CLIENT_HEADER, readResults, runCliInProcess as run, useSandbox, validRows } from './helpers.js';

// An outage plus the probes' backoff, on a loaded 2-core machine: bounds well above the defaults.
const BOUND = 150_000;
const runCli = (args: string[], options: Parameters<typeof run>[1] = {}) => run(args, { timeoutMs: BOUND - 10_000, ...options });

// 10 ms per request at --concurrency 4: 100 rows take 250 ms at the very least, however fast the
// machine, so an outage that begins (counted from the first request) before then lands mid-run.
const ctx = useSandbox({ latencyMs: 10, seed: 400 });

let fileCount = 0;
async function input(rows: number): Promise<{ file: string; results: string; keys(): Promise<string[]> }> {
  fileCount++;
  const file = join(ctx.dir, `outage-${fileCount}.csv`);
  await writeFile(file, stringify([CLIENT_HEADER, ...validRows(rows, 100_000 * fileCount)]));
  const results = `${file}.results.csv`;
  return { file, results, keys: async () => (await readResults(results)).map((l) => l[5]!) };
}

/** Every key of the file is stored exactly once (the store is keyed by idempotency key). */
function storedOnce(keys: readonly string[]): boolean {
  return keys.every((key) => ctx.sandbox.store.byIdempotencyKey(key) !== undefined);
}

describe('a mid-run outage pauses the whole run (circuit breaker)', () => {
  it('2 s of 503s mid-import: every row created exactly once, none failed, far fewer requests than rows × retries', async () => {
    const rows = 150;
    const { file, results, keys } = await input(rows);
    ctx.sandbox.setFaults({ outage: { atMs: 200, forMs: 2000, kind: '503' } });
    const before = { requests: ctx.sandbox.stats.requests, size: ctx.sandbox.store.size, outage: ctx.sandbox.stats.faults.outage };
    const log = `${file}.log`;
    const run = await runCli(['import', file, '--results', results, '--concurrency', '4', '--json', '--progress-interval', '3600', '--log-file', log], {
      env: ctx.env(),
    });
    ctx.sandbox.setFaults({ outage: undefined });
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout).counts).toMatchObject({ created: rows, failed: 0, not_attempted: 0 });
    expect(ctx.sandbox.store.size - before.size).toBe(rows);
    expect(storedOnce(await keys())).toBe(true);
    expect(ctx.sandbox.stats.faults.outage - before.outage).toBeGreaterThan(4);
    const requests = ctx.sandbox.stats.requests - before.requests;
    expect(requests).toBeLessThan(rows * 6);
    // Rows + what the outage cost: the requests in flight when it began, and a few probes.
    expect(requests - rows).toBeLessThan(40);
    expect(run.stderr).toMatch(/the service failed several requests in a row \(the last: .*503.*\): sending paused/);
    expect(run.stderr).toMatch(/the service is back after \d+ s: sending resumed/);
    // The breaker's pause and resume are run events in the log.
    const events = (await readFile(log, 'utf8')).trim().split('\n').map((line) => JSON.parse(line) as { event?: string; down_for_ms?: number });
    const outage = events.filter((line) => line.event?.startsWith('outage_'));
    expect(outage[0]?.event).toBe('outage_paused');
    expect(outage.at(-1)).toMatchObject({ event: 'outage_resumed' });
    expect(outage.at(-1)!.down_for_ms).toBeGreaterThan(0);
  }, BOUND);

  it('connections cut mid-run (not refused at start) are an outage too, not a configuration error', async () => {
    const rows = 100;
    const { file, results } = await input(rows);
    ctx.sandbox.setFaults({ outage: { atMs: 150, forMs: 1500, kind: 'drop' } });
    const outageBefore = ctx.sandbox.stats.faults.outage;
    const log = `${file}.log.jsonl`;
    const run = await runCli(['import', file, '--results', results, '--concurrency', '4', '--json', '--quiet', '--log-file', log], { env: ctx.env() });
    ctx.sandbox.setFaults({ outage: undefined });
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout).counts).toMatchObject({ created: rows, failed: 0 });
    expect(ctx.sandbox.stats.faults.outage - outageBefore).toBeGreaterThan(0);
    // Taken for an outage: the run paused (not just retried rows one by one).
    const events = (await readFile(log, 'utf8')).trim().split('\n').map((line) => JSON.parse(line) as { event: string });
    expect(events.some((line) => line.event === 'outage_paused')).toBe(true);
  }, BOUND);

  it('still down after --outage-timeout: stops (exit 3), the rest not_attempted, --resume finishes exactly once', async () => {
    const rows = 100;
    const { file, results, keys } = await input(rows);
    ctx.sandbox.setFaults({ outage: { atMs: 150, forMs: 600_000, kind: '503' } });
    const size = ctx.sandbox.store.size;
    // --identity none: the outage starts 150 ms after the first request, which must be a row's
    // (the listing of who the service holds would otherwise take those 150 ms on a busy machine).
    const run = await runCli(['import', file, '--results', results, '--concurrency', '4', '--outage-timeout', '0.5', '--json', '--progress-interval', '3600', '--identity', 'none'], {
      env: ctx.env(),
    });
    expect(run.code).toBe(3);
    const summary = JSON.parse(run.stdout);
    expect(summary.counts.failed).toBe(0);
    expect(summary.counts.created).toBeGreaterThan(0);
    expect(summary.counts.created + summary.counts.not_attempted).toBe(rows);
    expect(summary.stopped).toMatchObject({ reason: 'outage', code: 'outage' });
    expect(run.stderr).toMatch(/cause: the service has been unreachable or failing for \d+ s \(last: .*503.*\); stopped after --outage-timeout 0.5 s/);
    expect(run.stderr).toMatch(/to continue: ccs-bulk import .* --resume/);

    ctx.sandbox.setFaults({ outage: undefined });
    const resumed = await runCli(['import', file, '--results', results, '--resume', '--json', '--quiet'], { env: ctx.env() });
    expect(resumed.code).toBe(0);
    expect(JSON.parse(resumed.stdout).counts.failed).toBe(0);
    expect(ctx.sandbox.store.size - size).toBe(rows);
    expect(storedOnce(await keys())).toBe(true);
  }, BOUND);
});

describe('a heartbeat without a terminal', () => {
  it('while the service is down, a plain line at each progress interval says since when and until when it retries', async () => {
    const { file, results } = await input(20);
    // Down from the first request on: nothing finishes, so only the heartbeat speaks.
    ctx.sandbox.setFaults({ outage: { atMs: 0, forMs: 600_000, kind: '503' } });
    const run = await runCli(['import', file, '--results', results, '--outage-timeout', '3', '--progress-interval', '0.2', '--identity', 'none'], {
      env: ctx.env(),
    });
    ctx.sandbox.setFaults({ outage: undefined });
    expect(run.code).toBe(3);
    const beats = run.stderr.split('\n').filter((line) => line.startsWith('ccs-bulk: service unreachable since '));
    expect(beats.length, run.stderr).toBeGreaterThanOrEqual(2);
    expect(beats.at(-1)).toMatch(/^ccs-bulk: service unreachable since \d+ s \(.*503.*\)(: sending paused)?; retrying until 3 s \(--outage-timeout\)$/);
    expect(run.stderr).toMatch(/to continue: ccs-bulk import .* --resume/);
  }, BOUND);
});

describe('export through an outage', () => {
  it('pauses and finishes: every client once', async () => {
    const slow = await startSandbox({ latencyMs: 15, seed: 500, verifySignatures: false });
    try {
      slow.setFaults({ outage: { atMs: 150, forMs: 1000, kind: '503' } });
      // Four pages at a time: their four failures and one retry (within its first backoff, 200 ms at
      // most) are the five in a row that open the breaker, however slowly a busy machine retries;
      // 100 pages of 15 ms, four at a time, outlast the 150 ms before the outage on any machine.
      const run = await runCli(['export', '--format', 'jsonl', '--page-size', '5', '--prefetch', '4', '--progress-interval', '3600'], {
        env: { CCS_BASE_URL: slow.url, CCS_TOKEN: slow.token },
      });
      expect(run.code).toBe(0);
      const ids = run.stdout.trim().split('\n').map((line) => JSON.parse(line).id as string);
      expect(ids).toHaveLength(500);
      expect(new Set(ids).size).toBe(500);
      expect(slow.stats.faults.outage).toBeGreaterThan(0);
      expect(run.stderr).toMatch(/sending paused[\s\S]*sending resumed/);
    } finally {
      await slow.close();
    }
  }, BOUND);

  it('still down after --outage-timeout: exit 3, no file', async () => {
    const down = await startSandbox({ seed: 50, verifySignatures: false });
    try {
      down.setFaults({ outage: { atMs: 0, forMs: 600_000, kind: '503' } });
      const out = join(ctx.dir, 'down.csv');
      const run = await runCli(['export', '--out', out, '--outage-timeout', '0.5'], {
        env: { CCS_BASE_URL: down.url, CCS_TOKEN: down.token },
      });
      expect(run.code).toBe(3);
      expect(run.stderr).toMatch(/--outage-timeout/);
      expect(run.stderr).toMatch(/down\.csv was not written/);
    } finally {
      await down.close();
    }
  }, BOUND);
});

describe('connection refused before anything succeeded', () => {
  it('stops at once: exit 2, every row not_attempted, the fix names the base URL', async () => {
    const gone = await startSandbox({ verifySignatures: false });
    const url = gone.url;
    await gone.close();
    const { file, results } = await input(40);
    const run = await runCli(['import', file, '--results', results], {
      env: { ...ctx.env(), CCS_BASE_URL: url },
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/cause: cannot reach the service: nothing answers at http:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\)\n {2}fix: check the base URL/);
    expect((await readResults(results)).every((l) => l[1] === 'not_attempted')).toBe(true);
  }, BOUND);
});
