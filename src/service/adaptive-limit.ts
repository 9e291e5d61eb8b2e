/**
 * A limit on requests in flight, fixed or `auto`: the stateful side of the pure controller
 * (concurrency.ts). Import's send window and export's page prefetch each own one, feed it every
 * attempt's answer (the service client's watchAnswers) with the slots busy at that moment, and
 * read `current` before starting more requests.
 */
import type { Answer } from './client.js';
import { type ControllerState, type CutCause, initialState, type Observation, observe } from './concurrency.js';

export interface AdaptiveLimit {
  /** The limit in force now. */
  readonly current: number;
  /**
   * `auto` before anything pushed back (a 429, 5xx or timeouts, a rise in latency): the limit
   * still grows every round trip its slots are full, and the import's signer may work ahead of it.
   */
  readonly growing: boolean;
  /** An attempt's answer, and how many slots were busy when it came (this one included). */
  observe(answer: Answer, busy: number, counts?: Counts): void;
  limits(): LimitReport;
  /** Answers observed. */
  readonly answered: number;
  /** `auto` met a 429 limit (not noise) during the run. */
  readonly throttled: boolean;
}

/** What else the controller may be told with an answer: requests awaiting one, ready to go, made so far (Observation). */
export type Counts = Pick<Observation, 'awaiting' | 'ready' | 'made'>;

/** What the summary and `--json` report: the limit now and where it settled. */
export interface LimitReport {
  /** `auto`: the limit adapted to the service's answers; `fixed`: a number was given. */
  mode: 'auto' | 'fixed';
  /** The limit at the end (or at this moment, mid-run). */
  current: number;
  /** Where the limit settled: the one in force for most of the last 1000 answers. */
  settled: number;
  /** The upper bound: `auto`'s ceiling, or the fixed number. */
  max: number;
  /** `auto`: where it started (higher than the default when an earlier run's pace was remembered: see `paceMemory`). */
  start?: number;
  /** `auto`: the highest limit its slots all filled in a healthy window (the limit may have been raised past it, unfilled). */
  peak?: number;
  /**
   * `auto`, settled at a quarter of its peak or less, cut there by 5xx and timeouts or by a
   * rise in latency as the window grew: the service's limit, or its trouble at that moment,
   * which the answers cannot tell apart (a 429 says which; it is not reported here).
   */
  farBelowPeak?: Exclude<CutCause, 'throttled'>;
  /** `auto`: the service's 429s set a limit during the run (a rate or a cap it enforces), not noise. */
  throttled?: boolean;
}

/** Settled at 1 / FAR_BELOW of the peak or less: far below it. */
export const FAR_BELOW = 4;

export interface AdaptiveLimitOptions {
  /** A fixed number, or `auto`: adapted from `start` up to `max`. */
  limit: number | 'auto';
  start: number;
  max: number;
  /** A monotonic clock, ms (injected by the simulation). */
  now?: (() => number) | undefined;
  /** `auto` comes down to what its windows use once they stop filling it (ControllerBounds.settle). */
  settle?: boolean | undefined;
}

/** Answers whose limits say where `auto` settled. */
const SETTLED_ANSWERS = 1000;

export function createAdaptiveLimit(options: AdaptiveLimitOptions): AdaptiveLimit {
  const auto = options.limit === 'auto';
  const max = auto ? options.max : (options.limit as number);
  const bounds = { min: 1, max, settle: options.settle };
  const now = options.now ?? (() => performance.now());
  let controller: ControllerState = initialState(auto ? options.start : max, bounds);
  // The limit at each of the last answers: the most frequent is the settled one.
  const recent = new Uint16Array(SETTLED_ANSWERS);
  let answers = 0;
  let throttled = false;
  let pushedBack = false;
  const start = controller.limit;
  return {
    get answered() {
      return answers;
    },
    get throttled() {
      return throttled;
    },
    get current() {
      return controller.limit;
    },
    get growing() {
      return auto && !pushedBack;
    },

    observe(answer, busy, counts) {
      recent[answers++ % SETTLED_ANSWERS] = controller.limit;
      if (!auto) return;
      const at = now();
      controller = observe(controller, classify(answer, busy, at, counts), bounds);
      throttled ||= controller.cause === 'throttled';
      pushedBack ||= controller.cause !== undefined;
    },
    limits() {
      const { limit, peak, cause } = controller;
      const settled = mostHeld(recent, answers, limit);
      if (!auto) return { mode: 'fixed', current: limit, settled, max };
      const far = cause !== undefined && cause !== 'throttled' && settled * FAR_BELOW <= peak;
      return { mode: 'auto', current: limit, settled, max, start, peak, ...(far && { farBelowPeak: cause }), ...(throttled && { throttled }) };
    },
  };
}

/** 429: slow down; 5xx, 408 and no answer at all: overload; anything else answered normally. */
function classify(answer: Answer, inFlight: number, at: number, counts: Counts | undefined): Observation {
  const { status } = answer;
  const sentAt = at - answer.ms;
  // Field by field, every answer the same shape: this runs once an answer.
  const awaiting = counts?.awaiting;
  const ready = counts?.ready;
  const made = counts?.made;
  if (status === 429) return { kind: 'throttled', inFlight, at, sentAt, awaiting, ready, made };
  if (status === undefined || status === 408 || status >= 500) return { kind: 'overloaded', inFlight, at, sentAt, awaiting, ready, made };
  return { kind: 'ok', latencyMs: answer.ms, inFlight, at, sentAt, awaiting, ready, made };
}

function mostHeld(recent: Uint16Array, answers: number, current: number): number {
  const counts = new Map<number, number>();
  for (const limit of recent.subarray(0, Math.min(answers, recent.length))) counts.set(limit, (counts.get(limit) ?? 0) + 1);
  let best = current;
  let most = 0;
  for (const [limit, count] of counts) {
    if (count > most) [best, most] = [limit, count];
  }
  return best;
}

/**
 * A line for the progress display and the summary when `auto` settled far below its peak for
 * a reason it cannot tell (farBelowPeak): what it saw, and the flag that keeps the peak.
 */
export function paceNote(report: LimitReport, flag: string): string | undefined {
  if (report.farBelowPeak === undefined || report.peak === undefined) return undefined;
  const why = report.farBelowPeak === 'latency' ? 'answers slowed as more were in flight' : 'more 5xx or timeouts came as more were in flight';
  return `${report.settled} in flight, far below the ${report.peak} it reached: ${why}, the service's limit or its trouble now; if the service takes more, --${flag} ${report.peak} holds it there`;
}
