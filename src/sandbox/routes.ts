/**
 * The three operations the service publishes, as functions from a parsed request to a Reply.
 * No sockets here: server.ts decides when each runs (after auth and faults) and writes the reply.
 */

import { type ListLimits, parseListQuery } from './query.js';
import type { ErrorSpec, Reply } from './respond.js';
import { clientReply, errorReply, listReply } from './respond.js';
import { CLIENT_STATUSES, type ClientStatus, CREDIT_STATUSES, type CreditStatus } from '../service/schemas.js';
import { clientJson, type SandboxStore } from './store.js';
import type { checkCreateBody } from './validate.js';
import type { SandboxClock } from './clock.js';

/** The sandbox's live counters since it started. */
export interface SandboxStats {
  /** Requests received, faults included. */
  requests: number;
  /** Of `requests`: GETs (List Clients, Get Client), the rest create. */
  reads: number;
  /** Clients created (Create Client answered 201). */
  creates: number;
  /** Create Client requests whose idempotency key was known with the same body: the client returned again. */
  replays: number;
  /** Create Client requests whose idempotency key was known with another body: refused 409. */
  conflicts: number;
  /** Answers by HTTP status. */
  byStatus: Record<number, number>;
  /** Requests answered by an injected fault, by kind. */
  faults: {
    /** Answered 500/502/503/504 (failRate). */
    fail: number;
    /** Answered 429 (throttleRate). */
    throttle: number;
    /** Connection closed without an answer (dropRate). */
    drop: number;
    /** Connection reset (resetRate). */
    reset: number;
    /** Answered 429 past rateLimit. */
    rateLimited: number;
    /** Failed during the scheduled outage. */
    outage: number;
  };
}

export function emptyStats(): SandboxStats {
  return {
    requests: 0,
    reads: 0,
    creates: 0,
    replays: 0,
    conflicts: 0,
    byStatus: {},
    faults: { fail: 0, throttle: 0, drop: 0, reset: 0, rateLimited: 0, outage: 0 },
  };
}

export interface RouteDeps {
  store: SandboxStore;
  clock: SandboxClock;
  stats: SandboxStats;
  limits: ListLimits;
  checkBody: ReturnType<typeof checkCreateBody>;
}

export type Route =
  | { name: 'create' }
  | { name: 'list'; search: string }
  | { name: 'get'; id: string }
  | { name: 'setStatus'; id: string }
  | { name: 'insert' }
  | { name: 'clock'; method: 'GET' | 'POST' };

/**
 * The sandbox's own admin calls (no such operations on the service): a client's status changes
 * (`POST /_sandbox/clients/{id}/status`), a client stored as given, created_at included
 * (`POST /_sandbox/clients`), the clock read or moved (`GET`/`POST /_sandbox/clock`).
 */
const SET_STATUS = /^\/_sandbox\/clients\/([^/]+)\/status$/;
const INSERT = '/_sandbox/clients';
const CLOCK = '/_sandbox/clock';

function methodNotAllowed(method: string, path: string, allow: string): ErrorSpec {
  return {
    status: 405,
    type: 'invalid_request_error',
    code: 'method_not_allowed',
    message: `${method} is not allowed on ${path}; use ${allow}.`,
    headers: { allow },
  };
}

/** Which operation a method and URL name, or the 404/405 a strict router gives. */
export function resolveRoute(method: string, url: string): Route | ErrorSpec {
  const mark = url.indexOf('?');
  const path = mark === -1 ? url : url.slice(0, mark);
  const search = mark === -1 ? '' : url.slice(mark + 1);
  if (path === '/v1/client')
    return method === 'POST' ? { name: 'create' } : methodNotAllowed(method, path, 'POST');
  if (path === '/v1/clients')
    return method === 'GET' ? { name: 'list', search } : methodNotAllowed(method, path, 'GET');
  if (path === INSERT) return method === 'POST' ? { name: 'insert' } : methodNotAllowed(method, path, 'POST');
  if (path === CLOCK) {
    return method === 'GET' || method === 'POST' ? { name: 'clock', method } : methodNotAllowed(method, path, 'GET, POST');
  }
  const admin = SET_STATUS.exec(path);
  if (admin) {
    if (method !== 'POST') return methodNotAllowed(method, path, 'POST');
    return { name: 'setStatus', id: safeDecode(admin[1]!) };
  }
  if (path.startsWith('/v1/clients/') && path.indexOf('/', 12) === -1 && path.length > 12) {
    if (method !== 'GET') return methodNotAllowed(method, path, 'GET');
    try {
      return { name: 'get', id: decodeURIComponent(path.slice(12)) };
    } catch {
      // A malformed percent-escape cannot name any client.
      return { name: 'get', id: '' };
    }
  }
  return {
    status: 404,
    type: 'invalid_request_error',
    code: 'route_not_found',
    message: `Unrecognized request URL (${method} ${path}). The operations are POST /v1/client, GET /v1/clients and GET /v1/clients/{id}.`,
  };
}

export interface CreateResult {
  reply: Reply;
  /** A new client was stored (the only case where a reset-after-create fault applies). */
  created: boolean;
}

export function createClient(
  deps: RouteDeps,
  requestId: string,
  body: Buffer,
  contentType: string | undefined,
): CreateResult {
  const checked = deps.checkBody(body, contentType);
  if (!checked.ok) return { reply: errorReply(requestId, checked.error), created: false };
  const { fields } = checked;
  const outcome = deps.store.createIdempotent(fields.idempotency_key!, fields, () => ({
    name: fields.name!,
    email: fields.email!,
    country: fields.country!,
    address: fields.address!,
    currency: fields.currency ?? null,
  }));
  if (outcome.kind === 'created') {
    deps.stats.creates++;
    // The service documents 200 for a created client as for a replayed one.
    return { reply: clientReply(200, clientJson(outcome.stored)), created: true };
  }
  if (outcome.kind === 'replayed') {
    deps.stats.replays++;
    return { reply: clientReply(200, clientJson(outcome.stored)), created: false };
  }
  deps.stats.conflicts++;
  const reply = errorReply(requestId, {
    status: 409,
    type: 'invalid_request_error',
    code: 'idempotency_conflict',
    message:
      'This idempotency_key was already used with a different request body. Send the same body to replay it, or use a new key.',
    param: 'idempotency_key',
  });
  return { reply, created: false };
}

export function listClients(deps: RouteDeps, requestId: string, search: string): Reply {
  const parsed = parseListQuery(search, deps.limits);
  if (!parsed.ok) return errorReply(requestId, parsed.error);
  const { filter, page, size, direction, cacheKey } = parsed.query;
  const matching = deps.store.query(filter, direction, cacheKey);
  const offset = (page - deps.limits.pageBase) * size;
  return listReply(page, size, direction, matching.slice(offset, offset + size).map(clientJson));
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return '';
  }
}

/** `{"status": "approved", "credit_status": "active"}` (either or both) → the client, changed. */
export function setClientStatus(deps: RouteDeps, requestId: string, id: string, body: Buffer): Reply {
  let change: Record<string, unknown>;
  try {
    change = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
  } catch {
    change = {};
  }
  const status = change?.status;
  const credit = change?.credit_status;
  const valid =
    (status !== undefined || credit !== undefined) &&
    (status === undefined || (CLIENT_STATUSES as readonly unknown[]).includes(status)) &&
    (credit === undefined || (CREDIT_STATUSES as readonly unknown[]).includes(credit));
  if (!valid) {
    return errorReply(requestId, {
      status: 400,
      type: 'invalid_request_error',
      code: 'parameter_invalid',
      message: `Send {"status": one of ${CLIENT_STATUSES.join(', ')}} and/or {"credit_status": active or inactive}.`,
      param: 'status',
    });
  }
  const changed = deps.store.setStatus(id, {
    ...(status !== undefined && { status: status as ClientStatus }),
    ...(credit !== undefined && { credit_status: credit as CreditStatus }),
  });
  if (changed) return clientReply(200, clientJson(deps.store.stored(id)!));
  return getClient(deps, requestId, id);
}

export function getClient(deps: RouteDeps, requestId: string, id: string): Reply {
  const stored = deps.store.stored(id);
  if (stored) return clientReply(200, clientJson(stored));
  return errorReply(requestId, {
    status: 404,
    type: 'invalid_request_error',
    code: 'resource_missing',
    message: `No such client: ${JSON.stringify(id)}.`,
    param: 'id',
  });
}

const badAdmin = (requestId: string, param: string, message: string): Reply =>
  errorReply(requestId, { status: 400, type: 'invalid_request_error', code: 'parameter_invalid', message, param });

function parseObject(body: Buffer): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(body.toString('utf8'));
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

const TEXT_FIELDS = ['id', 'name', 'email', 'country', 'address'] as const;

/**
 * `POST /_sandbox/clients` with a client (`created_at` any ISO instant, default the clock's now;
 * `status`, `credit_status` and the text fields optional): stored as given, to rehearse a
 * week or a month of sign-ups. Not idempotent, not signed: the service has no such call.
 */
export function insertClient(deps: RouteDeps, requestId: string, body: Buffer): Reply {
  const fields = parseObject(body);
  if (fields === undefined) return badAdmin(requestId, 'body', 'Send a JSON object: {"created_at": "2026-03-01T09:00:00Z", "name": …, "status": …}.');
  for (const key of TEXT_FIELDS) {
    if (fields[key] !== undefined && typeof fields[key] !== 'string') return badAdmin(requestId, key, `${key} must be a string.`);
  }
  const { status, credit_status: credit, created_at: created, currency } = fields;
  if (status !== undefined && !(CLIENT_STATUSES as readonly unknown[]).includes(status)) {
    return badAdmin(requestId, 'status', `status must be one of ${CLIENT_STATUSES.join(', ')}.`);
  }
  if (credit !== undefined && !(CREDIT_STATUSES as readonly unknown[]).includes(credit)) {
    return badAdmin(requestId, 'credit_status', 'credit_status must be active or inactive.');
  }
  if (created !== undefined && (typeof created !== 'string' || Number.isNaN(Date.parse(created)))) {
    return badAdmin(requestId, 'created_at', 'created_at must be an ISO 8601 instant, e.g. 2026-03-01T09:00:00Z.');
  }
  if (currency !== undefined && currency !== null && typeof currency !== 'string') return badAdmin(requestId, 'currency', 'currency must be a string or null.');
  if (typeof fields.id === 'string' && deps.store.get(fields.id) !== undefined) {
    return errorReply(requestId, { status: 409, type: 'invalid_request_error', code: 'resource_exists', message: `A client ${JSON.stringify(fields.id)} exists.`, param: 'id' });
  }
  const client = deps.store.insert({
    ...Object.fromEntries(TEXT_FIELDS.filter((key) => fields[key] !== undefined).map((key) => [key, fields[key] as string])),
    ...(status !== undefined && { status: status as ClientStatus }),
    ...(credit !== undefined && { credit_status: credit as CreditStatus }),
    ...(created !== undefined && { created_at: created as string }),
    ...(currency !== undefined && { currency: currency as string | null }),
  });
  return clientReply(200, clientJson(deps.store.stored(client.id)!));
}

/** `GET /_sandbox/clock`: `{"now": …}`; `POST` with `{"now": "2026-03-01T00:00:00Z"}` moves it there (it runs on). */
export function clockRoute(deps: RouteDeps, requestId: string, method: 'GET' | 'POST', body: Buffer | undefined): Reply {
  if (method === 'POST') {
    const now = parseObject(body ?? Buffer.alloc(0))?.now;
    if (typeof now !== 'string' || Number.isNaN(Date.parse(now))) {
      return badAdmin(requestId, 'now', 'Send {"now": an ISO 8601 instant, e.g. "2026-03-01T00:00:00Z"}.');
    }
    try {
      deps.clock.set(now);
    } catch (error) {
      return badAdmin(requestId, 'now', (error as Error).message);
    }
  }
  return clientReply(200, JSON.stringify({ now: new Date(deps.clock.now()).toISOString() }));
}
