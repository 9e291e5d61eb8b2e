/**
 * Runs the pure breaker (breaker.ts) with real time for one service client: requests wait at
 * the gate while the service is down, one probe at a time checks whether it is back, and
 * once it has been down for the outage timeout every waiting request fails with OutageError.
 */
import { OutageError } from '../errors.js';
import { type BreakerPolicy, type BreakerState, breakerStep, CLOSED } from './breaker.js';

export type OutageEvent =
  | { type: 'paused'; reason: string; probeInMs: number }
  | { type: 'probeFailed'; downForMs: number; probeInMs: number; reason: string }
  | { type: 'resumed'; downForMs: number }
  | { type: 'stopped'; downForMs: number; reason: string };

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

interface Waiter {
  resolve(): void;
  reject(error: unknown): void;
}

export function createOutageGate(options: OutageGateOptions): OutageGate {
  const { policy } = options;
  const random = options.random ?? Math.random;
  const now = options.now ?? Date.now;
  const setTimer = options.setTimer ?? setTimeout;
  let state: BreakerState = CLOSED;
  let lastReason = '';
  let timer: NodeJS.Timeout | undefined;
  /** A probe timer is set and has not fired yet. */
  let timerSet = false;
  let halted: Error | undefined;
  const waiters = new Set<Waiter>();

  const outage = (since: number) =>
    new OutageError(
      `the service has been unreachable or failing for ${Math.round((now() - since) / 1000)} s ` +
        `(last: ${lastReason}); stopped after --outage-timeout ${policy.outageTimeoutMs / 1000} s`,
    );

  const move = (next: BreakerState) => {
    const before = state;
    state = next;
    if (before === next) return;
    if (next.kind === 'open') {
      if (before.kind === 'closed') {
        options.onEvent?.({ type: 'paused', reason: lastReason, probeInMs: next.probeAt - now() });
      } else {
        options.onEvent?.({
          type: 'probeFailed',
          downForMs: now() - next.since,
          probeInMs: next.probeAt - now(),
          reason: lastReason,
        });
      }
      schedule(next.probeAt);
    } else if (next.kind === 'closed' && before.kind !== 'closed') {
      clearTimeout(timer);
      timerSet = false;
      options.onEvent?.({ type: 'resumed', downForMs: now() - before.since });
      for (const waiter of waiters) waiter.resolve();
      waiters.clear();
    } else if (next.kind === 'stopped') {
      clearTimeout(timer);
      timerSet = false;
      options.onEvent?.({ type: 'stopped', downForMs: next.at - next.since, reason: lastReason });
      const error = outage(next.since);
      for (const waiter of waiters) waiter.reject(error);
      waiters.clear();
    }
  };

  const schedule = (at: number) => {
    clearTimeout(timer);
    timerSet = true;
    // Kept referenced: while requests wait here, this timer is what keeps the process alive.
    // At least 1 ms: a look that finds the probe not yet due must not spin.
    timer = setTimer(runProbe, Math.max(1, at - now()));
  };

  function runProbe() {
    timerSet = false;
    const next = breakerStep(state, { type: 'probe', now: now() }, policy);
    if (next.kind !== 'probing') {
      // Node may fire a timer a millisecond before the clock reaches its time: the breaker
      // then says "not yet", and the next look must be scheduled, or nothing holds the
      // process while every request waits here and it ends with rows never sent.
      if (state.kind === 'open') schedule(state.probeAt);
      return;
    }
    state = next;
    options.probe().then(
      (reason) => {
        if (reason === undefined) move(breakerStep(state, { type: 'answer' }, policy));
        else {
          lastReason = reason;
          move(breakerStep(state, { type: 'probeFailed', now: now(), random: random() }, policy));
        }
      },
      (error: unknown) => {
        lastReason = String((error as Error)?.message ?? error);
        move(breakerStep(state, { type: 'probeFailed', now: now(), random: random() }, policy));
      },
    );
  }

  return {
    ready(signal) {
      if (halted) return Promise.reject(halted);
      if (state.kind === 'closed') return undefined;
      if (state.kind === 'stopped') return Promise.reject(outage(state.since));
      if (signal?.aborted) return Promise.reject(signal.reason);
      return new Promise<void>((resolve, reject) => {
        const abort = () => {
          waiters.delete(waiter);
          reject(signal?.reason);
        };
        const waiter: Waiter = {
          resolve() {
            signal?.removeEventListener('abort', abort);
            resolve();
          },
          reject(error) {
            signal?.removeEventListener('abort', abort);
            reject(error);
          },
        };
        waiters.add(waiter);
        signal?.addEventListener('abort', abort, { once: true });
        // A waiter is never left without a timer (or a probe on the wire) to wake it.
        if (state.kind === 'open' && !timerSet) schedule(state.probeAt);
      });
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
      clearTimeout(timer);
      timerSet = false;
      for (const waiter of waiters) waiter.reject(halted);
      waiters.clear();
    },
    close() {
      clearTimeout(timer);
      timerSet = false;
      if (state.kind !== 'closed' && state.kind !== 'stopped') {
        state = { kind: 'stopped', since: state.since, at: now() };
        const error = outage(state.since);
        for (const waiter of waiters) waiter.reject(error);
        waiters.clear();
      }
    },
  };
}
