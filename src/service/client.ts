/**
 * The Client Credit Service client: a factory over an injected undici dispatcher (ofetch's
 * createFetch). A keep-alive Pool, sized to the caller's concurrency: far cheaper per request than fetch.
 */

import type { Dispatcher } from 'undici';
import type { z } from 'zod';
import { AuthError, ConnectionError, NetworkError, ServiceError } from '../errors.js';
import { type BreakerPolicy, DEFAULT_BREAKER } from './breaker.js';
import { SERVICE_DEFAULTS } from './defaults.js';
import { diagnoseNetworkError } from './diagnose.js';
import { createTransport, type NetworkSettings } from './dispatcher.js';
import { injected } from '../inject.js';
import { createOutageGate, type OutageEvent, type OutageGate } from './outage.js';
import { DEFAULT_RETRY, isRetryableStatus, parseRetryAfter, type RetryPolicy, retryDelay } from './retry.js';
import {
  type Client,
  type CreateClientBody,
  clientSchema,
  envelopeSchema,
  errorBodySchema,
  type ListClientsQuery,
  type ListPage,
  listPageSchema,
} from './schemas.js';
import { cleanOptional, cleanServerText, MAX_RESPONSE_BYTES, readBody, refuseRedirect } from './response.js';
import type { Signer } from './signing.js';
import { checkBaseUrl } from './url.js';

export interface Timeouts {
  connectMs: number;
  headersMs: number;
  bodyMs: number;
}

export const DEFAULT_TIMEOUTS: Timeouts = {
  connectMs: SERVICE_DEFAULTS.connectTimeoutMs,
  headersMs: SERVICE_DEFAULTS.timeoutMs,
  bodyMs: SERVICE_DEFAULTS.timeoutMs,
};

export interface RetryEvent {
  attempt: number;
  delayMs: number;
  status?: number | undefined;
  reason: string;
}

/** One attempt's answer, for `--concurrency auto`: its HTTP status (none: network error or timeout) and time on the wire. */
export interface Answer {
  status: number | undefined;
  ms: number;
}

/** One request attempt, for audit logs: no header, body or token, only what happened. */
export interface AttemptEvent {
  method: 'GET' | 'POST';
  /** The path without its query. */
  path: string;
  /** List Clients: the page asked for. */
  page: number | undefined;
  /** Create Client: the input's row number, when the caller gave it. */
  row: number | undefined;
  attempt: number;
  /** HTTP status; undefined when no response came (network error). */
  status: number | undefined;
  latencyMs: number;
  requestId: string | undefined;
  /** The error code when the attempt failed. */
  error: string | undefined;
}

export interface ServiceClientOptions {
  baseUrl: string;
  token: string;
  /** Needed for createClient only. */
  signer?: Signer | undefined;
  /** Injected transport; when absent one is made (dispatcher.ts) for `network` and owned. */
  dispatcher?: Dispatcher | undefined;
  /** Proxy and TLS settings for the transport this client makes. */
  network?: NetworkSettings | undefined;
  connections?: number | undefined;
  timeouts?: Partial<Timeouts> | undefined;
  retry?: Partial<RetryPolicy> | undefined;
  /** Wire name of the application date (--application-date-field). */
  applicationDateField?: string | undefined;
  /** Aborting stops waiting for retries; a request already on the wire finishes. */
  signal?: AbortSignal | undefined;
  onRetry?: ((event: RetryEvent) => void) | undefined;
  /** Called after every attempt that reached the wire, success or not. */
  onAttempt?: ((event: AttemptEvent) => void) | undefined;
  /**
   * The circuit breaker: a service that fails everything pauses every request and is probed
   * until it is back or down for outageTimeoutMs (then OutageError). false turns it off.
   */
  breaker?: Partial<BreakerPolicy> | false | undefined;
  onOutage?: ((event: OutageEvent) => void) | undefined;
  random?: (() => number) | undefined;
}

export interface Reply<T> {
  data: T;
  status: number;
  attempts: number;
  requestId: string | undefined;
}

/** A Create Client request serialized and signed, ready to send (and re-send) as is. */
export interface PreparedCreate {
  readonly bytes: Buffer;
  readonly signature: string;
}

/** What the caller knows of a request, copied into its attempts' AttemptEvents. */
export interface RequestContext {
  /** The input's row number (import). */
  row?: number | undefined;
}

export interface ServiceClient {
  createClient(body: CreateClientBody, context?: RequestContext): Promise<Reply<Client>>;
  /**
   * createClient in two steps, so a caller can sign bodies ahead while others are on the
   * wire: prepareCreate serializes and signs (the costly part, in the thread pool);
   * sendCreate posts, with retries.
   */
  prepareCreate(body: CreateClientBody): Promise<PreparedCreate>;
  sendCreate(prepared: PreparedCreate, context?: RequestContext): Promise<Reply<Client>>;
  listClients(query: ListClientsQuery): Promise<Reply<ListPage>>;
  /** Every attempt's answer, 429s and retries included, until the returned function is called. */
  watchAnswers(listener: (answer: Answer) => void): () => void;
  getClient(id: string): Promise<Reply<Client>>;
  /** Closes the pool if this client made it. */
  close(): Promise<void>;
}

const createEnvelope = envelopeSchema(clientSchema);
const listEnvelope = envelopeSchema(listPageSchema);

/**
 * The body is serialized once, in a fixed field order, and these exact bytes are signed and
 * sent on every attempt: a retried POST is byte-identical (same key, same signature).
 */
export function serializeCreateBody(
  body: CreateClientBody,
  applicationDateField: string = SERVICE_DEFAULTS.applicationDateField,
): Buffer {
  const wire: Record<string, string> = {
    name: body.name,
    idempotency_key: body.idempotency_key,
    email: body.email,
    country: body.country,
    address: body.address,
  };
  if (body.currency !== undefined) wire.currency = body.currency;
  if (body.liquidity_type !== undefined) wire.liquidity_type = body.liquidity_type;
  if (body.application_date !== undefined) wire[applicationDateField] = body.application_date;
  return Buffer.from(JSON.stringify(wire), 'utf8');
}

export function listQueryString(query: ListClientsQuery): string {
  const params = new URLSearchParams();
  if (query.status?.length) params.set('status', query.status.join(','));
  if (query.credit_status?.length) params.set('credit_status', query.credit_status.join(','));
  if (query['created_at.from'] !== undefined) params.set('created_at.from', query['created_at.from']);
  if (query['created_at.to'] !== undefined) params.set('created_at.to', query['created_at.to']);
  if (query.page !== undefined) params.set('page', String(query.page));
  if (query.size !== undefined) params.set('size', String(query.size));
  if (query.direction !== undefined) params.set('direction', query.direction);
  const text = params.toString();
  return text === '' ? '' : `?${text}`;
}

export function createServiceClient(options: ServiceClientOptions): ServiceClient {
  const base = checkBaseUrl(options.baseUrl);
  const origin = base.origin;
  const prefix = base.pathname.replace(/\/+$/, '');
  const timeouts = { ...DEFAULT_TIMEOUTS, ...options.timeouts };
  const policy: RetryPolicy = { ...DEFAULT_RETRY, ...options.retry };
  const random = options.random ?? Math.random;
  const ownsDispatcher = options.dispatcher === undefined;
  const transport = options.dispatcher
    ? { dispatcher: options.dispatcher, proxy: options.network?.proxy }
    : createTransport(base, {
        connections: options.connections ?? SERVICE_DEFAULTS.connections,
        connectTimeoutMs: timeouts.connectMs,
        network: options.network,
      });
  const { dispatcher } = transport;
  const authorization = `Bearer ${options.token}`;
  // A 429 slows the whole client, not one request: every attempt waits for this instant.
  let pausedUntil = 0;
  // Once the service has answered, DNS, TCP, TLS and the proxy are known to work.
  let answered = false;
  const listeners = new Set<(answer: Answer) => void>();
  const gate: OutageGate | undefined =
    options.breaker === false
      ? undefined
      : createOutageGate({
          policy: { ...DEFAULT_BREAKER, ...options.breaker },
          probe,
          onEvent: options.onOutage,
          random,
          ...(injected.probeTimer && { setTimer: injected.probeTimer }),
        });

  /** A cheap read that creates nothing: undefined when the service answers, else why not. */
  async function probe(): Promise<string | undefined> {
    try {
      const response = await dispatcher.request({
        origin,
        path: `${prefix}/v1/clients?size=1`,
        method: 'GET',
        headers: { authorization, accept: 'application/json', 'user-agent': 'ccs-bulk' },
        headersTimeout: timeouts.headersMs,
        bodyTimeout: timeouts.bodyMs,
      });
      await response.body.dump();
      return isOutageStatus(response.statusCode) ? `HTTP ${response.statusCode}` : undefined;
    } catch (error) {
      return networkReason(error);
    }
  }

  async function send<T>(
    method: 'GET' | 'POST',
    path: string,
    schema: z.ZodType<{ data: T }>,
    body?: { bytes: Buffer; signature: string },
    context: RequestContext = {},
  ): Promise<Reply<T>> {
    const headers: Record<string, string> = {
      authorization,
      accept: 'application/json',
      'user-agent': 'ccs-bulk',
    };
    if (body) {
      headers['content-type'] = 'application/json';
      headers['x-signature'] = body.signature;
    }
    // Failures while the breaker is open (or that open it) are the outage's, not this request's.
    let counted = 0;
    for (let attempt = 1; ; attempt++) {
      const opening = gate?.ready(options.signal);
      if (opening) {
        await opening.catch((error: unknown) => {
          if (error instanceof ServiceError) throw withAttempts(error, attempt - 1);
          throw new ServiceError('interrupted while the service was down', { type: 'interrupted' }, { code: 'wait_interrupted' });
        });
      }
      await waitUntil(pausedUntil, options.signal).catch(() => {
        throw new ServiceError('interrupted before sending', { type: 'interrupted' }, { code: 'wait_interrupted' });
      });
      let failure: ServiceError;
      let retryAfterMs: number | undefined;
      const sentAt = performance.now();
      let status: number | undefined;
      let requestId: string | undefined;
      // Once per attempt, its outcome: for the concurrency controller and the audit log alike.
      const observe = (error: { code?: string | undefined } | undefined) => {
        const ms = performance.now() - sentAt;
        for (const listener of listeners) listener({ status, ms });
        options.onAttempt?.({
          method,
          path: path.split('?')[0] ?? path,
          page: pageOf(path),
          row: context.row,
          attempt,
          status,
          latencyMs: Math.round(ms),
          requestId,
          error: error === undefined ? undefined : (error.code ?? 'error'),
        });
      };
      try {
        const response = await dispatcher.request({
          origin,
          path: prefix + path,
          method,
          headers,
          body: body?.bytes ?? null,
          headersTimeout: timeouts.headersMs,
          bodyTimeout: timeouts.bodyMs,
        });
        answered = true;
        status = response.statusCode;
        if (response.statusCode >= 300 && response.statusCode < 400) {
          throw withAttempts(refuseRedirect(response, `${method} ${path}`, options.token), attempt);
        }
        const text = await readBody(response, `${method} ${path}`, { limit: MAX_RESPONSE_BYTES, timeoutMs: timeouts.bodyMs });
        requestId = cleanOptional(headerValue(response.headers['x-request-id']), options.token);
        if (!isOutageStatus(response.statusCode)) gate?.answered();
        if (response.statusCode >= 200 && response.statusCode < 300) {
          const parsed = schema.safeParse(parseJson(text));
          if (!parsed.success) {
            throw new ServiceError(
              `unexpected response from ${method} ${path} (HTTP ${response.statusCode}): ${describeIssues(parsed.error)}`,
              { status: response.statusCode, type: 'bad_response', requestId },
              { code: 'bad_response' },
            );
          }
          observe(undefined);
          return { data: parsed.data.data, status: response.statusCode, attempts: attempt, requestId };
        }
        failure = errorFromResponse(response.statusCode, text, requestId, options.token);
        if (!isRetryableStatus(response.statusCode)) throw withAttempts(failure, attempt);
        retryAfterMs = parseRetryAfter(headerValue(response.headers['retry-after']), Date.now());
      } catch (error) {
        if (error instanceof ServiceError) {
          observe(error);
          throw error;
        }
        // A request undici refuses to build (a header with a newline, say) fails the same way every time.
        if ((error as { code?: unknown }).code === 'UND_ERR_INVALID_ARG') {
          throw new ServiceError(`cannot send ${method} ${path}: ${networkReason(error)}`, { type: 'client_error' }, { code: 'invalid_request' });
        }
        const diagnosis = diagnoseNetworkError(error, { origin, proxy: transport.proxy, answered });
        if (diagnosis.systemic) {
          throw halt(new ConnectionError(`cannot reach the service: ${diagnosis.cause}`, diagnosis.fix, { cause: error }), attempt);
        }
        failure = new NetworkError(`network error on ${method} ${path}: ${networkReason(error)}`, {
          cause: error,
        });
      }
      observe(failure);
      const outageFailure = failure.status === undefined || isOutageStatus(failure.status);
      if (gate && outageFailure && !gate.failed(failure.message)) {
        // Connections failing in a row before the service ever answered: not an outage to wait out.
        if (!answered && failure.status === undefined) {
          throw halt(new ConnectionError(`the service never answered: connections to ${origin} keep failing (${networkReason(failure.cause)})`, NEVER_ANSWERED_FIX, { cause: failure }), attempt);
        }
        continue;
      }
      counted++;
      if (counted > policy.retries) throw withAttempts(failure, attempt);
      const delayMs = retryDelay({ attempt: counted, retryAfterMs, policy, random: random() });
      if (delayMs === undefined) throw withAttempts(failure, attempt);
      if (failure.status === 429) pausedUntil = Math.max(pausedUntil, Date.now() + delayMs);
      options.onRetry?.({ attempt, delayMs, status: failure.status, reason: failure.message });
      await waitUntil(Date.now() + delayMs, options.signal).catch(() => {
        throw withAttempts(interrupted(failure), attempt);
      });
    }
  }

  /** A systemic failure ends every request of this client, waiting or to come. */
  function halt(error: ConnectionError, attempts: number): ConnectionError {
    gate?.halt(error);
    return withAttempts(error, attempts);
  }

  async function prepareCreate(body: CreateClientBody): Promise<PreparedCreate> {
    if (!options.signer) throw new Error('createClient needs a signer');
    const bytes = serializeCreateBody(body, options.applicationDateField);
    return { bytes, signature: await options.signer.sign(bytes) };
  }
  const sendCreate = (prepared: PreparedCreate, context?: RequestContext) =>
    send('POST', '/v1/client', createEnvelope, prepared, context);

  return {
    async createClient(body, context) {
      return sendCreate(await prepareCreate(body), context);
    },
    prepareCreate,
    sendCreate,
    listClients(query) {
      return send('GET', `/v1/clients${listQueryString(query)}`, listEnvelope);
    },
    watchAnswers(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    getClient(id) {
      return send('GET', `/v1/clients/${encodeURIComponent(id)}`, createEnvelope);
    },
    async close() {
      gate?.close();
      if (ownsDispatcher) await dispatcher.close();
    },
  };
}

const NEVER_ANSWERED_FIX =
  'check the base URL (host, port, https://); a service that requires a client certificate closes connections without one (--client-cert, --client-key); behind a proxy, check HTTPS_PROXY / --proxy';

/** What an outage looks like from here: a gateway or server failing (not 429, not 4xx). */
function isOutageStatus(status: number): boolean {
  return status === 500 || status === 502 || status === 503 || status === 504;
}

/** Stopped (Ctrl-C) while waiting to retry: the last answer is kept in the message. */
function interrupted(last: ServiceError): ServiceError {
  return new ServiceError(
    `interrupted while waiting to retry (last answer: ${last.message})`,
    { status: last.status, type: 'interrupted', requestId: last.requestId },
    { code: 'wait_interrupted' },
  );
}

function withAttempts<E extends ServiceError>(error: E, attempts: number): E {
  error.attempts = attempts;
  return error;
}

const AUTH_HINTS: Record<number, string> = {
  401:
    'check the token (CCS_TOKEN or --token-file) is valid for this base URL (lk_sandbox_ keys for the sandbox, lk_live_ for live), ' +
    'that the signing key (CCS_SIGNING_KEY_FILE or --signing-key) is the one whose public key is registered, ' +
    'and --signature-hash / --signature-padding',
  403: "check that this machine's IP address is on the service's allow-list and that the token may create and list clients",
};

/** Every text the server chose is cleaned (token redacted, control characters escaped) before it is kept. */
function errorFromResponse(status: number, text: string, requestId: string | undefined, token: string): ServiceError {
  const parsed = errorBodySchema.safeParse(parseJson(text));
  const body = parsed.success ? parsed.data.error : undefined;
  const info = {
    status,
    type: cleanOptional(body?.type, token),
    errorCode: cleanOptional(body?.code, token),
    param: cleanOptional(body?.param, token),
    requestId: cleanOptional(body?.request_id, token) ?? requestId,
    docUrl: cleanOptional(body?.doc_url, token),
    details: body?.details,
  };
  const what = cleanServerText(body?.message ?? (text.trim().slice(0, 200) || 'no error body'), token);
  const label = [status, info.type, info.errorCode].filter(Boolean).join(' ');
  const hint = AUTH_HINTS[status];
  if (hint !== undefined)
    return new AuthError(`the service refused the request (${label}: ${what}): ${hint}`, info);
  return new ServiceError(`${label}: ${what}`, info);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function describeIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 3)
    .map((issue) => `${issue.path.join('.') || '(body)'}: ${issue.message}`)
    .join('; ');
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function networkReason(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return typeof code === 'string' ? `${code} ${error.message}` : error.message;
  }
  return String(error);
}

function waitUntil(instant: number, signal: AbortSignal | undefined): Promise<void> {
  const ms = instant - Date.now();
  if (ms <= 0) return Promise.resolve();
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(done, ms);
    function done() {
      signal?.removeEventListener('abort', abort);
      resolve();
    }
    function abort() {
      clearTimeout(timer);
      reject(signal?.reason);
    }
    signal?.addEventListener('abort', abort, { once: true });
  });
}

/** The page number of a List Clients path, if any. */
function pageOf(path: string): number | undefined {
  const page = /[?&]page=(\d+)/.exec(path)?.[1];
  return page === undefined ? undefined : Number(page);
}
