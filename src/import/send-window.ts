/**
 * Bounded sending with backpressure: `slot()` resolves only when fewer than `concurrency`
 * sends are running or queued, so the reader pauses while the window is full and memory
 * stays flat whatever the file size.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import pLimit from 'p-limit';

export interface SendWindow {
  /** Waits for room in the window (and for the rate limit, when set). */
  slot(): Promise<void>;
  run(task: () => Promise<void>): void;
  /** Waits for everything submitted. */
  drain(): Promise<void>;
}

/** Pure: when the next send may start, spacing sends `1000 / rate` ms apart. */
export function nextSendAt(previous: number, now: number, rate: number): number {
  return Math.max(now, previous + 1000 / rate);
}

/** `signal` (Ctrl-C) cuts a rate-limit wait short; the caller then sees it aborted. */
export function createSendWindow(concurrency: number, rate?: number, signal?: AbortSignal): SendWindow {
  const limit = pLimit(concurrency);
  const running = new Set<Promise<void>>();
  let waiter: (() => void) | undefined;
  let lastStart = Number.NEGATIVE_INFINITY;

  return {
    async slot() {
      while (limit.activeCount + limit.pendingCount >= concurrency) {
        await new Promise<void>((resolve) => {
          waiter = resolve;
        });
      }
      if (rate !== undefined) {
        const at = nextSendAt(lastStart, Date.now(), rate);
        lastStart = at;
        const wait = at - Date.now();
        if (wait > 0) await sleep(wait, undefined, { signal }).catch(() => undefined);
      }
    },
    run(task) {
      const done = limit(task).finally(() => {
        running.delete(done);
        const wake = waiter;
        waiter = undefined;
        wake?.();
      });
      running.add(done);
    },
    async drain() {
      while (running.size > 0) await Promise.allSettled([...running]);
    },
  };
}
