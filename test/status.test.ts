/**
 * `ccs-bulk status`: for each results file in a folder, where its migration stands (finished,
 * stopped and why, killed, in progress), its rows by outcome, and the exact command to run
 * next, which works when it is run; --json gives scripts one shape; a path that does not exist
 * is exit 2.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'csv-stringify/sync';
import { describe, expect, it } from 'vitest';
import { startGate } from './gate.helpers.js';
import { BIN, CLIENT_HEADER, runCliInProcess, shellWords, startTestSandbox, until, useSandbox, validRows } from './helpers.js';

const ctx = useSandbox();

let folders = 0;
async function folderOf(files: Record<string, string[][]>): Promise<string> {
  const folder = join(ctx.dir, `migration-${++folders}`);
  await mkdir(folder);
  for (const [name, rows] of Object.entries(files)) await writeFile(join(folder, name), stringify([CLIENT_HEADER, ...rows]));
  return folder;
}

const INVALID = ['', 'not-an-email', 'DE', 'Street', 'EUR', '2024-05-17'];

interface Status {
  results: string;
  state: string;
  stop: { reason: string; message: string } | null;
  next: string | null;
  advice: string | null;
  counts: Record<string, number>;
  rowsLeft: number | null;
  [key: string]: unknown;
}

async function statusOf(args: string[], cwd?: string): Promise<Map<string, Status>> {
  const run = await runCliInProcess(['status', ...args, '--json'], cwd === undefined ? {} : { cwd });
  expect(run.code, run.stderr).toBe(0);
  const list = JSON.parse(run.stdout) as Status[];
  return new Map(list.map((status) => [status.results.split('/').at(-1)!, status]));
}

const createdLines = async (path: string) => (await readFile(path, 'utf8').catch(() => '')).split(',created,').length - 1;

function importChild(args: string[], cwd: string, baseUrl: string): { child: ChildProcess; closed: Promise<{ code: number | null; signal: NodeJS.Signals | null }> } {
  const child = spawn(process.execPath, [BIN, 'import', ...args], { cwd, env: { ...process.env, ...ctx.env(), CCS_BASE_URL: baseUrl } });
  child.stdout?.resume();
  child.stderr?.resume();
  const closed = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('close', (code, signal) => resolve({ code, signal })));
  return { child, closed };
}

describe('ccs-bulk status', () => {
  it('finished, stopped (a token refused), finished with rows to fix, a dry run and a backup: each with its state, rows and next command', async () => {
    const folder = await folderOf({
      'a.csv': validRows(3, 1000),
      'b.csv': validRows(10, 1100),
      'e.csv': [...validRows(3, 1200), INVALID],
      'f.csv': [...validRows(2, 1300), INVALID],
      'g.csv': validRows(2, 1400),
    });
    const at = { env: ctx.env(), cwd: folder };
    expect((await runCliInProcess(['import', 'a.csv', '--quiet'], at)).code).toBe(0);
    const refusing = await startTestSandbox({ authFailAfter: 3 });
    try {
      const run = await runCliInProcess(['import', 'b.csv', '--concurrency', '1'], { cwd: folder, env: { ...ctx.env(), CCS_BASE_URL: refusing.url, CCS_TOKEN: refusing.token } });
      expect(run.code).toBe(3);
      expect(readFileSync(join(folder, 'b.csv.results.csv.meta.json'), 'utf8')).not.toContain(refusing.token.slice('lk_sandbox_'.length));
    } finally {
      await refusing.close();
    }
    expect((await runCliInProcess(['import', 'e.csv', '--failed', 'e-fix.csv', '--quiet'], at)).code).toBe(1);
    expect((await runCliInProcess(['import', 'f.csv'], at)).code).toBe(1);
    expect((await runCliInProcess(['validate', 'g.csv'], { cwd: folder })).code).toBe(0);
    expect((await runCliInProcess(['import', 'a.csv', '--overwrite', '--quiet'], at)).code).toBe(0);

    const statuses = await statusOf([], folder);
    const backup = [...statuses.keys()].find((name) => name.includes('.bak.'));
    expect([...statuses.keys()].sort()).toEqual(
      ['a.csv.results.csv', backup, 'b.csv.results.csv', 'e.csv.results.csv', 'f.csv.results.csv', 'g.csv.results.csv'].sort(),
    );
    // Its rows are on the service since the first run: this one found them there (created or existing).
    expect(statuses.get('a.csv.results.csv')).toMatchObject({ state: 'finished', next: null, advice: null, rowsLeft: 0, rows: 3 });
    expect(statuses.get(backup!)).toMatchObject({ backup: true, state: 'finished', next: null, counts: { created: 3 } });
    expect(statuses.get('b.csv.results.csv')).toMatchObject({
      state: 'stopped',
      stop: { reason: 'auth' },
      counts: { created: 3, failed: 1, not_attempted: 6 },
      rowsLeft: 7,
      next: 'ccs-bulk import b.csv --concurrency 1 --resume',
    });
    expect(statuses.get('e.csv.results.csv')).toMatchObject({ state: 'finished', rowsLeft: 1, next: 'ccs-bulk import e-fix.csv' });
    expect(statuses.get('e.csv.results.csv')!.advice).toContain('they are in e-fix.csv');
    expect(statuses.get('f.csv.results.csv')).toMatchObject({ state: 'finished', rowsLeft: 1, next: 'ccs-bulk import f.csv --failed f.csv.failed.csv --resume' });
    // A clean dry run at the input's own results path: the import comes next (it replaces that file).
    expect(statuses.get('g.csv.results.csv')).toMatchObject({ writtenBy: 'validate', service: null, state: 'finished', counts: { valid: 2 }, next: 'ccs-bulk import g.csv' });

    // As a person reads it.
    const text = await runCliInProcess(['status'], { cwd: folder });
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^b\.csv\.results\.csv\n {2}state: {4}stopped: auth \(.+\)\n/m);
    expect(text.stdout).toContain('  rows:     3 created, 1 failed, 6 not attempted; 7 left\n');
    expect(text.stdout).toContain('  next:     ccs-bulk import b.csv --concurrency 1 --resume\n');
    expect(text.stdout).toMatch(/^a\.csv\.results\.csv\n {2}state: {4}finished\n(?: {2}(?!next).*\n)*(?:\n|$)/m);

    // From another folder, the command says where to run it.
    const elsewhere = await statusOf([folder]);
    expect(elsewhere.get('b.csv.results.csv')!.next).toBe(`cd ${folder} && ccs-bulk import b.csv --concurrency 1 --resume`);
  });

  it('killed (kill -9 mid-run), then in progress while a live run holds it: the next command continues it', async () => {
    const folder = await folderOf({ 'c.csv': validRows(30, 2000) });
    const results = join(folder, 'c.csv.results.csv');
    // Requests wait at a gate after the 12th (the first list the service's people): the kill
    // lands mid-run, with some clients created, on any machine.
    const gate = await startGate(ctx.sandbox.url);
    try {
      gate.close(12);
      const victim = importChild(['c.csv'], folder, gate.url);
      await until(async () => gate.held > 0 && (await createdLines(results)) > 0, 'a created line and a request held');
      victim.child.kill('SIGKILL');
      expect((await victim.closed).signal).toBe('SIGKILL');
      gate.drop();
      const before = await createdLines(results);

      const killed = (await statusOf(['c.csv'], folder)).get('c.csv.results.csv')!;
      expect(killed).toMatchObject({ state: 'killed', stop: null, finishedAt: null, rowsLeft: null, counts: { created: before }, next: 'ccs-bulk import c.csv --resume' });
      expect(killed.advice).toContain('killed');

      // The next command, run as printed, holds the file while it waits at the gate: in progress.
      gate.close(0);
      const [command, ...args] = shellWords(killed.next!);
      expect([command, args[0]]).toEqual(['ccs-bulk', 'import']);
      const resumed = importChild(args.slice(1), folder, gate.url);
      await until(() => gate.held > 0, 'the resumed run to send');
      const running = (await statusOf([folder])).get('c.csv.results.csv')!;
      expect(running).toMatchObject({ state: 'in_progress', heldBy: { pid: resumed.child.pid }, next: null });
      expect(running.advice).toContain(`pid ${resumed.child.pid}`);
      gate.open();
      expect((await resumed.closed).code).toBe(0);
    } finally {
      await gate.stop();
    }
    const done = (await statusOf([], folder)).get('c.csv.results.csv')!;
    expect(done).toMatchObject({ state: 'finished', counts: { created: 30 }, rowsLeft: 0, next: null, earlierRuns: 1 });
    expect(ctx.sandbox.store.size).toBeGreaterThanOrEqual(30);
  });

  it('--json: an array of objects of one shape, null where unknown', async () => {
    const folder = await folderOf({ 'h.csv': validRows(2, 3000) });
    expect((await runCliInProcess(['import', 'h.csv', '--quiet'], { env: ctx.env(), cwd: folder })).code).toBe(0);
    const run = await runCliInProcess(['status', folder, '--json']);
    expect(run.code).toBe(0);
    const list = JSON.parse(run.stdout) as Record<string, unknown>[];
    expect(list).toHaveLength(1);
    expect(Object.keys(list[0]!).sort()).toEqual(
      [
        'advice', 'backup', 'commandLine', 'counts', 'earlierRuns', 'finishedAt', 'heldBy', 'host', 'lastRow', 'next', 'results', 'rows',
        'rowsLeft', 'service', 'source', 'startedAt', 'state', 'stop', 'toolVersion', 'user', 'writtenBy',
      ].sort(),
    );
    expect(list[0]).toMatchObject({
      results: join(folder, 'h.csv.results.csv'),
      writtenBy: 'import',
      backup: false,
      source: { path: 'h.csv', size: expect.any(Number), mtime: expect.any(String), sha256: expect.stringMatching(/^[0-9a-f]{64}$/), now: 'unchanged' },
      service: ctx.sandbox.url,
      state: 'finished',
      stop: null,
      heldBy: null,
      user: { uid: expect.any(Number) },
      counts: { created: 2, failed: 0, not_attempted: 0 },
      rows: 2,
      lastRow: 2,
      rowsLeft: 0,
      next: null,
      advice: null,
      earlierRuns: 0,
    });
  });

  it('a path that does not exist is exit 2 (the others still shown); an input named shows its results; an empty folder says so', async () => {
    const folder = await folderOf({ 'k.csv': validRows(1, 4000), 'other.csv': validRows(1, 4100) });
    expect((await runCliInProcess(['import', 'k.csv', '--quiet'], { env: ctx.env(), cwd: folder })).code).toBe(0);
    expect((await runCliInProcess(['import', 'other.csv', '--quiet'], { env: ctx.env(), cwd: folder })).code).toBe(0);
    const missing = join(ctx.dir, 'no-such-folder');
    const run = await runCliInProcess(['status', folder, missing]);
    expect(run.code).toBe(2);
    expect(run.stdout).toContain(`${join(folder, 'k.csv.results.csv')}\n  state:    finished\n`);
    expect(run.stderr).toBe(`ccs-bulk: error: ${missing} does not exist [input_missing]\n`);

    const named = await statusOf([join(folder, 'k.csv')]);
    expect([...named.keys()]).toEqual(['k.csv.results.csv']);

    const empty = await folderOf({});
    const none = await runCliInProcess(['status', empty]);
    expect(none).toMatchObject({ code: 0, stdout: '' });
    expect(none.stderr).toContain('no results files in');
  });
});
