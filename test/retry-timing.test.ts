import { describe, expect, it } from 'vitest';
import { DEFAULT_RETRY, isRetryableStatus, parseRetryAfter, retryDelay } from '../src/service/retry.js';

const policy = { ...DEFAULT_RETRY, baseDelayMs: 100, maxDelayMs: 1000, maxRetryAfterMs: 60_000 };

describe('retryDelay (full jitter, capped, honouring Retry-After)', () => {
  it.each([
    // attempt, random, retryAfterMs, expected
    [1, 0, undefined, 0],
    [1, 0.5, undefined, 50],
    [1, 0.999, undefined, 99],
    [2, 0.5, undefined, 100],
    [3, 0.5, undefined, 200],
    [4, 1 - 1e-9, undefined, 799],
    [5, 0.5, undefined, 500], // 1600 capped at 1000
    [30, 0.5, undefined, 500], // no overflow at high attempts
    [1, 0.5, 3000, 3000], // the server's wait wins over a shorter backoff
    [5, 0.99, 200, 990], // a longer backoff wins over a short Retry-After
    [1, 0.5, 0, 50],
    [1, 0.5, 60_001, undefined], // more than we wait for: give up
  ])('attempt %i, random %f, Retry-After %s ms → %s', (attempt, random, retryAfterMs, expected) => {
    expect(retryDelay({ attempt, random, retryAfterMs, policy })).toBe(expected);
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-11-22T10:00:00Z');
  it.each([
    ['3', 3000],
    ['0', 0],
    [' 12 ', 12_000],
    ['Sun, 22 Nov 2026 10:00:05 GMT', 5000],
    ['Sun, 22 Nov 2026 09:59:00 GMT', 0], // a date in the past means now
    ['soon', undefined],
    ['', undefined],
    [undefined, undefined],
    ['-1', undefined],
  ])('%s → %s', (value, expected) => {
    expect(parseRetryAfter(value, now)).toBe(expected);
  });
});

describe('isRetryableStatus', () => {
  it('retries exactly the statuses docs/service.md names', () => {
    const retried = [400, 401, 403, 404, 408, 409, 422, 425, 429, 500, 501, 502, 503, 504].filter(
      isRetryableStatus,
    );
    expect(retried).toEqual([408, 425, 429, 500, 502, 503, 504]);
  });
});
