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
   * file's bytes read, times the share of the rows read that have finished). A `not_attempted` row
   * is unsent, never progress: the fraction stays below 1 while any row is unsent. Undefined when unknown.
   */
  fraction?: number | undefined;
  /**
   * Import: `reading` while the input is still being read (`total` unknown), `sending` once every
   * row is read and the rest are on their way, `stopping` after a stop (what is in flight finishes,
   * nothing more is sent).
   */
  phase?: 'reading' | 'sending' | 'stopping' | undefined;
  /** Import: rows read so far (with a shard, its own); those not in `done` are in flight or waiting to be sent. */
  read?: number | undefined;
  /** Import, while `reading`: the share of the input's bytes read, 0 to 1 (undefined for rows from code). */
  readFraction?: number | undefined;
  /**
   * Import: the time left, in ms, at the pace rows have been finishing over the last seconds;
   * undefined until that pace is known, while no row finishes (a pause), and after a stop.
   */
  etaMs?: number | undefined;
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

/** The figures an import's snapshot is made from (the recorder's counts and the reader's position). */
export interface RowFigures {
  /** Rows with an outcome, whatever it is. */
  finished: number;
  /** Of `finished`: rows recorded `not_attempted` (unsent). */
  unsent: number;
  /** Rows read that belong to this run (another shard's are not). */
  read: number;
  /** The reader has given its last row. */
  readerDone: boolean;
  /** The input's bytes the reader has taken (it reads ahead of the rows handed on). */
  bytesRead: number;
  sizeBytes: number;
  /** The characters of the rows handed on so far (every shard's): with `sizeBytes`, the rows the file holds. */
  charsTaken: number;
  /** Rows handed on so far, every shard's. */
  rowsTaken: number;
  /** The run stopped (or was interrupted): no more rows will be sent. */
  stopped: boolean;
}

/** How far an import is: its phase, the share done and the time left (see ProgressSnapshot). */
export function rowProgress(figures: RowFigures, pace: FinishPace): Pick<ProgressSnapshot, 'done' | 'total' | 'fraction' | 'phase' | 'read' | 'readFraction' | 'etaMs'> {
  const { finished, unsent, read, readerDone, bytesRead, sizeBytes, stopped } = figures;
  const sent = finished - unsent;
  const total = readerDone ? read : undefined;
  const readFraction = sizeBytes > 0 ? Math.min(1, bytesRead / sizeBytes) : undefined;
  // Before the end of the file, its rows are estimated from the size of the rows handed on so
  // far, not from the reader's bytes: it reads ahead (a small file at once), which would make the
  // estimate the rows handed on, and the run look done long before it is.
  const expected = total ?? estimateRows(figures);
  let fraction = expected === undefined ? undefined : expected === 0 ? 1 : sent / expected;
  // 100% means every row has its outcome and none is unsent.
  const complete = total !== undefined && sent >= total;
  if (fraction !== undefined) fraction = complete ? 1 : Math.min(fraction, ALMOST_DONE);
  const rate = pace.sample(Date.now(), sent);
  const left = expected === undefined ? undefined : Math.max(0, expected - sent);
  const etaMs = stopped || left === undefined || rate === undefined ? undefined : complete ? 0 : Math.max(1000, left / rate);
  return {
    done: finished,
    total,
    fraction,
    phase: stopped ? 'stopping' : readerDone || readFraction === 1 ? 'sending' : 'reading',
    read,
    readFraction: readerDone ? undefined : readFraction,
    etaMs,
  };
}

/** This run's rows in the whole file, from the characters per row so far (undefined without a size, or before any row). */
function estimateRows(figures: RowFigures): number | undefined {
  const { read, sizeBytes, charsTaken, rowsTaken } = figures;
  if (sizeBytes === 0 || charsTaken === 0 || rowsTaken === 0) return undefined;
  // Characters undercount bytes (quotes, multi-byte letters): the estimate errs high, the share low.
  return Math.max(read, (read * sizeBytes) / charsTaken);
}

/** The most a snapshot shows before every row has its outcome: 99.9%, never 100%. */
const ALMOST_DONE = 0.999;

/** The pace behind the ETA: rows finished over the last PACE_WINDOW_MS, not since the start (a listing or a pause would skew it). */
const PACE_WINDOW_MS = 10_000;
/** A pace over less time than this is noise: no ETA yet. */
const PACE_MIN_SPAN_MS = 1000;

/** Rows finished over time, for the ETA. */
export class FinishPace {
  readonly #samples: { at: number; sent: number }[] = [];

  /** Adds a sample; returns rows a millisecond over the window, or undefined when unknown (too soon, or none finished). */
  sample(at: number, sent: number): number | undefined {
    const last = this.#samples.at(-1);
    if (last === undefined || at - last.at >= 100) this.#samples.push({ at, sent });
    while (this.#samples.length > 2 && at - this.#samples[1]!.at >= PACE_WINDOW_MS) this.#samples.shift();
    const first = this.#samples[0]!;
    const span = at - first.at;
    if (span < PACE_MIN_SPAN_MS || sent <= first.sent) return undefined;
    return (sent - first.sent) / span;
  }
}
