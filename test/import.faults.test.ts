import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'csv-stringify/sync';
import { describe, expect, it } from 'vitest';
import { CLIENT_HEADER, readResults, runCliInProcess as runCli, useSandbox, validRows } from './helpers.js';


const ctx = useSandbox({
    failRate: 0.1,
    throttleRate: 0.05,
    resetRate: 0.03,
    retryAfterSeconds: 0,
    seedRandom: 3,
  });

describe('import through 10% 503, 5% 429 and 3% cuts after create', () => {
  it('creates every row exactly once', async () => {
    const input = join(ctx.dir, 'faulty.csv');
    await writeFile(input, stringify([CLIENT_HEADER, ...validRows(300)]));
    const results = join(ctx.dir, 'faulty.results.csv');
    const run = await runCli(
      ['import', input, '--results', results, '--retries', '10', '--json', '--quiet'],
      {
        env: ctx.env(),
      },
    );
    expect(run.code).toBe(0);
    const summary = JSON.parse(run.stdout);
    expect(summary.counts).toMatchObject({ created: 300, failed: 0 });
    expect(ctx.sandbox.store.size).toBe(300);
    const lines = await readResults(results);
    expect(lines.filter((l) => l[1] === 'created')).toHaveLength(300);
    expect(lines.some((l) => Number(l[4]) > 1)).toBe(true);
    const { fail, throttle, reset } = ctx.sandbox.stats.faults;
    expect(fail).toBeGreaterThan(10);
    expect(throttle).toBeGreaterThan(5);
    expect(reset).toBeGreaterThan(2);
  });
});

describe('--max-errors', () => {
  it('puts nothing more on the wire once reached: exactly C requests fail, the rest is not_attempted', async () => {
    const input = join(ctx.dir, 'max-errors.csv');
    await writeFile(input, stringify([CLIENT_HEADER, ...validRows(30, 5000)]));
    for (const concurrency of [1, 2]) {
      // The latency lets all C requests go out (each signed first) before the first 503 returns.
      ctx.sandbox.setFaults({ failRate: 1, throttleRate: 0, resetRate: 0, latencyMs: 500 });
      const before = ctx.sandbox.stats.faults.fail;
      const results = join(ctx.dir, `max-errors-${concurrency}.results.csv`);
      const run = await runCli(
        // --identity none: the listing of who the service holds would meet the same 503s first.
        ['import', input, '--results', results, '--retries', '0', '--max-errors', '1', '--concurrency', String(concurrency), '--identity', 'none', '--json', '--quiet'],
        { env: ctx.env() },
      );
      expect(run.code).toBe(3);
      expect(ctx.sandbox.stats.faults.fail - before).toBe(concurrency);
      const lines = await readResults(results);
      expect(lines).toHaveLength(30);
      expect(lines.filter((l) => l[1] === 'failed')).toHaveLength(concurrency);
      expect(lines.filter((l) => l[1] === 'not_attempted')).toHaveLength(30 - concurrency);
    }
    ctx.sandbox.setFaults({ latencyMs: 0 });
  });
});
