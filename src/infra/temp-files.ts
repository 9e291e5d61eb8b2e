/**
 * The hidden temp files a run writes beside its outputs (the export file, the state file, a
 * results file being compacted for --resume), renamed into place on success. A run killed with
 * `kill -9` cannot remove its own: the next run on the same directory removes them, but only a
 * temp whose writer is certainly gone.
 */
import { randomBytes } from 'node:crypto';
import { unlinkSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { entriesBeside, type FileLock, heldByOther, pidAlive, sweepDeadLocks } from './lock.js';

/** A hidden, unique name beside `path` (same directory: the rename into place is atomic). */
export function tempBeside(path: string): string {
  return join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
}

/** tempBeside's names: `.` + the file's name, the writer's pid, 8 hex digits, `.tmp`. */
const TEMP_NAME = /^\.(.+)\.(\d+)\.[0-9a-f]{8}\.tmp$/;

/**
 * Removes, in the directories of the files these locks hold, the temp files of runs that died:
 * the pid in the name is not alive on this host (or is a dead holder one of the locks replaced),
 * and no other run holds the lock of the file the temp was for (a live run on another host
 * sharing the directory holds it while it writes). Dead runs' locks of other files there go too
 * (`.lock` names in the list). Returns the paths removed; never throws.
 */
export function sweepStaleTemps(locks: readonly FileLock[]): string[] {
  const dead = new Set(locks.flatMap((lock) => (lock.tookOver ? [lock.tookOver.pid] : [])));
  const removed: string[] = sweepDeadLocks(locks);
  for (const { dir, name } of entriesBeside(locks)) {
    const match = TEMP_NAME.exec(name);
    if (!match) continue;
    const pid = Number(match[2]);
    if (pid === process.pid || (!dead.has(pid) && pidAlive(pid))) continue;
    // Listed first, checked second: a temp another run is still writing has its lock held.
    if (heldByOther(join(dir, match[1]!))) continue;
    try {
      unlinkSync(join(dir, name));
      removed.push(join(dir, name));
    } catch {
      // gone meanwhile, or not ours to remove: left as it is
    }
  }
  return removed;
}

