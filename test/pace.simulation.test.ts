/**
 * `--concurrency auto` beyond this machine: the real controller driven by a simulated signer
 * and service on a virtual clock (pace.simulator.ts), so machines of 2 to 64 cores and round
 * trips up to 500 ms are checked in a few seconds of test time. PACE_TABLE=FILE writes the
 * table that bench/README.md and docs/import.md quote; NOISE_TABLE=FILE the noise cells' table,
 * WHOLE_RUN_TABLE=FILE the whole runs'.
 */
import { writeFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { SLOW_START_GROWTH } from '../src/service/concurrency.js';
import { MIN_IN_FLIGHT_BOUND, requestBound } from '../src/service/in-flight-bound.js';
import { rememberedStart } from '../src/service/pace-memory.js';
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
  // No overshoot: once settled, no more in flight than the pace needs, and room. (At no
  // distance the simulated round trip is zero: a burst of signed rows is on the wire for no
  // time at all, and the bound is 16. Under a token bucket a probe past the ceiling, once every
  // QUIET_MS, spends the credit the bucket saved meanwhile: answers/s do grow while it lasts,
  // and so does what is in flight.)
  if (cell.rtt > 0 && !SERVICES[cell.service]!.ratePerSecond) expect(cell.lateInFlight, `${name}: in flight`).toBeLessThanOrEqual(inFlightBound(cell.steady, cell.rtt));
}

/** The most requests in flight a settled pace may keep: 1.5 × rows/s × round trip + 16. */
function inFlightBound(rowsPerSecond: number, rttMs: number): number {
  return 1.5 * rowsPerSecond * (rttMs / 1000) + 16;
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

/**
 * A flaky service: a share of requests answered 5xx (two thirds) or 429 (one third) at random,
 * whatever the pace, 120 ± 80 ms away; alone, or beside a real limit. Every 429 pauses the whole
 * client for its Retry-After, `auto` or not, so the measure is a fixed --concurrency's run of
 * the same service, over the whole run (start-up included).
 */
const NOISE = { rtt: 120, jitter: 80, seconds: 60 };
const NOISE_SHARES = [0.01, 0.03, 0.1];
/** Against noise alone, `auto` keeps this share of --concurrency 64's pace at least. */
const NOISE_FLOOR_SHARE = 0.85;
/** Against noise beside a limit, this share of --concurrency 16's (near rate × round trip: the setting a user would pick). */
const LIMITED_NOISE_FLOOR_SHARE = 0.75;

interface NoiseCell {
  cores: number;
  service: string;
  noise: string;
  auto: SimRun;
  fixed: Record<16 | 64, SimRun>;
}

interface SimRun {
  rowsPerSecond: number;
  throttledShare: number;
  limit: number;
}

function runNoise(cores: number, service: string, failRate: number, throttleRate: number, fixed?: number, seed = 0): SimRun {
  const client: SimClient = { cores, signMs: SIGN_MS, bound: boundFor(cores), startLimit: 8, fixed };
  const sim: SimService = { ...SERVICES[service]!, rttMs: () => NOISE.rtt, jitterMs: NOISE.jitter, failRate, throttleRate };
  const run = simulateImport(client, sim, NOISE.seconds, cores * 1000 + Math.round(failRate * 1000) + seed);
  const rows = run.perSecond.reduce((a, b) => a + b, 0);
  return { rowsPerSecond: rows / NOISE.seconds, throttledShare: run.throttled / Math.max(1, run.requests), limit: run.limits.at(-1)! };
}

function noiseCell(cores: number, service: string, noise: string, failRate: number, throttleRate: number, seed = 0): NoiseCell {
  const run = (fixed?: number) => runNoise(cores, service, failRate, throttleRate, fixed, seed);
  return { cores, service, noise, auto: run(), fixed: { 16: run(16), 64: run(64) } };
}

const noiseTable: NoiseCell[] = [];

describe('auto concurrency against a flaky service: random 5xx and 429s are noise, not overload', () => {
  for (const cores of [2, 16]) {
    it(`${cores} cores, 2% 5xx + 1% 429 at random, 120 ± 80 ms: ≥ ${NOISE_FLOOR_SHARE} of --concurrency 64`, () => {
      // The rehearsal that collapsed (16 → 1): the 3% cell's mix, another draw of it.
      const cell = noiseCell(cores, 'no limit', '2% 5xx + 1% 429', 0.02, 0.01, 1);
      noiseTable.push(cell);
      expect(cell.auto.rowsPerSecond / cell.fixed[64].rowsPerSecond).toBeGreaterThanOrEqual(NOISE_FLOOR_SHARE);
      // It did not settle low: well past the 16 a collapse starts from.
      expect(cell.auto.limit).toBeGreaterThan(64);
    });

    for (const service of ['no limit', '100/s', '50 at once']) {
      it(`${cores} cores, ${service}, 1%, 3% and 10% of requests refused at random`, () => {
        const cells = NOISE_SHARES.map((share) => noiseCell(cores, service, `${share * 100}%`, (share * 2) / 3, share / 3));
        noiseTable.push(...cells);
        for (const cell of cells) {
          const label = `${cores} cores, ${service}, ${cell.noise}`;
          if (service === 'no limit') expect(cell.auto.rowsPerSecond / cell.fixed[64].rowsPerSecond, label).toBeGreaterThanOrEqual(NOISE_FLOOR_SHARE);
          else expect(cell.auto.rowsPerSecond / cell.fixed[16].rowsPerSecond, label).toBeGreaterThanOrEqual(LIMITED_NOISE_FLOOR_SHARE);
        }
      });
    }
  }

  afterAll(() => {
    if (!process.env.NOISE_TABLE) return;
    const run = (r: SimRun) => `${Math.round(r.rowsPerSecond)} (${(r.throttledShare * 100).toFixed(1)}%)`;
    const lines = [
      '| cores | service | refused at random | auto rows/s (429s) | limit at the end | --concurrency 16 | --concurrency 64 | auto ÷ 64 |',
      '|---|---|---|---|---|---|---|---|',
      ...noiseTable.map(
        (c) =>
          `| ${c.cores} | ${c.service} | ${c.noise} | ${run(c.auto)} | ${c.auto.limit} | ${run(c.fixed[16])} | ${run(c.fixed[64])} | ${(c.auto.rowsPerSecond / c.fixed[64].rowsPerSecond).toFixed(2)} |`,
      ),
    ];
    writeFileSync(process.env.NOISE_TABLE, `${lines.join('\n')}\n`);
  });
});

/**
 * Whole runs of 40,000 rows against a service with no limit, start-up included: the time to
 * the last row's answer against the floor's (a client keeping the signer's pace × the round trip
 * in flight from its first row, 4 a core at least): a first run, and a repeat that starts from
 * where the first settled (pace memory: half of it, doubling back within a round trip).
 */
const WHOLE_RUN_ROWS = 40_000;
const wholeTable: { cores: number; rtt: number; floorS: number; cold: number; remembered: number; start: number; late: number; bound: number }[] = [];
/**
 * Slow start's round trips from 8 in flight to what the pace needs (doubling to 64, then by a
 * half), in seconds: what a first run pays before it meets its pace.
 */
function rampSeconds(perSecond: number, rttMs: number): number {
  const need = (perSecond * rttMs) / 1000;
  const windows = need <= 64 ? Math.log2(Math.max(need, 8) / 8) : 3 + Math.log(need / 64) / Math.log(1 + SLOW_START_GROWTH);
  return (windows * rttMs) / 1000;
}
/**
 * A first run (no pace memory) loses about two thirds of its ramp against the floor, so it is
 * held to the floor share where the ramp is at most a sixth of the floor's whole run. Shorter
 * runs cannot be: the floor sends the signer's pace × the round trip before any answer, which no
 * client may do against a service whose limits it does not know yet (a faster ramp passes 2%
 * 429s in the 1,000/s cells: docs/import.md). Pace memory holds the repeats.
 */
const COLD_HELD = (ramp: number, floorS: number) => ramp <= floorS / 6;

describe('whole runs of 40,000 rows, start-up included: a first run, and a repeat from pace memory', () => {
  for (const cores of CORES) {
    it(`${cores} cores at 0–500 ms: a repeat run ≥ 0.9 of the floor's whole run, and a first run where it has room to ramp`, () => {
      for (const rtt of [0, 150, 300, 500]) {
        const floor = (cores * 1000) / SIGN_MS;
        const service: SimService = { ...SERVICES['no limit']!, rttMs: () => rtt, jitterMs: rtt / 5 };
        const client: SimClient = { cores, signMs: SIGN_MS, bound: boundFor(cores), startLimit: 8, rows: WHOLE_RUN_ROWS };
        const fixed = Math.max(4 * cores, Math.ceil((floor * rtt) / 1000));
        const floorRun = simulateImport({ ...client, fixed }, service, 300, cores * 1000 + rtt + 2);
        const first = simulateImport(client, service, 300, cores * 1000 + rtt);
        const start = rememberedStart({ settled: first.settled!, throttled: false, at: '' }, client.startLimit, client.bound);
        const repeat = simulateImport({ ...client, startLimit: start }, service, 300, cores * 1000 + rtt + 1);
        const late = figuresOf(first, floor, first.perSecond.length).lateInFlight;
        const cell = {
          cores,
          rtt,
          floorS: floorRun.finishedMs! / 1000,
          cold: floorRun.finishedMs! / first.finishedMs!,
          remembered: floorRun.finishedMs! / repeat.finishedMs!,
          start,
          late,
          bound: inFlightBound(WHOLE_RUN_ROWS / (first.finishedMs! / 1000), rtt),
        };
        wholeTable.push(cell);
        const name = `${cores} cores, ${rtt} ms`;
        // Settling takes SETTLE_WINDOWS windows after the ramp: a run of a few seconds ends first
        // (the endless cells above hold every machine to the bound once settled).
        if (rtt > 0 && first.finishedMs! >= SECONDS.free * 1000) expect(late, `${name}, in flight once settled`).toBeLessThanOrEqual(cell.bound);
        expect(cell.remembered, `${name}, from memory`).toBeGreaterThanOrEqual(FLOOR_SHARE);
        if (COLD_HELD(rampSeconds(floor, rtt), cell.floorS)) expect(cell.cold, `${name}, first run`).toBeGreaterThanOrEqual(FLOOR_SHARE);
      }
    });
  }

  afterAll(() => {
    if (!process.env.WHOLE_RUN_TABLE) return;
    const lines = [
      '| cores | round trip | the floor\'s whole run | first run ÷ floor | first run: in flight once settled (1.5 × rows/s × round trip + 16) | repeat from pace memory ÷ floor (its start) |',
      '|---|---|---|---|---|---|',
      ...wholeTable.map((c) => `| ${c.cores} | ${c.rtt} ms | ${c.floorS.toFixed(1)} s | ${c.cold.toFixed(2)} | ${c.late} (${Math.round(c.bound)}) | ${c.remembered.toFixed(2)} (${c.start}) |`),
    ];
    writeFileSync(process.env.WHOLE_RUN_TABLE, `${lines.join('\n')}\n`);
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
