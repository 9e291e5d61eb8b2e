/**
 * A limit on requests in flight, fixed or `auto`: the stateful side of the pure controller
 * (concurrency.ts). Import's send window and export's page prefetch each own one, feed it every
 * attempt's answer (the service client's watchAnswers) with the slots busy at that moment, and
 * read `current` before starting more requests.
 */
import type { Answer } from './client.js';
import { type ControllerState, initialState, type Observation, observe } from './concurrency.js';

export interface AdaptiveLimit {
  /** The limit in force now. */
  readonly current: number;
  /** `auto` before its first decrease (slow start): nothing has pushed back yet, and the limit grows every round trip its slots are full. */
  readonly growing: boolean;
  /**
   * An attempt's answer, and how many slots were busy when it came (this one included); and
   * how many requests await an answer, if not as many.
   */
  observe(answer: Answer, busy: number, awaiting?: number): void;
  limits(): LimitReport;
}

/** What the summary and `--json` report: the limit now and where it settled. */
export interface LimitReport {
  mode: 'auto' | 'fixed';
  current: number;
  settled: number;
  max: number;
}

export interface AdaptiveLimitOptions {
  /** A fixed number, or `auto`: adapted from `start` up to `max`. */
  limit: number | 'auto';
  start: number;
  max: number;
  /** A monotonic clock, ms (injected by the simulation). */
  now?: (() => number) | undefined;
}

/** Answers whose limits say where `auto` settled. */
const SETTLED_ANSWERS = 1000;

export function createAdaptiveLimit(options: AdaptiveLimitOptions): AdaptiveLimit {
  const auto = options.limit === 'auto';
  const max = auto ? options.max : (options.limit as number);
  const bounds = { min: 1, max };
  const now = options.now ?? (() => performance.now());
  let controller: ControllerState = initialState(auto ? options.start : max, bounds);
  // The limit at each of the last answers: the most frequent is the settled one.
  const recent = new Uint16Array(SETTLED_ANSWERS);
  let answers = 0;
  return {
    get current() {
      return controller.limit;
    },
    get growing() {
      return auto && controller.slowStart;
    },
    observe(answer, busy, awaiting) {
      recent[answers++ % SETTLED_ANSWERS] = controller.limit;
      if (!auto) return;
      const at = now();
      controller = observe(controller, classify(answer, busy, at, awaiting), bounds);
    },
    limits() {
      const { limit } = controller;
      return { mode: auto ? 'auto' : 'fixed', current: limit, settled: mostHeld(recent, answers, limit), max };
    },
  };
}

/** 429: slow down; 5xx, 408 and no answer at all: overload; anything else answered normally. */
function classify(answer: Answer, inFlight: number, at: number, awaiting: number | undefined): Observation {
  const { status } = answer;
  const sentAt = at - answer.ms;
  if (status === 429) return { kind: 'throttled', inFlight, at, sentAt, awaiting };
  if (status === undefined || status === 408 || status >= 500) return { kind: 'overloaded', inFlight, at, sentAt, awaiting };
  return { kind: 'ok', latencyMs: answer.ms, inFlight, at, sentAt, awaiting };
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
