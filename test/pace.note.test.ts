/**
 * `auto` settled far below its peak for a reason it cannot tell (5xx rising with the window, or
 * latency): the limit says so, and the progress line and the summary name the flag that keeps
 * the peak. Fed through the real adaptive limit, on an injected clock.
 */
import { describe, expect, it } from 'vitest';
import { createProgress, formatLimits } from '../src/cli/progress.js';
import { type AdaptiveLimit, createAdaptiveLimit, paceNote } from '../src/service/adaptive-limit.js';

/**
 * Round trips of 50 ms with every slot busy: of each round's requests, those past `takes(round)`
 * are answered `status` (the rest 200). Returns the limit after the last round.
 */
function drive(rounds: number, takes: (round: number) => number, status: number): AdaptiveLimit {
  let now = 0;
  const limit = createAdaptiveLimit({ limit: 'auto', start: 8, max: 1000, now: () => now });
  for (let round = 0; round < rounds; round++) {
    const size = limit.current;
    now += 50;
    for (let i = 0; i < size; i++) {
      now += 0.01;
      limit.observe({ status: i < takes(round) ? 200 : status, ms: 50 }, size);
    }
  }
  return limit;
}

describe('a limit far below its peak is reported with the flag that keeps the peak', () => {
  it('5xx past 8 at once after the limit reached 64: far below, cause overload, and the note names --concurrency 64', () => {
    // Four clean round trips (8 → 16 → 32 → 64 → 128), then the service answers 503 past 8.
    const limit = drive(400, (round) => (round < 4 ? Number.POSITIVE_INFINITY : 8), 503);
    const report = limit.limits();
    expect(report.peak).toBe(64);
    expect(report.settled).toBeLessThanOrEqual(16);
    expect(report.farBelowPeak).toBe('overloaded');
    const note = paceNote(report, 'concurrency');
    expect(note).toContain('--concurrency 64');
    expect(note).toContain('5xx');
    expect(formatLimits(report, 'in flight')).toContain(note!);
  });

  it('a 429 limit is the service saying so: no note, but the summary says the service held it there', () => {
    const limit = drive(400, (round) => (round < 4 ? Number.POSITIVE_INFINITY : 8), 429);
    const report = limit.limits();
    expect(report.settled).toBeLessThanOrEqual(16);
    expect(report.farBelowPeak).toBeUndefined();
    expect(paceNote(report, 'concurrency')).toBeUndefined();
    expect(report.throttled).toBe(true);
    expect(formatLimits(report, 'in flight')).toMatch(/^auto, limit settled at \d+ in flight \(last \d+, at most 1000\); the service's 429s held it there \(its limit\)$/);
    // 5xx set no such limit.
    expect(drive(400, (round) => (round < 4 ? Number.POSITIVE_INFINITY : 8), 503).limits().throttled).toBeUndefined();
  });

  it('a steady 3% of 503s at every limit: no cut, nothing to report', () => {
    let now = 0;
    const noisy = createAdaptiveLimit({ limit: 'auto', start: 8, max: 1000, now: () => now });
    let n = 0;
    for (let round = 0; round < 200; round++) {
      const size = noisy.current;
      now += 50;
      for (let i = 0; i < size; i++, n++) noisy.observe({ status: n % 33 === 5 ? 503 : 200, ms: 50 }, size);
    }
    expect(noisy.current).toBe(1000);
    expect(noisy.limits().farBelowPeak).toBeUndefined();
  });

  it('a fixed limit reports no peak', () => {
    const fixed = createAdaptiveLimit({ limit: 4, start: 8, max: 64 });
    fixed.observe({ status: 503, ms: 10 }, 4);
    expect(fixed.limits()).toEqual({ mode: 'fixed', current: 4, settled: 4, max: 4 });
  });

  it('the progress line carries the note', () => {
    let written = '';
    const stream = { write: (text: string) => ((written += text), true), isTTY: false };
    const progress = createProgress({ stream: stream as unknown as NodeJS.WritableStream, mode: 'lines', unit: 'rows', intervalMs: 0 });
    progress.update({ done: 10, counters: { created: 10 }, note: 'settled far below; --concurrency 64 holds it there' });
    expect(written).toMatch(/created 10 \(settled far below; --concurrency 64 holds it there\)\n$/);
  });
});
