/**
 * `--concurrency auto` (import) and `--prefetch auto` (export): how many requests may be on
 * the wire, learned from their answers. Pure: no I/O, and no clock but the one the answers
 * carry (when each came and was sent; without it, counts only). It is fed one observation per
 * finished attempt and returns the state holding the next limit, so table tests pin it.
 *
 * Judged once per window (max(limit, MIN_WINDOW) answers, about one round trip; after a 429,
 * once the requests then in flight have answered):
 * - 429s (or 5xx and timeouts) that are a larger share at this limit than at smaller ones
 *   (fault-share.ts: a limit refuses more as the window grows, noise a steady share at any):
 *   multiplicative decrease to the share that got through (limit × ok/total, at most ×
 *   DECREASE); after 429s, what the service let through in the round trip after the first
 *   becomes the ceiling. Refusals at no larger a share are the service's background noise: the
 *   window is judged as if they were answers;
 * - mean latency above LATENCY_RISE × its recent minimum: decrease by DECREASE, to no less
 *   than half the limit the rise began at (a slower service is not a queue of ours);
 * - otherwise, if every slot was busy: double until the first decrease or drain (slow start, as TCP's:
 *   at 150 ms a round trip, growing by a quarter took ten round trips to reach 64; past
 *   SLOW_START_DOUBLES_TO by a half), then grow by a quarter while no ceiling is known, up
 *   to the ceiling as fast, and past it after PROBE_WINDOWS calm windows and QUIET_MS since
 *   the last 429 the service's limit sent, by steps that double.
 * A window where the slots were not all busy (signing or reading could not feed them, or the
 * export's writer lagged) grows nothing: a limit nobody uses says nothing about the service.
 * Nor does a full one whose requests ready to go (the import's signed rows) fell since the
 * window before: the slots drain what was made before faster than it is made, and slow start
 * ends at the second such window in a row. And told how many were made, where every answer of
 * the window told the requests ready, growth stops at 1.5 × the pace they are made at × the
 * latency without a queue + 16: rows made earlier may keep the slots full without a drain showing
 * (a burst of signatures, a busy event loop's late answers).
 * With `settle` (the import) such windows bring the limit down to what they used and some
 * room, so that a burst of signed rows after a pause never finds thousands of slots free.
 * After a decrease, answers to requests sent before it are not judged.
 */

import { type FaultTable, judgeFaults, record } from './fault-share.js';

export type Observation = (
  /** An answer other than the ones below, `latencyMs` on the wire; `inFlight` counts this one. */
  | { kind: 'ok'; latencyMs: number; inFlight: number }
  /** 429: the service says slow down. */
  | { kind: 'throttled'; inFlight: number }
  /** 5xx, a timeout or a dropped connection: overload, or trouble at the service. */
  | { kind: 'overloaded'; inFlight: number }
) & {
  /** When it came and when its request went out, ms on one monotonic clock (none: counts only). */
  at?: number | undefined;
  sentAt?: number | undefined;
  /**
   * Requests awaiting an answer, this one included, when that differs from the slots counted
   * busy (`inFlight`): export's pages on the wire while its writer is busy count as none busy.
   */
  awaiting?: number | undefined;
  /**
   * Requests ready to go and waiting for a slot (the import's signed rows) when it came, unless
   * they run down only because nothing new is made (the import's reader waiting for the window
   * while a signer is free). Fewer at a window's end than at the last one's: the slots drain
   * what was made before faster than it is made now, and a larger limit would only empty it sooner.
   */
  ready?: number | undefined;
  /**
   * Requests made ready to go so far (the import's rows signed: a running count). With the
   * clock, the pace they are made at: a limit past what that pace keeps busy for a round trip
   * would only send what was made before sooner, all at once.
   */
  made?: number | undefined;
};

export interface ControllerBounds {
  min: number;
  max: number;
  /**
   * The limit comes down to what its windows used (settled()) once they stop filling it: the
   * import's, whose unused slots would take a burst of signed rows at once after a pause. Not
   * the export's, whose pages count busy only while the writer waits.
   */
  settle?: boolean | undefined;
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
  /**
   * When the last decrease was decided: with a clock, every answer to a request sent before
   * it is not judged (all of them, not a count: each retry or refill sent at the old limit
   * answers like it, and at a long round trip that is most of one).
   */
  readonly cutAt: number | undefined;
  /** Healthy full windows at or above the ceiling since the last probe. */
  readonly calm: number;
  /** When the last 429 was judged (the observation's clock): probes wait QUIET_MS after it. */
  readonly throttledAt: number | undefined;
  /** How far the next probe goes past the ceiling: doubles while probes meet no 429. */
  readonly probeStep: number;
  /** Answers through a millisecond, a moving mean over about PACE_MS (with a clock), and when it was last moved. */
  readonly pace: number;
  readonly paceAt: number | undefined;
  /** While latency stays risen: the lowest limit it may push to. */
  readonly riseFloor: number | undefined;
  /** No decrease yet, nor two windows in a row that drained the requests ready to go: growth doubles (past SLOW_START_DOUBLES_TO, by SLOW_START_GROWTH). */
  readonly slowStart: boolean;
  /** Refusals per limit, for telling a limit's from noise (fault-share.ts). */
  readonly faults: FaultTable;
  /** The highest limit whose slots were all busy in a healthy window. */
  readonly peak: number;
  /** What the last decrease answered: 429s, 5xx or timeouts, or a rise in latency. */
  readonly cause: CutCause | undefined;
  /** The most slots busy in each of the last SETTLE_WINDOWS healthy windows. */
  readonly used: readonly number[];
  /** Requests ready to go at the last judged window's last answer (undefined: not told). */
  readonly readyBefore: number | undefined;
  /** The last window's requests ready to go fell since the one before (draining): one such window may be a stall of the signer, two in a row are its pace. */
  readonly drained: boolean;
  /** A window drained since the start: the pace is near, and slow start grows by a quarter, not a half or double. */
  readonly drainSeen: boolean;
  /** Requests made at the last judged window's last answer, and when it came (undefined: not told). */
  readonly madeBefore: number | undefined;
  readonly madeAt: number | undefined;
  /** Requests made a millisecond over the last judged window (undefined: not told, or too short to say). */
  readonly madePace: number | undefined;
}

export type CutCause = 'throttled' | 'overloaded' | 'latency';

interface WindowTally {
  answers: number;
  ok: number;
  throttled: number;
  overloaded: number;
  latencySum: number;
  busiest: number;
  lastAt: number | undefined;
  /** The first 429's arrival. */
  firstThrottledAt: number | undefined;
  /**
   * The window then closes once the requests in flight at that moment (sent during its round
   * trip, after the service first refused one) have answered: a pause may follow, and
   * `okAfterThrottle` of them getting through is what the service takes in one round trip.
   */
  closeAt: number | undefined;
  afterThrottle: number;
  okAfterThrottle: number;
  /** Requests ready to go at the window's last answer (undefined: not told). */
  readyLast: number | undefined;
  /** Requests made by the window's last answer (undefined: not told). */
  madeLast: number | undefined;
  /** Every answer of the window told the requests ready to go: nothing but their maker held them back. */
  toldReady: boolean;
}

/** Window means remembered for the baseline: a latency that stays higher becomes the new normal. */
export const BASELINE_WINDOWS = 10;
/** Mean latency this many times the baseline is a queue building up. */
export const LATENCY_RISE = 2;
/** Latency differences below this are noise (timers, a busy event loop), not a queue. */
export const LATENCY_SLACK_MS = 5;
export const DECREASE = 0.9;
export const PROBE_WINDOWS = 20;
/**
 * A probe past a ceiling the service enforced with a 429 costs a whole-run pause of its
 * Retry-After (a second, typically): once every QUIET_MS keeps that cost to a few per cent
 * however short the round trip (20 windows are 0.4 s at 20 ms).
 */
export const QUIET_MS = 30_000;
/** The recent pace (answers through a second) is a mean over about this long. */
export const PACE_MS = 1000;
export const MIN_WINDOW = 4;
/**
 * Slow start doubles up to here, then grows by a quarter a round trip (TCP's limited slow
 * start, RFC 3742): a rate limit is only felt once its bucket is empty, and by then every
 * request of the last doubling is in flight and answered 429.
 */
export const SLOW_START_DOUBLES_TO = 64;
/**
 * Past it, until the first decrease, the import grows by a half a round trip (a quarter took 17
 * round trips from 64 to the 3,000 that 16 cores need at 500 ms): a bucket's credit still hides
 * it, and a step of a half overshoots it by half what doubling would (the whole run's 429s stay
 * under 2% at 100/s), and settling takes back what the signer then does not use. The export
 * keeps a quarter: it asks for twice its limit in pages ahead, and its windows settle nothing.
 */
export const SLOW_START_GROWTH = 0.5;
/**
 * Settling: windows whose most busy slots say what the pace uses, and the room kept above it
 * (a half, and a few for jitter), so the limit is what the signer, the reader or the service
 * keeps in flight, not what a burst once filled.
 */
export const SETTLE_WINDOWS = 8;
export const SETTLE_ROOM = 1.5;
export const SETTLE_SLACK = 16;

const EMPTY: WindowTally = {
  answers: 0,
  ok: 0,
  throttled: 0,
  overloaded: 0,
  latencySum: 0,
  busiest: 0,
  lastAt: undefined,
  firstThrottledAt: undefined,
  closeAt: undefined,
  afterThrottle: 0,
  okAfterThrottle: 0,
  readyLast: undefined,
  madeLast: undefined,
  toldReady: true,
};

export function initialState(limit: number, bounds: ControllerBounds): ControllerState {
  return {
    limit: clamp(limit, bounds),
    ceiling: undefined,
    recentMeans: [],
    window: EMPTY,
    ignore: 0,
    cutAt: undefined,
    calm: 0,
    throttledAt: undefined,
    probeStep: 1,
    pace: 0,
    paceAt: undefined,
    riseFloor: undefined,
    slowStart: true,
    faults: [],
    peak: 0,
    cause: undefined,
    used: [],
    readyBefore: undefined,
    drained: false,
    drainSeen: false,
    madeBefore: undefined,
    madeAt: undefined,
    madePace: undefined,
  };
}

/** One answer in: the state after it (its `limit` is the next limit). */
export function observe(previous: ControllerState, seen: Observation, bounds: ControllerBounds): ControllerState {
  const state = seen.kind === 'ok' && seen.at !== undefined ? answered(previous, previous.window, paced(previous, seen.at)) : previous;
  if (seen.sentAt !== undefined && state.cutAt !== undefined && seen.sentAt < state.cutAt) return state;
  if (state.ignore > 0) return { ...state, ignore: state.ignore - 1 };
  const window = tally(state.window, seen);
  if (window.answers < (window.closeAt ?? Math.max(state.limit, MIN_WINDOW))) return answered(state, window, state);
  const next = judge({ ...state, window: EMPTY }, window, bounds);
  // The slots a window's growth adds take that many ready requests at once: not a drain of the next window.
  if (next.limit > state.limit && next.readyBefore !== undefined) return { ...next, readyBefore: Math.max(0, next.readyBefore - (next.limit - state.limit)) };
  return next;
}

function tally(w: WindowTally, seen: Observation): WindowTally {
  const answers = w.answers + 1;
  const first = seen.kind === 'throttled' && w.throttled === 0;
  const awaiting = seen.awaiting ?? seen.inFlight;
  return {
    answers,
    ok: w.ok + (seen.kind === 'ok' ? 1 : 0),
    throttled: w.throttled + (seen.kind === 'throttled' ? 1 : 0),
    overloaded: w.overloaded + (seen.kind === 'overloaded' ? 1 : 0),
    latencySum: w.latencySum + (seen.kind === 'ok' ? seen.latencyMs : 0),
    busiest: Math.max(w.busiest, seen.inFlight),
    lastAt: seen.at ?? w.lastAt,
    firstThrottledAt: first ? seen.at : w.firstThrottledAt,
    closeAt: first && seen.at !== undefined && awaiting > 1 ? answers + awaiting - 1 : w.closeAt,
    afterThrottle: w.afterThrottle + (w.throttled > 0 ? 1 : 0),
    okAfterThrottle: w.okAfterThrottle + (seen.kind === 'ok' && w.throttled > 0 ? 1 : 0),
    readyLast: seen.ready,
    madeLast: seen.made,
    toldReady: w.toldReady && seen.ready !== undefined,
  };
}

function judge(judged: ControllerState, w: WindowTally, bounds: ControllerBounds): ControllerState {
  const madePace = w.ok > 0 ? madeRate(judged, w, w.latencySum / w.ok / 2) : undefined;
  let state: ControllerState = { ...judged, readyBefore: w.readyLast, madeBefore: w.madeLast, madeAt: w.lastAt, madePace, drained: false };
  const { limit } = state;
  // Nothing got through and nothing said slow down: the service is down, not overloaded by us.
  // The circuit breaker waits that out; the limit stays for when it is back.
  if (w.ok === 0 && w.throttled === 0) return state;
  const seen = { limit, answers: w.answers, throttled: w.throttled, failed: w.overloaded };
  const faults = record(state.faults, seen);
  state = { ...state, faults };
  const atCeiling = state.ceiling !== undefined && limit >= state.ceiling;
  // Where a limit is likely (at a ceiling the service enforced, or before anything pushed back:
  // a bucket that slow start empties), a 429 counts unless it is known noise.
  const verdict = judgeFaults(faults, seen, 'throttled', state.slowStart || atCeiling);
  // A ceiling whose 429s the windows below it get as often was noise: growth may pass it.
  if (verdict === 'noise' && atCeiling) state = { ...state, ceiling: undefined };
  const throttled = verdict === 'limit';
  if (throttled || judgeFaults(faults, seen, 'any', false) === 'limit') {
    const through = w.ok / w.answers;
    const next = clamp(Math.floor(limit * Math.min(DECREASE, through)), bounds);
    // 5xx (no more 429s than before) cut the limit but set no ceiling: an outage's edges look
    // like that, and the service said nothing of the pace it takes.
    if (!throttled) return cut(state, w, next, state.ceiling, 'overloaded');
    // The ceiling: what the service let through in the round trip after it first refused one
    // (under a cap on concurrent requests, the cap; under a token bucket, rate × round trip,
    // whatever credit the bucket had left before). Growth returns to it quickly. Without the
    // slots in flight then, the share of the window that got through.
    const byWindow = Math.max(next, Math.floor(limit * through));
    const ceiling = clamp(w.closeAt === undefined ? byWindow : measured(state, w, byWindow), bounds);
    const paused = { ...state, throttledAt: w.firstThrottledAt, probeStep: 1 };
    return cut(paused, w, Math.min(next, ceiling), ceiling, 'throttled');
  }
  if (w.ok === 0) return state;
  const mean = w.latencySum / w.ok;
  const recentMeans = [...state.recentMeans, mean].slice(-BASELINE_WINDOWS);
  const baseline = Math.min(...recentMeans);
  if (mean > baseline * LATENCY_RISE + LATENCY_SLACK_MS) {
    const riseFloor = state.riseFloor ?? Math.ceil(limit / 2);
    const next = clamp(Math.max(riseFloor, Math.floor(limit * DECREASE)), bounds);
    // Counted, not timed: a latency that stays must reach the baseline in BASELINE_WINDOWS
    // windows, not twice as many round trips.
    return { ...state, recentMeans, riseFloor, limit: next, ignore: Math.max(0, limit - next), calm: 0, slowStart: false, cause: 'latency' };
  }
  const used = [...state.used, Math.min(w.busiest, limit)].slice(-SETTLE_WINDOWS);
  state = { ...state, riseFloor: undefined, used };
  if (w.busiest < limit) return { ...state, recentMeans, ...settled(state, bounds) };
  const drained = draining(judged.readyBefore, w.readyLast);
  state = { ...state, peak: Math.max(state.peak, limit), drained, drainSeen: state.drainSeen || drained };
  const { ceiling } = state;
  // The signer, not the service, is the bound: what keeps the slots busy is rows signed earlier.
  // Slow start ends there. One such window grows nothing; it ends slow start only if the one
  // before drained too (a signer's pace lasts, a pause of its threads does not).
  if (drained) return { ...state, recentMeans, slowStart: state.slowStart && !judged.drained };
  if (ceiling === undefined) {
    // Once a window drained, the signer's pace is near: a quarter, so that one window the
    // drain did not show (a burst of signatures, a busy machine) cannot jump far past it.
    const fast = state.slowStart && !state.drainSeen;
    const doubling = fast && limit < SLOW_START_DOUBLES_TO;
    const step = doubling ? limit : Math.ceil(limit * (fast && bounds.settle ? SLOW_START_GROWTH : 0.25));
    return { ...state, recentMeans, limit: clamp(made(judged, w, limit + step, baseline), bounds) };
  }
  if (limit < ceiling) {
    return { ...state, recentMeans, limit: clamp(made(judged, w, Math.min(ceiling, limit + Math.ceil(limit / 4)), baseline), bounds) };
  }
  if (state.calm + 1 < PROBE_WINDOWS || !quiet(state, w)) return { ...state, recentMeans, calm: state.calm + 1 };
  const next = clamp(made(judged, w, limit + state.probeStep, baseline), bounds);
  if (next === limit) return { ...state, recentMeans, calm: 0 };
  return { ...state, recentMeans, limit: next, ceiling: Math.max(ceiling, next), calm: 0, probeStep: state.probeStep * 2 };
}

/**
 * What the service took in the round trip after it first refused one, from the answers to the
 * requests in flight then. All of them through: the refusal was at the margin (a cap on
 * concurrent requests, or a probe one past it), and they are the ceiling. Some refused too: a
 * rate, and they were sent over n − 1 of the n parts of that round trip (at 20 ms and 100 a
 * second, 1 of 2: the ceiling is 2, not 1).
 */
function roundTrip(w: WindowTally): number {
  const { afterThrottle: others, okAfterThrottle: through } = w;
  if (others === 0 || through === others) return through;
  return Math.round((through * (others + 1)) / others);
}

/**
 * The round trip's measure, unless nearly nothing got through in it while the recent pace was
 * at least twice as high: a limit counted in fixed windows (so many a calendar second) refuses
 * everything from its edge to the next, which says nothing of its pace. Then the recent pace
 * (Little's law: a second's answers × their latency), no more than the window's share through
 * (a busy machine's latency, or a bucket's first second, would flatter it).
 */
function measured(state: ControllerState, w: WindowTally, byWindow: number): number {
  const oneTrip = roundTrip(w);
  const latencyMs = w.ok > 0 ? w.latencySum / w.ok : state.recentMeans.length > 0 ? Math.min(...state.recentMeans) : 0;
  const recent = Math.round(paced(state, w.lastAt ?? 0, false).pace * latencyMs);
  return oneTrip * 2 < recent ? Math.max(oneTrip, Math.min(recent, byWindow)) : oneTrip;
}

/** Moves the pace (a mean decaying over PACE_MS) to `at`, with one more answer through if `through`. */
function paced(state: ControllerState, at: number, through = true): { pace: number; paceAt: number } {
  const since = state.paceAt === undefined ? Number.POSITIVE_INFINITY : Math.max(0, at - state.paceAt);
  const kept = state.pace * Math.exp(-since / PACE_MS);
  return { pace: kept + (through ? 1 / PACE_MS : 0), paceAt: at };
}

/**
 * The state with the window and the pace an answer moved, built field by field: every answer
 * comes through here, and a spread of the state took V8's slow copy (most of the controller's time).
 * Every field of ControllerState is required, so a field added there and missed here fails to compile.
 */
function answered(state: ControllerState, window: WindowTally, { pace, paceAt }: { pace: number; paceAt: number | undefined }): ControllerState {
  const { limit, ceiling, recentMeans, ignore, cutAt, calm, throttledAt, probeStep, riseFloor, slowStart, faults, peak, cause, used, readyBefore, drained, drainSeen, madeBefore, madeAt, madePace } = state;
  return {
    limit,
    ceiling,
    recentMeans,
    window,
    ignore,
    cutAt,
    calm,
    throttledAt,
    probeStep,
    pace,
    paceAt,
    riseFloor,
    slowStart,
    faults,
    peak,
    cause,
    used,
    readyBefore,
    drained,
    drainSeen,
    madeBefore,
    madeAt,
    madePace,
  };
}

/** A decrease: requests sent at the old limit still answer as if it held, and are not this limit's doing. */
function cut(state: ControllerState, w: WindowTally, next: number, ceiling: number | undefined, cause: CutCause): ControllerState {
  const { limit } = state;
  const timed = w.lastAt !== undefined;
  // The next window's answers begin after the round trip a cut leaves out (and any pause): what
  // was made over that span says nothing of the signer's pace.
  return {
    ...state,
    limit: next,
    ceiling,
    ignore: timed ? 0 : Math.max(0, limit - next),
    cutAt: timed ? w.lastAt : state.cutAt,
    calm: 0,
    slowStart: false,
    cause,
    madeBefore: undefined,
    madeAt: undefined,
    madePace: undefined,
  };
}

/**
 * Windows that did not fill the limit, SETTLE_WINDOWS in a row of them at most `used` busy:
 * the limit comes down to SETTLE_ROOM × that + SETTLE_SLACK (no cut: the service said nothing,
 * and full windows grow it again). What cut it before is no longer why it is where it is.
 */
function settled(state: ControllerState, bounds: ControllerBounds): Partial<ControllerState> {
  const { used, limit } = state;
  if (!bounds.settle || used.length < SETTLE_WINDOWS) return {};
  const to = Math.ceil(SETTLE_ROOM * Math.max(...used) + SETTLE_SLACK);
  return to < limit ? { limit: clamp(to, bounds), cause: undefined } : {};
}

/**
 * The requests ready to go fell from the last window's end to this one's, by more than a few:
 * the limit already takes them faster than they are made (a signer's pace), so its slots are
 * busy with what was made before, and growing it would only send that sooner, all at once.
 * End to end, not across one window: a window's answers may come in a burst, each taking a
 * ready request at once, and what is made meanwhile is made between the bursts.
 */
function draining(before: number | undefined, now: number | undefined): boolean {
  return before !== undefined && now !== undefined && now < before - MIN_WINDOW;
}

/**
 * Growth to `next`, but no further than the pace requests are made at keeps busy (Little's law:
 * made a millisecond, from the last window's end to this one's, × the latency without a queue,
 * `baseline`: a window slowed by a busy event loop or a burst needs no more in flight), with
 * the room settling keeps (SETTLE_ROOM × that + SETTLE_SLACK): a full window that did not drain
 * may still be fed by rows made before (a burst of signatures, a reader that caught up), and a
 * limit past that pace would only send them sooner. Only where every answer of the window told
 * the rows ready (Observation.ready): otherwise the maker waited for the window at times (a
 * 429's pause holds every slot's rows), and what it made says what the wire took, not what it
 * could make. The lower of this window's pace and the last one's: signatures a busy event loop
 * finished late come in a burst that one window counts, the next does not. Not told what is made
 * (the export), or without a clock: `next`.
 */
function made(judged: ControllerState, w: WindowTally, next: number, baseline: number): number {
  const pace = w.toldReady ? madeRate(judged, w, baseline / 2) : undefined;
  if (pace === undefined) return next;
  const kept = Math.min(pace, judged.madePace ?? pace) * baseline;
  return Math.max(judged.limit, Math.min(next, Math.floor(SETTLE_ROOM * kept + SETTLE_SLACK)));
}

/**
 * Requests made a millisecond from the last judged window's last answer to this one's; undefined
 * when not told, or over less than `minMs` (less than half a round trip: a burst, not a pace).
 */
function madeRate({ madeBefore, madeAt }: ControllerState, w: WindowTally, minMs: number): number | undefined {
  if (madeBefore === undefined || madeAt === undefined || w.madeLast === undefined || w.lastAt === undefined) return undefined;
  const ms = w.lastAt - madeAt;
  return ms <= 0 || ms < minMs ? undefined : (w.madeLast - madeBefore) / ms;
}

/** QUIET_MS since the last 429 (or no clock to tell): a probe may go past the ceiling. */
function quiet(state: ControllerState, w: WindowTally): boolean {
  return state.throttledAt === undefined || w.lastAt === undefined || w.lastAt - state.throttledAt >= QUIET_MS;
}

function clamp(limit: number, { min, max }: ControllerBounds): number {
  return Math.max(min, Math.min(max, limit));
}
