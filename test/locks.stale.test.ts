/**
 * No stale locks: a run removes, in the folders it writes, the locks of this user's runs that
 * died on this machine, whatever file they were for (a killed report named by the minute leaves
 * its lock under a name no later run takes), and says so on stderr and in the log. A live run's
 * lock, another host's, another user's, a link and a file that is not a lock stay untouched.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { chownSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'csv-stringify/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, CLIENT_HEADER, runCliInProcess, useSandbox, validRows } from './helpers.js';

const ctx = useSandbox({ seed: 20 });
const isRoot = process.getuid?.() === 0;

/** A service that accepts connections and never answers: a run waiting on it holds its locks. */
let silent: Server;
let silentUrl: string;
const sockets = new Set<Socket>();
beforeAll(async () => {
  silent = createServer(() => undefined);
  silent.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  silentUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
});
afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise((resolve) => silent?.close(resolve));
});

/** A pid that was in use a moment ago and is not any more. */
const deadPid = (): number => spawnSync(process.execPath, ['-e', '0']).pid!;

/** A lock as ccs-bulk writes one (lock.ts's holder), for `pid` on `host`. */
function lockText(pid: number, host = hostname()): string {
  const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  return `${JSON.stringify({ pid, host, since: new Date().toISOString(), boot, nonce: 'a1b2c3d4e5f60718' })}\n`;
}

const untilTrue = async (check: () => boolean, what: string): Promise<void> => {
  const deadline = Date.now() + 30_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
};

const events = (log: string) => readFileSync(log, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);

describe("a killed report run's lock under a name no later run takes", () => {
  it('the next night, writing another name in the folder, removes it and says so; the report is written', async () => {
    const dir = join(ctx.dir, 'nightly');
    const reports = join(dir, 'reports');
    mkdirSync(dir);
    // Night 1: the export waits on a service that never answers, holding the lock of its dated name.
    const killed: ChildProcess = spawn(
      process.execPath,
      [BIN, 'export', '--new-since-last', 'state/approved.json', '--status', 'approved', '--out', 'reports/approved-{datetime}.csv', '--quiet'],
      { cwd: dir, env: { ...process.env, ...ctx.env(), CCS_BASE_URL: silentUrl }, stdio: 'ignore' },
    );
    const closed = new Promise((resolve) => killed.on('close', resolve));
    const lockOf = () => (existsSync(reports) ? readdirSync(reports).find((name) => /^approved-.*Z\.csv\.lock$/.test(name)) : undefined);
    await untilTrue(() => lockOf() !== undefined, "the first night's lock");
    const name = lockOf()!;
    const left = join(reports, name);
    killed.kill('SIGKILL');
    await closed;
    expect(JSON.parse(readFileSync(left, 'utf8')).pid).toBe(killed.pid);

    // Night 2: another name (the test's clock is the same day: a fixed name stands in for the next date).
    const log = join(dir, 'ccs-bulk.log');
    const run = await runCliInProcess(
      ['export', '--new-since-last', 'state/approved.json', '--status', 'approved', '--out', 'reports/approved-night2.csv', '--log-file', log],
      { cwd: dir, env: ctx.env() },
    );
    expect(run.code, run.stderr).toBe(0);
    expect(existsSync(left)).toBe(false);
    // Named as the run names its output: relative to where it runs.
    expect(run.stderr).toContain(`ccs-bulk: removed a lock left by a run that died: ${join('reports', name)}\n`);
    expect(events(log).find((event) => event.event === 'stale_locks_removed')).toMatchObject({ locks: [join('reports', name)] });
    // The state's own lock (the same name every night) was taken over as before; none is left.
    expect(readdirSync(reports).filter((name) => name.endsWith('.lock'))).toEqual([]);
    expect(existsSync(join(dir, 'state', 'approved.json.lock'))).toBe(false);
    expect(existsSync(join(reports, 'approved-night2.csv'))).toBe(true);
  }, 60_000);
});

describe('an import sweeps its results folder', () => {
  it("another results file's dead lock goes (said in the log); a live run's, another host's, a link and a non-lock stay", async () => {
    const dir = join(ctx.dir, 'results-folder');
    mkdirSync(dir);
    const input = join(dir, 'clients.csv');
    await writeFile(input, stringify([CLIENT_HEADER, ...validRows(3)]));
    const dead = join(dir, 'other.csv.results.csv.lock');
    writeFileSync(dead, lockText(deadPid()));
    // A live process of this user: its lock is held.
    const live = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    const liveLock = join(dir, 'live.csv.results.csv.lock');
    writeFileSync(liveLock, lockText(live.pid!));
    const remote = join(dir, 'remote.csv.results.csv.lock');
    writeFileSync(remote, lockText(deadPid(), 'build-host-7.example.com'));
    // A link named like a lock, to a dead run's lock elsewhere: never followed, never removed.
    const elsewhere = join(ctx.dir, 'elsewhere.lock');
    writeFileSync(elsewhere, lockText(deadPid()));
    const link = join(dir, 'linked.csv.lock');
    symlinkSync(elsewhere, link);
    const yarn = join(dir, 'yarn.lock');
    writeFileSync(yarn, '# THIS IS AN AUTOGENERATED FILE\n');
    const log = join(dir, 'import.log');
    try {
      const run = await runCliInProcess(['import', input, '--log-file', log, '--quiet'], { env: ctx.env() });
      expect(run.code, run.stderr).toBe(0);
      // --quiet: nothing on stderr; the log has it.
      expect(run.stderr).toBe('');
    } finally {
      live.kill();
    }
    expect(existsSync(dead)).toBe(false);
    expect(events(log).find((event) => event.event === 'stale_locks_removed')).toMatchObject({ locks: [dead] });
    for (const kept of [liveLock, remote, yarn]) expect(existsSync(kept), kept).toBe(true);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(existsSync(elsewhere)).toBe(true);
  });

  it("another user's dead lock in a shared folder stays (root: a second account's file)", async () => {
    if (!isRoot) {
      console.warn('locks.stale: not root: the lock of another account cannot be made here; CI runs this case as root');
      return;
    }
    const dir = join(ctx.dir, 'shared-folder');
    mkdirSync(dir, { mode: 0o1777 });
    const input = join(dir, 'clients.csv');
    await writeFile(input, stringify([CLIENT_HEADER, ...validRows(2, 500)]));
    const theirs = join(dir, 'theirs.csv.results.csv.lock');
    writeFileSync(theirs, lockText(deadPid()));
    chownSync(theirs, 65_534, 65_534);
    const run = await runCliInProcess(['import', input, '--quiet'], { env: ctx.env() });
    expect(run.code, run.stderr).toBe(0);
    expect(existsSync(theirs)).toBe(true);
  });
});
