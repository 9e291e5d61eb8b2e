/**
 * The HTTP side: one node:http server with keep-alive, applying each request's steps in the
 * order the real service is assumed to: latency → drop → bearer → route → (create: body +
 * signature) → rate limit/throttle → 5xx → checks → handle → maybe cut the connection.
 * Per-request work is kept small (no URL objects, no middleware) to serve >20,000 req/s.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { UsageError } from '../errors.js';
import { generateRsaKeyPair } from '../service/signing.js';
import { type AuthState, checkBearer, checkSignature, parsePublicKey, type SignatureCheck } from './auth.js';
import { Faults } from './faults.js';
import { resolveOptions, type Sandbox, type SandboxOptions, type SandboxTls } from './options.js';
import { createRequestIds, type ErrorSpec, errorReply, type Reply } from './respond.js';
import {
  createClient,
  emptyStats,
  getClient,
  listClients,
  type RouteDeps,
  resolveRoute,
  setClientStatus,
} from './routes.js';
import { seedClients } from './seed.js';
import { SandboxStore } from './store.js';
import { checkCreateBody } from './validate.js';

/** The service's body limit is not published; 1 MiB is far above any client profile. */
const MAX_BODY_BYTES = 1024 * 1024;

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

export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const resolved = resolveOptions(options);
  // Every option is checked before the slow part (RSA-4096 generation) starts.
  const faults = new Faults(resolved.faults, resolved.seedRandom);
  let publicKeyPem = options.publicKeyPem;
  let privateKeyPem: string | undefined;
  if (publicKeyPem === undefined && resolved.verifySignatures) {
    ({ publicKeyPem, privateKeyPem } = await generateRsaKeyPair());
  }
  const signatureCheck: SignatureCheck | undefined =
    resolved.verifySignatures && publicKeyPem !== undefined
      ? { publicKey: parsePublicKey(publicKeyPem), scheme: resolved.signature }
      : undefined;

  const store = new SandboxStore();
  if (resolved.seed > 0) store.insertMany(seedClients(resolved.seed, resolved.seedRandom));
  const stats = emptyStats();
  const deps: RouteDeps = {
    store,
    stats,
    limits: { pageBase: resolved.pageBase, maxPageSize: resolved.maxPageSize },
    checkBody: checkCreateBody(resolved.applicationDateField),
  };
  const auth: AuthState = { token: resolved.token, revoked: false, failing: false, failStatus: 401 };
  const nextRequestId = createRequestIds();
  const log = options.log;

  // Requests asleep in injected latency, woken on close so close() is prompt.
  const sleeping = new Set<() => void>();
  let closed = false;
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        sleeping.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      sleeping.add(wake);
    });

  const send = (
    req: IncomingMessage,
    res: ServerResponse,
    requestId: string,
    reply: Reply,
    started: number,
  ) => {
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
    stats.byStatus[reply.status] = (stats.byStatus[reply.status] ?? 0) + 1;
    log?.(
      `${req.method} ${req.url} ${reply.status} ${Math.round(performance.now() - started)}ms ${requestId}`,
    );
  };

  const cut = (req: IncomingMessage, what: string, requestId: string) => {
    log?.(`${req.method} ${req.url} ${what}: connection destroyed without a response ${requestId}`);
    req.socket.destroy();
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    stats.requests++;
    const started = log ? performance.now() : 0;
    const requestId = nextRequestId();
    const fail = (error: ErrorSpec) => send(req, res, requestId, errorReply(requestId, error), started);

    const delay = faults.delayMs();
    if (delay > 0) {
      await sleep(delay);
      if (closed) return void req.socket.destroy();
    }
    // A scheduled outage: the gateway in front answers for the whole service.
    const down = faults.outage();
    if (down) {
      stats.faults.outage++;
      if (down.kind === 'drop') return cut(req, 'outage', requestId);
      return fail(down.error);
    }
    if (faults.drop()) {
      stats.faults.drop++;
      return cut(req, 'dropped', requestId);
    }
    const { authFailAfter, authFailStatus } = faults.settings;
    auth.failing = authFailAfter !== undefined && stats.creates >= authFailAfter;
    auth.failStatus = authFailStatus;
    const refused = checkBearer(req.headers.authorization, auth);
    if (refused) return fail(refused);

    const route = resolveRoute(req.method ?? 'GET', req.url ?? '/');
    if ('status' in route) return fail(route);

    let body: Buffer | undefined;
    if (route.name === 'create' || route.name === 'setStatus') {
      const read = await readBody(req);
      if (read === 'aborted' || closed) return;
      if (read === 'too_large') {
        const message = `The request body exceeds ${MAX_BODY_BYTES} bytes.`;
        const spec: ErrorSpec = {
          status: 400,
          type: 'invalid_request_error',
          code: 'body_too_large',
          message,
        };
        return send(req, res, requestId, { ...errorReply(requestId, spec), close: true }, started);
      }
      body = read;
      if (route.name === 'setStatus') return send(req, res, requestId, setClientStatus(deps, requestId, route.id, body), started);
      if (signatureCheck) {
        const bad = checkSignature(req.headers['x-signature'], body, signatureCheck);
        if (bad) return fail(bad);
      }
    }

    const admission = faults.admit();
    if (admission.kind !== 'ok') {
      stats.faults[admission.kind]++;
      return fail(admission.error);
    }

    if (route.name === 'list')
      return send(req, res, requestId, listClients(deps, requestId, route.search), started);
    if (route.name === 'get') return send(req, res, requestId, getClient(deps, requestId, route.id), started);
    const result = createClient(deps, requestId, body!, req.headers['content-type']);
    // The dangerous case for exactly-once: stored, but the client never hears so.
    if (result.created && faults.reset()) {
      stats.faults.reset++;
      return cut(req, 'reset after create', requestId);
    }
    send(req, res, requestId, result.reply, started);
  };

  const listener = (req: IncomingMessage, res: ServerResponse) => {
    handle(req, res).catch((error: unknown) => {
      const requestId = nextRequestId();
      log?.(`${req.method} ${req.url} 500 sandbox bug: ${String(error)}`);
      if (res.headersSent) return void res.destroy();
      const spec: ErrorSpec = {
        status: 500,
        type: 'api_error',
        code: 'internal_error',
        message: 'Sandbox failure.',
      };
      send(req, res, requestId, errorReply(requestId, spec), 0);
    });
  };
  let tls: SandboxTls | undefined;
  let server: Server;
  if (options.tls) {
    const wanted = options.tls === true ? {} : options.tls;
    const requiresClientCertificate = wanted.clientCertificate === true || wanted.clientCaPem !== undefined;
    // Loaded only for HTTPS: node-forge is not needed otherwise.
    const { makeSandboxCertificates } = await import('./tls.js');
    const certificates = await makeSandboxCertificates({ clientCertificate: wanted.clientCertificate === true });
    tls = {
      caPem: certificates.ca.certPem,
      clientCertPem: certificates.client?.certPem,
      clientKeyPem: certificates.client?.keyPem,
      requiresClientCertificate,
    };
    server = createTlsServer(
      {
        key: certificates.server.keyPem,
        cert: certificates.server.certPem,
        ...(requiresClientCertificate && {
          requestCert: true,
          rejectUnauthorized: true,
          ca: [certificates.ca.certPem, ...(wanted.clientCaPem ? [wanted.clientCaPem] : [])],
        }),
      },
      listener,
    ) as unknown as Server;
  } else {
    server = createServer(listener);
  }
  // Longer than clients' idle timeouts (undici: 4 s), so the server is never the side that
  // closes an idle socket just as a client reuses it.
  server.keepAliveTimeout = 30_000;

  await new Promise<void>((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => {
      reject(
        error.code === 'EADDRINUSE' || error.code === 'EACCES'
          ? new UsageError(
              `cannot listen on ${resolved.host}:${resolved.port} (${error.code}); choose another --port (0 picks a free one).`,
              'port_in_use',
              { cause: error },
            )
          : error,
      );
    };
    server.once('error', onError);
    server.listen(resolved.port, resolved.host, () => {
      server.off('error', onError);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  // Listening on every interface: hand out a loopback URL, which clients can actually reach.
  const ip = address.address === '0.0.0.0' ? '127.0.0.1' : address.address === '::' ? '::1' : address.address;
  const host = ip.includes(':') ? `[${ip}]` : ip;

  let closing: Promise<void> | undefined;
  return {
    url: `${tls ? 'https' : 'http'}://${host}:${address.port}`,
    tls,
    token: resolved.token,
    publicKeyPem,
    privateKeyPem,
    store,
    stats,
    get faults() {
      return faults.settings;
    },
    setFaults(changes) {
      faults.update(changes);
    },
    revokeToken() {
      auth.revoked = true;
    },
    close() {
      closing ??= new Promise<void>((resolve) => {
        closed = true;
        for (const wake of sleeping) wake();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
