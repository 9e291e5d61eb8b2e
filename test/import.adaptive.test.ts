import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'csv-stringify/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLIENT_HEADER, makeTempDir, readResults, runCli, runCliInProcess, useSandbox, validRows } from './helpers.js';
import { IMPORT_DEFAULTS } from '../src/import/defaults.js';
import { createServiceClient, importClients, type Sandbox, startSandbox } from '../src/index.js';
import { createPacedSigner } from '../bench/lib/paced-signer.js';

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
    // The service's 429s set it, and the run says so (a rate limit, not slow signing).
    expect(summary.concurrency).toMatchObject({ mode: 'auto', max: IMPORT_DEFAULTS.maxConcurrency, throttled: true });
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
    const concurrency = JSON.parse(run.stdout).concurrency;
    expect(concurrency).toMatchObject({ mode: 'fixed', current: 2, settled: 2 });
    expect(concurrency.throttled).toBeUndefined();
  });

  it("refuses a --concurrency that is neither 'auto' nor a whole number", async () => {
    const run = await runCliInProcess(['import', 'x.csv', '--concurrency', 'fast'], { env: ctx.env() });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("--concurrency takes 'auto' or a whole number");
  });
});

/**
 * A signer that is the bound (200 signatures a second: 4 emulated threads at 20 ms, on timers;
 * the sandbox does not verify) and a service 500 ms away that takes anything: 100 in flight
 * carry the pace, far above the 8 a run starts at, and a pace even a busy machine keeps. While the limit grows, the signer works ahead of the wire; once the wire takes
 * rows faster than they are signed, what keeps its slots busy is rows signed earlier, and the
 * limit must stop there, not grow until they are gone. The sandbox counts the requests it holds
 * at once: no clock in the assertion.
 */
const SIGNER = { threads: 4, ms: 20 };
const LATENCY_MS = 500;

describe('--concurrency auto when the signer, not the service, is the bound', () => {
  let sandbox: Sandbox;
  let dir: string;
  let cleanup: () => Promise<void>;
  beforeAll(async () => {
    sandbox = await startSandbox({ latencyMs: LATENCY_MS, verifySignatures: false });
    ({ dir, cleanup } = await makeTempDir());
  });
  afterAll(async () => {
    await sandbox?.close();
    await cleanup?.();
  });

  it('no more requests at the service at once than 1.5 × the signing pace × the round trip + 16', async () => {
    // More rows than the signer can get ahead by (a backlog of 512 a core): the rows signed
    // ahead while the limit grew are gone well before the signer has signed the file's last.
    const rows = 2500;
    const input = join(dir, 'signer-bound.csv');
    await writeFile(input, stringify([CLIENT_HEADER, ...validRows(rows)]));
    const signer = createPacedSigner(SIGNER);
    // The round trips as the client saw them: on a busy machine its event loop's lag adds to
    // the sandbox's 500 ms, and what the pace needs in flight grows with it.
    const latencies: number[] = [];
    const onAttempt = ({ latencyMs }: { latencyMs: number }) => void latencies.push(latencyMs);
    const service = createServiceClient({ baseUrl: sandbox.url, token: sandbox.token, signer, connections: 1024, onAttempt });
    try {
      const summary = await importClients({ file: input, service, results: join(dir, 'signer-bound.results.csv'), paceMemory: false });
      expect(summary.counts.created).toBe(rows);
      expect(summary.concurrency.mode).toBe('auto');
    } finally {
      await service.close();
    }
    // The pace is at most the signer's: 1.5 × 200 × 0.5 s + 16 = 166 on a quiet machine (120–125
    // measured). Before the limit stopped at the signer's pace it grew on while the rows signed
    // ahead drained: 248–424.
    const pace = (SIGNER.threads * 1000) / SIGNER.ms;
    const roundTripS = Math.max(LATENCY_MS, latencies.reduce((a, b) => a + b, 0) / latencies.length) / 1000;
    expect(sandbox.peakInFlight).toBeGreaterThan(0);
    expect(sandbox.peakInFlight).toBeLessThanOrEqual(1.5 * pace * roundTripS + 16);
    // ~15 s on a quiet machine; a busy one's event loop stretches every round trip.
  }, 240_000);
});
