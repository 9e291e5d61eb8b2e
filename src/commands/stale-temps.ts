/** How a command reports the temp files of dead runs it removed (temp-files.ts). */
import type { Io } from '../io.js';
import type { LogFile } from '../log-file.js';

/** One stderr line (none with --quiet) and a run event in the log. */
export function reportSweep(quiet: boolean, io: Io, log: LogFile | undefined): (removed: string[]) => void {
  return (removed) => {
    log?.run('stale_temps_removed', { files: removed });
    if (quiet) return;
    const files = removed.length === 1 ? 'a temp file' : `${removed.length} temp files`;
    io.stderr.write(`ccs-bulk: removed ${files} left by a run that died: ${removed.join(', ')}\n`);
  };
}
