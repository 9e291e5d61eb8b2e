import { spawn } from 'node:child_process';
import { appendFile, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'csv-stringify/sync';
import { beforeAll, describe, expect, it } from 'vitest';
import { BIN, CLIENT_HEADER, readResults, runCliInProcess as runCli, useSandbox, validRows } from './helpers.js';

const ROWS = 150;
let input: string;

// One create in ten cut: some 15 of the 150, never none (at one in twenty, a run under load saw none).
const ctx = useSandbox({ latencyMs: 15, jitterMs: 10, resetRate: 0.1, retryAfterSeconds: 0 });

beforeAll(async () => {
  // Latency and cut connections make a run long enough to be killed mid-flight, with
  // clients created whose answers never arrived.
  input = join(ctx.dir, 'clients.csv');
  await writeFile(input, stringify([CLIENT_HEADER, ...validRows(ROWS)]));
});

/** Starts an import and SIGKILLs it once the results file holds `created` created rows. */
function killWhenCreated(args: string[], results: string, created: number): Promise<void> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: { ...process.env, ...ctx.env() },
      stdio: 'ignore',
    });
    const poll = setInterval(async () => {
      const text = await readFile(results, 'utf8').catch(() => '');
      if (text.split(',created,').length - 1 >= created) child.kill('SIGKILL');
    }, 10);
    child.on('close', () => {
      clearInterval(poll);
      resolve();
    });
  });
}

describe('kill -9 at random moments, then --resume', () => {
  it('ends with every row created exactly once and one created line per row', async () => {
    const results = join(ctx.dir, 'clients.results.csv');
    const args = ['import', input, '--results', results, '--resume', '--quiet'];
    // The last cut leaves at least 40 rows, so the final run still has rows to send on a fast machine.
    const cuts = [15, 45, 80].map((n) => n + Math.floor(Math.random() * 30));
    for (const created of cuts) await killWhenCreated(args, results, created);
    const beforeFinal = (await readResults(results)).filter((l) => l[1] === 'created').length;
    expect(beforeFinal).toBeGreaterThanOrEqual(cuts[2]!);
    expect(beforeFinal).toBeLessThan(ROWS);
    // A crash can also tear the last line: resume must drop it, not misread it.
    await appendFile(results, '999,created,cli_torn,201,1,ccsb_torn');
    const final = await runCli(args, { env: ctx.env() });
    expect(final.stderr).toBe('');
    expect(final.code).toBe(0);

    expect(ctx.sandbox.store.size).toBe(ROWS);
    const lines = await readResults(results);
    const created = lines.filter((l) => l[1] === 'created');
    expect(created).toHaveLength(ROWS);
    expect(new Set(created.map((l) => l[0])).size).toBe(ROWS);
    expect(new Set(created.map((l) => l[5])).size).toBe(ROWS);
    expect(lines.every((l) => l[1] === 'created')).toBe(true);
    for (const line of created) expect(ctx.sandbox.store.byIdempotencyKey(line[5]!)?.id).toBe(line[2]);
    // The cuts happened: some clients were created whose answers were lost, then replayed.
    expect(ctx.sandbox.stats.faults.reset).toBeGreaterThan(0);
    expect(ctx.sandbox.stats.replays).toBeGreaterThan(0);

    const again = await runCli([...args, '--json'], { env: ctx.env() });
    expect(JSON.parse(again.stdout).counts).toMatchObject({ skipped: ROWS, created: 0 });
    expect(ctx.sandbox.store.size).toBe(ROWS);
  });

  it('refuses to overwrite an existing results file without --resume or --overwrite', async () => {
    const results = join(ctx.dir, 'exists.results.csv');
    await writeFile(results, 'anything\n');
    const before = ctx.sandbox.stats.requests;
    const run = await runCli(['import', input, '--results', results], { env: ctx.env() });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`results file ${results} already exists`);
    expect(run.stderr).not.toMatch(/\n\s+at /);
    expect(ctx.sandbox.stats.requests).toBe(before);
    const foreign = await runCli(['import', input, '--results', results, '--resume'], {
      env: ctx.env(),
    });
    expect(foreign.code).toBe(2);
    expect(foreign.stderr).toContain('not a ccs-bulk results file');
  });
});
