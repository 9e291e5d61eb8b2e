/**
 * A plain line at the progress interval while nothing finishes — requests retried, sending
 * paused by the outage gate, answers awaited — when stderr is not a terminal: a CI or pod log
 * never goes silent for minutes before a run's clear failure. A terminal has its bar.
 */
import type { ServiceClient } from '../service/client.js';

export interface Heartbeat {
  /** Something finished (a progress line is due or drawn): no heartbeat for another interval. */
  beat(): void;
  stop(): void;
}

export const NO_HEARTBEAT: Heartbeat = { beat() {}, stop() {} };

export interface HeartbeatOptions {
  stream: NodeJS.WritableStream;
  intervalMs: number;
  service: Pick<ServiceClient, 'watchAnswers' | 'watchOutage'>;
  /** How long the run waits for a service that is down before it stops (--outage-timeout), ms. */
  outageTimeoutMs: number;
}

/** Starts the heartbeat's timer (unref'd: it never keeps a run alive). */
export function startHeartbeat(options: HeartbeatOptions): Heartbeat {
  const started = Date.now();
  let lastBeat = started;
  // Since when every answer failed (no status, a 5xx or a 429), and how the last one did.
  let failingSince: number | undefined;
  let lastFailure = '';
  let pausedSince: number | undefined;
  const unwatchAnswers = options.service.watchAnswers((answer) => {
    const failed = answer.status === undefined || answer.status >= 500 || answer.status === 429;
    if (!failed) failingSince = undefined;
    else {
      failingSince ??= Date.now();
      lastFailure = answer.status === undefined ? 'no answer' : String(answer.status);
    }
  });
  const unwatchOutage = options.service.watchOutage((event) => {
    if (event.type === 'paused') {
      pausedSince ??= Date.now();
      lastFailure = event.reason;
    } else if (event.type === 'probeFailed') lastFailure = event.reason;
    else pausedSince = undefined;
  });
  const timer = setInterval(() => {
    const now = Date.now();
    if (now - lastBeat < options.intervalMs) return;
    options.stream.write(`ccs-bulk: ${heartbeatWords(now, { started: lastBeat, failingSince, pausedSince, lastFailure, outageTimeoutMs: options.outageTimeoutMs })}\n`);
  }, options.intervalMs);
  timer.unref();
  return {
    beat() {
      lastBeat = Date.now();
    },
    stop() {
      clearInterval(timer);
      unwatchAnswers();
      unwatchOutage();
    },
  };
}

/** What the run is waiting on, in one line: `service unreachable since 40 s (503); retrying until 600 s`. */
export function heartbeatWords(
  now: number,
  state: { started: number; failingSince: number | undefined; pausedSince: number | undefined; lastFailure: string; outageTimeoutMs: number },
): string {
  const s = (ms: number) => `${Math.max(0, Math.round(ms / 1000))} s`;
  const since = state.pausedSince ?? state.failingSince;
  if (since !== undefined) {
    const paused = state.pausedSince !== undefined ? ': sending paused' : '';
    return `service unreachable since ${s(now - since)} (${state.lastFailure})${paused}; retrying until ${s(state.outageTimeoutMs)} (--outage-timeout)`;
  }
  return `waiting for the service: nothing finished for ${s(now - state.started)}`;
}
