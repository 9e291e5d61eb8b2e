/**
 * The sandbox's public shape and its options, resolved and checked once before the server
 * starts (a bad option is a UsageError, not a half-started server).
 */
import { randomBytes } from 'node:crypto';
import { UsageError } from '../errors.js';
import type { SignatureScheme } from '../service/signing.js';
import { SANDBOX_DEFAULTS } from './defaults.js';
import { DEFAULT_FAULTS, type FaultSettings, type LatencyStep, type OutageWindow } from './faults.js';
import type { ListeningAddress } from './reach.js';
import type { SandboxStats } from './routes.js';
import type { SandboxStore } from './store.js';
import { type ClockSetting, SandboxClock } from './clock.js';

const badOption = (message: string) => new UsageError(message, 'bad_option');

/** How to start a sandbox: where it listens, its token and key, seeded clients, paging rules, and the faults it injects. */
export interface SandboxOptions {
  /** default '127.0.0.1'; on an address other machines reach, a given token must be strong */
  host?: string;
  /** default 0 (ephemeral) */
  port?: number;
  /** Serve under this path prefix (`/ccs`), as a gateway in front of the service would; `url` includes it. */
  basePath?: string;
  /** default `lk_sandbox_` + 32 random hex */
  token?: string;
  /** SPKI PEM of an RSA-4096 key to verify X-Signature with; generated (and exposed) when absent. */
  publicKeyPem?: string;
  /** default true; false only for benchmarks of unsigned tools */
  verifySignatures?: boolean;
  /** default DEFAULT_SCHEME (sha256 + pkcs1) */
  signature?: SignatureScheme;
  /** create this many varied clients at start */
  seed?: number;
  /** PRNG seed for seeding and faults (default 1): same value, same clients, same faults */
  seedRandom?: number;
  /**
   * The seeded clients' two years end here instead of at 2026-01-01: `now` (the sandbox clock's,
   * so "new clients this week" has some) or an ISO instant; still the same clients for the same seed and clock.
   */
  seedUntil?: 'now' | string | Date;
  /**
   * The sandbox's "now" for clients created without a created_at: an ISO instant it starts at and
   * runs on from (`2026-03-01T00:00:00Z`, to rehearse any week), or a function read on every create
   * (a test's own clock). Default: the real time. `setClock` and `POST /_sandbox/clock` move it.
   */
  clock?: ClockSetting;
  /** default 0; with 1, page=0 is refused with 400 (param 'page') */
  pageBase?: 0 | 1;
  /** default 100; a larger size is refused with 400 (param 'size') */
  maxPageSize?: number;
  /** Delay added to every request, ms (default 0). */
  latencyMs?: number;
  /** Uniform extra delay in [0, jitterMs) per request, ms. */
  jitterMs?: number;
  /** Share of requests answered 500/502/503/504 before being handled, 0 to 1. */
  failRate?: number;
  /** Share of requests answered 429 with Retry-After, 0 to 1. */
  throttleRate?: number;
  /** Requests per second across all clients before 429s (token bucket); 0 (default): unlimited. */
  rateLimit?: number;
  /** Seconds sent in Retry-After with a 429 (default 1; 0 allowed). */
  retryAfterSeconds?: number;
  /** Share of requests whose connection is closed without an answer, 0 to 1. */
  dropRate?: number;
  /** Share of requests whose connection is reset (ECONNRESET), 0 to 1. */
  resetRate?: number;
  /** Requests answered normally before every one is refused as a revoked key (authFailStatus). */
  authFailAfter?: number;
  /** How authFailAfter refuses: 401 revoked key (default) or 403 IP not allowed. */
  authFailStatus?: 401 | 403;
  /** default 'application_date' */
  applicationDateField?: string;
  /**
   * Serve HTTPS with certificates from a CA made for this run (`sandbox.tls.caPem`).
   * `clientCertificate`: require a client certificate; one is issued from the same CA.
   * `clientCaPem`: also accept client certificates signed by this CA (implies required).
   */
  tls?:
    | boolean
    | {
        /** Require a client certificate; one is issued from the run's CA (`sandbox.tls.clientCertPem`). */
        clientCertificate?: boolean;
        /** Also accept client certificates signed by this CA (PEM); implies clientCertificate. */
        clientCaPem?: string;
      };
  /** A scheduled outage, counted from the first request (or as its `from` says): every request fails while it lasts. */
  outage?: OutageWindow;
  /** Latency steps over time, counted from the first request (replaces latencyMs). */
  latencySchedule?: readonly LatencyStep[];
  /** one line per request; never carries the token or the signature */
  log?: (line: string) => void;
}

export interface SandboxTls {
  /** The CA to trust (PEM). */
  caPem: string;
  /** Issued when client certificates are required. */
  clientCertPem: string | undefined;
  /** The issued client certificate's private key (PEM), with clientCertPem. */
  clientKeyPem: string | undefined;
  /** Connections without a client certificate are refused. */
  requiresClientCertificate: boolean;
}

/**
 * A running sandbox (startSandbox): its URL, token and key, its clients, its counters, and its faults to
 * change while it runs; `close()` it when done.
 */
export interface Sandbox {
  /**
   * Where a client on this machine connects: e.g. http://127.0.0.1:54321 (a loopback address when
   * listening on every interface), https:// with `tls`, + basePath (no trailing slash; API paths are /v1/...)
   */
  url: string;
  /** Where the server is bound (`http://0.0.0.0:4010` on every interface), and whether only this machine can connect. */
  listening: ListeningAddress;
  /** With `tls`: the CA and, for mutual TLS, the client certificate. */
  tls: SandboxTls | undefined;
  /** The token it accepts (`Authorization: Bearer …`). */
  token: string;
  /** The public key it verifies X-Signature with (SPKI PEM); undefined when signatures are not verified. */
  publicKeyPem: string | undefined;
  /** only when the sandbox generated the pair */
  privateKeyPem: string | undefined;
  /** Its clients, in memory: seed them (`insert`, `insertMany`), read them, change a status. */
  store: SandboxStore;
  /** live counters */
  stats: SandboxStats;
  /** Requests arrived and not answered yet, now (a client's requests in flight, as the service sees them). */
  readonly inFlight: number;
  /** The most requests there were at once since the sandbox started (or since restartPeakInFlight()). */
  readonly peakInFlight: number;
  /**
   * Returns `peakInFlight` and starts it again from the requests in flight now: the most at once
   * in a part of a run (once a client settled, say), where the run's peak would include its start.
   */
  restartPeakInFlight(): number;
  /** the fault settings in force */
  readonly faults: Readonly<FaultSettings>;
  /** change latency and faults while running */
  setFaults(changes: Partial<FaultSettings>): void;
  /** from now on the current token gets 401 */
  revokeToken(): void;
  /** The sandbox clock's now: the created_at a client created now gets. */
  now(): Date;
  /** Moves the sandbox clock to this instant; it runs on from there (not for a `clock` function). */
  setClock(at: string | Date): void;
  /** closes the server and every open keep-alive socket */
  close(): Promise<void>;
}

export interface ResolvedOptions {
  host: string;
  port: number;
  /** '' or `/prefix`, without a trailing slash */
  basePath: string;
  token: string;
  verifySignatures: boolean;
  signature: SignatureScheme;
  seed: number;
  seedRandom: number;
  pageBase: 0 | 1;
  maxPageSize: number;
  applicationDateField: string;
  faults: Partial<FaultSettings>;
  clock: SandboxClock;
  /** The seed window's end, ms; undefined: the fixed window. */
  seedUntil: number | undefined;
}

const STANDARD_FIELDS = [
  'name',
  'idempotency_key',
  'email',
  'country',
  'address',
  'currency',
  'liquidity_type',
];

function wholeNumber(
  name: string,
  value: number | undefined,
  fallback: number,
  min: number,
  max: number,
): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < min || value > max) {
    throw badOption(`sandbox ${name} must be an integer from ${min} to ${max} (got ${value}).`);
  }
  return value;
}

/** `/ccs`, `ccs/`, `/a/b` → `/ccs`, `/ccs`, `/a/b`; the prefix a gateway would put before /v1. */
function resolveBasePath(text: string | undefined): string {
  if (text === undefined) return '';
  const path = `/${text.trim().replace(/^\/+|\/+$/g, '')}`;
  if (path === '/') return '';
  if (!/^(\/[A-Za-z0-9._~-]+)+$/.test(path) || path.split('/').some((segment) => segment === '.' || segment === '..')) {
    throw badOption(`sandbox basePath must be path segments of letters, digits and . _ ~ - (got ${JSON.stringify(text)}).`);
  }
  return path;
}

export function resolveOptions(options: SandboxOptions): ResolvedOptions {
  const token = options.token ?? `lk_sandbox_${randomBytes(16).toString('hex')}`;
  if (!/^\S+$/.test(token)) throw badOption('sandbox token must be non-empty and contain no whitespace.');
  const pageBase = options.pageBase ?? SANDBOX_DEFAULTS.pageBase;
  if (pageBase !== 0 && pageBase !== 1) throw badOption(`sandbox pageBase must be 0 or 1 (got ${pageBase}).`);
  const applicationDateField = options.applicationDateField ?? SANDBOX_DEFAULTS.applicationDateField;
  if (
    !/^[A-Za-z_][A-Za-z0-9_.-]*$/.test(applicationDateField) ||
    STANDARD_FIELDS.includes(applicationDateField)
  ) {
    throw badOption(
      `sandbox applicationDateField ${JSON.stringify(applicationDateField)} is not a usable field name.`,
    );
  }
  const signature = options.signature ?? SANDBOX_DEFAULTS.signature;
  if (!['sha256', 'sha512'].includes(signature.hash) || !['pkcs1', 'pss'].includes(signature.padding)) {
    throw badOption('sandbox signature must be {hash: sha256|sha512, padding: pkcs1|pss}.');
  }
  // The fault options are named as FaultSettings: the ones given are taken as they are.
  const faults: Partial<FaultSettings> = {};
  for (const key of Object.keys(DEFAULT_FAULTS) as (keyof FaultSettings)[]) {
    if (options[key] !== undefined) Object.assign(faults, { [key]: options[key] });
  }
  if (options.outage !== undefined) faults.outage = options.outage;
  const clock = new SandboxClock(options.clock);
  return {
    host: options.host ?? SANDBOX_DEFAULTS.host,
    port: wholeNumber('port', options.port, SANDBOX_DEFAULTS.port, 0, 65535),
    basePath: resolveBasePath(options.basePath),
    token,
    verifySignatures: options.verifySignatures ?? SANDBOX_DEFAULTS.verifySignatures,
    signature,
    seed: wholeNumber('seed', options.seed, 0, 0, 10_000_000),
    seedRandom: wholeNumber('seedRandom', options.seedRandom, SANDBOX_DEFAULTS.seedRandom, -(2 ** 31), 2 ** 32 - 1),
    pageBase,
    maxPageSize: wholeNumber('maxPageSize', options.maxPageSize, SANDBOX_DEFAULTS.maxPageSize, 1, 1_000_000),
    applicationDateField,
    faults,
    clock,
    seedUntil: resolveSeedUntil(options.seedUntil, clock),
  };
}

function resolveSeedUntil(until: SandboxOptions['seedUntil'], clock: SandboxClock): number | undefined {
  if (until === undefined) return undefined;
  if (until === 'now') return clock.now();
  const ms = until instanceof Date ? until.getTime() : Date.parse(until);
  if (Number.isNaN(ms)) throw badOption(`sandbox seedUntil must be "now" or an ISO 8601 instant (got ${JSON.stringify(String(until))}).`);
  return ms;
}
