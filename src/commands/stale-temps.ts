/** How a command reports what other runs left beside its outputs and it removed (temp files, locks), and an input changed since the last run. */
import type { Io } from '../infra/io.js';
import type { LogFile } from '../infra/log-file.js';
import { printable } from '../infra/printable.js';
import type { SourceChanges } from '../import/record/source-changes.js';

/** One stderr line each for temp files and locks (none with --quiet), and a run event each in the log. */
export function reportSweep(quiet: boolean, io: Io, log: LogFile | undefined): (removed: string[]) => void {
  return (removed) => {
    const locks = removed.filter((path) => path.endsWith('.lock'));
    const temps = removed.filter((path) => !path.endsWith('.lock'));
    if (temps.length > 0) log?.run('stale_temps_removed', { files: temps });
    if (locks.length > 0) log?.run('stale_locks_removed', { locks });
    if (quiet) return;
    for (const [paths, one, many] of [[temps, 'a temp file', 'temp files'], [locks, 'a lock', 'locks']] as const) {
      if (paths.length === 0) continue;
      const what = paths.length === 1 ? one : `${paths.length} ${many}`;
      io.stderr.write(`ccs-bulk: removed ${what} left by a run that died: ${paths.map((path) => printable(path)).join(', ')}\n`);
    }
  };
}

/** A lock file that was not believed and was replaced: one stderr line (none with --quiet) and a run event. */
export function reportLockReplaced(quiet: boolean, io: Io, log: LogFile | undefined): (path: string, why: string) => void {
  return (path, why) => {
    log?.run('lock_replaced', { lock: path, why });
    if (quiet) return;
    io.stderr.write(`ccs-bulk: took over ${printable(path)}: ${printable(why)}\n`);
  };
}

/** --resume on an input that changed since the last run, going on: said on stderr and in the log. */
export function reportSourceChanged(quiet: boolean, io: Io, log: LogFile | undefined): (changes: SourceChanges) => void {
  return (changes) => {
    log?.run('source_changed', { was: changes.was, now: changes.now, changed_rows: changes.changedRows, gone_rows: changes.goneRows, other_changed: changes.otherChanged });
    if (quiet) return;
    const parts: string[] = [];
    if (changes.changedRows + changes.goneRows > 0) {
      parts.push(`${changes.changedRows} created row(s) changed and ${changes.goneRows} gone, accepted (--accept-changed-source)`);
    }
    if (changes.otherChanged > 0) parts.push(`${changes.otherChanged} row(s) not created yet changed: sent as they are now`);
    if (parts.length === 0) parts.push('the rows it recorded are unchanged (rows added or blank lines)');
    io.stderr.write(`ccs-bulk: the input changed since the results file's last run (SHA-256 now ${changes.now.slice(0, 12)}…): ${parts.join('; ')}\n`);
  };
}
