/**
 * Progress on stderr, shared by import and export: a bar with rate and ETA on a TTY
 * (cli-progress), a plain line every few seconds otherwise, nothing with --quiet.
 */
import cliProgress from 'cli-progress';

export interface ProgressSnapshot {
  /** rows (import) or clients (export) handled so far */
  done: number;
  /** for the ETA: e.g. bytes read of the file size; undefined when unknown */
  fraction?: number | undefined;
  /** short counters shown after the rate, e.g. { created: 10, failed: 1 } */
  counters: Record<string, number>;
}

export interface Progress {
  /**
   * Called as often as work is done (every row): `read` is called only when the display is
   * due, so a caller pays one clock read per call and builds no snapshot in between.
   */
  update(read: () => ProgressSnapshot): void;
  stop(): void;
}

/** cli-progress redraws 5 times a second (fps 5); values are taken a little more often. */
const BAR_INTERVAL_MS = 100;

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
      .map(([name, n]) => `${name} ${n}`)
      .join(' ');

  if (mode === 'bar') {
    const bar = new cliProgress.SingleBar(
      {
        stream: options.stream,
        format:
          options.knownTotal === false
            ? `{done} ${options.unit} | {rate}/s | {counters}`
            : `{bar} {percentage}% | {done} ${options.unit} | {rate}/s | ETA {eta_formatted} | {counters}`,
        hideCursor: true,
        etaBuffer: 50,
        fps: 5,
        noTTYOutput: false,
      },
      cliProgress.Presets.shades_classic,
    );
    bar.start(1000, 0, { done: 0, rate: 0, counters: '' });
    let drawn = 0;
    let latest: (() => ProgressSnapshot) | undefined;
    const draw = (snapshot: ProgressSnapshot) =>
      bar.update(Math.round((snapshot.fraction ?? 0) * 1000), {
        done: snapshot.done,
        rate: rate(snapshot.done),
        counters: counters(snapshot),
      });
    return {
      update(read) {
        latest = read;
        const now = Date.now();
        if (now - drawn < BAR_INTERVAL_MS) return;
        drawn = now;
        draw(read());
      },
      stop() {
        // The last values, not the last ones drawn.
        if (latest) draw(latest());
        bar.stop();
      },
    };
  }

  const interval = options.intervalMs ?? 5000;
  let last = started;
  return {
    update(read) {
      const now = Date.now();
      if (now - last < interval) return;
      last = now;
      const snapshot = read();
      const elapsed = (now - started) / 1000;
      const fraction = snapshot.fraction;
      const eta =
        fraction !== undefined && fraction > 0.001
          ? `, ETA ${formatDuration((elapsed / fraction - elapsed) * 1000)}`
          : '';
      const percent = fraction === undefined ? '' : ` (${Math.floor(fraction * 100)}%${eta})`;
      options.stream.write(
        `ccs-bulk: ${snapshot.done} ${options.unit}, ${rate(snapshot.done)}/s${percent} ${counters(snapshot)}\n`,
      );
    },
    stop() {},
  };
}

export function formatDuration(ms: number): string {
  const seconds = Math.round(ms / 1000);
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m${String(seconds % 60).padStart(2, '0')}s`;
  return `${Math.floor(minutes / 60)}h${String(minutes % 60).padStart(2, '0')}m`;
}
