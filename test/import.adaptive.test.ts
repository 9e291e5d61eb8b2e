import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'csv-stringify/sync';
import { describe, expect, it } from 'vitest';
import { CLIENT_HEADER, readResults, runCli, runCliInProcess, useSandbox, validRows } from './helpers.js';
import { IMPORT_DEFAULTS } from '../src/import/defaults.js';

// Under `auto` the CLI runs as a child process: the controller judges wire latency, which a
// sandbox sharing its event loop would inflate.
// 20 requests a second through a one-second token bucket, 100 ms per request: two in flight
// fit. Low enough that even a machine busy with other work signs faster, so the limit is really
// hit; a round trip long enough that a busy event loop's lag does not blur what it measures.
const ctx = useSandbox({ rateLimit: 20, latencyMs: 100, retryAfterSeconds: 1, seedRandom: 16 });

describe('--concurrency auto against a rate-limited service', () => {
  it('finds the limit: few 429s, a settled limit near rate × latency, every row created once', async () => {
    const rows = 200;
    const input = join(ctx.dir, 'limited.csv');
    await writeFile(input, stringify([CLIENT_HEADER, ...validRows(rows)]));
    const results = join(ctx.dir, 'limited.results.csv');
    const run = await runCli(['import', input, '--results', results, '--json', '--quiet'], { env: ctx.env() });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const summary = JSON.parse(run.stdout);
    expect(summary.counts).toMatchObject({ created: rows, failed: 0 });
    expect(summary.concurrency).toMatchObject({ mode: 'auto', max: IMPORT_DEFAULTS.maxConcurrency });
    // Where it ended: below the 8 it starts at, which only 429s can do (without them it only
    // grows, towards its bound): at the ceiling the round trip after a 429 let through (1–3),
    // not probed past in a run this short (30 s after the last 429). (The settled limit counts
    // the climb and the descent too: on a busy machine, 13–19.)
    expect(summary.concurrency.current).toBeGreaterThanOrEqual(1);
    expect(summary.concurrency.current).toBeLessThan(8);
    const { requests } = ctx.sandbox.stats;
    const throttled = ctx.sandbox.stats.faults.rateLimited;
    expect(throttled).toBeGreaterThan(0);
    // Slow start's one overshoot (8 + 16 sent into a bucket of 20 as it empties) and a few
    // probes; the share falls as a run grows.
    expect(throttled).toBeLessThan(50);
    expect(throttled / requests).toBeLessThan(0.15);
    expect(ctx.sandbox.store.size).toBe(rows);
    const lines = await readResults(results);
    expect(lines.filter((l) => l[1] === 'created')).toHaveLength(rows);
    expect(new Set(lines.map((l) => l[0])).size).toBe(rows);
  });

  it('a pinned --concurrency stays where it is put', async () => {
    const input = join(ctx.dir, 'pinned.csv');
    await writeFile(input, stringify([CLIENT_HEADER, ...validRows(20, 9000)]));
    const run = await runCliInProcess(['import', input, '--concurrency', '2', '--json', '--quiet'], { env: ctx.env() });
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout).concurrency).toMatchObject({ mode: 'fixed', current: 2, settled: 2 });
  });

  it("refuses a --concurrency that is neither 'auto' nor a whole number", async () => {
    const run = await runCliInProcess(['import', 'x.csv', '--concurrency', 'fast'], { env: ctx.env() });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("--concurrency takes 'auto' or a whole number");
  });
});
