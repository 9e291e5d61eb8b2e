/**
 * One writer per output file: `<file>.lock`, created atomically (link(2) of a fully written
 * temp file, so a reader never sees a half-written lock) and holding who took it. A lock whose
 * holder is gone — its pid dead on this host, or the machine rebooted since — is taken over, so a
 * run after `kill -9` or a power loss just works. A holder on another host cannot be checked and
 * is never taken over: the message says which file to remove once that run is known to be gone.
 * Taking over goes through a short-lived `<file>.lock.takeover` (O_EXCL), so two runs that find
 * the same dead lock cannot both take it.
 */
import { randomBytes } from 'node:crypto';
import { linkSync, openSync, closeSync, readFileSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';

export interface LockHolder {
  pid: number;
  host: string;
  /** ISO time the lock was taken */
  since: string;
  /** Linux: the boot id, and the process's start time in clock ticks since boot (pid reuse). */
  boot?: string | undefined;
  start?: string | undefined;
  nonce: string;
}

export interface FileLock {
  /** The file this lock is for; `path` is its `.lock`. */
  readonly target: string;
  readonly path: string;
  readonly holder: LockHolder;
  /** The dead run whose lock this one replaced, if any. */
  readonly tookOver: LockHolder | undefined;
  /** Removes the lock if it is still this one; safe to call more than once. */
  release(): void;
}

/** The file is held by a live run (or one on another host): the caller refuses to start. */
export class LockedError extends Error {
  constructor(
    readonly lockPath: string,
    readonly holder: LockHolder | undefined,
    readonly reason: 'held' | 'other_host' | 'unreadable',
  ) {
    super(describeHolder(lockPath, holder, reason));
    this.name = 'LockedError';
  }
}

/** Held locks, removed on any exit, including process.exit() from a second Ctrl-C. */
const held = new Set<FileLock>();
let exitHook = false;

/** A lock is only ever held for microseconds in takeover: one older than this was left by a crash. */
const TAKEOVER_STALE_MS = 10_000;

export function lockFile(target: string): FileLock {
  const path = `${target}.lock`;
  const holder = describeSelf();
  const temp = `${path}.${process.pid}.${holder.nonce}.tmp`;
  writeNew(temp, `${JSON.stringify(holder)}\n`);
  let tookOver: LockHolder | undefined;
  try {
    for (let attempt = 0; ; attempt++) {
      if (tryLink(temp, path)) break;
      const current = readHolder(path);
      if (current === 'gone') continue;
      if (current === 'unreadable') throw new LockedError(path, undefined, 'unreadable');
      const state = holderState(current);
      if (state !== 'dead') throw new LockedError(path, current, state === 'alive' ? 'held' : 'other_host');
      takeOver(path, current);
      tookOver = current;
      if (attempt > 100) throw new LockedError(path, current, 'held');
    }
  } finally {
    unlinkQuietly(temp);
  }
  const lock: FileLock = {
    target,
    path,
    holder,
    tookOver,
    release() {
      if (!held.delete(lock)) return;
      const current = readHolder(path);
      if (typeof current === 'object' && current.nonce === holder.nonce) unlinkQuietly(path);
    },
  };
  held.add(lock);
  if (!exitHook) {
    exitHook = true;
    process.on('exit', () => {
      for (const lock of [...held]) lock.release();
    });
  }
  return lock;
}

/** Removes a dead holder's lock, unless another run replaced it meanwhile. */
function takeOver(path: string, dead: LockHolder): void {
  const mutex = `${path}.takeover`;
  let fd: number;
  try {
    fd = openSync(mutex, 'wx', 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    // Another run is taking over right now (microseconds), or crashed doing so long ago.
    const age = ageMs(mutex);
    if (age !== undefined && age > TAKEOVER_STALE_MS) unlinkQuietly(mutex);
    else sleepMs(5);
    return;
  }
  try {
    const current = readHolder(path);
    if (typeof current === 'object' && current.nonce === dead.nonce) unlinkQuietly(path);
  } finally {
    closeSync(fd);
    unlinkQuietly(mutex);
  }
}

function tryLink(from: string, to: string): boolean {
  try {
    linkSync(from, to);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
}

function writeNew(path: string, text: string): void {
  const fd = openSync(path, 'wx', 0o600);
  try {
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
}

function readHolder(path: string): LockHolder | 'gone' | 'unreadable' {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'gone' : 'unreadable';
  }
  try {
    const value = JSON.parse(text) as Partial<LockHolder>;
    if (typeof value.pid === 'number' && typeof value.host === 'string' && typeof value.nonce === 'string') {
      return { since: '?', ...value } as LockHolder;
    }
  } catch {
    // not ours: reported as unreadable
  }
  return 'unreadable';
}

/** alive, dead (safe to take over), or unknown (another host: cannot be checked from here). */
export function holderState(holder: LockHolder): 'alive' | 'dead' | 'unknown' {
  if (holder.host !== hostname()) return 'unknown';
  const self = describeSelf();
  // Rebooted since (power loss): every pid on the old boot is gone.
  if (holder.boot !== undefined && self.boot !== undefined && holder.boot !== self.boot) return 'dead';
  if (!pidAlive(holder.pid)) return 'dead';
  // The pid is in use: by the holder, unless it was reused by a process started later.
  if (holder.start !== undefined) {
    const start = processStart(holder.pid);
    if (start !== undefined && start !== holder.start) return 'dead';
  }
  return 'alive';
}

/** Whether a process with this pid runs on this host (EPERM: it does, as another user). */
export function pidAlive(pid: number): boolean {
  // 0 and negative pids name process groups, not a process.
  if (!Number.isSafeInteger(pid) || pid <= 0) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

/**
 * Whether a run other than this process may be writing `target`: its lock is held by a live
 * run, a run on another host, or is not a lock we can read. No lock, or a dead holder's: no.
 */
export function heldByOther(target: string): boolean {
  const current = readHolder(`${target}.lock`);
  if (current === 'gone') return false;
  if (current === 'unreadable') return true;
  if (current.pid === process.pid && current.host === hostname()) return false;
  return holderState(current) !== 'dead';
}

function describeSelf(): LockHolder {
  return {
    pid: process.pid,
    host: hostname(),
    since: new Date().toISOString(),
    boot: readText('/proc/sys/kernel/random/boot_id'),
    start: processStart(process.pid),
    nonce: randomBytes(8).toString('hex'),
  };
}

/** Field 22 of /proc/PID/stat (after the parenthesised command name, which may hold spaces). */
function processStart(pid: number): string | undefined {
  const stat = readText(`/proc/${pid}/stat`);
  if (stat === undefined) return undefined;
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return undefined;
  }
}

function ageMs(path: string): number | undefined {
  try {
    return Date.now() - statSync(path).mtimeMs;
  } catch {
    return undefined;
  }
}

function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // already gone
  }
}

function sleepMs(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

function describeHolder(path: string, holder: LockHolder | undefined, reason: LockedError['reason']): string {
  if (reason === 'unreadable' || holder === undefined) {
    return `it is locked by ${path}, which is not a ccs-bulk lock file; remove it if no run is using the file`;
  }
  const who = `pid ${holder.pid} on ${holder.host}, since ${holder.since}`;
  if (reason === 'other_host') {
    return `it is in use by a ccs-bulk run on another machine (${who}); once that run is over, remove ${path}`;
  }
  return `it is in use by another ccs-bulk run (${who}); wait for it to finish or stop it`;
}
