/**
 * One request through the sandbox, in the order the real service is assumed to apply its
 * steps: latency → drop → bearer → route → (create: body + signature) → rate limit/throttle
 * → 5xx → checks → handle → maybe cut the connection. Per-request work is kept small (no URL
 * objects, no middleware) to serve >20,000 req/s.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type AuthState, checkBearer, checkSignature, type SignatureCheck } from './auth.js';
import type { Faults } from './faults.js';
import { type ErrorSpec, errorReply, type Reply } from './respond.js';
import {
  clockRoute,
  createClient,
  getClient,
  insertClient,
  listClients,
  type RouteDeps,
  resolveRoute,
  type SandboxStats,
  setClientStatus,
} from './routes.js';

/** What every request of one sandbox shares. */
export interface SandboxState {
  faults: Faults;
  auth: AuthState;
  deps: RouteDeps;
  stats: SandboxStats;
  signatureCheck: SignatureCheck | undefined;
  nextRequestId: () => string;
  log: ((line: string) => void) | undefined;
  /** A gateway's path prefix the operations sit under ('' for none). */
  basePath: string;
  /** Requests asleep in injected latency, woken on close so close() is prompt. */
  sleeping: Set<() => void>;
  closed: boolean;
}

/** The service's body limit is not published; 1 MiB is far above any client profile. */
const MAX_BODY_BYTES = 1024 * 1024;

/** node:http's request listener: a request the sandbox fails to handle is answered 500 (a sandbox bug). */
export function requestListener(state: SandboxState): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    handleRequest(state, req, res).catch((error: unknown) => {
      const requestId = state.nextRequestId();
      state.log?.(`${req.method} ${req.url} 500 sandbox bug: ${String(error)}`);
      if (res.headersSent) return void res.destroy();
      const spec: ErrorSpec = {
        status: 500,
        type: 'api_error',
        code: 'internal_error',
        message: 'Sandbox failure.',
      };
      send(state, req, res, requestId, errorReply(requestId, spec), 0);
    });
  };
}

function withinBase(url: string, basePath: string): string | undefined {
  if (basePath === '') return url;
  return url.startsWith(`${basePath}/`) ? url.slice(basePath.length) : undefined;
}

/** A gateway's 404 for a URL outside the prefix it serves. */
function outsideBasePath(method: string, url: string, basePath: string): ErrorSpec {
  const path = url.split('?')[0] ?? url;
  return {
    status: 404,
    type: 'invalid_request_error',
    code: 'route_not_found',
    message: `Unrecognized request URL (${method} ${path}). This service is served under ${basePath}: the operations are POST ${basePath}/v1/client, GET ${basePath}/v1/clients and GET ${basePath}/v1/clients/{id}.`,
  };
}

async function handleRequest(state: SandboxState, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const { faults, stats } = state;
  stats.requests++;
  if (req.method === 'GET') stats.reads++;
  const started = state.log ? performance.now() : 0;
  const requestId = state.nextRequestId();
  const fail = (error: ErrorSpec) => send(state, req, res, requestId, errorReply(requestId, error), started);

  const delay = faults.delayMs();
  if (delay > 0) {
    await sleep(state, delay);
    if (state.closed) return void req.socket.destroy();
  }
  // A scheduled outage: the gateway in front answers for the whole service.
  const down = faults.outage({ creates: stats.creates, userAgent: req.headers['user-agent'] });
  if (down) {
    stats.faults.outage++;
    if (down.kind === 'drop') return cut(state, req, 'outage', requestId);
    return fail(down.error);
  }
  if (faults.drop()) {
    stats.faults.drop++;
    return cut(state, req, 'dropped', requestId);
  }
  const { authFailAfter, authFailStatus } = faults.settings;
  state.auth.failing = authFailAfter !== undefined && stats.creates >= authFailAfter;
  state.auth.failStatus = authFailStatus;
  const refused = checkBearer(req.headers.authorization, state.auth);
  if (refused) return fail(refused);

  // Under a base path, only URLs below it name an operation: the rest are 404 as any unknown URL.
  const path = withinBase(req.url ?? '/', state.basePath);
  if (path === undefined) return fail(outsideBasePath(req.method ?? 'GET', req.url ?? '/', state.basePath));
  const route = resolveRoute(req.method ?? 'GET', path);
  if ('status' in route) return fail(route);

  // The sandbox's own admin calls (no signature, no injected faults): a status, a dated client, the clock.
  if (route.name === 'setStatus' || route.name === 'insert' || route.name === 'clock') {
    const read = await readBody(req);
    if (read === 'aborted' || state.closed) return;
    if (read === 'too_large') {
      return fail({ status: 400, type: 'invalid_request_error', code: 'body_too_large', message: `The request body exceeds ${MAX_BODY_BYTES} bytes.` });
    }
    const reply =
      route.name === 'setStatus'
        ? setClientStatus(state.deps, requestId, route.id, read)
        : route.name === 'insert'
          ? insertClient(state.deps, requestId, read)
          : clockRoute(state.deps, requestId, route.method, read);
    return send(state, req, res, requestId, reply, started);
  }

  let body: Buffer | undefined;
  if (route.name === 'create') {
    body = await readCreateBody(state, req, res, requestId, started);
    if (body === undefined) return;
  }

  const admission = faults.admit();
  if (admission.kind !== 'ok') {
    stats.faults[admission.kind]++;
    return fail(admission.error);
  }

  if (route.name === 'list')
    return send(state, req, res, requestId, listClients(state.deps, requestId, route.search), started);
  if (route.name === 'get') return send(state, req, res, requestId, getClient(state.deps, requestId, route.id), started);
  const result = createClient(state.deps, requestId, body!, req.headers['content-type']);
  // The dangerous case for exactly-once: stored, but the client never hears so.
  if (result.created && faults.reset()) {
    stats.faults.reset++;
    return cut(state, req, 'reset after create', requestId);
  }
  send(state, req, res, requestId, result.reply, started);
}

/** A Create Client body, its signature checked; undefined when the request was answered (or is gone) instead. */
async function readCreateBody(
  state: SandboxState,
  req: IncomingMessage,
  res: ServerResponse,
  requestId: string,
  started: number,
): Promise<Buffer | undefined> {
  const read = await readBody(req);
  if (read === 'aborted' || state.closed) return undefined;
  if (read === 'too_large') {
    const message = `The request body exceeds ${MAX_BODY_BYTES} bytes.`;
    const spec: ErrorSpec = {
      status: 400,
      type: 'invalid_request_error',
      code: 'body_too_large',
      message,
    };
    send(state, req, res, requestId, { ...errorReply(requestId, spec), close: true }, started);
    return undefined;
  }
  if (state.signatureCheck) {
    const bad = checkSignature(req.headers['x-signature'], read, state.signatureCheck);
    if (bad) {
      send(state, req, res, requestId, errorReply(requestId, bad), started);
      return undefined;
    }
  }
  return read;
}

type BodyRead = Buffer | 'too_large' | 'aborted';

function readBody(req: IncomingMessage): Promise<BodyRead> {
  if (Number(req.headers['content-length']) > MAX_BODY_BYTES) return Promise.resolve('too_large');
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
      else {
        req.off('data', onData);
        resolve('too_large');
      }
    };
    req.on('data', onData);
    req.on('end', () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size)));
    // A client gone mid-body: nothing to answer. (First resolve wins.)
    req.on('error', () => resolve('aborted'));
    req.on('close', () => resolve('aborted'));
  });
}

function sleep(state: SandboxState, ms: number): Promise<void> {
  return new Promise<void>((resolve) => {
    const wake = () => {
      clearTimeout(timer);
      state.sleeping.delete(wake);
      resolve();
    };
    const timer = setTimeout(wake, ms);
    state.sleeping.add(wake);
  });
}

function send(
  state: SandboxState,
  req: IncomingMessage,
  res: ServerResponse,
  requestId: string,
  reply: Reply,
  started: number,
): void {
  if (res.destroyed) return;
  const { payload } = reply;
  const headers: Record<string, string | number> = {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(payload),
    'x-request-id': requestId,
    ...reply.headers,
  };
  if (reply.close) headers.connection = 'close';
  res.writeHead(reply.status, headers);
  res.end(payload);
  state.stats.byStatus[reply.status] = (state.stats.byStatus[reply.status] ?? 0) + 1;
  state.log?.(`${req.method} ${req.url} ${reply.status} ${Math.round(performance.now() - started)}ms ${requestId}`);
}

function cut(state: SandboxState, req: IncomingMessage, what: string, requestId: string): void {
  state.log?.(`${req.method} ${req.url} ${what}: connection destroyed without a response ${requestId}`);
  req.socket.destroy();
}
