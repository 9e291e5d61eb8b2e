/**
 * Pace memory: `--concurrency auto` starts near where the last run against the same service
 * settled (halved, then re-probed), kept owner-only in the user's cache folder, never read or
 * written through a link; a pinned --concurrency neither reads nor leaves one.
 */
import { chmodSync, linkSync, mkdirSync, readFileSync, readdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'csv-stringify/sync';
import { describe, expect, it } from 'vitest';
import { paceMemoryFor, recall, remember, rememberedStart } from '../src/service/pace-memory.js';
import { exportClients } from '../src/export/run-export.js';
import { EXPORT_DEFAULTS } from '../src/export/defaults.js';
import { createServiceClient } from '../src/service/client.js';
import { CLIENT_HEADER, runCli, startTestSandbox, useSandbox, validRows } from './helpers.js';

// 50 ms a request and no limit: `auto` grows past its start of 8, and settles where the
// signer keeps it (1.5 × what is in flight + 16: well above 16 on any machine).
const ctx = useSandbox({ latencyMs: 50 });

const entry = (settled: number, throttled = false) => ({ settled, throttled, at: '2026-01-01T00:00:00.000Z' });

describe('where a run starts, given what was remembered', () => {
  it.each([
    // name, remembered, usual start, bound, start
    ['nothing remembered: the usual start', undefined, 8, 1000, 8],
    ['half of where the last run settled', entry(300), 8, 1000, 150],
    ['never below the usual start', entry(10), 8, 1000, 8],
    ['never above the bound', entry(5000), 8, 1000, 1000],
    ['a run that met a 429 limit: half of where it settled, below that limit', entry(40, true), 8, 1000, 20],
  ] as const)('%s', (_name, remembered, start, max, expected) => {
    expect(rememberedStart(remembered, start, max)).toBe(expected);
  });
});

describe('the pace memory file', () => {
  const cacheOf = (name: string) => ({ XDG_CACHE_HOME: join(ctx.dir, name) });

  it('is kept per service, private (0600 in a 0700 folder), both kinds side by side', () => {
    const memory = paceMemoryFor('https://a.example', cacheOf('kept'));
    remember(memory, 'import', entry(120));
    remember(memory, 'export', entry(30, true));
    expect(recall(memory, 'import')).toEqual(entry(120));
    expect(recall(memory, 'export')).toEqual(entry(30, true));
    expect(statSync(memory.path).mode & 0o777).toBe(0o600);
    expect(statSync(join(memory.path, '..')).mode & 0o777).toBe(0o700);
    // Another service: another file, nothing shared.
    const other = paceMemoryFor('https://b.example', cacheOf('kept'));
    expect(other.path).not.toBe(memory.path);
    expect(recall(other, 'import')).toBeUndefined();
  });

  it('a file for another service, or not this format, is no memory', () => {
    const memory = paceMemoryFor('https://c.example', cacheOf('foreign'));
    mkdirSync(join(memory.path, '..'), { recursive: true });
    writeFileSync(memory.path, JSON.stringify({ pace_memory: 1, service: 'https://elsewhere.example', import: entry(500) }), { mode: 0o600 });
    expect(recall(memory, 'import')).toBeUndefined();
    writeFileSync(memory.path, '{"pace_memory":1,"service":"https://c.example","import":{"settled":"lots"}}');
    expect(recall(memory, 'import')).toBeUndefined();
    writeFileSync(memory.path, 'not json');
    expect(recall(memory, 'import')).toBeUndefined();
    // Writing replaces it whole.
    remember(memory, 'import', entry(64));
    expect(recall(memory, 'import')).toEqual(entry(64));
  });

  it('is never read or written through a link, nor a file with a second name', () => {
    const memory = paceMemoryFor('https://d.example', cacheOf('links'));
    const folder = join(memory.path, '..');
    mkdirSync(folder, { recursive: true, mode: 0o700 });
    const target = join(ctx.dir, 'elsewhere.json');
    const planted = JSON.stringify({ pace_memory: 1, service: 'https://d.example', import: entry(900) });
    writeFileSync(target, planted);
    symlinkSync(target, memory.path);
    expect(recall(memory, 'import')).toBeUndefined();
    remember(memory, 'import', entry(64));
    expect(readFileSync(target, 'utf8')).toBe(planted);
    expect(recall(memory, 'import')).toBeUndefined();

    const hard = paceMemoryFor('https://e.example', cacheOf('links'));
    const original = join(ctx.dir, 'original.json');
    writeFileSync(original, JSON.stringify({ pace_memory: 1, service: 'https://e.example', import: entry(900) }));
    linkSync(original, hard.path);
    expect(recall(hard, 'import')).toBeUndefined();
  });

  it('a cache folder that cannot be written costs nothing but the memory', () => {
    if (process.getuid?.() === 0) return; // root writes anywhere: nothing to refuse
    const root = join(ctx.dir, 'readonly-cache');
    mkdirSync(root, { mode: 0o500 });
    const memory = paceMemoryFor('https://f.example', { XDG_CACHE_HOME: root });
    expect(() => remember(memory, 'import', entry(64))).not.toThrow();
    expect(recall(memory, 'import')).toBeUndefined();
    chmodSync(root, 0o700);
  });
});

describe('an import with no flags starts where the last one against the service settled', () => {
  it('the first run leaves its pace; the second starts at half of it; a pinned run neither reads nor writes it', async () => {
    const cache = join(ctx.dir, 'cli-cache');
    const env = { ...ctx.env(), XDG_CACHE_HOME: cache };
    const input = join(ctx.dir, 'paced.csv');
    writeFileSync(input, stringify([CLIENT_HEADER, ...validRows(600)]));
    const first = await runCli(['import', input, '--json', '--quiet'], { env, timeoutMs: 120_000 });
    expect(first.code, first.stderr).toBe(0);
    const before = JSON.parse(first.stdout).concurrency;
    expect(before.start).toBe(8);
    const memory = paceMemoryFor(ctx.sandbox.url, { XDG_CACHE_HOME: cache });
    const remembered = recall(memory, 'import');
    expect(remembered?.settled).toBe(before.settled);
    expect(statSync(memory.path).mode & 0o777).toBe(0o600);

    const again = join(ctx.dir, 'again.csv');
    writeFileSync(again, stringify([CLIENT_HEADER, ...validRows(20, 5000)]));
    const second = await runCli(['import', again, '--json', '--quiet'], { env });
    expect(second.code, second.stderr).toBe(0);
    expect(JSON.parse(second.stdout).concurrency.start).toBe(Math.max(8, Math.floor(before.settled / 2)));
    // Too short a run to say where it settles: the memory stays as it was.
    expect(recall(memory, 'import')).toEqual(remembered);

    const pinned = join(ctx.dir, 'pinned.csv');
    writeFileSync(pinned, stringify([CLIENT_HEADER, ...validRows(600, 9000)]));
    const fixed = await runCli(['import', pinned, '--concurrency', '4', '--json', '--quiet'], { env, timeoutMs: 120_000 });
    expect(fixed.code, fixed.stderr).toBe(0);
    expect(JSON.parse(fixed.stdout).concurrency).toEqual({ mode: 'fixed', current: 4, settled: 4, max: 4 });
    expect(recall(memory, 'import')).toEqual(remembered);
    expect(readdirSync(join(cache, 'ccs-bulk')).filter((name) => name.startsWith('pace-'))).toHaveLength(1);
  }, 240_000);

  it("the export's prefetch remembers too: a second export starts at half of where the first settled; paceMemory: false leaves none", async () => {
    const sandbox = await startTestSandbox({ latencyMs: 20, seed: 6000, verifySignatures: false });
    const service = createServiceClient({ baseUrl: sandbox.url, token: sandbox.token });
    const memory = paceMemoryFor(sandbox.url, { XDG_CACHE_HOME: join(ctx.dir, 'export-cache') });
    try {
      // 600 pages of 10: long enough to be worth remembering.
      const first = await exportClients({ service, out: join(ctx.dir, 'first-export.csv'), pageSize: 10, paceMemory: memory });
      expect(first.prefetch.start).toBe(EXPORT_DEFAULTS.startPrefetch);
      const remembered = recall(memory, 'export');
      expect(remembered?.settled).toBe(first.prefetch.settled);
      expect(statSync(memory.path).mode & 0o777).toBe(0o600);
      const second = await exportClients({ service, out: join(ctx.dir, 'second-export.csv'), pageSize: 10, paceMemory: memory });
      expect(second.prefetch.start).toBe(rememberedStart(remembered, EXPORT_DEFAULTS.startPrefetch, second.prefetch.max));
      // The pages ahead it took the first export seconds to reach: the second starts past its usual start.
      expect(second.prefetch.start).toBeGreaterThan(EXPORT_DEFAULTS.startPrefetch);
      const none = paceMemoryFor(sandbox.url, { XDG_CACHE_HOME: join(ctx.dir, 'no-export-cache') });
      await exportClients({ service, out: join(ctx.dir, 'third-export.csv'), pageSize: 10, paceMemory: false });
      expect(recall(none, 'export')).toBeUndefined();
    } finally {
      await service.close();
      await sandbox.close();
    }
  }, 120_000);
});
