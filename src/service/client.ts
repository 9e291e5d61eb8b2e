/**
 * The Client Credit Service client: a factory over an injected undici dispatcher (ofetch's
 * createFetch). A keep-alive Pool, sized to the caller's concurrency: far cheaper per request than fetch.
 * The request itself, with retries and the outage gate, is send-request.ts.
 */

import { createHash } from 'node:crypto';
import type { Dispatcher } from 'undici';
import { type BreakerPolicy, DEFAULT_BREAKER } from './breaker.js';
import { SERVICE_DEFAULTS } from './defaults.js';
import { createTransport, type NetworkSettings } from './dispatcher.js';
import { UsageError } from '../errors.js';
import { injected } from '../infra/inject.js';
import { createOutageGate, type OutageEvent } from './outage.js';
import { DEFAULT_RETRY, type RetryPolicy } from './retry.js';
import {
  type Client,
  type CreateClientBody,
  clientSchema,
  envelopeSchema,
  type ListClientsQuery,
  type ListPage,
  listEnvelope,
} from './schemas.js';
import { probeService, sendRequest, type Wire } from './send-request.js';
import type { Signer } from './signing.js';
import type { Answer, AttemptEvent, Reply, RequestContext, RetryEvent, Timeouts } from './types.js';
import { checkBaseUrl } from './url.js';

export type { Answer, AttemptEvent, Reply, RequestContext, RetryEvent, Timeouts };

export const DEFAULT_TIMEOUTS: Timeouts = {
  connectMs: SERVICE_DEFAULTS.connectTimeoutMs,
  headersMs: SERVICE_DEFAULTS.timeoutMs,
  bodyMs: SERVICE_DEFAULTS.timeoutMs,
};

/**
 * How to reach the Client Credit Service: where, with which token and signing key, over which transport, with
 * what retries and outage breaker.
 */
export interface ServiceClientOptions {
  /**
   * The service's root, `https://ccs.example.com` or a gateway's `https://gw.example.com/ccs` (request paths
   * add `/v1/…`); plain http:// only to a loopback host such as the sandbox.
   */
  baseUrl: string;
  /** The API token, sent as `Authorization: Bearer …`; never logged. */
  token: string;
  /** Signs Create Client bodies (createSigner): needed for createClient only, which rejects without one (UsageError `key_missing`). */
  signer?: Signer | undefined;
  /** Injected transport (an undici Dispatcher); when absent one is made for `network`, owned and closed by `close()`. */
  dispatcher?: Dispatcher | undefined;
  /** Proxy and TLS settings for the transport this client makes. */
  network?: NetworkSettings | undefined;
  /** Keep-alive connections the transport this client makes may open (default 8, SERVICE_DEFAULTS.connections). */
  connections?: number | undefined;
  /**
   * Per-attempt limits in ms: to connect, for the response headers, for the body; a timed-out attempt is
   * retried like a network error.
   */
  timeouts?: Partial<Timeouts> | undefined;
  /**
   * Retry policy for 429s, 5xx and network errors (DEFAULT_RETRY: attempts and delays); POSTs are retried
   * with the same bytes and idempotency key.
   */
  retry?: Partial<RetryPolicy> | undefined;
  /** Wire name of the application date (--application-date-field). */
  applicationDateField?: string | undefined;
  /** Aborting stops waiting for retries; a request already on the wire finishes. */
  signal?: AbortSignal | undefined;
  /** Called before each retry's wait, with the attempt, the delay and why. */
  onRetry?: ((event: RetryEvent) => void) | undefined;
  /** Called after every attempt that reached the wire, success or not. */
  onAttempt?: ((event: AttemptEvent) => void) | undefined;
  /**
   * The circuit breaker: a service that fails everything pauses every request and is probed
   * until it is back or down for outageTimeoutMs (then OutageError). false turns it off.
   */
  breaker?: Partial<BreakerPolicy> | false | undefined;
  /** The outage breaker's transitions (paused, a probe failed, resumed, stopped), as they happen. */
  onOutage?: ((event: OutageEvent) => void) | undefined;
  /** The source of jitter for retry and probe delays, in [0, 1); Math.random by default (tests fix it). */
  random?: (() => number) | undefined;
}

/** A Create Client request serialized and signed, ready to send (and re-send) as is. */
export interface PreparedCreate {
  /** The body exactly as it is sent and was signed. */
  readonly bytes: Buffer;
  /** The X-Signature header value: base64 of the signature over `bytes`. */
  readonly signature: string;
}

/**
 * A client of the Client Credit Service (createServiceClient): typed requests with retries, signing, the
 * outage breaker and a keep-alive pool; `close()` it when done.
 */
export interface ServiceClient {
  /** The base URL requests go to (origin and path prefix), as results files record it. */
  readonly baseUrl: string;
  /**
   * A one-way print of the token (accountOf): two tokens of one service, perhaps two tenants,
   * never share what is learned of the clients they see (the held e-mails).
   */
  readonly account?: string | undefined;
  /**
   * Create Client: signs and posts the body, retrying with the same bytes and idempotency key; resolves with
   * the client created or replayed, rejects with a typed error.
   */
  createClient(body: CreateClientBody, context?: RequestContext): Promise<Reply<Client>>;
  /**
   * createClient in two steps, so a caller can sign bodies ahead while others are on the
   * wire: prepareCreate serializes and signs (the costly part, in the thread pool);
   * sendCreate posts, with retries.
   */
  prepareCreate(body: CreateClientBody): Promise<PreparedCreate>;
  /** Posts a prepared body (prepareCreate), with retries: the same bytes and signature on every attempt. */
  sendCreate(prepared: PreparedCreate, context?: RequestContext): Promise<Reply<Client>>;
  /** `context.slot`: the export's wire slot for this page, lent while the request waits. */
  listClients(query: ListClientsQuery, context?: RequestContext): Promise<Reply<ListPage>>;
  /** Every attempt's answer, 429s and retries included, until the returned function is called. */
  watchAnswers(listener: (answer: Answer) => void): () => void;
  /** The outage gate's transitions (paused, resumed…), until the returned function is called. */
  watchOutage(listener: (event: OutageEvent) => void): () => void;
  /** Get Client: one client's detail by id. */
  getClient(id: string): Promise<Reply<Client>>;
  /** Closes the pool if this client made it. */
  close(): Promise<void>;
}

/** A print of the token that does not reveal it: what is kept per account is named by it. */
export function accountOf(token: string): string {
  return createHash('sha256').update(`ccs-bulk account\u0000${token}`).digest('hex').slice(0, 16);
}

const createEnvelope = envelopeSchema(clientSchema);

/** The Create Client body's fields in the order they are serialized; those absent are left out. */
const WIRE_ORDER: readonly (keyof CreateClientBody)[] = ['name', 'idempotency_key', 'email', 'country', 'address', 'currency', 'liquidity_type', 'application_date'];

/**
 * The body is serialized once, in a fixed field order, and these exact bytes are signed and
 * sent on every attempt: a retried POST is byte-identical (same key, same signature).
 */
export function serializeCreateBody(
  body: CreateClientBody,
  applicationDateField: string = SERVICE_DEFAULTS.applicationDateField,
): Buffer {
  const wire: Record<string, string> = {};
  for (const field of WIRE_ORDER) {
    const value = body[field];
    if (value !== undefined) wire[field === 'application_date' ? applicationDateField : field] = value;
  }
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

/**
 * Makes a client of the Client Credit Service. Nothing is sent until a method is called; an invalid `baseUrl`
 * is refused at once (UsageError `bad_base_url` or `insecure_base_url`).
 */
export function createServiceClient(options: ServiceClientOptions): ServiceClient {
  const outageListeners = new Set<(event: OutageEvent) => void>();
  const wire = openWire(options, outageListeners);
  const { dispatcher } = wire;
  const ownsDispatcher = options.dispatcher === undefined;

  async function prepareCreate(body: CreateClientBody): Promise<PreparedCreate> {
    if (!options.signer) {
      throw new UsageError('createClient needs a signer: pass `signer: createSigner(key)` to createServiceClient (listing needs none)', 'key_missing');
    }
    const bytes = serializeCreateBody(body, options.applicationDateField);
    return { bytes, signature: await options.signer.sign(bytes) };
  }
  const sendCreate = (prepared: PreparedCreate, context?: RequestContext) =>
    sendRequest(wire, 'POST', '/v1/client', createEnvelope, prepared, context);

  return {
    baseUrl: wire.origin + wire.prefix,
    account: accountOf(wire.token),
    async createClient(body, context) {
      return sendCreate(await prepareCreate(body), context);
    },
    prepareCreate,
    sendCreate,
    listClients(query, context) {
      return sendRequest(wire, 'GET', `/v1/clients${listQueryString(query)}`, listEnvelope, undefined, context);
    },
    watchAnswers(listener) {
      wire.listeners.add(listener);
      return () => wire.listeners.delete(listener);
    },
    watchOutage(listener) {
      outageListeners.add(listener);
      return () => outageListeners.delete(listener);
    },
    getClient(id) {
      return sendRequest(wire, 'GET', `/v1/clients/${encodeURIComponent(id)}`, createEnvelope);
    },
    async close() {
      wire.gate?.close();
      if (ownsDispatcher) await dispatcher.close();
    },
  };
}

/** The options resolved into what every request shares: the transport (made here unless injected) and the breaker. */
function openWire(options: ServiceClientOptions, outageListeners: ReadonlySet<(event: OutageEvent) => void>): Wire {
  const base = checkBaseUrl(options.baseUrl);
  const timeouts = { ...DEFAULT_TIMEOUTS, ...options.timeouts };
  const transport = options.dispatcher
    ? { dispatcher: options.dispatcher, proxy: options.network?.proxy }
    : createTransport(base, {
        connections: options.connections ?? SERVICE_DEFAULTS.connections,
        connectTimeoutMs: timeouts.connectMs,
        network: options.network,
      });
  const wire: Wire = {
    origin: base.origin,
    prefix: base.pathname.replace(/\/+$/, ''),
    dispatcher: transport.dispatcher,
    proxy: transport.proxy,
    token: options.token,
    authorization: `Bearer ${options.token}`,
    timeouts,
    policy: { ...DEFAULT_RETRY, ...options.retry },
    random: options.random ?? Math.random,
    signal: options.signal,
    onRetry: options.onRetry,
    onAttempt: options.onAttempt,
    listeners: new Set(),
    gate: undefined,
    pausedUntil: 0,
    pausedAt: 0,
    answered: false,
  };
  if (options.breaker !== false) {
    wire.gate = createOutageGate({
      policy: { ...DEFAULT_BREAKER, ...options.breaker },
      probe: () => probeService(wire),
      onEvent: (event) => {
        options.onOutage?.(event);
        for (const listener of outageListeners) listener(event);
      },
      ...(injected.probeTimer && { setTimer: injected.probeTimer }),
      random: wire.random,
    });
  }
  return wire;
}
