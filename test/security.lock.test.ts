/**
 * A lock file is believed only when ccs-bulk could have written it: anything else found at
 * `<file>.lock` (out of shape, a link, a pipe, too long) is taken over with a note, so a file
 * planted there cannot stop every later run. So is another user's lock in a folder others can
 * write that cannot be checked against that user. A well-formed lock of a run on another host,
 * of the running user, still holds.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, lstatSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { dirname, join } from 'node:path';
import { stringify } from 'csv-stringify/sync';
import { afterAll, describe, expect, it } from 'vitest';
import { LockedError, lockFile } from '../src/infra/lock.js';
import { CLIENT_HEADER, runCliInProcess, useSandbox, validRows } from './helpers.js';
import { cliForUser, removeUserClis } from './hostile.helpers.js';

const ctx = useSandbox();
afterAll(() => removeUserClis());

const SINCE = '2024-05-17T03:15:00.000Z';
const WELL_FORMED = { pid: 4242, host: 'build-7.example', since: SINCE, nonce: '5eed5eed5eed5eed' };

let folders = 0;
/** A fresh folder (0700 unless told), and a target in it. */
function place(mode = 0o700): { folder: string; target: string } {
  folders++;
  const folder = join(ctx.dir, `locks-${folders}`);
  mkdirSync(folder);
  chmodSync(folder, mode);
  return { folder, target: join(folder, 'clients.results.csv') };
}

/** lockFile takes the lock over: it is now this process's, and says why the old one was not believed. */
function expectTakenOver(target: string, why: string): void {
  const lock = lockFile(target);
  try {
    expect(lock.replaced).toBe(why);
    expect(JSON.parse(readFileSync(`${target}.lock`, 'utf8')).nonce).toBe(lock.holder.nonce);
  } finally {
    lock.release();
  }
  expect(existsSync(`${target}.lock`)).toBe(false);
}

function refusal(target: string): LockedError {
  try {
    lockFile(target).release();
  } catch (error) {
    if (error instanceof LockedError) return error;
    throw error;
  }
  throw new Error(`${target} was locked`);
}

describe('a lock file that ccs-bulk could not have written', () => {
  const huge = JSON.stringify({ ...WELL_FORMED, padding: 'x'.repeat(5000) });
  it.for([
    { found: 'text', content: 'garbage', why: 'not JSON' },
    { found: 'an empty file', content: '', why: 'not JSON' },
    { found: 'an array', content: '[1,2]', why: 'not a JSON object' },
    { found: 'a pid as text', content: JSON.stringify({ ...WELL_FORMED, pid: '4242' }), why: 'its pid is not a positive whole number' },
    { found: 'pid 0', content: JSON.stringify({ ...WELL_FORMED, pid: 0 }), why: 'its pid is not a positive whole number' },
    { found: 'pid -1', content: JSON.stringify({ ...WELL_FORMED, pid: -1 }), why: 'its pid is not a positive whole number' },
    { found: 'pid 1.5', content: JSON.stringify({ ...WELL_FORMED, pid: 1.5 }), why: 'its pid is not a positive whole number' },
    { found: 'a host with escapes', content: JSON.stringify({ ...WELL_FORMED, host: 'evil\u001b[2J\u001b[31m' }), why: 'its host is not a host name' },
    { found: 'a host with a space', content: JSON.stringify({ ...WELL_FORMED, host: 'two words' }), why: 'its host is not a host name' },
    { found: 'an empty host', content: JSON.stringify({ ...WELL_FORMED, host: '' }), why: 'its host is not a host name' },
    { found: 'a time in words', content: JSON.stringify({ ...WELL_FORMED, since: 'then' }), why: 'its time is not an ISO date' },
    { found: 'a time out of range', content: JSON.stringify({ ...WELL_FORMED, since: '2024-13-45T99:99:99Z' }), why: 'its time is not an ISO date' },
    { found: 'a nonce with a bidi override', content: JSON.stringify({ ...WELL_FORMED, nonce: 'x\u202ey' }), why: 'its nonce is out of shape' },
    { found: 'a boot id with a space', content: JSON.stringify({ ...WELL_FORMED, boot: 'a b' }), why: 'its boot id is out of shape' },
    { found: 'a start time not a number', content: JSON.stringify({ ...WELL_FORMED, start: '12x' }), why: 'its start time is out of shape' },
    { found: 'a lock 5 kB long', content: huge, why: `${huge.length} bytes long` },
  ])('$found is taken over: $why', ({ content, why }) => {
    const { target } = place();
    writeFileSync(`${target}.lock`, content);
    expectTakenOver(target, `it is not a ccs-bulk lock (${why})`);
  });

  it('a symbolic link (to /dev/zero) and a named pipe: taken over at once, neither read', () => {
    const { target } = place();
    symlinkSync('/dev/zero', `${target}.lock`);
    expectTakenOver(target, 'it is not a ccs-bulk lock (a symbolic link)');
    expect(lstatSync('/dev/zero').isCharacterDevice()).toBe(true);
    // Opened for reading, a pipe with no writer would wait for ever.
    const made = spawnSync('mkfifo', [`${target}.lock`]);
    expect(made.status, String(made.stderr)).toBe(0);
    expectTakenOver(target, 'it is not a ccs-bulk lock (not a regular file)');
  });

  it('one that cannot be removed (a folder): refused, saying why and what to do', () => {
    const { target } = place();
    mkdirSync(`${target}.lock`);
    const error = refusal(target);
    expect(error.reason).toBe('not_removable');
    expect(error.message).toBe(
      `${target}.lock cannot be taken over: it is not a ccs-bulk lock (not a regular file), but it cannot be removed (EISDIR); ` +
        'name another file, or have its owner or an administrator remove it',
    );
  });

  it('a well-formed lock of a run on another host still holds, with fields this version does not know', () => {
    const { target } = place();
    writeFileSync(`${target}.lock`, JSON.stringify({ ...WELL_FORMED, boot: 'b00t-1d', start: '123', version: 2 }));
    const error = refusal(target);
    expect(error.reason).toBe('other_host');
    expect(error.message).toBe(`it is in use by a ccs-bulk run on another machine (pid 4242 on build-7.example, since ${SINCE}); once that run is over, remove ${target}.lock`);
  });

  it('the import takes a planted lock over, says so on stderr (not with --quiet) and in the log, and runs', async () => {
    const { folder, target } = place();
    const input = join(folder, 'clients.csv');
    await writeFile(input, stringify([CLIENT_HEADER, ...validRows(3, 7000)]));
    const log = join(folder, 'run.log');
    for (const quiet of [false, true]) {
      writeFileSync(`${target}.lock`, JSON.stringify({ ...WELL_FORMED, host: 'evil\u001b[2J' }));
      const run = await runCliInProcess(['import', input, '--results', target, '--log-file', log, '--overwrite', ...(quiet ? ['--quiet'] : [])], {
        env: ctx.env(),
      });
      expect(run.code, run.stderr).toBe(0);
      const note = `ccs-bulk: took over ${target}.lock: it is not a ccs-bulk lock (its host is not a host name)\n`;
      if (quiet) expect(run.stderr).toBe('');
      else expect(run.stderr).toContain(note);
      expect(existsSync(`${target}.lock`)).toBe(false);
    }
    const events = (await readFile(log, 'utf8')).trim().split('\n').map((line) => JSON.parse(line));
    expect(events.filter((event) => event.event === 'lock_replaced')).toEqual([
      expect.objectContaining({ lock: `${target}.lock`, why: 'it is not a ccs-bulk lock (its host is not a host name)' }),
      expect.objectContaining({ lock: `${target}.lock`, why: 'it is not a ccs-bulk lock (its host is not a host name)' }),
    ]);
  });

  it('the export takes a planted lock on --out over too', async () => {
    const { folder } = place();
    const out = join(folder, 'all.csv');
    writeFileSync(`${out}.lock`, 'planted');
    const run = await runCliInProcess(['export', '--out', out], { env: ctx.env() });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain(`ccs-bulk: took over ${out}.lock: it is not a ccs-bulk lock (not JSON)\n`);
    expect(existsSync(out)).toBe(true);
  });
});

/**
 * Another user's file needs a second user: the test process makes one with chown, which only
 * root may do. Run as another user, a lock of the test's own user is the foreign one.
 */
const OTHER = 65534;
const asRoot = process.getuid?.() === 0;

describe("another user's lock in a folder others can write", () => {
  it('naming another host: believed in a private folder, taken over in a shared one', () => {
    const lock = JSON.stringify(WELL_FORMED);
    const closed = place(0o700);
    writeFileSync(`${closed.target}.lock`, lock);
    if (asRoot) chownSync(`${closed.target}.lock`, OTHER, OTHER);
    expect(refusal(closed.target).reason).toBe('other_host');

    const shared = place(0o777);
    writeFileSync(`${shared.target}.lock`, lock);
    if (!asRoot) {
      // The running user's own lock: believed anywhere.
      expect(refusal(shared.target).reason).toBe('other_host');
      return;
    }
    chownSync(`${shared.target}.lock`, OTHER, OTHER);
    expectTakenOver(
      shared.target,
      `it names a run on build-7.example, which cannot be checked from here, and belongs to uid ${OTHER}, not to this user, in a folder other users can write`,
    );
  });

  it("naming a pid of this host: believed when it is that user's process, taken over when it is not", async () => {
    const { target } = place(0o777);
    const owner = asRoot ? OTHER : process.getuid!();
    // A live process of the lock's owner: a run of theirs, as far as anyone here can tell.
    const theirs: ChildProcess = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], {
      stdio: 'ignore',
      ...(asRoot && { uid: OTHER, gid: OTHER }),
    });
    try {
      await new Promise((resolve) => theirs.once('spawn', resolve));
      writeFileSync(`${target}.lock`, JSON.stringify({ ...WELL_FORMED, host: hostname(), pid: theirs.pid }));
      if (asRoot) chownSync(`${target}.lock`, owner, owner);
      expect(refusal(target).reason).toBe('held');
    } finally {
      theirs.kill();
    }
    if (!asRoot) return;
    // pid 1 runs as root, not as the lock's owner: whoever wrote the lock was not that process.
    writeFileSync(`${target}.lock`, JSON.stringify({ ...WELL_FORMED, host: hostname(), pid: 1 }));
    chownSync(`${target}.lock`, OTHER, OTHER);
    expectTakenOver(target, `it names pid 1, a process of uid 0, but belongs to uid ${OTHER}, in a folder other users can write`);
  });

  it('one that cannot be removed (a sticky folder, run as another user): refused, naming the owner', () => {
    if (!asRoot) return;
    const cli = cliForUser(OTHER, OTHER);
    expect('bin' in cli, 'skip' in cli ? cli.skip : '').toBe(true);
    if (!('bin' in cli)) return;
    const folder = join(cli.base, `sticky-${folders++}`);
    mkdirSync(folder);
    chmodSync(folder, 0o1777);
    const target = join(folder, 'clients.results.csv');
    writeFileSync(`${target}.lock`, 'planted by root');
    const script = `import(${JSON.stringify(join(dirname(cli.bin), 'infra', 'lock.js'))}).then((m) => { try { m.lockFile(process.argv[1]); } catch (e) { process.stdout.write(e.message); } })`;
    const run = spawnSync(process.execPath, ['-e', script, target], { uid: OTHER, gid: OTHER, encoding: 'utf8', cwd: folder });
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe(
      `${target}.lock cannot be taken over: it is not a ccs-bulk lock (not JSON), but it cannot be removed ` +
        "(EPERM: it belongs to uid 0, in a folder where only a file's owner may remove it); name another file, or have its owner or an administrator remove it",
    );
    expect(readFileSync(`${target}.lock`, 'utf8')).toBe('planted by root');
  });
});
