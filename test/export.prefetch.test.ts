/**
 * `--prefetch auto`: the pages requested ahead of the writer grow while the writer waits on the
 * network, stay put while the writer is the bottleneck, and back off against a rate limit;
 * every client is written once whatever the limit does.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportClients } from '../src/export/run-export.js';
import { type Sandbox, startSandbox } from '../src/sandbox/index.js';
import { createServiceClient } from '../src/service/client.js';
import { collector, expectedIds, parseCsv } from './export.helpers.js';
import { makeTempDir, runCli, runCliInProcess } from './helpers.js';

// The CLI runs as a child process where the controller's pace is checked: it judges wire
// latency, which a sandbox sharing its event loop would inflate.

const START = 4;
let temp: Awaited<ReturnType<typeof makeTempDir>>;
beforeAll(async () => {
  temp = await makeTempDir();
});
afterAll(() => temp?.cleanup());

const envOf = (sandbox: Sandbox) => ({ CCS_BASE_URL: sandbox.url, CCS_TOKEN: sandbox.token });

/** `ccs-bulk export` of every client to `name`, with the default prefetch: a clean exit, and its --json summary. */
async function exportAll(sandbox: Sandbox, name: string, pageSize: number) {
  const out = join(temp.dir, name);
  const run = await runCli(['export', '--out', out, '--page-size', String(pageSize), '--json', '--quiet'], { env: envOf(sandbox) });
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  return { out, summary: JSON.parse(run.stdout) };
}

/** The sandbox's own clients, against the CSV the CLI wrote: every one, each once. */
async function expectEveryClientOnce(file: string, sandbox: Sandbox): Promise<void> {
  const ids = parseCsv(await readFile(file, 'utf8')).map((record) => record.id);
  expect(ids).toHaveLength(sandbox.store.size);
  expect(new Set(ids)).toEqual(expectedIds(sandbox.store.all()));
}

describe('--prefetch auto, the default, at 50 ms a page', () => {
  const clients = 4000;
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await startSandbox({ verifySignatures: false, seed: clients, seedRandom: 16, latencyMs: 50 });
  });
  afterAll(() => sandbox?.close());

  it('grows past its start while the writer waits on the network; every client once', async () => {
    const { out, summary } = await exportAll(sandbox, 'latency.csv', 20);
    expect(summary.rows).toBe(clients);
    // No fixed cap: the bound is what this machine can hold (at least 64 pages).
    expect(summary.prefetch).toMatchObject({ mode: 'auto' });
    expect(summary.prefetch.max).toBeGreaterThanOrEqual(64);
    expect(summary.prefetch.settled).toBeGreaterThan(START);
    await expectEveryClientOnce(out, sandbox);
  });

  it('progress lines and --json show it (the human summary does not); a number pins it', async () => {
    const out = join(temp.dir, 'pinned.csv');
    const env = envOf(sandbox);
    const auto = await runCliInProcess(
      ['export', '--out', out, '--page-size', '50', '--max-prefetch', '6', '--progress-interval', '0.1', '--json'],
      { env },
    );
    expect(auto.code).toBe(0);
    expect(auto.stderr).toMatch(/ccs-bulk: \d+ clients, .*prefetch \d+/);
    expect(auto.stderr).not.toMatch(/pages ahead/);
    expect(JSON.parse(auto.stdout).prefetch).toMatchObject({ mode: 'auto', max: 6 });
    const pinned = await runCliInProcess(['export', '--out', out, '--overwrite', '--prefetch', '2', '--json', '--quiet'], { env });
    expect(pinned.code).toBe(0);
    expect(JSON.parse(pinned.stdout).prefetch).toEqual({ mode: 'fixed', current: 2, settled: 2, max: 2 });
  });

  it("refuses a --prefetch that is neither 'auto' nor a whole number", async () => {
    const run = await runCliInProcess(['export', '--prefetch', 'lots'], { env: envOf(sandbox) });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("--prefetch takes 'auto' or a whole number");
  });
});

describe('--prefetch auto against a rate limit', () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    // Two requests a second, a bucket of two, 100 ms each: the four pages it starts with empty the
    // bucket at once and half of them are refused, every window after a pause refuses a share no
    // steady background of 429s has (over one in five), even on a busy machine: a limit, not
    // noise; the round trip is long against a busy event loop's lag.
    sandbox = await startSandbox({ verifySignatures: false, seed: 400, seedRandom: 17, rateLimit: 2, latencyMs: 100, retryAfterSeconds: 1 });
  });
  afterAll(() => sandbox?.close());

  it('backs off below its start on 429s and still writes every client once', async () => {
    const { out, summary } = await exportAll(sandbox, 'limited.csv', 20);
    expect(sandbox.stats.faults.rateLimited).toBeGreaterThan(0);
    expect(summary.rows).toBe(400);
    expect(summary.prefetch.mode).toBe('auto');
    expect(summary.prefetch.settled).toBeLessThan(START);
    await expectEveryClientOnce(out, sandbox);
  });
});

describe('--prefetch auto with a slow writer', () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await startSandbox({ verifySignatures: false, seed: 600, seedRandom: 18, latencyMs: 30 });
  });
  afterAll(() => sandbox?.close());

  /** An output that takes `ms` per write (a slow disk): the writer, not the network, lags. */
  function slowSink(ms: number): Writable & { chunks: Buffer[] } {
    const chunks: Buffer[] = [];
    const sink = new Writable({
      highWaterMark: 1,
      write(chunk: Buffer, _encoding, done) {
        chunks.push(chunk);
        setTimeout(done, ms);
      },
    });
    return Object.assign(sink, { chunks });
  }

  it('does not grow while the writer is the bottleneck, and grows when it is not', async () => {
    const service = createServiceClient({ baseUrl: sandbox.url, token: sandbox.token, connections: 64 });
    try {
      const settings = { service, pageSize: 20, columns: ['id'] };
      const slow = slowSink(100);
      const lagging = await exportClients({ ...settings, out: slow });
      slow.end();
      expect(lagging.rows).toBe(600);
      // No growth: pages already wait for the writer. (On a busy machine a latency rise may cut it below its start: not growth either.)
      expect(lagging.prefetch.mode).toBe('auto');
      expect(lagging.prefetch.settled).toBeLessThanOrEqual(START);
      expect(lagging.prefetch.peak ?? 0).toBeLessThanOrEqual(START);
      expect(new Set(parseCsv(Buffer.concat(slow.chunks).toString('utf8')).map((r) => r.id)).size).toBe(600);

      const fast = collector();
      const keepingUp = await exportClients({ ...settings, out: fast });
      expect(parseCsv(await fast.text())).toHaveLength(600);
      expect(keepingUp.prefetch.settled).toBeGreaterThan(START);
    } finally {
      await service.close();
    }
  });
});
