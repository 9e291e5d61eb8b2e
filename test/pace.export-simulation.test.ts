/**
 * `export --prefetch auto` beyond this machine: the real controller driven by a simulated
 * writer and service on a virtual clock (simulateExport in pace.simulator.ts): writers of this
 * machine's pace and four times it, round trips up to 500 ms, a token bucket or a cap on
 * requests at once. EXPORT_PACE_TABLE=FILE writes the table that docs/export.md quotes,
 * EXPORT_WHOLE_RUN_TABLE=FILE the whole runs'.
 */
import { writeFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { EXPORT_DEFAULTS } from '../src/export/defaults.js';
import { pageBound } from '../src/service/in-flight-bound.js';
import { rememberedStart } from '../src/service/pace-memory.js';
import { exportCeiling, figuresOf, type RunFigures, type SimService, type SimWriter, simulateExport } from './pace.simulator.js';

/** Virtual seconds, as the import's simulation: long enough for one probe past a ceiling under a limit. */
const SECONDS = { free: 20, limited: 60 };
const FLOOR_SHARE = 0.9;
const MAX_THROTTLED = 0.02;
const MAX_START_UP_S = 15;
const PAGE_SIZE = 100;
/** Writing a page of 100 clients: this machine's CSV export (~50,000 clients a second), and a machine four times as fast. */
const WRITERS = { '50k clients/s': 2, '200k clients/s': 0.5 };
/** The bound of a machine with 8 GiB: pages of 100 clients. */
const BOUND = pageBound({ memoryBytes: 8 * 2 ** 30, openFiles: undefined }, PAGE_SIZE);
const OLD_CAP = 64;
const WITH_OLD_CAP = process.env.EXPORT_PACE_TABLE !== undefined;

const SERVICES: Record<string, Omit<SimService, 'rttMs' | 'jitterMs'>> = {
  'no limit': { ratePerSecond: 0, maxConcurrent: 0, retryAfterMs: 1000 },
  '100/s': { ratePerSecond: 100, maxConcurrent: 0, retryAfterMs: 1000 },
  '1,000/s': { ratePerSecond: 1000, maxConcurrent: 0, retryAfterMs: 1000 },
  '50 at once': { ratePerSecond: 0, maxConcurrent: 50, retryAfterMs: 1000 },
};
const RTTS = [0, 20, 150, 300, 500];

interface Cell extends RunFigures {
  writer: string;
  rtt: number;
  service: string;
  target: number;
}

function runCell(writerName: keyof typeof WRITERS, rtt: number, name: string, bound: number): Cell {
  const seconds = name === 'no limit' ? SECONDS.free : SECONDS.limited;
  const writer: SimWriter = { pageSize: PAGE_SIZE, writeMs: WRITERS[writerName], bound, startLimit: EXPORT_DEFAULTS.startPrefetch };
  const service: SimService = { ...SERVICES[name]!, rttMs: () => rtt, jitterMs: rtt / 5 };
  const run = simulateExport(writer, service, seconds, rtt + writer.writeMs * 1000);
  // The floor with the machine's bound, whatever `bound` this run had: the old cap's column is measured against it too.
  const target = exportCeiling({ ...writer, bound: BOUND }, service, rtt);
  return { writer: writerName, rtt, service: name, target, ...figuresOf(run, target, seconds) };
}

const table: { now: Cell; before: Cell | undefined }[] = [];

/** A flaky service, as the import's noise cells: a share refused at random (two thirds 5xx, one third 429), 120 ± 80 ms. */
function noisyRun(writerName: keyof typeof WRITERS, share: number, fixed?: number): number {
  const writer: SimWriter = { pageSize: PAGE_SIZE, writeMs: WRITERS[writerName], bound: BOUND, startLimit: EXPORT_DEFAULTS.startPrefetch, fixed };
  const service: SimService = { ...SERVICES['no limit']!, rttMs: () => 120, jitterMs: 80, failRate: (share * 2) / 3, throttleRate: share / 3 };
  const run = simulateExport(writer, service, SECONDS.limited, 7 + Math.round(share * 1000));
  return run.perSecond.reduce((a, b) => a + b, 0) / run.perSecond.length;
}

describe('export --prefetch auto against a flaky service: random 5xx and 429s are noise', () => {
  for (const writer of Object.keys(WRITERS) as (keyof typeof WRITERS)[]) {
    it(`${writer}, 1%, 3% and 10% refused at random, 120 ± 80 ms: ≥ 0.85 of --prefetch 64 over the whole run`, () => {
      for (const share of [0.01, 0.03, 0.1]) {
        const auto = noisyRun(writer, share);
        const fixed = noisyRun(writer, share, 64);
        expect(auto / fixed, `${writer}, ${share * 100}%`).toBeGreaterThanOrEqual(0.85);
      }
    });
  }
});

describe('export --prefetch auto, simulated: writers of 50k and 200k clients a second, 0–500 ms round trips', () => {
  for (const writer of Object.keys(WRITERS) as (keyof typeof WRITERS)[]) {
    for (const name of Object.keys(SERVICES)) {
      it(`${writer}, ${name}: ≥ 0.9 of min(writer, limit, cap / round trip) after start-up, ≤ 2% 429s`, () => {
        // Every cell of the row first: the table is whole even when one fails.
        const cells = RTTS.map((rtt) => runCell(writer, rtt, name, BOUND));
        for (const cell of cells) table.push({ now: cell, before: WITH_OLD_CAP ? runCell(writer, cell.rtt, name, OLD_CAP) : undefined });
        for (const cell of cells) {
          const { rtt } = cell;
          const label = `${writer}, ${rtt} ms, ${name}`;
          expect(cell.failedRows, label).toBe(0);
          expect(cell.reachS, `${label}: never reached 0.9 × ${Math.round(cell.target)}/s`).toBeDefined();
          expect(cell.reachS!, label).toBeLessThanOrEqual(MAX_START_UP_S);
          expect(cell.steady / cell.target, label).toBeGreaterThanOrEqual(FLOOR_SHARE);
          expect(cell.steadyThrottledShare, label).toBeLessThanOrEqual(MAX_THROTTLED);
          expect(cell.throttledShare, `${label}, the whole run`).toBeLessThanOrEqual(MAX_THROTTLED);
          // At no distance the writer is the limit, and pages already wait for it: no growth.
          if (rtt === 0 && name === 'no limit') expect(cell.limit, label).toBe(EXPORT_DEFAULTS.startPrefetch);
        }
      });
    }
  }

  afterAll(() => {
    if (!process.env.EXPORT_PACE_TABLE) return;
    const share = (value: number) => `${(value * 100).toFixed(1)}%`;
    const ratio = (c: Cell, target: number) => `${Math.round(c.steady).toLocaleString('en-US')} (${(c.steady / target).toFixed(2)})`;
    const lines = [
      '| writer | round trip | service | floor clients/s | clients/s (ratio) | 0.9 reached | 429s: run, after start-up | prefetch at the end | the old cap of 64: clients/s (ratio) |',
      '|---|---|---|---|---|---|---|---|---|',
      ...table.map(
        ({ now, before }) =>
          `| ${now.writer} | ${now.rtt} ms | ${now.service} | ${Math.round(now.target).toLocaleString('en-US')} | ${ratio(now, now.target)} | ${now.reachS === undefined ? 'not' : `${now.reachS} s`} | ${share(now.throttledShare)}, ${share(now.steadyThrottledShare)} | ${now.limit} | ${before === undefined ? '' : ratio(before, now.target)} |`,
      ),
    ];
    writeFileSync(process.env.EXPORT_PACE_TABLE, `${lines.join('\n')}\n`);
  });
});

/**
 * Whole runs of 250,000 clients (pages of 100) against a service with no limit: the time to
 * the last client written against the best fixed --prefetch of a sweep (the paging floor), a
 * first run and a repeat from its pace memory.
 */
const WHOLE_RUN_CLIENTS = 250_000;
const FIXED_SWEEP = [16, 32, 64, 128, 256, 512, 1024];
const wholeRuns: { writer: string; rtt: number; floorS: number; best: number; first: number; repeat: number; start: number }[] = [];

/**
 * Slow start's round trips from the start to the pages the writer's pace needs in flight
 * (doubling to 64, then by a quarter), in seconds. As the import's whole runs: a first run loses
 * about two thirds of it, and is held to the floor share where it is at most a sixth of the
 * floor's run (the rest is what pace memory is for: docs/export.md).
 */
function rampSeconds(pagesPerSecond: number, rttMs: number): number {
  const need = (pagesPerSecond * rttMs) / 1000;
  const start = EXPORT_DEFAULTS.startPrefetch;
  const windows = need <= 64 ? Math.log2(Math.max(need, start) / start) : Math.log2(64 / start) + Math.log(need / 64) / Math.log(1.25);
  return (windows * rttMs) / 1000;
}

/** Seconds until `clients` were written, from the clients written in each second. */
function secondsFor(perSecond: number[], clients: number): number {
  let written = 0;
  for (const [second, rows] of perSecond.entries()) {
    if (written + rows >= clients) return second + (clients - written) / rows;
    written += rows;
  }
  return Number.POSITIVE_INFINITY;
}

describe('export --prefetch auto, whole runs of 250,000 clients: a first run and a repeat from pace memory', () => {
  for (const writerName of Object.keys(WRITERS) as (keyof typeof WRITERS)[]) {
    it(`${writerName} at 50 and 300 ms: a repeat ≥ 0.9 of the paging floor, and a first run where it has room to ramp`, () => {
      for (const rtt of [50, 300]) {
        const writer: SimWriter = { pageSize: PAGE_SIZE, writeMs: WRITERS[writerName], bound: BOUND, startLimit: EXPORT_DEFAULTS.startPrefetch };
        const service: SimService = { ...SERVICES['no limit']!, rttMs: () => rtt, jitterMs: rtt / 5 };
        const seconds = 60;
        const fixed = FIXED_SWEEP.map((prefetch) => ({ prefetch, s: secondsFor(simulateExport({ ...writer, fixed: prefetch }, service, seconds, rtt + prefetch).perSecond, WHOLE_RUN_CLIENTS) }));
        const best = fixed.reduce((a, b) => (b.s < a.s ? b : a));
        const first = simulateExport(writer, service, seconds, rtt + 1);
        const start = rememberedStart({ settled: first.limits.at(-1)!, throttled: false, at: '' }, writer.startLimit, writer.bound);
        const repeat = simulateExport({ ...writer, startLimit: start }, service, seconds, rtt + 2);
        const cell = { writer: writerName, rtt, floorS: best.s, best: best.prefetch, first: best.s / secondsFor(first.perSecond, WHOLE_RUN_CLIENTS), repeat: best.s / secondsFor(repeat.perSecond, WHOLE_RUN_CLIENTS), start };
        wholeRuns.push(cell);
        const label = `${writerName}, ${rtt} ms`;
        expect(cell.repeat, `${label}, a repeat`).toBeGreaterThanOrEqual(FLOOR_SHARE);
        // At 300 ms the floor keeps 150–600 pages on the wire from its first page: a first run's ramp from 4 is a second or two of a few-second run.
        if (rampSeconds(1000 / writer.writeMs, rtt) <= cell.floorS / 6) expect(cell.first, `${label}, a first run`).toBeGreaterThanOrEqual(FLOOR_SHARE);
      }
    });
  }

  afterAll(() => {
    if (!process.env.EXPORT_WHOLE_RUN_TABLE) return;
    const lines = [
      '| writer | round trip | the paging floor (best fixed --prefetch) | first run ÷ floor | repeat from pace memory ÷ floor (its start) |',
      '|---|---|---|---|---|',
      ...wholeRuns.map((c) => `| ${c.writer} | ${c.rtt} ms | ${c.floorS.toFixed(1)} s (${c.best}) | ${c.first.toFixed(2)} | ${c.repeat.toFixed(2)} (${c.start}) |`),
    ];
    writeFileSync(process.env.EXPORT_WHOLE_RUN_TABLE, `${lines.join('\n')}\n`);
  });
});
