/**
 * The circuit breaker, pure: a state and the events that move it, no timers and no I/O, so
 * every transition is pinned by table tests (as retry.ts does for retry timing). outage.ts
 * runs it with real time.
 *
 * closed  — requests go; failures in a row (no answer between) are counted.
 * open    — the service looks down: nothing goes; a probe is due at `probeAt`.
 * probing — one probe is on the wire.
 * stopped — down for longer than the outage timeout: the run ends (absorbing).
 */

/** When the outage breaker opens, how it probes, and how long a service may be down before the run stops. */
export interface BreakerPolicy {
  /** Failures in a row, with no answer between them, that open the breaker. */
  failureThreshold: number;
  /** Wait before the first probe; doubles per probe. */
  firstProbeMs: number;
  /** Longest wait between probes. */
  maxProbeMs: number;
  /** Down this long (from opening) → stopped. */
  outageTimeoutMs: number;
}

/**
 * The outage breaker's defaults: open after 5 failures in a row, probe after 1 s doubling up to 15 s, stop
 * after 10 minutes down.
 */
export const DEFAULT_BREAKER: BreakerPolicy = {
  failureThreshold: 5,
  firstProbeMs: 1000,
  maxProbeMs: 15_000,
  outageTimeoutMs: 600_000,
};

/** Where the breaker is: closed (requests go), open (waiting to probe), probing (one probe out), stopped (down too long). */
export type BreakerState =
  | {
      /** Requests go. */
      kind: 'closed';
      /** Failures in a row so far, with no answer between them. */
      streak: number;
    }
  | {
      /** The service looks down: nothing goes until the probe. */
      kind: 'open';
      /** When it opened, ms since the epoch. */
      since: number;
      /** Probes sent so far. */
      probes: number;
      /** When the next probe is due, ms since the epoch. */
      probeAt: number;
    }
  | {
      /** One probe is on the wire. */
      kind: 'probing';
      /** When it opened, ms since the epoch. */
      since: number;
      /** Probes sent so far, this one included. */
      probes: number;
    }
  | {
      /** Down longer than the outage timeout: the run ends. */
      kind: 'stopped';
      /** When it opened, ms since the epoch. */
      since: number;
      /** When it stopped, ms since the epoch. */
      at: number;
    };

/** What moves the breaker: an answer, a failure, a probe sent, a probe failed. */
export type BreakerEvent =
  | {
      /** The service answered something other than an outage (any status but 500/502/503/504). */
      type: 'answer';
    }
  | {
      /** A request met a network error or a 500/502/503/504. */
      type: 'failure';
      /** The clock, ms since the epoch. */
      now: number;
      /** In [0, 1): jitters the first probe. */
      random: number;
    }
  | {
      /** The probe time came and a probe went out. */
      type: 'probe';
      /** The clock, ms since the epoch. */
      now: number;
    }
  | {
      /** The probe met an outage failure. */
      type: 'probeFailed';
      /** The clock, ms since the epoch. */
      now: number;
      /** In [0, 1): jitters the next probe. */
      random: number;
    };

export const CLOSED: BreakerState = { kind: 'closed', streak: 0 };

/**
 * Wait before probe number `probes + 1`: doubling from firstProbeMs up to maxProbeMs, with
 * "equal jitter" (half fixed, half random) so probes never bunch up near zero.
 */
export function probeDelay(probes: number, policy: BreakerPolicy, random: number): number {
  const ceiling = Math.min(policy.maxProbeMs, policy.firstProbeMs * 2 ** probes);
  return Math.round(ceiling / 2 + (random * ceiling) / 2);
}

/** The breaker's next state after `event`, pure: no timers, no I/O. */
export function breakerStep(state: BreakerState, event: BreakerEvent, policy: BreakerPolicy): BreakerState {
  if (state.kind === 'stopped') return state;
  switch (event.type) {
    case 'answer':
      // Whoever got through (a probe or a request sent before the breaker opened): it is up.
      return state.kind === 'closed' && state.streak === 0 ? state : CLOSED;
    case 'failure': {
      // Failures of requests already on the wire when it opened say nothing new.
      if (state.kind !== 'closed') return state;
      const streak = state.streak + 1;
      if (streak < policy.failureThreshold) return { kind: 'closed', streak };
      return openAt(event.now, event.now, 0, policy, event.random);
    }
    case 'probe':
      if (state.kind !== 'open' || event.now < state.probeAt) return state;
      return { kind: 'probing', since: state.since, probes: state.probes + 1 };
    case 'probeFailed':
      if (state.kind !== 'probing') return state;
      if (event.now - state.since >= policy.outageTimeoutMs) {
        return { kind: 'stopped', since: state.since, at: event.now };
      }
      return openAt(state.since, event.now, state.probes, policy, event.random);
  }
}

/** Open, with the next probe due after the backoff, but never after the outage deadline. */
function openAt(since: number, now: number, probes: number, policy: BreakerPolicy, random: number): BreakerState {
  const due = now + probeDelay(probes, policy, random);
  return { kind: 'open', since, probes, probeAt: Math.min(due, since + policy.outageTimeoutMs) };
}
