/**
 * One review page per run: a run writing --report where an earlier run's page is keeps that page
 * under a dated name, marked as replaced, and writes its own at the end. A page never describes a
 * run other than the one it names; a run killed mid-way leaves no page claiming to be the latest.
 */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'csv-stringify/sync';
import { describe, expect, it } from 'vitest';
import { startGate } from './gate.helpers.js';
import { BIN, CLIENT_HEADER, runCliInProcess, until, useSandbox, validRows } from './helpers.js';

const ctx = useSandbox();

let cases = 0;
async function folderWith(rows: string[][]): Promise<string> {
  const folder = join(ctx.dir, `pages-${++cases}`);
  await mkdir(folder);
  writeFileSync(join(folder, 'c.csv'), stringify([CLIENT_HEADER, ...rows]));
  return folder;
}

const BANNER = 'This page describes an earlier run';
const kept = (folder: string) => readdirSync(folder).filter((name) => /^review\.\d{8}-\d{6}(-\d+)?\.html$/.test(name));

describe('one review page per run', () => {
  it("a resumed run keeps the earlier page under a dated name, marked as replaced, and writes its own", async () => {
    const folder = await folderWith(validRows(3, 7000));
    const at = { env: ctx.env(), cwd: folder };
    expect((await runCliInProcess(['import', 'c.csv', '--report', 'review.html', '--quiet'], at)).code).toBe(0);
    const first = readFileSync(join(folder, 'review.html'), 'utf8');
    expect(first).not.toContain(BANNER);

    const again = await runCliInProcess(['import', 'c.csv', '--resume', '--report', 'review.html'], at);
    expect(again.code, again.stderr).toBe(0);
    const [old] = kept(folder);
    expect(old).toBeDefined();
    expect(again.stderr).toContain(`report: the earlier run's page is kept as ${old}, marked as replaced`);
    const oldPage = readFileSync(join(folder, old!), 'utf8');
    expect(oldPage).toContain(BANNER);
    expect(oldPage).toContain('ccs-bulk status c.csv.results.csv');
    // The earlier page whole, the banner added.
    expect(oldPage.replace(/<div class="card" role="alert"[^\n]*\n/, '')).toBe(first);
    expect(statSync(join(folder, old!)).mode & 0o777).toBe(0o600);
    const latest = readFileSync(join(folder, 'review.html'), 'utf8');
    expect(latest).not.toContain(BANNER);
    expect(latest).toContain('<span class="n" data-count="skipped">3</span>');
  });

  it('a run killed mid-way leaves the earlier page marked and none under the name the latest page takes', async () => {
    const folder = await folderWith(validRows(30, 7100));
    expect((await runCliInProcess(['import', 'c.csv', '--report', 'review.html', '--quiet', '--max-errors', '1'], { env: ctx.env(), cwd: folder })).code).toBe(0);
    writeFileSync(join(folder, 'd.csv'), stringify([CLIENT_HEADER, ...validRows(30, 7200)]));
    const gate = await startGate(ctx.sandbox.url);
    try {
      gate.close(5);
      const child = spawn(process.execPath, [BIN, 'import', 'd.csv', '--report', 'review.html'], {
        cwd: folder,
        env: { ...process.env, ...ctx.env(), CCS_BASE_URL: gate.url },
      });
      child.stdout.resume();
      child.stderr.resume();
      const closed = new Promise<NodeJS.Signals | null>((resolve) => child.on('close', (_code, signal) => resolve(signal)));
      await until(() => gate.held > 0, 'a request held at the gate');
      // The run is under way: the earlier page is already aside, marked.
      expect(kept(folder)).toHaveLength(1);
      expect(readdirSync(folder)).not.toContain('review.html');
      child.kill('SIGKILL');
      expect(await closed).toBe('SIGKILL');
      gate.drop();
    } finally {
      await gate.stop();
    }
    expect(readdirSync(folder)).not.toContain('review.html');
    expect(readFileSync(join(folder, kept(folder)[0]!), 'utf8')).toContain(BANNER);
  });

  it("a file at --report that is not a ccs-bulk page is not moved (it is replaced at the end, as before)", async () => {
    const folder = await folderWith(validRows(2, 7300));
    writeFileSync(join(folder, 'review.html'), '<html><body>\nmy notes</body></html>');
    const run = await runCliInProcess(['import', 'c.csv', '--report', 'review.html'], { env: ctx.env(), cwd: folder });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).not.toContain("earlier run's page");
    expect(kept(folder)).toEqual([]);
  });
});
