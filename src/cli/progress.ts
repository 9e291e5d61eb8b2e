/**
 * The commands' progress display on stderr, shared by import and export: a bar with rate and
 * ETA on a TTY (cli-progress), a plain line every few seconds otherwise, nothing with --quiet.
 * It draws the snapshots the library reports (progress-report.ts).
 */
import cliProgress from 'cli-progress';
import type { ProgressSnapshot } from '../infra/progress-report.js';
import { type LimitReport, paceNote } from '../service/adaptive-limit.js';

export interface Progress {
  /** The library's onProgress: draws the snapshot, or keeps it until a line is due. */
  update(snapshot: ProgressSnapshot): void;
  /** Draws the last snapshot (a bar) and releases the terminal. */
  stop(): void;
}

export const NO_PROGRESS: Progress = { update() {}, stop() {} };

export type ProgressMode = 'auto' | 'bar' | 'lines' | 'none';

export interface ProgressOptions {
  stream: NodeJS.WritableStream & { isTTY?: boolean };
  mode: ProgressMode;
  unit: string;
  /** false when there is no total to measure against (export): no bar, no ETA */
  knownTotal?: boolean;
  /** for plain lines */
  intervalMs?: number;
}

export function createProgress(options: ProgressOptions): Progress {
  const mode = options.mode === 'auto' ? (options.stream.isTTY ? 'bar' : 'lines') : options.mode;
  if (mode === 'none') return NO_PROGRESS;
  const started = Date.now();
  const rate = (done: number) => Math.round(done / Math.max(0.001, (Date.now() - started) / 1000));
  const counters = (snapshot: ProgressSnapshot) =>
    Object.entries(snapshot.counters)
      .filter(([, n]) => n > 0)
      .map(([name, n]) => `${name.replace('_', ' ')} ${n}`)
      .concat(snapshot.pace === undefined ? [] : [`in flight limit ${snapshot.pace.limit}`])
      .concat(snapshot.note === undefined ? [] : [`(${snapshot.note})`])
      .join(' ');

  if (mode === 'bar') {
    const bar = new cliProgress.SingleBar(
      {
        stream: options.stream,
        format:
          options.knownTotal === false
            ? `{done} ${options.unit} | {rate}/s | {counters}`
            : `{bar} {where} | {done} ${options.unit} | {rate}/s | ETA {eta_text} | {counters}`,
        hideCursor: true,
        fps: 5,
        noTTYOutput: false,
      },
      cliProgress.Presets.shades_classic,
    );
    bar.start(1000, 0, { done: 0, rate: 0, counters: '', where: '0%', eta_text: '-' });
    let latest: ProgressSnapshot | undefined;
    const draw = (snapshot: ProgressSnapshot) =>
      bar.update(Math.floor((snapshot.fraction ?? 0) * 1000), {
        done: snapshot.done,
        rate: rate(snapshot.done),
        counters: counters(snapshot),
        where: whereWords(snapshot),
        eta_text: snapshot.etaMs === undefined ? '-' : formatDuration(snapshot.etaMs),
      });
    return {
      update(snapshot) {
        latest = snapshot;
        draw(snapshot);
      },
      stop() {
        // The last values, not the last ones drawn.
        if (latest) draw(latest);
        bar.stop();
      },
    };
  }

  const interval = options.intervalMs ?? 5000;
  let last = started;
  return {
    update(snapshot) {
      const now = Date.now();
      if (now - last < interval) return;
      last = now;
      options.stream.write(`ccs-bulk: ${snapshot.done} ${options.unit}, ${rate(snapshot.done)}/s${lineWords(snapshot)} ${counters(snapshot)}\n`);
    },
    stop() {},
  };
}

/** `reading 40%`, `sending 53%`, `stopping`; a plain `53%` for a snapshot without a phase. */
function whereWords(snapshot: ProgressSnapshot): string {
  const percent = (fraction: number | undefined) => (fraction === undefined ? '' : `${Math.floor(fraction * 100)}%`);
  switch (snapshot.phase) {
    case 'reading':
      return `reading ${percent(snapshot.readFraction ?? snapshot.fraction) || '…'}`;
    case 'sending':
      return `sending ${percent(snapshot.fraction)}`.trimEnd();
    case 'stopping':
      return 'stopping';
    default:
      return percent(snapshot.fraction);
  }
}

/** ` (sending 53% of 1500, ETA 2s)` after a plain line's rate: the phase, the share of rows finished, the time left. */
function lineWords(snapshot: ProgressSnapshot): string {
  const parts = [whereWords(snapshot)];
  if (snapshot.phase === 'sending' && snapshot.total !== undefined) parts[0] += ` of ${snapshot.total}`;
  if (snapshot.etaMs !== undefined) parts.push(`ETA ${formatDuration(snapshot.etaMs)}`);
  const words = parts.filter((part) => part !== '').join(', ');
  return words === '' ? '' : ` (${words})`;
}

/** Where and how a command draws: stderr, a bar on a terminal, lines elsewhere, nothing with --quiet. */
export function progressDisplay(
  options: { quiet: boolean; progressIntervalMs: number },
  io: { stderr: NodeJS.WritableStream & { isTTY?: boolean } },
): Omit<ProgressOptions, 'unit'> {
  return { stream: io.stderr, mode: options.quiet ? 'none' : 'auto', intervalMs: options.progressIntervalMs };
}

/** `1 row`, `2 rows`: a count and its noun. */
export function counted(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

export function formatDuration(ms: number): string {
  const seconds = Math.round(ms / 1000);
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m${String(seconds % 60).padStart(2, '0')}s`;
  return `${Math.floor(minutes / 60)}h${String(minutes % 60).padStart(2, '0')}m`;
}

/** A limit for the summary: `4 (fixed)`, or where `auto` settled, e.g. `what` = 'in flight'. */
export function formatLimits(limits: LimitReport, what: string): string {
  if (limits.mode === 'fixed') return `${limits.current} (fixed)`;
  const note = paceNote(limits, 'concurrency');
  const throttled = limits.throttled === true ? "; the service's 429s held it there (its limit)" : '';
  return `auto, limit settled at ${limits.settled} ${what} (last ${limits.current}, at most ${limits.max})${throttled}${note === undefined ? '' : `; ${note}`}`;
}
