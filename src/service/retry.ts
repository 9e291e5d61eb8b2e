/**
 * Retry timing, pure: which failures are retried and how long to wait. No I/O, no clock
 * except the `now` passed in, so the policy is pinned by table tests (ky's retry-timing).
 */
import { SERVICE_DEFAULTS } from './defaults.js';

export interface RetryPolicy {
  /** Retries after the first attempt (--retries). */
  retries: number;
  /** First backoff ceiling; doubles each attempt. */
  baseDelayMs: number;
  /** Backoff ceiling. */
  maxDelayMs: number;
  /** A server asking for longer than this is not waited for: the request fails instead. */
  maxRetryAfterMs: number;
}

/** The retry policy a service client uses unless given one: 5 retries, 200 ms doubling to 20 s, Retry-After up to 2 minutes. */
export const DEFAULT_RETRY: RetryPolicy = {
  retries: SERVICE_DEFAULTS.retries,
  baseDelayMs: 200,
  maxDelayMs: 20_000,
  maxRetryAfterMs: 120_000,
};

/** Network errors and these statuses are retried; nothing else (docs/service.md#error-schema). */
const RETRYABLE_STATUSES = new Set([408, 425, 429, 500, 502, 503, 504]);

export function isRetryableStatus(status: number): boolean {
  return RETRYABLE_STATUSES.has(status);
}

/**
 * `Retry-After` in either form RFC 9110 allows: delay-seconds or an HTTP-date.
 * Returns milliseconds from `now`, or undefined when absent or unreadable.
 */
export function parseRetryAfter(value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (text === '') return undefined;
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  // An HTTP-date names its day and month; anything else (e.g. "-1") is unreadable.
  if (!/[a-z]{3}/i.test(text)) return undefined;
  const date = Date.parse(text);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

export interface RetryDelayInput {
  /** 1 for the wait before the first retry. */
  attempt: number;
  /** The server's Retry-After, in ms, if it sent one. */
  retryAfterMs?: number | undefined;
  /** The delays' bounds (`DEFAULT_RETRY`'s unless the client was given others). */
  policy: RetryPolicy;
  /** A number in [0, 1): injected so tests can pin it. */
  random: number;
}

/**
 * Exponential backoff with full jitter (delay uniform in [0, min(cap, base·2^(attempt-1)))),
 * but never less than what the server asked for in Retry-After.
 * Returns undefined when the server asks for more than we are willing to wait.
 */
export function retryDelay({ attempt, retryAfterMs, policy, random }: RetryDelayInput): number | undefined {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, attempt - 1));
  const backoff = Math.floor(random * ceiling);
  if (retryAfterMs === undefined) return backoff;
  if (retryAfterMs > policy.maxRetryAfterMs) return undefined;
  return Math.max(retryAfterMs, backoff);
}
