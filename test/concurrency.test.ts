import { describe, expect, it } from 'vitest';
import { type FaultTable, judgeFaults, type LimitFaults, record } from '../src/service/fault-share.js';
import { tellsReady } from '../src/import/send/send-window.js';
import { createAdaptiveLimit } from '../src/service/adaptive-limit.js';
import {
  BASELINE_WINDOWS,
  type ControllerState,
  initialState,
  type Observation,
  observe,
  PROBE_WINDOWS,
  QUIET_MS,
} from '../src/service/concurrency.js';

const bounds = { min: 1, max: 64 };

/** A window's worth of answers: `ok` fast ones then `throttled` 429s, all slots busy. */
function answers(state: ControllerState, spec: { ok?: number; throttled?: number; overloaded?: number; latencyMs?: number; inFlight?: number }): Observation[] {
  const inFlight = spec.inFlight ?? state.limit;
  return [
    ...Array.from({ length: spec.ok ?? 0 }, () => ({ kind: 'ok' as const, latencyMs: spec.latencyMs ?? 50, inFlight })),
    ...Array.from({ length: spec.throttled ?? 0 }, () => ({ kind: 'throttled' as const, inFlight })),
    ...Array.from({ length: spec.overloaded ?? 0 }, () => ({ kind: 'overloaded' as const, inFlight })),
  ];
}

function feed(state: ControllerState, seen: Observation[], within = bounds): ControllerState {
  return seen.reduce((s, o) => observe(s, o, within), state);
}

/** `n` full windows of healthy answers at `latencyMs`. */
function healthy(state: ControllerState, n: number, latencyMs = 50, busy = true, within = bounds): ControllerState {
  let s = state;
  for (let i = 0; i < n; i++) s = feed(s, answers(s, { ok: Math.max(s.limit, 4), latencyMs, inFlight: busy ? s.limit : 1 }), within);
  return s;
}

describe('concurrency controller: one window from a given limit', () => {
  it.each([
    // name, start limit, ceiling known?, window, expected limit, expected ceiling
    ['slow start doubles when every slot was busy', 8, undefined, { ok: 8 }, 16, undefined],
    ['slots not all busy: the limit nobody used stays', 8, undefined, { ok: 8, inFlight: 3 }, 8, undefined],
    ['an unfinished window decides nothing', 8, undefined, { ok: 7 }, 8, undefined],
    ['one 429 in 8: down to the share that got through, the new ceiling', 8, undefined, { ok: 7, throttled: 1 }, 7, 7],
    ['a bucket emptied at 64: 8 of 64 through → 8', 64, undefined, { ok: 8, throttled: 56 }, 8, 8],
    ['every answer a 429: down to the minimum', 16, undefined, { throttled: 16 }, 1, 1],
    ['a burst of 5xx or timeouts (8 in 20) decreases like a 429, but sets no ceiling', 20, undefined, { ok: 12, overloaded: 8 }, 12, undefined],
    ['two 5xx in 20 with nothing to compare them to: not yet overload, the window counts as healthy', 20, undefined, { ok: 18, overloaded: 2 }, 40, undefined],
    ['one 5xx in 40 is bad luck, not overload: the window still counts as healthy', 20, undefined, { ok: 39, overloaded: 1 }, 40, undefined],
    ['a rare 429 still decreases by at least 10%; the ceiling is what got through', 40, undefined, { ok: 39, throttled: 1 }, 36, 39],
    ['below a known ceiling: fast growth, up to it', 8, 10, { ok: 8 }, 10, 10],
    ['at the ceiling: wait for PROBE_WINDOWS calm windows', 10, 10, { ok: 10 }, 10, 10],
    ['growth stops at --max-concurrency', 60, undefined, { ok: 60 }, 64, undefined],
  ] as const)('%s', (_name, limit, ceiling, window, expectedLimit, expectedCeiling) => {
    const start = { ...initialState(limit, bounds), ceiling };
    const next = feed(start, answers(start, window));
    expect(next.limit).toBe(expectedLimit);
    expect(next.ceiling).toBe(expectedCeiling);
  });
});

describe('concurrency controller: over many windows', () => {
  it('slow start from 8 reaches the maximum in three round trips', () => {
    let s = initialState(8, bounds);
    const limits: number[] = [];
    for (let i = 0; i < 4; i++) {
      s = healthy(s, 1);
      limits.push(s.limit);
    }
    expect(limits).toEqual([16, 32, 64, 64]);
  });

  it('after the first decrease (here a latency rise), growth is by a quarter a round trip', () => {
    const wide = { min: 1, max: 1000 };
    let s = healthy(initialState(10, wide), 1, 50, true, wide);
    expect(s.limit).toBe(20);
    s = feed(s, answers(s, { ok: 20, latencyMs: 500 }), wide);
    expect([s.limit, s.slowStart]).toEqual([18, false]);
    const limits: number[] = [];
    for (let i = 0; i < 4; i++) {
      s = healthy(s, 1, 50, true, wide);
      limits.push(s.limit);
    }
    // The first window after the cut is still waiting on the answers sent before it.
    expect(limits).toEqual([18, 23, 29, 37]);
  });

  it('answers from requests sent before a decrease are not judged again', () => {
    let s = initialState(64, bounds);
    s = feed(s, answers(s, { ok: 8, throttled: 56 }));
    expect([s.limit, s.ceiling, s.ignore]).toEqual([8, 8, 56]);
    // The 56 still in flight at the old limit answer 429 too: no second decrease.
    s = feed(s, answers(s, { throttled: 56 }));
    expect([s.limit, s.ignore]).toEqual([8, 0]);
  });

  it('a latency rise decreases; a latency that stays becomes the new normal and growth resumes', () => {
    const within = { min: 1, max: 20 };
    let s = healthy(initialState(20, within), 3, 20, true, within);
    expect(s.limit).toBe(20);
    s = feed(s, answers(s, { ok: 20, latencyMs: 300 }), within);
    expect(s.limit).toBe(18);
    const after: number[] = [];
    for (let i = 0; i < BASELINE_WINDOWS + 3; i++) {
      s = feed(s, answers(s, { ok: Math.max(s.limit, 4), latencyMs: 300 }), within);
      if (s.ignore > 0) s = feed(s, answers(s, { ok: s.ignore, latencyMs: 300 }), within);
      after.push(s.limit);
    }
    // Decreases while 20 ms is remembered, then 300 ms is the baseline and the limit grows.
    expect(Math.min(...after)).toBeLessThan(18);
    expect(after.at(-1)!).toBeGreaterThan(Math.min(...after));
  });

  it('a latency rise alone never pushes the limit below half of where it began', () => {
    let s = healthy(initialState(20, { min: 1, max: 20 }), 3, 20, true, { min: 1, max: 20 });
    for (let i = 0; i < 8; i++) s = feed(s, answers(s, { ok: Math.max(s.limit, 4) + s.ignore, latencyMs: 300 }), { min: 1, max: 20 });
    expect(s.limit).toBe(10);
    expect(s.riseFloor).toBe(10);
  });

  it('a latency drop raises nothing by itself but keeps growth going', () => {
    let s = healthy(initialState(8, bounds), 2, 300);
    const before = s.limit;
    s = healthy(s, 2, 20);
    expect(s.limit).toBeGreaterThan(before);
  });

  it('a window where nothing got through and nothing said 429 is an outage: the limit stays', () => {
    const s = feed(initialState(32, bounds), answers(initialState(32, bounds), { overloaded: 32 }));
    expect([s.limit, s.ceiling]).toEqual([32, undefined]);
  });

  it('under a cap on concurrent requests, growth returns straight to it', () => {
    // 64 in flight against a cap of 50: 50 through. Down by the share, the ceiling at 50.
    let s = initialState(64, bounds);
    s = feed(s, answers(s, { ok: 50, throttled: 14 }));
    expect([s.limit, s.ceiling]).toEqual([50, 50]);
    s = feed({ ...s, ignore: 0 }, answers(s, { ok: 49, throttled: 1 }));
    expect([s.limit, s.ceiling]).toEqual([45, 49]);
    s = healthy({ ...s, ignore: 0 }, 1);
    expect(s.limit).toBe(49);
  });

  it('past the ceiling after PROBE_WINDOWS calm windows, by a step that doubles while no 429 comes', () => {
    let s: ControllerState = { ...initialState(10, bounds), ceiling: 10 };
    s = healthy(s, PROBE_WINDOWS - 1);
    expect(s.limit).toBe(10);
    s = healthy(s, 1);
    expect([s.limit, s.ceiling]).toEqual([11, 11]);
    s = healthy(s, PROBE_WINDOWS);
    expect([s.limit, s.ceiling]).toEqual([13, 13]);
    s = healthy(s, PROBE_WINDOWS);
    expect([s.limit, s.ceiling]).toEqual([17, 17]);
  });

  it('an idle pipe (signing cannot feed the slots) never grows the limit', () => {
    const s = healthy(initialState(8, bounds), 50, 50, false);
    expect(s.limit).toBe(8);
  });

  it('the limit is clamped to the bounds from the start', () => {
    expect(initialState(100, bounds).limit).toBe(64);
    expect(initialState(0, bounds).limit).toBe(1);
  });

  it('against a simulated token bucket, settles near rate × latency with few 429s', () => {
    // 150 requests/s, 50 ms per request, a bucket of one second: the best limit is 7 or 8.
    const rate = 150;
    const latency = 0.05;
    let tokens = rate;
    let s = initialState(8, bounds);
    let throttled = 0;
    let sent = 0;
    const held: number[] = [];
    for (let tick = 0; tick < 800; tick++) {
      // One round trip: `limit` requests go out; the bucket refills for one latency.
      tokens = Math.min(rate, tokens + rate * latency);
      const seen: Observation[] = [];
      for (let i = 0; i < s.limit; i++) {
        sent++;
        if (tokens >= 1) {
          tokens -= 1;
          seen.push({ kind: 'ok', latencyMs: 50, inFlight: s.limit });
        } else {
          throttled++;
          seen.push({ kind: 'throttled', inFlight: s.limit });
        }
      }
      // A 429 pauses the client for Retry-After (1 s): the bucket refills meanwhile.
      if (seen.some((o) => o.kind === 'throttled')) tokens = rate;
      s = feed(s, seen);
      if (tick >= 400) held.push(s.limit);
    }
    expect(throttled / sent).toBeLessThan(0.02);
    const mean = held.reduce((a, b) => a + b, 0) / held.length;
    expect(mean).toBeGreaterThan(6);
    expect(mean).toBeLessThan(11);
  });
});

describe('concurrency controller: told how many requests wait ready for a slot', () => {
  /** A full window of `limit` answers, the ready queue moving from `first` to `last` across it. */
  function window(state: ControllerState, first: number, last: number, within = bounds): ControllerState {
    const n = Math.max(state.limit, 4);
    const seen: Observation[] = Array.from({ length: n }, (_, i) => ({ kind: 'ok', latencyMs: 50, inFlight: state.limit, ready: Math.round(first + ((last - first) * i) / (n - 1)) }));
    return feed(state, seen, within);
  }

  /** Full windows, one per value: the ready queue at each window's answers. */
  const windows = (state: ControllerState, readies: number[], within = bounds) => readies.reduce((s, ready) => window(s, ready, ready, within), state);
  /** The import's: room to grow, and settling. */
  const wide = { min: 1, max: 4096, settle: true };

  it.each([
    // name, ready at the end of each of two full windows from a limit of 32, the limit after, still in slow start
    ['ready rows piling up (the signer outruns the wire): slow start grows', [100, 200], 96, true],
    ['ready rows steady (a full backlog): grows', [100, 100], 96, true],
    ['ready rows falling by a few (jitter): grows', [100, 97], 96, true],
    ['ready rows falling once (a pause of the signer): the limit stays, slow start goes on', [100, 60], 64, true],
    ['ready rows falling twice in a row (the wire outruns the signer): the limit stays, whatever keeps its slots busy', [100, 60, 20], 64, false],
  ] as const)('%s', (_name, readies, expected, slowStart) => {
    const state = windows(initialState(32, wide), [...readies], wide);
    expect([state.limit, state.slowStart]).toEqual([expected, slowStart]);
  });

  it("a window's own growth is no drain: the slots it adds take that many ready rows at once", () => {
    // 32 → 64: the 32 new slots take 32 of the 1,000 rows ready; the signer made none meanwhile.
    expect(windows(initialState(32, wide), [1000, 968], wide)).toMatchObject({ limit: 96, slowStart: true });
    expect(windows(initialState(32, wide), [1000, 968, 936], wide)).toMatchObject({ limit: 144, slowStart: true });
  });

  it.each([
    // name, the reader waits for the window, every signing place taken (or rows queue for one), told
    ['the signer is the bound (rows queue for a signing place)', true, true, true],
    ['the reader waits for room and a signer is free: the rows run down because none are read', true, false, false],
    ['the reader is not held (reading, or past the file end): told', false, false, true],
    ['the reader is not held and the signers are busy', false, true, true],
  ] as const)('tellsReady: %s', (_name, readerWaits, signersBusy, told) => {
    expect(tellsReady({ readerWaits, signersBusy })).toBe(told);
  });

  it('the backlog stays open (growing) after the signer became the bound, and closes at the first cut', () => {
    let now = 0;
    const limit = createAdaptiveLimit({ limit: 'auto', start: 32, max: 4096, now: () => now, settle: true });
    /** One round trip's answers, every slot busy; `failing`: every other one a 503. */
    const round = (ready: number, failing = false) => {
      const size = limit.current;
      now += 100;
      for (let i = 0; i < size; i++) limit.observe({ status: failing && i % 2 === 0 ? 503 : 200, ms: 100 }, size, { ready });
    };
    round(1000);
    round(900);
    round(800);
    // Two drains in a row: slow start is over, the signer is the bound, and it still signs ahead.
    expect(limit.limits().current).toBe(64);
    expect(limit.growing).toBe(true);
    round(800, true);
    expect(limit.growing).toBe(false);
  });

  it('measured from the end of one window to the end of the next: a burst of answers taking ready rows within a window is not a drain', () => {
    // Each window's answers come together and take 30 ready rows; between the bursts the signer makes 40.
    let state = initialState(32, wide);
    for (let end = 100; end < 200; end += 10) state = window(state, end + 30, end, wide);
    expect(state.slowStart).toBe(true);
    expect(state.limit).toBeGreaterThan(1000);
  });

  it('once the rows signed ahead are gone, windows that do not fill it settle the limit to 1.5 × what they used + 16', () => {
    // Grown to 1,500 (the first window has no end before it to say it drains), then held while the backlog drained; then the signer keeps 300 busy.
    let state = windows(initialState(1000, wide), [2000, 1000, 0], wide);
    expect([state.limit, state.slowStart]).toEqual([1500, false]);
    for (let i = 0; i < 8; i++) state = feed(state, Array.from({ length: state.limit }, () => ({ kind: 'ok' as const, latencyMs: 50, inFlight: 300, ready: 0 })), wide);
    expect(state.limit).toBe(1.5 * 300 + 16);
  });

  describe('told how many rows were made (signed) so far, with a clock', () => {
    /**
     * Full windows, one a round trip of 100 ms from `at` on, the ready queue steady at 500 (the
     * reader topping it up: no drain shows), the signer making `perMs` rows a millisecond.
     * `untold`: one answer of each window does not say how many are ready (the reader waited).
     */
    function clocked(start: number, n: number, perMs: number, { untold = false, made = true, burst = { round: -1, extra: 0 } } = {}): ControllerState {
      let state = initialState(start, wide);
      let at = 0;
      for (let round = 0; round < n; round++) {
        const size = state.limit;
        const seen: Observation[] = Array.from({ length: size }, (_, i) => {
          const now = at + (100 * (i + 1)) / size;
          const late = round >= burst.round && burst.round >= 0 ? burst.extra : 0;
          return { kind: 'ok', latencyMs: 100, inFlight: size, at: now, sentAt: now - 100, ready: untold && i === 0 ? undefined : 500, made: made ? Math.round(now * perMs) + late : undefined };
        });
        state = feed(state, seen, wide);
        at += 100;
      }
      return state;
    }

    it('a full window that did not drain grows no further than the pace rows are made at keeps busy: 1.5 × made a ms × latency + 16', () => {
      // 2 rows a ms × 100 ms = 200 keep the pace. The first window has no end before it to
      // measure from: 200 → 300 by slow start's half. Then not to 450 but 1.5 × 200 + 16 = 316.
      expect(clocked(200, 1, 2).limit).toBe(300);
      expect(clocked(200, 2, 2).limit).toBe(316);
      // And there it stays while the signer keeps that pace.
      expect(clocked(200, 6, 2).limit).toBe(316);
    });

    it("a burst of signatures that one window counts (finished late by a busy event loop) is not taken for the pace: the lower of two windows'", () => {
      // The third window counts 100 signatures more than 2 a ms made: 1.5 × 3 × 100 + 16 would be 466.
      expect(clocked(200, 3, 2, { burst: { round: 2, extra: 100 } }).limit).toBe(316);
    });

    it('a signer making more than the limit takes: growth as before', () => {
      expect(clocked(200, 2, 10).limit).toBe(450);
    });

    it('not while an answer of the window said nothing of the rows ready (the reader waited for room: what was made is what the wire took)', () => {
      expect(clocked(200, 2, 2, { untold: true }).limit).toBe(450);
    });

    it('not told what is made (the export): growth as before', () => {
      expect(clocked(200, 2, 2, { made: false }).limit).toBe(450);
    });

    it("after a cut, the round trip it leaves out and a 429's pause are not taken for the signer's pace", () => {
      // A window with 429s at its end cuts the limit. The round trip sent before the cut is not
      // judged and a pause follows, with nothing signed: the pace is measured again from the end
      // of the first window after it, not across that span.
      let state = initialState(200, wide);
      let at = 0;
      const window = (throttled = 0) => {
        const size = state.limit;
        const seen: Observation[] = Array.from({ length: size }, (_, i) => {
          const now = at + (100 * (i + 1)) / size;
          // With 429s, each says how many of the round still await an answer (the window closes with the round).
          const common = { inFlight: throttled > 0 ? size - i : size, at: now, sentAt: now - 100, ready: 500, made: Math.round(now * 10) };
          return i >= size - throttled ? { kind: 'throttled', ...common } : { kind: 'ok', latencyMs: 100, ...common };
        });
        state = feed(state, seen, wide);
        at += 100;
      };
      window();
      expect(state.madeAt).toBe(100);
      window(60);
      expect(state.cause).toBe('throttled');
      expect([state.madeBefore, state.madeAt]).toEqual([undefined, undefined]);
      at += 1100;
      window();
      expect(state.madeAt).toBe(1400);
    });
  });
});

describe('concurrency controller: with a clock (answers carry when they came and were sent)', () => {
  const wide = { min: 1, max: 1000 };
  /**
   * One round trip's answers at `latencyMs`, from `at` on, 1 ms apart, in the order given: each
   * says how many of the round still await an answer (itself included), as the send window does.
   */
  function round(kinds: ('ok' | 'throttled')[], at: number, latencyMs = 500): Observation[] {
    return kinds.map((kind, i) => {
      const common = { inFlight: kinds.length - i, at: at + i, sentAt: at + i - latencyMs };
      return kind === 'ok' ? { kind, latencyMs, ...common } : { kind, ...common };
    });
  }
  const many = (kind: 'ok' | 'throttled', n: number) => Array.from({ length: n }, () => kind);

  it('under a cap: what got through in the round trip after the first 429 is the ceiling, and growth returns to it', () => {
    // 51 in flight against a cap of 50: the first answer a 429, the other 50 through.
    let s = initialState(51, wide);
    s = feed(s, round(['throttled', ...many('ok', 50)], 1000), wide);
    expect([s.limit, s.ceiling]).toEqual([45, 50]);
    s = feed(s, round(many('ok', 45), 2000), wide);
    expect(s.limit).toBe(50);
  });

  it('under a token bucket: the others were sent over n − 1 of n parts of the round trip', () => {
    // 20 ms at 100 a second: 3 in flight, the first refused, 1 of the other 2 through → 2, not 1.
    let s = initialState(3, wide);
    s = feed(s, round(['throttled', 'throttled', 'ok'], 1000, 20), wide);
    expect(s.ceiling).toBe(2);
    // Slow start's overshoot: 64 in flight, 15 of the 63 after the first 429 through → 15.
    s = initialState(64, wide);
    s = feed(s, round(['throttled', ...many('throttled', 24), ...many('ok', 15), ...many('throttled', 24)], 1000, 150), wide);
    expect([s.limit, s.ceiling]).toEqual([15, 15]);
  });

  it('after a cut, no answer to a request sent before it is judged, however many come', () => {
    let s = initialState(64, wide);
    s = feed(s, round(['throttled', ...many('ok', 50), ...many('throttled', 13)], 1000), wide);
    const after = [s.limit, s.ceiling];
    // Retries and refills sent at 64 before the cut answer 429 too: not this limit's doing.
    s = feed(s, round(many('throttled', 40), 1100), wide);
    expect([s.limit, s.ceiling]).toEqual(after);
  });

  it('a fixed window refusing everything from its edge on: the recent pace, not the empty round trip', () => {
    let s = initialState(15, wide);
    // Two seconds at 100 a second, 150 ms each: 15 in flight...
    for (let t = 0; t < 2000; t += 150) s = feed(s, round(many('ok', 15), t, 150), wide);
    // ...then, at 20, the window's edge: 8 through, and everything after the first 429 refused.
    s = feed({ ...s, limit: 20 }, round([...many('ok', 8), ...many('throttled', 12)], 2100, 150), wide);
    // The recent pace says 15, the window's share 8: 8, not the round trip's 1.
    expect(s.ceiling).toBe(8);
  });

  it('probes past a ceiling wait QUIET_MS after the last 429, however short the windows', () => {
    let s: ControllerState = { ...initialState(10, wide), ceiling: 10, throttledAt: 0 };
    let at = 1;
    const windows = (n: number) => {
      for (let i = 0; i < n; i++) {
        s = feed(s, round(many('ok', s.limit), at, 20), wide);
        at += 20;
      }
    };
    windows(PROBE_WINDOWS * 10);
    expect(s.limit).toBe(10);
    at = QUIET_MS;
    windows(1);
    expect([s.limit, s.ceiling]).toEqual([11, 11]);
  });
});

describe('concurrency controller: refusals that do not rise with the window are noise', () => {
  const wide = { min: 1, max: 1000 };
  /**
   * Windows with every slot busy, where answer number i (counted over the run) is refused when
   * `refused(i, limit)`: 429 or 5xx as `kind` says. Returns the limits after each window.
   */
  function run(windows: number, refused: (i: number, limit: number) => boolean, kind: 'throttled' | 'overloaded' = 'throttled'): number[] {
    let s = initialState(8, wide);
    let i = 0;
    const limits: number[] = [];
    for (let n = 0; n < windows; n++) {
      const size = Math.max(s.limit, 4) + s.ignore;
      const seen: Observation[] = [];
      for (let k = 0; k < size; k++, i++) seen.push(refused(i, s.limit) ? { kind, inFlight: s.limit } : { kind: 'ok', latencyMs: 50, inFlight: s.limit });
      s = feed(s, seen, wide);
      limits.push(s.limit);
    }
    return limits;
  }

  it('one answer in 33 a 429 at every limit: the limit grows to its bound, as with none', () => {
    const limits = run(200, (i) => i % 33 === 17);
    expect(limits.at(-1)).toBe(1000);
  });

  it('one in 20 a 5xx at every limit: the same', () => {
    const limits = run(200, (i) => i % 20 === 3, 'overloaded');
    expect(limits.at(-1)).toBe(1000);
  });

  it('a cap of 40 at once (everything past it refused): the limit stays near the cap', () => {
    const limits = run(300, (i, limit) => i % limit >= 40);
    const late = limits.slice(-100);
    expect(Math.max(...late)).toBeLessThanOrEqual(48);
    expect(Math.min(...late)).toBeGreaterThanOrEqual(30);
  });

  it('a cap of 40 beside one 429 in 33 at random: still near the cap, not collapsed', () => {
    const limits = run(300, (i, limit) => i % limit >= 40 || i % 33 === 17);
    const late = limits.slice(-100);
    expect(Math.max(...late)).toBeLessThanOrEqual(64);
    expect(Math.min(...late)).toBeGreaterThanOrEqual(20);
  });

  it('the state tells where the limit peaked and what cut it last', () => {
    let s = initialState(8, bounds);
    s = healthy(s, 2);
    expect(s.peak).toBe(16);
    s = feed(s, answers(s, { ok: 8, throttled: 24 }));
    expect([s.limit, s.cause, s.peak]).toEqual([8, 'throttled', 16]);
  });
});

describe('fault share: judging a window against the windows at other limits', () => {
  const entry = (limit: number, answers: number, throttled: number, failed = 0): LimitFaults => ({ limit, answers, throttled, failed });
  const table = (...entries: LimitFaults[]): FaultTable => entries.reduce<FaultTable>((t, e) => record(t, e), []);

  it.each([
    // name, earlier windows, this window, kind, a limit is likely here, verdict
    ['no refusal: nothing to judge', [entry(10, 500, 0)], entry(20, 20, 0), 'throttled', false, 'none'],
    ['one 429 past a long clean run below, where a limit is likely: the limit', [entry(50, 1000, 0)], entry(51, 51, 1), 'throttled', true, 'limit'],
    ['one 429 with nothing known, no limit expected: too few to say', [], entry(20, 20, 1), 'throttled', false, 'none'],
    ['a burst (16 of 32) after clean windows: the limit', [entry(8, 8, 0), entry(16, 16, 0)], entry(32, 32, 16), 'throttled', false, 'limit'],
    ['3% at 64 where 3% came at 16 and 32: noise, even where a limit is likely', [entry(16, 400, 12), entry(32, 600, 18)], entry(64, 64, 2), 'throttled', true, 'noise'],
    ['cut from 64 to 32 and the 429s came as often: noise', [entry(64, 300, 3)], entry(32, 320, 3), 'throttled', true, 'noise'],
    ['cut from 64 (a fifth refused) to 32, one 429 there: not noise, the limit', [entry(64, 64, 14), entry(32, 600, 0)], entry(32, 32, 1), 'throttled', true, 'limit'],
    ['10% 5xx at 16 and 20% at 32: rising, overload', [entry(16, 400, 0, 40)], entry(32, 320, 0, 64), 'any', false, 'limit'],
    ['a third refused at 16 and at 8 alike: too large a share for noise, the limit', [entry(16, 300, 100)], entry(8, 8, 3), 'throttled', true, 'limit'],
    ['the same third at 8 where no limit is expected: not noise either, too few to say', [entry(16, 300, 100)], entry(8, 8, 3), 'throttled', false, 'none'],
  ] as const)('%s', (_name, earlier, window, kind, expectLimit, verdict) => {
    const t = record(table(...earlier), window);
    expect(judgeFaults(t, window, kind, expectLimit)).toBe(verdict);
  });

  it('an entry remembers its last ENTRY_ANSWERS answers, its share kept', () => {
    let t: FaultTable = [];
    for (let i = 0; i < 100; i++) t = record(t, entry(10, 100, 5));
    expect(t).toHaveLength(1);
    expect(t[0]!.answers).toBeCloseTo(2000);
    expect(t[0]!.throttled / t[0]!.answers).toBeCloseTo(0.05);
  });
});
