/**
 * Runs the pure breaker (breaker.ts) with real time for one service client: requests wait at
 * the gate while the service is down, one probe at a time checks whether it is back, and
 * once it has been down for the outage timeout every waiting request fails with OutageError.
 */
import { OutageError } from '../errors.js';
import { type BreakerPolicy, type BreakerState, breakerStep, CLOSED } from './breaker.js';

/** The outage breaker's transitions, as `onOutage` and `watchOutage` report them. */
export type OutageEvent =
  | {
      /** The service looks down: every request waits for a probe. */
      type: 'paused';
      /** The last failure, in words (`503`, `ECONNREFUSED`…). */
      reason: string;
      /** Time until the first probe, ms. */
      probeInMs: number;
    }
  | {
      /** A probe met the outage again. */
      type: 'probeFailed';
      /** Time since the service went down, ms. */
      downForMs: number;
      /** Time until the next probe, ms. */
      probeInMs: number;
      /** The probe's failure, in words. */
      reason: string;
    }
  | {
      /** A probe got through: waiting requests go again. */
      type: 'resumed';
      /** How long the service was down, ms. */
      downForMs: number;
    }
  | {
      /** Down past `breaker.outageTimeoutMs`: the run stops with an OutageError. */
      type: 'stopped';
      /** How long the service was down, ms. */
      downForMs: number;
      /** The last failure, in words. */
      reason: string;
    };

export interface OutageGateOptions {
  policy: BreakerPolicy;
  /** One request that tells whether the service is up; resolves to the failure's reason, or undefined when up. */
  probe: () => Promise<string | undefined>;
  onEvent?: ((event: OutageEvent) => void) | undefined;
  random?: () => number;
  /** The clock; Date.now by default. */
  now?: () => number;
  /** Sets the probe timer; setTimeout by default (tests make it fire early, as Node's may). */
  setTimer?: (run: () => void, ms: number) => NodeJS.Timeout;
}

export interface OutageGate {
  /** Undefined when requests may go at once (the common case costs no promise). */
  ready(signal: AbortSignal | undefined): Promise<void> | undefined;
  /** The service answered. */
  answered(): void;
  /** An outage failure (network error or 5xx); true when it counts against the request's retries. */
  failed(reason: string): boolean;
  /** Stops for good with this error (a systemic failure): waiting and later requests get it. */
  halt(error: Error): void;
  /** Clears the probe timer; waiting requests fail. */
  close(): void;
}

/** Requests waiting at the gate: woken all at once, or failed all at once; each may abort. */
class Waiters {
  readonly #waiting = new Set<{ resolve(): void; reject(error: unknown): void }>();

  wait(signal: AbortSignal | undefined): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const abort = () => {
        this.#waiting.delete(waiter);
        reject(signal?.reason);
      };
      const waiter = {
        resolve() {
          signal?.removeEventListener('abort', abort);
          resolve();
        },
        reject(error: unknown) {
          signal?.removeEventListener('abort', abort);
          reject(error);
        },
      };
      this.#waiting.add(waiter);
      signal?.addEventListener('abort', abort, { once: true });
    });
  }

  resolveAll(): void {
    for (const waiter of this.#waiting) waiter.resolve();
    this.#waiting.clear();
  }

  rejectAll(error: unknown): void {
    for (const waiter of this.#waiting) waiter.reject(error);
    this.#waiting.clear();
  }
}

/** The one probe timer, and whether it is pending: a waiting request must always have one. */
class ProbeTimer {
  pending = false;
  #timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly setTimer: (run: () => void, ms: number) => NodeJS.Timeout,
    private readonly now: () => number,
    private readonly run: () => void,
  ) {}

  schedule(at: number): void {
    clearTimeout(this.#timer);
    this.pending = true;
    // Kept referenced: while requests wait at the gate, this timer is what keeps the process
    // alive. At least 1 ms: a look that finds the probe not yet due must not spin.
    this.#timer = this.setTimer(() => {
      this.pending = false;
      this.run();
    }, Math.max(1, at - this.now()));
  }

  clear(): void {
    clearTimeout(this.#timer);
    this.pending = false;
  }
}

/** What a move of the breaker tells the user, if anything. */
function eventOf(before: BreakerState, next: BreakerState, now: number, reason: string): OutageEvent | undefined {
  if (next.kind === 'open') {
    return before.kind === 'closed'
      ? { type: 'paused', reason, probeInMs: next.probeAt - now }
      : { type: 'probeFailed', downForMs: now - next.since, probeInMs: next.probeAt - now, reason };
  }
  if (next.kind === 'closed' && before.kind !== 'closed') return { type: 'resumed', downForMs: now - before.since };
  if (next.kind === 'stopped') return { type: 'stopped', downForMs: next.at - next.since, reason };
  return undefined;
}

export function createOutageGate(options: OutageGateOptions): OutageGate {
  const { policy } = options;
  const random = options.random ?? Math.random;
  const now = options.now ?? Date.now;
  let state: BreakerState = CLOSED;
  let lastReason = '';
  let halted: Error | undefined;
  const waiters = new Waiters();
  const timer = new ProbeTimer(options.setTimer ?? setTimeout, now, runProbe);

  const outage = (since: number) =>
    new OutageError(
      `the service has been unreachable or failing for ${Math.round((now() - since) / 1000)} s ` +
        `(last: ${lastReason}); stopped after --outage-timeout ${policy.outageTimeoutMs / 1000} s`,
    );

  const move = (next: BreakerState) => {
    const before = state;
    state = next;
    if (before === next) return;
    const event = eventOf(before, next, now(), lastReason);
    if (event) options.onEvent?.(event);
    if (next.kind === 'open') timer.schedule(next.probeAt);
    else if (next.kind === 'closed' && before.kind !== 'closed') {
      timer.clear();
      waiters.resolveAll();
    } else if (next.kind === 'stopped') {
      timer.clear();
      waiters.rejectAll(outage(next.since));
    }
  };

  const probeFailed = (reason: string) => {
    lastReason = reason;
    move(breakerStep(state, { type: 'probeFailed', now: now(), random: random() }, policy));
  };

  function runProbe() {
    const next = breakerStep(state, { type: 'probe', now: now() }, policy);
    if (next.kind !== 'probing') {
      // Node may fire a timer a moment before the clock reaches its time: the breaker then
      // says "not yet", and the next look must be scheduled, or nothing holds the process
      // while every request waits here, and it ends with rows never sent.
      if (state.kind === 'open') timer.schedule(state.probeAt);
      return;
    }
    state = next;
    options.probe().then(
      (reason) => (reason === undefined ? move(breakerStep(state, { type: 'answer' }, policy)) : probeFailed(reason)),
      (error: unknown) => probeFailed(String((error as Error)?.message ?? error)),
    );
  }

  return {
    ready(signal) {
      if (halted) return Promise.reject(halted);
      if (state.kind === 'closed') return undefined;
      if (state.kind === 'stopped') return Promise.reject(outage(state.since));
      if (signal?.aborted) return Promise.reject(signal.reason);
      const waiting = waiters.wait(signal);
      // A waiter is never left without a timer (or a probe on the wire) to wake it.
      if (state.kind === 'open' && !timer.pending) timer.schedule(state.probeAt);
      return waiting;
    },
    answered() {
      if (state.kind !== 'closed' || state.streak !== 0) move(breakerStep(state, { type: 'answer' }, policy));
    },
    failed(reason) {
      lastReason = reason;
      const wasClosed = state.kind === 'closed';
      move(breakerStep(state, { type: 'failure', now: now(), random: random() }, policy));
      return wasClosed && state.kind === 'closed';
    },
    halt(error) {
      halted ??= error;
      timer.clear();
      waiters.rejectAll(halted);
    },
    close() {
      timer.clear();
      if (state.kind !== 'closed' && state.kind !== 'stopped') {
        state = { kind: 'stopped', since: state.since, at: now() };
        waiters.rejectAll(outage(state.since));
      }
    },
  };
}
