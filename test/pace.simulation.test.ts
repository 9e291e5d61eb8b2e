/**
 * `--concurrency auto` beyond this machine: the real controller driven by a simulated signer
 * and service on a virtual clock (pace.simulator.ts), so machines of 2 to 64 cores and round
 * trips up to 500 ms are checked in a few seconds of test time. PACE_TABLE=FILE writes the
 * table that bench/README.md and docs/import.md quote.
 */
import { writeFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { MIN_IN_FLIGHT_BOUND, requestBound } from '../src/service/in-flight-bound.js';
import { ceilingRate, figuresOf, type RunFigures, type SimClient, type SimService, secondsToReach, simulateImport } from './pace.simulator.js';

/**
 * Virtual seconds: enough for slow start at 500 ms and, under a limit, for one probe past a
 * ceiling the service enforced (QUIET_MS after its 429), so the steady rows count its cost.
 */
const SECONDS = { free: 20, limited: 60 };
/** What every cell must show after start-up: this share of the floor, at most this share of 429s. */
const FLOOR_SHARE = 0.9;
const MAX_THROTTLED = 0.02;
/** Start-up ends within this (64 cores at 500 ms need 8,000 in flight: 13 s of growth). */
const MAX_START_UP_S = 15;
/** The table's last column, the old cap's run of each cell, only when writing the table. */
const WITH_OLD_CAP = process.env.PACE_TABLE !== undefined;
/** 250 signatures a second per core: an RSA-4096 signature costs about 4 ms of CPU. */
const SIGN_MS = 4;
/** The bound a machine of `cores` cores gets: 4 GiB a core, files not limiting. */
const boundFor = (cores: number) => requestBound({ memoryBytes: cores * 4 * 2 ** 30, openFiles: undefined });
/** The fixed cap `auto` had before it took the machine's bound. */
const OLD_CAP = 64;

const SERVICES: Record<string, Omit<SimService, 'rttMs' | 'jitterMs'>> = {
  'no limit': { ratePerSecond: 0, maxConcurrent: 0, retryAfterMs: 1000 },
  '100/s': { ratePerSecond: 100, maxConcurrent: 0, retryAfterMs: 1000 },
  '1,000/s': { ratePerSecond: 1000, maxConcurrent: 0, retryAfterMs: 1000 },
  '50 at once': { ratePerSecond: 0, maxConcurrent: 50, retryAfterMs: 1000 },
};

interface Cell extends RunFigures {
  cores: number;
  rtt: number;
  service: string;
  bound: number;
  target: number;
}

function runCell(cores: number, rtt: number, name: string, bound: number): Cell {
  const seconds = name === 'no limit' ? SECONDS.free : SECONDS.limited;
  const client: SimClient = { cores, signMs: SIGN_MS, bound, startLimit: 8 };
  // Jitter: a fifth of the round trip either way.
  const service: SimService = { ...SERVICES[name]!, rttMs: () => rtt, jitterMs: rtt / 5 };
  const run = simulateImport(client, service, seconds, cores * 1000 + rtt);
  const target = ceilingRate(client, service, rtt);
  return { cores, rtt, service: name, bound, target, ...figuresOf(run, target, seconds) };
}

const CORES = [2, 8, 16, 64];
const RTTS = [0, 20, 150, 300, 500];
const table: { now: Cell; before: Cell | undefined }[] = [];
const steps: { name: string; reach: (number | undefined)[] }[] = [];

/** Every cell, limited or not: start-up within half the run, then ≥ 0.9 of the floor with ≤ 2% 429s, no row failed. */
function expectCell(cell: Cell): void {
  const name = `${cell.cores} cores, ${cell.rtt} ms, ${cell.service}`;
  expect(cell.reachS, `${name}: never reached 0.9 × ${Math.round(cell.target)}/s`).toBeDefined();
  expect(cell.reachS!, name).toBeLessThanOrEqual(MAX_START_UP_S);
  expect(cell.steady / cell.target, name).toBeGreaterThanOrEqual(FLOOR_SHARE);
  expect(cell.steadyThrottledShare, name).toBeLessThanOrEqual(MAX_THROTTLED);
  expect(cell.throttledShare, `${name}, the whole run`).toBeLessThanOrEqual(MAX_THROTTLED);
  expect(cell.failedRows, name).toBe(0);
}

describe('auto concurrency, simulated on 2–64 cores and 0–500 ms round trips', () => {
  for (const cores of CORES) {
    it(`${cores} cores, no service limit: the signer's floor at every round trip, with no fixed cap`, () => {
      for (const rtt of RTTS) {
        const cell = runCell(cores, rtt, 'no limit', boundFor(cores));
        table.push({ now: cell, before: WITH_OLD_CAP ? runCell(cores, rtt, 'no limit', OLD_CAP) : undefined });
        expectCell(cell);
        expect(cell.throttledShare).toBe(0);
      }
    });

    for (const name of ['100/s', '1,000/s', '50 at once']) {
      it(`${cores} cores, ${name}: ≥ 0.9 of min(signer, limit, cap / round trip) after start-up, ≤ 2% 429s`, () => {
        for (const rtt of RTTS) {
          const now = runCell(cores, rtt, name, boundFor(cores));
          table.push({ now, before: WITH_OLD_CAP ? runCell(cores, rtt, name, OLD_CAP) : undefined });
          expectCell(now);
        }
      });
    }
  }

  it('a latency step 20 → 300 → 20 ms: back to 0.9 of the floor within seconds of each step', () => {
    const client: SimClient = { cores: 8, signMs: SIGN_MS, bound: boundFor(8), startLimit: 8 };
    const rttMs = (t: number) => (t >= 10_000 && t < 20_000 ? 300 : 20);
    const run = simulateImport(client, { ...SERVICES['no limit']!, rttMs, jitterMs: 4 }, 30, 8020);
    const floor = (client.cores * 1000) / SIGN_MS;
    const after = (second: number) => secondsToReach(run.perSecond.slice(second), floor);
    steps.push({ name: 'latency step 20 → 300 ms (at 10 s) → 20 ms (at 20 s), 8 cores', reach: [after(0), after(10), after(20)] });
    // 300 ms needs 600 in flight: first the rise reads as a queue (cut, until 300 ms is the
    // remembered minimum, ten round trips), then quarter steps from there (simulated: 7 s).
    expect(after(10)).toBeLessThanOrEqual(8);
    expect(after(20)).toBeLessThanOrEqual(1);
    expect(run.perSecond.slice(18, 20).every((rows) => rows >= 0.9 * floor)).toBe(true);
  });

  it('an outage of 5 s: the breaker pauses the run, and it is back at 0.9 within seconds', () => {
    const client: SimClient = { cores: 8, signMs: SIGN_MS, bound: boundFor(8), startLimit: 8 };
    const service: SimService = { ...SERVICES['no limit']!, rttMs: () => 150, jitterMs: 30, outage: { from: 10_000, to: 15_000 } };
    const run = simulateImport(client, service, 30, 8150);
    const floor = (client.cores * 1000) / SIGN_MS;
    const back = secondsToReach(run.perSecond.slice(15), floor);
    steps.push({ name: 'outage 10–15 s (503 to everything), 8 cores, 150 ms', reach: [secondsToReach(run.perSecond.slice(0, 10), floor), back] });
    expect(run.failedRows).toBe(0);
    expect(back).toBeLessThanOrEqual(8);
  });

  it('the bound is at least 1,024 and grows with the machine', () => {
    expect(requestBound({ memoryBytes: 2 ** 30, openFiles: undefined })).toBe(MIN_IN_FLIGHT_BOUND);
    expect(boundFor(2)).toBe(8192);
    expect(boundFor(64)).toBe(16_384);
    expect(requestBound({ memoryBytes: 2 ** 40, openFiles: 4096 })).toBe(4096 - 256);
  });

  afterAll(() => {
    if (!process.env.PACE_TABLE) return;
    const lines = [
      '| cores | round trip | service | floor rows/s | rows/s (ratio) | 0.9 reached | 429s: run, after start-up | limit at the end | the old cap of 64: rows/s (ratio), 429s |',
      '|---|---|---|---|---|---|---|---|---|',
    ];
    const ratio = (c: Cell, target: number) => `${Math.round(c.steady)} (${(c.steady / target).toFixed(2)})`;
    const share = (value: number) => `${(value * 100).toFixed(1)}%`;
    for (const { now, before } of table) {
      lines.push(
        `| ${now.cores} | ${now.rtt} ms | ${now.service} | ${Math.round(now.target)} | ${ratio(now, now.target)} | ${now.reachS === undefined ? 'not' : `${now.reachS} s`} | ${share(now.throttledShare)}, ${share(now.steadyThrottledShare)} | ${now.limit} | ${before === undefined ? '' : `${ratio(before, now.target)}, ${share(before.throttledShare)}`} |`,
      );
    }
    lines.push('', '| scenario | seconds to 0.9 of the floor: at the start, after each change |', '|---|---|');
    for (const step of steps) lines.push(`| ${step.name} | ${step.reach.map((s) => (s === undefined ? 'not' : `${s} s`)).join(', ')} |`);
    lines.push('', ...summary(table.map(({ now }) => now), share));
    writeFileSync(process.env.PACE_TABLE, `${lines.join('\n')}\n`);
  });
});

/** docs/import.md's table: per service and round trip, the worst of 2–64 cores. */
function summary(cells: Cell[], share: (value: number) => string): string[] {
  const lines = ['| service | round trip | rows/s ÷ floor, lowest | 0.9 reached, latest | 429s of all requests, most |', '|---|---|---|---|---|'];
  for (const service of Object.keys(SERVICES)) {
    for (const rtt of RTTS) {
      const group = cells.filter((cell) => cell.service === service && cell.rtt === rtt);
      const lowest = Math.min(...group.map((cell) => cell.steady / cell.target));
      const latest = Math.max(...group.map((cell) => cell.reachS ?? Number.POSITIVE_INFINITY));
      const most = Math.max(...group.map((cell) => cell.throttledShare));
      lines.push(`| ${service} | ${rtt} ms | ${lowest.toFixed(2)} | ${latest} s | ${share(most)} |`);
    }
  }
  return lines;
}
