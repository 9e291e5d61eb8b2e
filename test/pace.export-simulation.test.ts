/**
 * `export --prefetch auto` beyond this machine: the real controller driven by a simulated
 * writer and service on a virtual clock (simulateExport in pace.simulator.ts): writers of this
 * machine's pace and four times it, round trips up to 500 ms, a token bucket or a cap on
 * requests at once. EXPORT_PACE_TABLE=FILE writes the table that docs/export.md quotes.
 */
import { writeFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { EXPORT_DEFAULTS } from '../src/export/defaults.js';
import { pageBound } from '../src/service/in-flight-bound.js';
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

/**
 * Cells where the prefetch falls short today, each with why (docs/export.md, "Beyond this
 * machine"). Asserted short, so that a change that fixes one must take it off this list, and
 * the table in the docs with it. Every other cell must meet the import's criteria.
 */
const CAPPED = 'after a cut, every page still requested retries at once after the pause (export has no wire slots): past the cap again, and the limit settles below it';
const LOW_CEILING = "the first 429's round trip sets the ceiling low; 0.9 only after the probe 30 s later";
const FAR = 'a fast writer at 500 ms under a rate: the prefetch settles short of rate × round trip';
const KNOWN_SHORT: Record<string, string> = {
  '50k clients/s|150 ms|100/s': LOW_CEILING,
  '50k clients/s|150 ms|50 at once': CAPPED,
  '50k clients/s|300 ms|50 at once': CAPPED,
  '50k clients/s|500 ms|50 at once': CAPPED,
  '200k clients/s|300 ms|100/s': LOW_CEILING,
  '200k clients/s|500 ms|100/s': FAR,
  '200k clients/s|20 ms|1,000/s': LOW_CEILING,
  '200k clients/s|500 ms|1,000/s': FAR,
  '200k clients/s|20 ms|50 at once': LOW_CEILING,
  '200k clients/s|150 ms|50 at once': CAPPED,
  '200k clients/s|300 ms|50 at once': CAPPED,
  '200k clients/s|500 ms|50 at once': CAPPED,
};

const keyOf = (cell: Cell) => `${cell.writer}|${cell.rtt} ms|${cell.service}`;

function meets(cell: Cell): boolean {
  return (
    cell.reachS !== undefined &&
    cell.reachS <= MAX_START_UP_S &&
    cell.steady / cell.target >= FLOOR_SHARE &&
    cell.steadyThrottledShare <= MAX_THROTTLED &&
    cell.throttledShare <= MAX_THROTTLED
  );
}

describe('export --prefetch auto, simulated: writers of 50k and 200k clients a second, 0–500 ms round trips', () => {
  for (const writer of Object.keys(WRITERS) as (keyof typeof WRITERS)[]) {
    for (const name of Object.keys(SERVICES)) {
      it(`${writer}, ${name}: ≥ 0.9 of min(writer, limit, cap / round trip) after start-up, ≤ 2% 429s, except the cells known short`, () => {
        for (const rtt of RTTS) {
          const cell = runCell(writer, rtt, name, BOUND);
          table.push({ now: cell, before: WITH_OLD_CAP ? runCell(writer, rtt, name, OLD_CAP) : undefined });
          const label = `${writer}, ${rtt} ms, ${name}`;
          expect(cell.failedRows, label).toBe(0);
          if (KNOWN_SHORT[keyOf(cell)] !== undefined) {
            expect(meets(cell), `${label} is listed as short (${KNOWN_SHORT[keyOf(cell)]}) but now meets the target: take it off KNOWN_SHORT and update docs/export.md`).toBe(false);
            continue;
          }
          expect(cell.reachS, `${label}: never reached 0.9 × ${Math.round(cell.target)}/s`).toBeDefined();
          expect(cell.reachS!, label).toBeLessThanOrEqual(MAX_START_UP_S);
          expect(cell.steady / cell.target, label).toBeGreaterThanOrEqual(FLOOR_SHARE);
          expect(cell.steadyThrottledShare, label).toBeLessThanOrEqual(MAX_THROTTLED);
          expect(cell.throttledShare, `${label}, the whole run`).toBeLessThanOrEqual(MAX_THROTTLED);
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
