/**
 * One writer per output file: `<file>.lock`, created atomically (link(2) of a fully written
 * temp file, so a reader never sees a half-written lock) and holding who took it. A lock whose
 * holder is gone — its pid dead on this host, or the machine rebooted since — is taken over, so a
 * run after `kill -9` or a power loss just works. A holder on another host cannot be checked and
 * is never taken over: the message says which file to remove once that run is known to be gone.
 * Taking over goes through a short-lived `<file>.lock.takeover` (O_EXCL), so two runs that find
 * the same dead lock cannot both take it.
 *
 * A run also removes the dead locks of other files in the folders it writes (sweepDeadLocks): a
 * report named by the minute leaves its lock under a name no later run takes.
 *
 * Only a lock ccs-bulk could have written is believed: a file that is not one (not JSON, a
 * field out of shape, a link, a pipe, too long, unreadable) holds no run and is taken over,
 * with a note. So is a lock, in a folder other users can write, that belongs to another user and
 * cannot be checked against that user: one naming another host, or a pid of this host that is
 * not that user's process. Anyone able to write the folder could have planted it, and
 * believing it would stop every later run for good.
 */
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  fstatSync,
  linkSync,
  lstatSync,
  openSync,
  readFileSync,
  readdirSync,
  readSync,
  type Stats,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { hostname } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { printable } from './printable.js';

/** Who holds an output file's lock: the run that took it, as its `.lock` file records it. */
export interface LockHolder {
  /** The holding run's process id. */
  pid: number;
  /** The host name of the machine the run was on. */
  host: string;
  /** ISO time the lock was taken */
  since: string;
  /** Linux: the boot id, and the process's start time in clock ticks since boot (pid reuse). */
  boot?: string | undefined;
  /** Linux: the process's start time in clock ticks since boot, so a reused pid is not taken for the run. */
  start?: string | undefined;
  /** A random token the run chose, so it removes only its own lock. */
  nonce: string;
}

export interface FileLock {
  /** The file this lock is for; `path` is its `.lock`. */
  readonly target: string;
  readonly path: string;
  readonly holder: LockHolder;
  /** The dead run whose lock this one replaced, if any. */
  readonly tookOver: LockHolder | undefined;
  /** Why the file found at `path` was not believed and was replaced, if it was: for a note. */
  readonly replaced: string | undefined;
  /** Removes the lock if it is still this one; safe to call more than once. */
  release(): void;
}

/** The file is held by a live run (or one on another host), or a lock not believed cannot be removed. */
export class LockedError extends Error {
  constructor(
    readonly lockPath: string,
    readonly holder: LockHolder | undefined,
    readonly reason: 'held' | 'other_host' | 'not_removable',
    /** not_removable: why the lock was not believed, and why it could not be removed. */
    readonly detail?: string,
  ) {
    super(describeHolder(lockPath, holder, reason, detail));
    this.name = 'LockedError';
  }
}

/** Held locks, removed on any exit, including process.exit() from a second Ctrl-C. */
const held = new Set<FileLock>();
let exitHook = false;

/** A lock is only ever held for microseconds in takeover: one older than this was left by a crash. */
const TAKEOVER_STALE_MS = 10_000;

/** Ours are ~200 bytes: anything much longer was not written by ccs-bulk (and is not read whole). */
const MAX_LOCK_BYTES = 4096;

export function lockFile(target: string): FileLock {
  const path = `${target}.lock`;
  const holder = describeSelf();
  const temp = `${path}.${process.pid}.${holder.nonce}.tmp`;
  // Readable by all (nothing secret in it): another user's run sharing the folder can check it.
  writeNew(temp, `${JSON.stringify(holder)}\n`);
  let tookOver: LockHolder | undefined;
  let replaced: string | undefined;
  try {
    for (let attempt = 0; ; attempt++) {
      if (tryLink(temp, path)) break;
      const found = readLock(path);
      if (found.kind === 'gone') continue;
      const verdict = judge(path, found);
      if (verdict.kind !== 'take') throw new LockedError(path, verdict.holder, verdict.kind);
      const outcome = takeOver(path, found);
      if (typeof outcome === 'object') {
        const why = verdict.why ?? `it was left by pid ${verdict.holder?.pid ?? '?'}, which is gone`;
        throw new LockedError(path, verdict.holder, 'not_removable', `${why}, but it cannot be removed (${outcome.stuck})`);
      }
      if (outcome === 'removed' && verdict.why !== undefined) replaced = verdict.why;
      else if (outcome === 'removed') tookOver = verdict.holder;
      if (attempt > 100) throw new LockedError(path, verdict.holder, 'held');
    }
  } finally {
    unlinkQuietly(temp);
  }
  const lock: FileLock = {
    target,
    path,
    holder,
    tookOver,
    replaced,
    release() {
      if (!held.delete(lock)) return;
      const current = readLock(path);
      if (current.kind === 'lock' && current.holder.nonce === holder.nonce) unlinkQuietly(path);
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

/** What a lock file found at the path is: a lock ccs-bulk could have written, or a file that is not one. */
type Found =
  | { kind: 'gone' }
  | { kind: 'lock'; holder: LockHolder; stats: Stats; stamp: string }
  | { kind: 'invalid'; why: string; stamp: string };

/** What to do about it: take it over (`why`: it was not believed), or refuse. */
type Verdict =
  | { kind: 'take'; holder: LockHolder | undefined; why: string | undefined }
  | { kind: 'held' | 'other_host'; holder: LockHolder; why?: undefined };

function judge(path: string, found: Exclude<Found, { kind: 'gone' }>): Verdict {
  if (found.kind === 'invalid') return { kind: 'take', holder: undefined, why: `it is not a ccs-bulk lock (${found.why})` };
  const { holder, stats } = found;
  const untrusted = ownUid !== undefined && stats.uid !== ownUid && sharedFolder(path);
  if (holder.host !== hostname()) {
    if (!untrusted) return { kind: 'other_host', holder };
    return {
      kind: 'take',
      holder,
      why: `it names a run on ${holder.host}, which cannot be checked from here, and belongs to uid ${stats.uid}, not to this user, in a folder other users can write`,
    };
  }
  const state = holderState(holder);
  if (state === 'dead') return { kind: 'take', holder, why: undefined };
  const owner = untrusted ? processOwner(holder.pid) : undefined;
  if (owner !== undefined && owner !== stats.uid) {
    return {
      kind: 'take',
      holder,
      why: `it names pid ${holder.pid}, a process of uid ${owner}, but belongs to uid ${stats.uid}, in a folder other users can write`,
    };
  }
  return { kind: 'held', holder };
}

/**
 * Removes a lock found dead or not believed, unless it changed meanwhile (another run replaced
 * it): 'busy' while another run is taking it over; `stuck` when it cannot be removed (a folder
 * with the sticky bit keeps another user's file).
 */
function takeOver(path: string, found: Exclude<Found, { kind: 'gone' }>): 'removed' | 'changed' | 'busy' | { stuck: string } {
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
    return 'busy';
  }
  try {
    const current = readLock(path);
    if (current.kind === 'gone' || current.stamp !== found.stamp) return 'changed';
    try {
      unlinkSync(path);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return 'changed';
      if (code !== 'EPERM' && code !== 'EACCES') return { stuck: code ?? String(error) };
      const owner = lstatQuietly(path)?.uid;
      return { stuck: `${code}: it belongs to ${owner === undefined ? 'another user' : `uid ${owner}`}, in a folder where only a file's owner may remove it` };
    }
    return 'removed';
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
  const fd = openSync(path, 'wx', 0o644);
  try {
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
}

/** Linux and macOS have them; elsewhere the lstat before opening stands in. */
const NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const NONBLOCK = constants.O_NONBLOCK ?? 0;

/**
 * Reads the lock at `path` without following a link or waiting on a pipe. `stamp` tells this
 * file from one put there later (inode and content).
 */
function readLock(path: string): Found {
  const stats = lstatQuietly(path);
  if (stats === undefined) return { kind: 'gone' };
  const stamp = `${stats.ino}:${stats.size}:${stats.mtimeMs}`;
  if (stats.isSymbolicLink()) return { kind: 'invalid', why: 'a symbolic link', stamp };
  if (!stats.isFile()) return { kind: 'invalid', why: 'not a regular file', stamp };
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | NOFOLLOW | NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { kind: 'gone' };
    return { kind: 'invalid', why: `it cannot be read: ${code ?? 'error'}`, stamp };
  }
  let text: string;
  let opened: Stats;
  try {
    opened = fstatSync(fd);
    if (!opened.isFile()) return { kind: 'invalid', why: 'not a regular file', stamp };
    if (opened.size > MAX_LOCK_BYTES) return { kind: 'invalid', why: `${opened.size} bytes long`, stamp };
    const buffer = Buffer.alloc(MAX_LOCK_BYTES + 1);
    text = buffer.subarray(0, readSync(fd, buffer, 0, buffer.length, 0)).toString('utf8');
  } finally {
    closeSync(fd);
  }
  const read = `${opened.ino}:${text}`;
  const parsed = parseHolder(text);
  if (typeof parsed === 'string') return { kind: 'invalid', why: parsed, stamp: read };
  return { kind: 'lock', holder: parsed, stats: opened, stamp: read };
}

/** Host names as resolvers and `hostname` know them: letters, digits, `-` and `_`, dotted labels. */
const HOST = /^(?=.{1,253}$)[a-z0-9_](?:[a-z0-9_-]{0,62})(?:\.[a-z0-9_-]{1,63})*\.?$/i;
/** `since` as Date#toISOString writes it. */
const ISO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?Z$/;

/** The holder a lock names, or what about it is out of shape (shown in the note: never its value). */
function parseHolder(text: string): LockHolder | string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return 'not JSON';
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'not a JSON object';
  const { pid, host, since, boot, start, nonce } = value as Record<string, unknown>;
  if (typeof pid !== 'number' || !Number.isSafeInteger(pid) || pid <= 0) return 'its pid is not a positive whole number';
  if (typeof host !== 'string' || (host !== hostname() && !HOST.test(host))) return 'its host is not a host name';
  if (typeof since !== 'string' || !ISO_TIME.test(since) || Number.isNaN(Date.parse(since))) return 'its time is not an ISO date';
  if (typeof nonce !== 'string' || !/^[0-9a-z]{1,64}$/i.test(nonce)) return 'its nonce is out of shape';
  if (boot !== undefined && (typeof boot !== 'string' || !/^[\w-]{1,64}$/.test(boot))) return 'its boot id is out of shape';
  if (start !== undefined && (typeof start !== 'string' || !/^\d{1,20}$/.test(start))) return 'its start time is out of shape';
  return { pid, host, since, boot, start, nonce };
}

/** The running user (undefined where there are no uids: Windows). */
const ownUid = process.getuid?.();

/** A folder other users can write (group or others): anyone there may have put the file. */
function sharedFolder(path: string): boolean {
  try {
    return (statSync(dirname(path)).mode & 0o022) !== 0;
  } catch {
    return true;
  }
}

/** The uid a process of this host runs as (Linux: its /proc entry's owner); undefined if unknown. */
function processOwner(pid: number): number | undefined {
  try {
    return statSync(`/proc/${pid}`).uid;
  } catch {
    return undefined;
  }
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

/**
 * Removes, in the folders of the files these locks hold, the locks of this user's runs that died
 * on this host, whatever file they were for. Only a regular file (never a link: read without
 * following one) owned by the running user, that reads as a ccs-bulk lock, names this host and a
 * process that is gone; removed through the takeover mutex, so a run taking it over meanwhile
 * keeps its own. Another user's, another host's, a live run's and anything not a lock stay.
 * Returns the paths removed; never throws.
 */
export function sweepDeadLocks(locks: readonly FileLock[]): string[] {
  const own = new Set(locks.map((lock) => resolve(lock.path)));
  const removed: string[] = [];
  for (const { dir, name } of entriesBeside(locks)) {
    const path = join(dir, name);
    if (!name.endsWith('.lock') || own.has(resolve(path))) continue;
    try {
      if (removeIfDead(path)) removed.push(path);
    } catch {
      // gone meanwhile, or not ours to remove: left as it is
    }
  }
  return removed;
}

/** The names in the folders of the files these locks guard, each folder once (an unreadable one: none). */
export function* entriesBeside(locks: readonly FileLock[]): Iterable<{ dir: string; name: string }> {
  for (const dir of new Set(locks.map((lock) => dirname(lock.target)))) {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      continue;
    }
    for (const name of names) yield { dir, name };
  }
}

function removeIfDead(path: string): boolean {
  const found = readLock(path);
  if (found.kind !== 'lock') return false;
  if (ownUid !== undefined && found.stats.uid !== ownUid) return false;
  if (holderState(found.holder) !== 'dead') return false;
  return takeOver(path, found) === 'removed';
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
 * run, a run on another host, or is a file we do not read as a lock (left alone: not ours to
 * judge here). No lock, or a dead holder's: no.
 */
export function heldByOther(target: string): boolean {
  const current = readLock(`${target}.lock`);
  if (current.kind === 'gone') return false;
  if (current.kind === 'invalid') return true;
  const { holder } = current;
  if (holder.pid === process.pid && holder.host === hostname()) return false;
  return holderState(holder) !== 'dead';
}

/** The run `target`'s lock names, read and never taken (`ccs-bulk status`); undefined for none or a file that is not one. */
export function lockHolderOf(target: string): LockHolder | undefined {
  const current = readLock(`${target}.lock`);
  return current.kind === 'lock' ? current.holder : undefined;
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

function lstatQuietly(path: string): Stats | undefined {
  try {
    return lstatSync(path);
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

/** Every field a lock holds is shown escaped: it came from a file anyone sharing the folder may write. */
function describeHolder(path: string, holder: LockHolder | undefined, reason: LockedError['reason'], detail: string | undefined): string {
  const shown = printable(path);
  if (reason === 'not_removable') {
    return `${shown} cannot be taken over: ${printable(detail ?? '?')}; name another file, or have its owner or an administrator remove it`;
  }
  if (holder === undefined) return `it is locked by ${shown}, which keeps changing; try again`;
  const who = `pid ${holder.pid} on ${printable(holder.host)}, since ${printable(holder.since)}`;
  if (reason === 'other_host') {
    return `it is in use by a ccs-bulk run on another machine (${who}); once that run is over, remove ${shown}`;
  }
  return `it is in use by another ccs-bulk run (${who}); wait for it to finish or stop it`;
}
