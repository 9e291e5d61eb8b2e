/**
 * Runs the hostile-input manifest (fixtures/input/hostile/manifest.json) through the real CLI
 * against a sandbox: each case ends with its exit code and message, in bounded time, under
 * RSS_LIMIT_MIB, without a stack trace, and sends exactly its valid rows.
 */
import { chownSync, copyFileSync, existsSync, readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, expect, it } from 'vitest';
import { generators } from './hostile.generate.js';
import { RSS_LIMIT_MIB, removeUserClis, runCliMeasured } from './hostile.helpers.js';
import { makeTempDir, type SandboxContext } from './helpers.js';

export interface HostileCase {
  file: string;
  exit: number;
  message: string;
  /** rows the run sends (each a valid row); nothing else may reach the service */
  created: number;
  generate?: string;
  xlsx?: boolean;
  /** why the case waits on a reader change (it runs with the xlsx cases until then) */
  pending?: string;
}

export const MANIFEST = new URL('../fixtures/input/hostile/manifest.json', import.meta.url);

export function hostileCases(filter: (entry: HostileCase) => boolean): HostileCase[] {
  return (JSON.parse(readFileSync(MANIFEST, 'utf8')) as { cases: HostileCase[] }).cases.filter(filter);
}

/** Registers one test per case; a table of exit codes, times and peak RSS is printed at the end. */
export function testHostileCases(ctx: SandboxContext, cases: HostileCase[], timeoutMs = 90_000): void {
  const figures: string[] = [];
  let temp: Awaited<ReturnType<typeof makeTempDir>> | undefined;
  afterAll(async () => {
    if (figures.length > 0) console.log(`hostile inputs (exit, seconds, peak RSS MiB):\n${figures.join('\n')}`);
    await temp?.cleanup();
    removeUserClis();
  });

  it.for(cases)('$file → exit $exit', { timeout: timeoutMs + 30_000 }, async (entry, test) => {
    temp ??= await makeTempDir();
    const dir = join(temp.dir, entry.file.replace(/\W/g, '_'));
    await mkdir(dir, { mode: 0o777 });
    const generated = entry.generate
      ? generators[entry.generate]!(dir, entry.file)
      : { path: new URL(`../fixtures/input/hostile/${entry.file}`, import.meta.url).pathname };
    if (generated.skip !== undefined) {
      console.log(`${entry.file} skipped: ${generated.skip}`);
      test.skip(generated.skip);
      return;
    }
    // Next to the input when it was made for another user (their dir is the one they may write).
    const outDir = generated.uid !== undefined ? dirname(generated.path) : dir;
    const results = join(outDir, 'results.csv');
    const failed = join(outDir, 'failed.csv');
    const env = ctx.env();
    if (generated.uid !== undefined) {
      // That user must be able to read the signing key: a copy of their own.
      env.CCS_SIGNING_KEY_FILE = join(outDir, 'private.pem');
      copyFileSync(ctx.keyFile, env.CCS_SIGNING_KEY_FILE);
      chownSync(env.CCS_SIGNING_KEY_FILE, generated.uid, generated.gid ?? generated.uid);
    }
    const before = { ...ctx.sandbox.stats };
    let run;
    try {
      run = await runCliMeasured(['import', generated.path, '--results', results, '--failed', failed, '--concurrency', '4'], {
        env,
        timeoutMs,
        ...(generated.uid !== undefined && { uid: generated.uid, gid: generated.gid, cwd: outDir }),
        ...(generated.bin !== undefined && { bin: generated.bin }),
      });
    } finally {
      generated.cleanup?.();
    }
    figures.push(`  ${entry.file.padEnd(42)} ${run.code}  ${(run.elapsedMs / 1000).toFixed(1).padStart(5)} s  ${run.peakRssMiB.toFixed(0).padStart(4)}`);
    expect(run.signal, `killed after ${timeoutMs} ms`).toBeNull();
    expect(run.code, run.stderr).toBe(entry.exit);
    // One sandbox serves the whole corpus: a row another file already sent is `existing` (replayed).
    const created = /^(\d+) created$/.exec(entry.message);
    if (created) expect(createdOrExisting(run.stderr), run.stderr).toBe(Number(created[1]));
    else expect(run.stderr).toContain(entry.message);
    expect(run.stderr).not.toContain('internal error');
    expect(run.stderr).not.toMatch(/\n\s+at /);
    expect(run.peakRssMiB).toBeLessThan(RSS_LIMIT_MIB);
    // Only valid rows reach the service: one Create Client each (no faults are injected here),
    // every one a client made or replayed; a row whose person the service held is not sent.
    const { stats } = ctx.sandbox;
    const posts = stats.requests - stats.reads - (before.requests - before.reads);
    expect(posts).toBe(stats.creates + stats.replays - before.creates - before.replays);
    expect(posts).toBeLessThanOrEqual(entry.created);
    for (const output of [results, failed]) {
      if (!existsSync(output)) continue;
      const cells = (parse(readFileSync(output), { relax_column_count: true }) as string[][]).flat();
      // One assertion over all cells: a file of 20,000 rows made one expect per cell cost seconds.
      expect(cells.filter((cell) => /^[=+\-@\t\r]/.test(cell))).toEqual([]);
    }
  });
}

/** `N created` of the summary, plus its `M existing` (clients the service held before the run). */
function createdOrExisting(stderr: string): number | undefined {
  const match = /(\d+) created(?:, (\d+) existing)?/.exec(stderr);
  return match ? Number(match[1]) + Number(match[2] ?? 0) : undefined;
}
