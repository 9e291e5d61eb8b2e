/**
 * `--concurrency auto` (import) and `--prefetch auto` (export): how many requests may be on
 * the wire, learned from their answers. Pure: no clock, no I/O. It is fed one observation per
 * finished attempt and returns the state holding the next limit, so table tests pin it.
 *
 * Judged once per window (max(limit, MIN_WINDOW) answers, about one round trip):
 * - a 429 in the window (or 5xx and timeouts above OVERLOAD_SHARE of it): multiplicative
 *   decrease to the share that got through (limit × ok/total, at most × DECREASE), and the
 *   new limit becomes the ceiling;
 * - mean latency above LATENCY_RISE × its recent minimum: decrease by DECREASE, to no less
 *   than half the limit the rise began at (a slower service is not a queue of ours);
 * - otherwise, if every slot was busy: double until the first decrease (slow start, as TCP's:
 *   at 150 ms a round trip, growing by a quarter took ten round trips to reach 64), then grow
 *   by a quarter while no ceiling is known, up to just under the ceiling as fast, and past it
 *   by one per PROBE_WINDOWS.
 * A window where the slots were not all busy (signing or reading could not feed them, or the
 * export's writer lagged) leaves the limit alone: a limit nobody uses says nothing about the service.
 */

export type Observation =
  /** An answer other than the ones below, `latencyMs` on the wire; `inFlight` counts this one. */
  | { kind: 'ok'; latencyMs: number; inFlight: number }
  /** 429: the service says slow down. */
  | { kind: 'throttled'; inFlight: number }
  /** 5xx, a timeout or a dropped connection: overload, or trouble at the service. */
  | { kind: 'overloaded'; inFlight: number };

export interface ControllerBounds {
  min: number;
  max: number;
}

export interface ControllerState {
  readonly limit: number;
  /** The limit at the last throttle, kept higher by successful probes; undefined before any. */
  readonly ceiling: number | undefined;
  /** Means of the last windows (oldest first), whose minimum is the no-queue latency. */
  readonly recentMeans: readonly number[];
  readonly window: WindowTally;
  /** Answers still to come from requests sent before the last decrease: not judged. */
  readonly ignore: number;
  /** Healthy full windows at or above the ceiling since the last probe. */
  readonly calm: number;
  /** While latency stays risen: the lowest limit it may push to. */
  readonly riseFloor: number | undefined;
  /** No decrease yet: growth doubles. */
  readonly slowStart: boolean;
}

interface WindowTally {
  answers: number;
  ok: number;
  throttled: number;
  overloaded: number;
  latencySum: number;
  busiest: number;
}

/** Window means remembered for the baseline: a latency that stays higher becomes the new normal. */
export const BASELINE_WINDOWS = 10;
/** Mean latency this many times the baseline is a queue building up. */
export const LATENCY_RISE = 2;
/** Latency differences below this are noise (timers, a busy event loop), not a queue. */
export const LATENCY_SLACK_MS = 5;
export const DECREASE = 0.9;
export const PROBE_WINDOWS = 20;
export const MIN_WINDOW = 4;
/**
 * Slow start doubles up to here, then grows by a quarter a round trip (TCP's limited slow
 * start, RFC 3742): a rate limit is only felt once its bucket is empty, and by then every
 * request of the last doubling is in flight and answered 429.
 */
export const SLOW_START_DOUBLES_TO = 64;
/** A rare 5xx is the service's bad luck (the breaker handles outages); a share of them is overload. */
export const OVERLOAD_SHARE = 0.05;

const EMPTY: WindowTally = { answers: 0, ok: 0, throttled: 0, overloaded: 0, latencySum: 0, busiest: 0 };

export function initialState(limit: number, bounds: ControllerBounds): ControllerState {
  return {
    limit: clamp(limit, bounds),
    ceiling: undefined,
    recentMeans: [],
    window: EMPTY,
    ignore: 0,
    calm: 0,
    riseFloor: undefined,
    slowStart: true,
  };
}

/** One answer in: the state after it (its `limit` is the next limit). */
export function observe(state: ControllerState, seen: Observation, bounds: ControllerBounds): ControllerState {
  if (state.ignore > 0) return { ...state, ignore: state.ignore - 1 };
  const w = state.window;
  const window: WindowTally = {
    answers: w.answers + 1,
    ok: w.ok + (seen.kind === 'ok' ? 1 : 0),
    throttled: w.throttled + (seen.kind === 'throttled' ? 1 : 0),
    overloaded: w.overloaded + (seen.kind === 'overloaded' ? 1 : 0),
    latencySum: w.latencySum + (seen.kind === 'ok' ? seen.latencyMs : 0),
    busiest: Math.max(w.busiest, seen.inFlight),
  };
  if (window.answers < Math.max(state.limit, MIN_WINDOW)) return { ...state, window };
  return judge({ ...state, window: EMPTY }, window, bounds);
}

function judge(judged: ControllerState, w: WindowTally, bounds: ControllerBounds): ControllerState {
  let state = judged;
  const { limit } = state;
  // Nothing got through and nothing said slow down: the service is down, not overloaded by us.
  // The circuit breaker waits that out; the limit stays for when it is back.
  if (w.ok === 0 && w.throttled === 0) return state;
  if (w.throttled > 0 || w.overloaded > w.answers * OVERLOAD_SHARE) {
    const through = w.ok / w.answers;
    const next = clamp(Math.floor(limit * Math.min(DECREASE, through)), bounds);
    // The ceiling: what got through. Under a cap on concurrent requests that is the cap, and
    // growth goes straight back to just under it; after slow start's overshoot, the service's pace.
    // 5xx alone (no 429) cut the limit but set no ceiling: an outage's edges look like that, and
    // the service said nothing of the pace it takes.
    const ceiling = w.throttled > 0 ? clamp(Math.max(next, Math.floor(limit * through)), bounds) : state.ceiling;
    // Requests sent at the old limit still answer as if it held: not this limit's doing.
    return { ...state, limit: next, ceiling, ignore: Math.max(0, limit - next), calm: 0, slowStart: false };
  }
  if (w.ok === 0) return state;
  const mean = w.latencySum / w.ok;
  const recentMeans = [...state.recentMeans, mean].slice(-BASELINE_WINDOWS);
  const baseline = Math.min(...recentMeans);
  if (mean > baseline * LATENCY_RISE + LATENCY_SLACK_MS) {
    const riseFloor = state.riseFloor ?? Math.ceil(limit / 2);
    const next = clamp(Math.max(riseFloor, Math.floor(limit * DECREASE)), bounds);
    return { ...state, recentMeans, riseFloor, limit: next, ignore: Math.max(0, limit - next), calm: 0, slowStart: false };
  }
  state = { ...state, riseFloor: undefined };
  if (w.busiest < limit) return { ...state, recentMeans };
  const { ceiling } = state;
  if (ceiling === undefined) {
    const doubling = state.slowStart && limit < SLOW_START_DOUBLES_TO;
    return { ...state, recentMeans, limit: clamp(doubling ? limit * 2 : limit + Math.ceil(limit / 4), bounds) };
  }
  if (limit + 1 < ceiling) {
    return { ...state, recentMeans, limit: clamp(Math.min(ceiling - 1, limit + Math.ceil(limit / 4)), bounds) };
  }
  if (state.calm + 1 < PROBE_WINDOWS) return { ...state, recentMeans, calm: state.calm + 1 };
  const next = clamp(limit + 1, bounds);
  return { ...state, recentMeans, limit: next, ceiling: Math.max(ceiling, next), calm: 0 };
}

function clamp(limit: number, { min, max }: ControllerBounds): number {
  return Math.max(min, Math.min(max, limit));
}
