/**
 * One request to the service, with retries: wait at the outage gate and behind a 429's pause,
 * send, read and check the answer, then retry, wait out the outage, or give up. What every
 * request of one client shares (the transport, the pause, whether the service ever answered)
 * is its Wire, made once by createServiceClient.
 */
import type { Dispatcher } from 'undici';
import { ConnectionError, NetworkError, ServiceError } from '../errors.js';
import { diagnoseNetworkError } from './diagnose.js';
import type { OutageGate } from './outage.js';
import {
  cleanOptional,
  describeIssues,
  errorFromResponse,
  headerValue,
  MAX_RESPONSE_BYTES,
  parseJson,
  readBody,
  refuseRedirect,
} from './response.js';
import type { BodyParser } from './schemas.js';
import { isRetryableStatus, parseRetryAfter, type RetryPolicy, retryDelay } from './retry.js';
import type { Answer, AttemptEvent, Reply, RequestContext, RetryEvent, Timeouts, WireSlot } from './types.js';
import { waitUntil } from './wait-until.js';

/** What every request of one service client shares. */
export interface Wire {
  readonly origin: string;
  /** The base URL's path, without a trailing slash: prefixed to every request's path. */
  readonly prefix: string;
  readonly dispatcher: Dispatcher;
  /** The proxy requests go through (credentials redacted), for diagnoses. */
  readonly proxy: string | undefined;
  readonly token: string;
  readonly authorization: string;
  readonly timeouts: Timeouts;
  readonly policy: RetryPolicy;
  readonly random: () => number;
  /** Aborting stops waiting for retries; a request already on the wire finishes. */
  readonly signal: AbortSignal | undefined;
  readonly onRetry: ((event: RetryEvent) => void) | undefined;
  readonly onAttempt: ((event: AttemptEvent) => void) | undefined;
  readonly listeners: Set<(answer: Answer) => void>;
  /** The circuit breaker; undefined when turned off. */
  gate: OutageGate | undefined;
  /** A 429 slows the whole client, not one request: every attempt waits for this instant. */
  pausedUntil: number;
  /** When that pause was set: a 429 to a request sent before then is its echo, not a new one. */
  pausedAt: number;
  /** Once the service has answered, DNS, TCP, TLS and the proxy are known to work. */
  answered: boolean;
}

/** A request as sent on every attempt: a retried POST is byte-identical (same key, same signature). */
interface Outgoing<T> {
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  body: Buffer | null;
  schema: BodyParser<{ data: T }>;
  context: RequestContext;
}

/** An attempt that failed in a way worth another: the failure, and how long the service asked us to wait. */
interface Failed {
  failure: ServiceError;
  retryAfterMs: number | undefined;
}

export async function sendRequest<T>(
  wire: Wire,
  method: 'GET' | 'POST',
  path: string,
  schema: BodyParser<{ data: T }>,
  body?: { bytes: Buffer; signature: string },
  context: RequestContext = {},
): Promise<Reply<T>> {
  const headers: Record<string, string> = {
    authorization: wire.authorization,
    accept: 'application/json',
    'user-agent': 'ccs-bulk',
  };
  if (body) {
    headers['content-type'] = 'application/json';
    headers['x-signature'] = body.signature;
  }
  const request: Outgoing<T> = { method, path, headers, body: body?.bytes ?? null, schema, context };
  // Failures while the breaker is open (or that open it) are the outage's, not this request's.
  let counted = 0;
  for (let attempt = 1; ; attempt++) {
    await waitForTurn(wire, attempt, context.slot);
    const sentAt = Date.now();
    const outcome = await sendOnce(wire, request, attempt);
    if (!('failure' in outcome)) return outcome;
    const { failure, retryAfterMs } = outcome;
    if (heldByOutage(wire, failure, attempt)) continue;
    counted++;
    if (counted > wire.policy.retries) throw withAttempts(failure, attempt);
    const delayMs = retryDelay({ attempt: counted, retryAfterMs, policy: wire.policy, random: wire.random() });
    if (delayMs === undefined) throw withAttempts(failure, attempt);
    if (failure.status === 429) pause(wire, sentAt, delayMs);
    wire.onRetry?.({ attempt, delayMs, status: failure.status, reason: failure.message });
    context.slot?.leave();
    await waitUntil(Date.now() + delayMs, wire.signal).catch(() => {
      throw withAttempts(interrupted(failure), attempt);
    });
  }
}

/**
 * A 429 pauses the whole client for its delay. The 429s to requests already on the wire when
 * the pause was set say the same thing again: they do not stretch it (each still waits its own
 * delay before its retry), or a round trip's worth of them would add a round trip of idle.
 */
function pause(wire: Wire, sentAt: number, delayMs: number): void {
  if (sentAt < wire.pausedAt && wire.pausedUntil > Date.now()) return;
  wire.pausedUntil = Math.max(wire.pausedUntil, Date.now() + delayMs);
  wire.pausedAt = Date.now();
}

/**
 * Waits while the service is down (the gate) and while a 429 pauses the client, lending the
 * send window's slot meanwhile; then holds one within the limit in force.
 */
async function waitForTurn(wire: Wire, attempt: number, slot: WireSlot | undefined): Promise<void> {
  for (;;) {
    const opening = wire.gate?.ready(wire.signal);
    const paused = wire.pausedUntil > Date.now();
    if (!opening && !paused && (slot === undefined || slot.fits())) return;
    slot?.leave();
    if (opening) {
      await opening.catch((error: unknown) => {
        if (error instanceof ServiceError) throw withAttempts(error, attempt - 1);
        throw new ServiceError('interrupted while the service was down', { type: 'interrupted' }, { code: 'wait_interrupted' });
      });
    }
    await waitUntil(wire.pausedUntil, wire.signal).catch(() => {
      throw new ServiceError('interrupted before sending', { type: 'interrupted' }, { code: 'wait_interrupted' });
    });
    await slot?.enter();
  }
}

/** One attempt: the reply, a failure worth retrying, or a thrown ServiceError that ends the request. */
async function sendOnce<T>(wire: Wire, request: Outgoing<T>, attempt: number): Promise<Reply<T> | Failed> {
  const { method, path } = request;
  const sentAt = performance.now();
  let status: number | undefined;
  let requestId: string | undefined;
  let failure: ServiceError;
  let retryAfterMs: number | undefined;
  try {
    const response = await wire.dispatcher.request({
      origin: wire.origin,
      path: wire.prefix + path,
      method,
      headers: request.headers,
      body: request.body,
      headersTimeout: wire.timeouts.headersMs,
      bodyTimeout: wire.timeouts.bodyMs,
    });
    wire.answered = true;
    status = response.statusCode;
    if (status >= 300 && status < 400) {
      throw withAttempts(refuseRedirect(response, `${method} ${path}`, wire.token), attempt);
    }
    const text = await readBody(response, `${method} ${path}`, { limit: MAX_RESPONSE_BYTES, timeoutMs: wire.timeouts.bodyMs });
    requestId = cleanOptional(headerValue(response.headers['x-request-id']), wire.token);
    if (!isOutageStatus(status)) wire.gate?.answered();
    if (status >= 200 && status < 300) {
      const parsed = request.schema.safeParse(parseJson(text));
      if (!parsed.success) {
        throw new ServiceError(
          `unexpected response from ${method} ${path} (HTTP ${status}): ${describeIssues(parsed.error)}`,
          { status, type: 'bad_response', requestId },
          { code: 'bad_response' },
        );
      }
      reportAttempt(wire, request, attempt, sentAt, status, requestId, undefined);
      const date = headerValue(response.headers.date);
      return { data: parsed.data.data, status, attempts: attempt, requestId, date, receivedAt: Date.now() };
    }
    failure = errorFromResponse(status, text, requestId, wire.token);
    if (!isRetryableStatus(status)) throw withAttempts(failure, attempt);
    retryAfterMs = parseRetryAfter(headerValue(response.headers['retry-after']), Date.now());
  } catch (error) {
    if (error instanceof ServiceError) {
      reportAttempt(wire, request, attempt, sentAt, status, requestId, error);
      throw error;
    }
    failure = networkFailure(wire, request, error, attempt);
  }
  reportAttempt(wire, request, attempt, sentAt, status, requestId, failure);
  return { failure, retryAfterMs };
}

/** A failure undici threw: worth a retry (NetworkError), or thrown when no retry can fix it. */
function networkFailure(wire: Wire, request: Outgoing<unknown>, error: unknown, attempt: number): ServiceError {
  const { method, path } = request;
  // A request undici refuses to build (a header with a newline, say) fails the same way every time.
  if ((error as { code?: unknown }).code === 'UND_ERR_INVALID_ARG') {
    throw new ServiceError(`cannot send ${method} ${path}: ${networkReason(error)}`, { type: 'client_error' }, { code: 'invalid_request' });
  }
  const diagnosis = diagnoseNetworkError(error, { origin: wire.origin, proxy: wire.proxy, answered: wire.answered });
  if (diagnosis.systemic) {
    throw halt(wire, new ConnectionError(`cannot reach the service: ${diagnosis.cause}`, diagnosis.fix, { cause: error }), attempt);
  }
  return new NetworkError(`network error on ${method} ${path}: ${networkReason(error)}`, { cause: error });
}

/** True when the failure is the outage's: the request waits at the gate again, its retries untouched. */
function heldByOutage(wire: Wire, failure: ServiceError, attempt: number): boolean {
  const outageFailure = failure.status === undefined || isOutageStatus(failure.status);
  if (!wire.gate || !outageFailure || wire.gate.failed(failure.message)) return false;
  // Connections failing in a row before the service ever answered: not an outage to wait out.
  if (!wire.answered && failure.status === undefined) {
    throw halt(wire, new ConnectionError(`the service never answered: connections to ${wire.origin} keep failing (${networkReason(failure.cause)})`, NEVER_ANSWERED_FIX, { cause: failure }), attempt);
  }
  return true;
}

/** Once per attempt, its outcome: for the concurrency controller and the audit log alike. */
function reportAttempt(
  wire: Wire,
  request: Outgoing<unknown>,
  attempt: number,
  sentAt: number,
  status: number | undefined,
  requestId: string | undefined,
  error: { code?: string | undefined } | undefined,
): void {
  const ms = performance.now() - sentAt;
  for (const listener of wire.listeners) listener({ status, ms });
  wire.onAttempt?.({
    method: request.method,
    path: request.path.split('?')[0] ?? request.path,
    page: pageOf(request.path),
    row: request.context.row,
    attempt,
    status,
    latencyMs: Math.round(ms),
    requestId,
    error: error === undefined ? undefined : (error.code ?? 'error'),
  });
}

/** A cheap read that creates nothing: undefined when the service answers, else why not. */
export async function probeService(wire: Wire): Promise<string | undefined> {
  try {
    const response = await wire.dispatcher.request({
      origin: wire.origin,
      path: `${wire.prefix}/v1/clients?size=1`,
      method: 'GET',
      headers: { authorization: wire.authorization, accept: 'application/json', 'user-agent': 'ccs-bulk' },
      headersTimeout: wire.timeouts.headersMs,
      bodyTimeout: wire.timeouts.bodyMs,
    });
    await response.body.dump();
    return isOutageStatus(response.statusCode) ? `HTTP ${response.statusCode}` : undefined;
  } catch (error) {
    return networkReason(error);
  }
}

/** What an outage looks like from here: a gateway or server failing (not 429, not 4xx). */
function isOutageStatus(status: number): boolean {
  return status === 500 || status === 502 || status === 503 || status === 504;
}

const NEVER_ANSWERED_FIX =
  'check the base URL (host, port, https://); a service that requires a client certificate closes connections without one (--client-cert, --client-key); behind a proxy, check HTTPS_PROXY / --proxy';

/** A systemic failure ends every request of this client, waiting or to come. */
function halt(wire: Wire, error: ConnectionError, attempts: number): ConnectionError {
  wire.gate?.halt(error);
  return withAttempts(error, attempts);
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

function networkReason(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return typeof code === 'string' ? `${code} ${error.message}` : error.message;
  }
  return String(error);
}

/** The page number of a List Clients path, if any. */
function pageOf(path: string): number | undefined {
  const page = /[?&]page=(\d+)/.exec(path)?.[1];
  return page === undefined ? undefined : Number(page);
}
