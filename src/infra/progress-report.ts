/**
 * Progress as data: the library hands `onProgress` a snapshot now and then; drawing it (a bar,
 * a line) is the command's business (progress.ts). No terminal, no stream here.
 */

export interface ProgressSnapshot {
  /** Rows (import) or clients (export) handled so far. */
  done: number;
  /** For an ETA: e.g. bytes read of the file size; undefined when unknown. */
  fraction?: number | undefined;
  /** Short counters, e.g. { created: 10, failed: 1 }. */
  counters: Record<string, number>;
}

export type OnProgress = (snapshot: ProgressSnapshot) => void;

/** The commands' plain progress line when stderr is not a terminal (--progress-interval), seconds. */
export const PROGRESS_LINE_INTERVAL_S = 5;

/** How often the library reports, at most, unless told otherwise. */
export const PROGRESS_INTERVAL_MS = 100;

export interface ProgressReporter {
  /** Called as often as work is done: builds a snapshot only when one is due (one clock read). */
  tick(): void;
  /** Reports the final values, due or not. */
  finish(): void;
}

const SILENT: ProgressReporter = { tick() {}, finish() {} };

export function progressReporter(
  onProgress: OnProgress | undefined,
  read: () => ProgressSnapshot,
  intervalMs = PROGRESS_INTERVAL_MS,
): ProgressReporter {
  if (!onProgress) return SILENT;
  let last = Date.now();
  return {
    tick() {
      const now = Date.now();
      if (now - last < intervalMs) return;
      last = now;
      onProgress(read());
    },
    finish() {
      onProgress(read());
    },
  };
}
