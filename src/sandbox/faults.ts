/**
 * Injected trouble: latency, dropped connections, 429s (random or a real token bucket), 5xx,
 * and connections cut after a client was stored. Every roll comes from one seeded PRNG, so a
 * run with the same seedRandom and the same request order fails the same way.
 */
import { UsageError } from '../errors.js';
import { createRandom, type Random } from './random.js';
import type { ErrorSpec } from './respond.js';

const badOption = (message: string) => new UsageError(message, 'bad_option');

/** The sandbox's latency and faults in force: set at start (SandboxOptions), changed while it runs (`setFaults`). */
export interface FaultSettings {
  /** Added delay per request, ms. */
  latencyMs: number;
  /** Uniform extra delay in [0, jitterMs). */
  jitterMs: number;
  /** Probability of a 500/502/503/504 before handling. */
  failRate: number;
  /** Probability of a 429 with Retry-After. */
  throttleRate: number;
  /** Requests per second across all clients (token bucket); 0 = unlimited. */
  rateLimit: number;
  /** Integer seconds sent in Retry-After (0 allowed). */
  retryAfterSeconds: number;
  /** Probability the connection is destroyed before handling (no response). */
  dropRate: number;
  /** Probability a new client is stored and then the connection destroyed (no response). */
  resetRate: number;
  /** After this many created clients every request is refused; undefined = never. */
  authFailAfter: number | undefined;
  /** How that refusal looks: 401 (revoked key) or 403 (IP no longer allowed). */
  authFailStatus: 401 | 403;
  /** A scheduled outage; its clock starts as its `from` says (default: the first request after it is set). */
  outage: OutageWindow | undefined;
  /** Latency that changes over time (replaces latencyMs); its clock starts like the outage's. */
  latencySchedule: readonly LatencyStep[] | undefined;
}

/** From `atMs` after the first request, every request waits `latencyMs` (until the next step). */
export interface LatencyStep {
  /** When the step starts, ms after the first request. */
  atMs: number;
  /** The delay added to each request from then on, ms. */
  latencyMs: number;
}

/** From `atMs` for `forMs` every request fails: 503 from a gateway, or connections cut. */
export interface OutageWindow {
  /** When the outage starts, ms after its clock started (see `from`). */
  atMs: number;
  /** How long it lasts, ms. */
  forMs: number;
  /** `503`: a gateway answers 503; `drop`: connections are cut without an answer. */
  kind: '503' | 'drop';
  /**
   * What starts the clock `atMs` counts from: `request` (default), the first request of a run —
   * `ccs-bulk check`'s requests do not start it, so a rehearsal can check first; `start`, the
   * sandbox's start (or the moment the outage is set); `{ creates: N }`, the first request after
   * the Nth client was created.
   */
  from?:
    | 'request'
    | 'start'
    | {
        /** The outage's clock starts at the first request once this many clients were created. */
        creates: number;
      }
    | undefined;
}

/** What the outage's clock looks at in a request. */
export interface OutageContext {
  /** Clients created so far. */
  creates: number;
  /** The request's User-Agent. */
  userAgent: string | undefined;
}

/** `ccs-bulk check`'s requests say so: they never start the outage's clock. */
const CHECK_AGENT = 'ccs-bulk check';

export const DEFAULT_FAULTS: FaultSettings = {
  latencyMs: 0,
  jitterMs: 0,
  failRate: 0,
  throttleRate: 0,
  rateLimit: 0,
  retryAfterSeconds: 1,
  dropRate: 0,
  resetRate: 0,
  authFailAfter: undefined,
  authFailStatus: 401,
  outage: undefined,
  latencySchedule: undefined,
};

const OUTAGE_503: ErrorSpec = {
  status: 503,
  type: 'api_error',
  code: 'service_unavailable',
  message: 'Service unavailable (scheduled outage in the sandbox).',
};

/** `MS@S,MS@S,…` (ms of latency from S seconds after the first request): the sandbox command's --latency-schedule. */
export function parseLatencySchedule(text: string): LatencyStep[] {
  const steps = text.split(',').map((part) => {
    const match = /^(\d+(?:\.\d+)?)@(\d+(?:\.\d+)?)$/.exec(part.trim());
    if (!match) throw badOption(`--latency-schedule takes MS@SECONDS steps separated by commas (e.g. 20@0,300@10,20@20), got "${text}"`);
    return { latencyMs: Number(match[1]), atMs: Number(match[2]) * 1000 };
  });
  return steps;
}

/**
 * `AT:FOR` or `AT:FOR:drop`, in seconds: the sandbox command's --outage; AT counts from the
 * first request, or from the sandbox's start (`--outage-from-start`), or from the Nth client
 * created (`--outage-after-creates N`).
 */
export function parseOutage(text: string, clock: { fromStart?: boolean | undefined; afterCreates?: number | undefined } = {}): OutageWindow {
  const match = /^(\d+(?:\.\d+)?):(\d+(?:\.\d+)?)(?::(503|drop))?$/.exec(text.trim());
  if (!match) throw badOption(`--outage takes AT:FOR seconds, optionally :503 or :drop (e.g. 30:60), got "${text}"`);
  const window: OutageWindow = { atMs: Number(match[1]) * 1000, forMs: Number(match[2]) * 1000, kind: (match[3] ?? '503') as '503' | 'drop' };
  if (clock.fromStart === true && clock.afterCreates !== undefined) {
    throw badOption('--outage-from-start and --outage-after-creates exclude each other: pick what starts the outage\'s clock');
  }
  if (clock.fromStart === true) window.from = 'start';
  if (clock.afterCreates !== undefined) window.from = { creates: clock.afterCreates };
  return window;
}

const SERVER_ERRORS: readonly ErrorSpec[] = [
  {
    status: 500,
    type: 'api_error',
    code: 'internal_error',
    message: 'An internal error occurred (injected by the sandbox).',
  },
  { status: 502, type: 'api_error', code: 'bad_gateway', message: 'Bad gateway (injected by the sandbox).' },
  {
    status: 503,
    type: 'api_error',
    code: 'service_unavailable',
    message: 'Service unavailable (injected by the sandbox).',
  },
  {
    status: 504,
    type: 'api_error',
    code: 'gateway_timeout',
    message: 'Gateway timeout (injected by the sandbox).',
  },
];

export type Admission = { kind: 'ok' } | { kind: 'rateLimited' | 'throttle' | 'fail'; error: ErrorSpec };

export class Faults {
  #settings: FaultSettings;
  readonly #random: Random;
  #tokens = 0;
  #refilledAt = 0;
  #outageClock: number | undefined;
  #scheduleClock: number | undefined;

  constructor(settings: Partial<FaultSettings>, seed: number) {
    this.#settings = checkFaults({ ...DEFAULT_FAULTS, ...settings });
    if (this.#settings.outage?.from === 'start') this.#outageClock = performance.now();
    // Offset from the seeding PRNG's seed so seeding and faults are independent streams.
    this.#random = createRandom(seed ^ 0x5bd1e995);
    this.#tokens = this.#settings.rateLimit;
    this.#refilledAt = performance.now();
  }

  get settings(): Readonly<FaultSettings> {
    return this.#settings;
  }

  update(changes: Partial<FaultSettings>): void {
    const next = checkFaults({ ...this.#settings, ...changes });
    if (next.rateLimit !== this.#settings.rateLimit) this.#tokens = next.rateLimit;
    if (next.outage !== this.#settings.outage) this.#outageClock = next.outage?.from === 'start' ? performance.now() : undefined;
    if (next.latencySchedule !== this.#settings.latencySchedule) this.#scheduleClock = undefined;
    this.#settings = next;
  }

  #roll(rate: number): boolean {
    return rate > 0 && this.#random() < rate;
  }

  delayMs(): number {
    const { jitterMs, latencySchedule } = this.#settings;
    const latencyMs = latencySchedule ? this.#scheduled(latencySchedule) : this.#settings.latencyMs;
    return jitterMs > 0 ? latencyMs + this.#random() * jitterMs : latencyMs;
  }

  /** The step in force now: the last one whose time has come (the first before any has). */
  #scheduled(steps: readonly LatencyStep[]): number {
    const now = performance.now();
    this.#scheduleClock ??= now;
    const elapsed = now - this.#scheduleClock;
    let latency = steps[0]!.latencyMs;
    for (const step of steps) if (step.atMs <= elapsed) latency = step.latencyMs;
    return latency;
  }

  /** What the scheduled outage does to a request arriving now, if it is in the window. */
  outage(request: OutageContext = { creates: 0, userAgent: undefined }): { kind: 'drop' } | { kind: '503'; error: ErrorSpec } | undefined {
    const window = this.#settings.outage;
    if (!window) return undefined;
    const now = performance.now();
    if (this.#outageClock === undefined && startsClock(window, request)) this.#outageClock = now;
    if (this.#outageClock === undefined) return undefined;
    const elapsed = now - this.#outageClock;
    if (elapsed < window.atMs || elapsed >= window.atMs + window.forMs) return undefined;
    return window.kind === 'drop' ? { kind: 'drop' } : { kind: '503', error: OUTAGE_503 };
  }

  drop(): boolean {
    return this.#roll(this.#settings.dropRate);
  }

  reset(): boolean {
    return this.#roll(this.#settings.resetRate);
  }

  /** Rate limit, then random throttling, then random 5xx: the order a gateway would apply them. */
  admit(): Admission {
    const { rateLimit, throttleRate, failRate, retryAfterSeconds } = this.#settings;
    const retryAfter = { 'retry-after': String(retryAfterSeconds) };
    if (rateLimit > 0 && !this.#take(rateLimit)) {
      return {
        kind: 'rateLimited',
        error: {
          status: 429,
          type: 'rate_limit_error',
          code: 'rate_limit_exceeded',
          message: `Too many requests: the limit is ${rateLimit} per second. Retry after ${retryAfterSeconds} s.`,
          headers: retryAfter,
        },
      };
    }
    if (this.#roll(throttleRate)) {
      return {
        kind: 'throttle',
        error: {
          status: 429,
          type: 'rate_limit_error',
          code: 'rate_limited',
          message: `Too many requests (injected by the sandbox). Retry after ${retryAfterSeconds} s.`,
          headers: retryAfter,
        },
      };
    }
    if (this.#roll(failRate)) {
      const error = SERVER_ERRORS[Math.floor(this.#random() * SERVER_ERRORS.length)]!;
      return { kind: 'fail', error: error.status === 503 ? { ...error, headers: retryAfter } : error };
    }
    return { kind: 'ok' };
  }

  /** Token bucket holding at most one second of requests. */
  #take(rate: number): boolean {
    const now = performance.now();
    this.#tokens = Math.min(rate, this.#tokens + ((now - this.#refilledAt) / 1000) * rate);
    this.#refilledAt = now;
    if (this.#tokens < 1) return false;
    this.#tokens -= 1;
    return true;
  }
}

/** Whether this request starts a window's clock (`start`'s was started when the window was set). */
function startsClock(window: OutageWindow, request: OutageContext): boolean {
  const from = window.from ?? 'request';
  if (from === 'start') return true;
  if (from === 'request') return request.userAgent !== CHECK_AGENT;
  return request.creates >= from.creates;
}

function checkFaults(settings: FaultSettings): FaultSettings {
  const probability = ['failRate', 'throttleRate', 'dropRate', 'resetRate'] as const;
  for (const key of probability) {
    const value = settings[key];
    if (!(value >= 0 && value <= 1))
      throw badOption(`sandbox ${key} must be between 0 and 1 (got ${value}).`);
  }
  const nonNegative = ['latencyMs', 'jitterMs', 'rateLimit'] as const;
  for (const key of nonNegative) {
    const value = settings[key];
    if (!(value >= 0 && Number.isFinite(value))) {
      throw badOption(`sandbox ${key} must be a number >= 0 (got ${value}).`);
    }
  }
  if (!Number.isInteger(settings.retryAfterSeconds) || settings.retryAfterSeconds < 0) {
    throw badOption(
      `sandbox retryAfterSeconds must be a whole number of seconds >= 0 (got ${settings.retryAfterSeconds}).`,
    );
  }
  const { authFailAfter, authFailStatus } = settings;
  if (authFailAfter !== undefined && !(Number.isInteger(authFailAfter) && authFailAfter >= 0)) {
    throw badOption(`sandbox authFailAfter must be an integer >= 0 (got ${authFailAfter}).`);
  }
  const { outage } = settings;
  if (outage !== undefined && !(outage.atMs >= 0 && outage.forMs >= 0 && Number.isFinite(outage.atMs + outage.forMs) && (outage.kind === '503' || outage.kind === 'drop'))) {
    throw badOption('sandbox outage must be {atMs >= 0, forMs >= 0, kind: 503|drop}.');
  }
  const from = outage?.from;
  if (from !== undefined && from !== 'request' && from !== 'start' && !(typeof from === 'object' && Number.isSafeInteger(from.creates) && from.creates >= 1)) {
    throw badOption('sandbox outage.from must be "request", "start" or {creates: a whole number >= 1}.');
  }
  const { latencySchedule } = settings;
  if (latencySchedule !== undefined) {
    const ordered = latencySchedule.every((step, i) => i === 0 || step.atMs > latencySchedule[i - 1]!.atMs);
    const sane = latencySchedule.every((step) => step.atMs >= 0 && step.latencyMs >= 0 && Number.isFinite(step.atMs + step.latencyMs));
    if (latencySchedule.length === 0 || !ordered || !sane) {
      throw badOption('sandbox latencySchedule must be steps {atMs >= 0, latencyMs >= 0} in increasing atMs.');
    }
  }
  if (authFailStatus !== 401 && authFailStatus !== 403) {
    throw badOption(`sandbox authFailStatus must be 401 or 403 (got ${String(authFailStatus)}).`);
  }
  return settings;
}
