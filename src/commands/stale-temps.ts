/** How a command reports what other runs left beside its outputs and it removed: temp files, locks (lock.ts). */
import type { Io } from '../infra/io.js';
import type { LogFile } from '../infra/log-file.js';
import { printable } from '../infra/printable.js';

/** One stderr line (none with --quiet) and a run event in the log. */
export function reportSweep(quiet: boolean, io: Io, log: LogFile | undefined): (removed: string[]) => void {
  return (removed) => {
    log?.run('stale_temps_removed', { files: removed });
    if (quiet) return;
    const files = removed.length === 1 ? 'a temp file' : `${removed.length} temp files`;
    io.stderr.write(`ccs-bulk: removed ${files} left by a run that died: ${removed.join(', ')}\n`);
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
