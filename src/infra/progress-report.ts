/**
 * Progress as data: the library hands `onProgress` a snapshot now and then; drawing it (a bar,
 * a line) is the command's business (progress.ts). No terminal, no stream here.
 */

/** Where a run stands, as `onProgress` receives it: at most every `progressIntervalMs`, and once at the end. */
export interface ProgressSnapshot {
  /** Import: rows finished, whatever their outcome. Export: clients written. */
  done: number;
  /** Rows in all, once known (a file's rows once it has been read to its end; rows from code at their end). */
  total?: number | undefined;
  /**
   * How far the run is, 0 to 1: rows finished of `total` when it is known, else estimated (the
   * file's bytes read, times the share of the rows read that have finished). Undefined when unknown.
   */
  fraction?: number | undefined;
  /** Import: rows finished by outcome, every outcome present (0 included). Export: clients written. */
  counters: Record<string, number>;
  /** Import: requests on the wire now, and the limit on them (it adapts unless a concurrency was given). */
  pace?:
    | {
        /** Requests on the wire at this moment. */
        inFlight: number;
        /** The most allowed in flight at this moment (`concurrency`, or where `auto` has it now). */
        limit: number;
      }
    | undefined;
  /**
   * Something the run's pace says the user can act on: `auto` settled far below the peak it
   * reached, and the setting that would hold the peak.
   */
  note?: string | undefined;
}

/** Receives a run's progress as data: the library never draws on a terminal. */
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
