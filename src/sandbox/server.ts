/**
 * The sandbox started: options checked, keys and the store made, then one node:http server
 * with keep-alive (HTTPS with `tls`) that runs each request through handle.ts.
 */
import { createServer, type RequestListener, type Server } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { UsageError } from '../errors.js';
import { generateRsaKeyPair } from '../service/signing.js';
import { parsePublicKey, type SignatureCheck } from './auth.js';
import { Faults } from './faults.js';
import { requestListener, type SandboxState } from './handle.js';
import { resolveOptions, type Sandbox, type SandboxOptions, type SandboxTls } from './options.js';
import { checkReach, listeningAddress } from './reach.js';
import { createRequestIds } from './respond.js';
import { emptyStats } from './routes.js';
import { seedClients } from './seed.js';
import { SandboxStore } from './store.js';
import { checkCreateBody } from './validate.js';

/**
 * Starts the Client Credit Service emulator on a loopback port (port 0 by default: one free), with its own
 * token and, unless given a public key, a fresh RSA-4096 key pair. Resolves once it listens; `close()` stops
 * it.
 */
export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const resolved = resolveOptions(options);
  // Every option is checked before the slow part (RSA-4096 generation) starts.
  const faults = new Faults(resolved.faults, resolved.seedRandom);
  await checkReach(resolved.host, resolved.token);
  let publicKeyPem = options.publicKeyPem;
  let privateKeyPem: string | undefined;
  if (publicKeyPem === undefined && resolved.verifySignatures) {
    ({ publicKeyPem, privateKeyPem } = await generateRsaKeyPair());
  }
  const signatureCheck: SignatureCheck | undefined =
    resolved.verifySignatures && publicKeyPem !== undefined
      ? { publicKey: parsePublicKey(publicKeyPem), scheme: resolved.signature }
      : undefined;
  const { clock } = resolved;
  const store = new SandboxStore(() => clock.now());
  if (resolved.seed > 0) store.insertMany(seedClients(resolved.seed, resolved.seedRandom, resolved.seedUntil));
  const stats = emptyStats();
  const state: SandboxState = {
    faults,
    auth: { token: resolved.token, revoked: false, failing: false, failStatus: 401 },
    deps: {
      store,
      stats,
      limits: { pageBase: resolved.pageBase, maxPageSize: resolved.maxPageSize },
      checkBody: checkCreateBody(resolved.applicationDateField),
      clock,
    },
    stats,
    signatureCheck,
    nextRequestId: createRequestIds(),
    log: options.log,
    basePath: resolved.basePath,
    sleeping: new Set(),
    closed: false,
  };
  const counted = countInFlight(requestListener(state));
  const { server, tls } = await createHttpServer(options.tls, counted.listener);
  await listen(server, resolved.host, resolved.port);

  let closing: Promise<void> | undefined;
  const bound = server.address() as AddressInfo;
  const protocol = tls ? 'https' : 'http';
  return {
    url: `${protocol}://${loopbackHost(bound)}${resolved.basePath}`,
    listening: listeningAddress(protocol, bound.address, bound.port, resolved.basePath),
    tls,
    token: resolved.token,
    publicKeyPem,
    privateKeyPem,
    store,
    stats,
    get inFlight() {
      return counted.now;
    },
    get peakInFlight() {
      return counted.peak;
    },
    restartPeakInFlight() {
      return counted.restartPeak();
    },
    get faults() {
      return faults.settings;
    },
    setFaults(changes) {
      faults.update(changes);
    },
    revokeToken() {
      state.auth.revoked = true;
    },
    now: () => new Date(clock.now()),
    setClock: (at) => clock.set(at),
    close() {
      closing ??= new Promise<void>((resolve) => {
        state.closed = true;
        for (const wake of state.sleeping) wake();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}

/** Counts the requests being handled at once (from arrival to the answer sent or the connection gone), and the most. */
function countInFlight(listener: RequestListener): { listener: RequestListener; readonly now: number; readonly peak: number; restartPeak(): number } {
  let now = 0;
  let peak = 0;
  return {
    restartPeak() {
      const was = peak;
      peak = now;
      return was;
    },
    listener(req, res) {
      now++;
      peak = Math.max(peak, now);
      res.once('close', () => now--);
      listener(req, res);
    },
    get now() {
      return now;
    },
    get peak() {
      return peak;
    },
  };
}

/** An HTTP server, or with `tls` an HTTPS one with its own CA (and client certificates when asked for). */
async function createHttpServer(
  wanted: SandboxOptions['tls'],
  listener: RequestListener,
): Promise<{ server: Server; tls: SandboxTls | undefined }> {
  let tls: SandboxTls | undefined;
  let server: Server;
  if (wanted) {
    const asked = wanted === true ? {} : wanted;
    const requiresClientCertificate = asked.clientCertificate === true || asked.clientCaPem !== undefined;
    // Loaded only for HTTPS: node-forge is not needed otherwise.
    const { makeSandboxCertificates } = await import('./tls.js');
    const certificates = await makeSandboxCertificates({ clientCertificate: asked.clientCertificate === true });
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
          ca: [certificates.ca.certPem, ...(asked.clientCaPem ? [asked.clientCaPem] : [])],
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
  return { server, tls };
}

/** Connections waiting to be accepted. */
const LISTEN_BACKLOG = 4096;

function listen(server: Server, host: string, port: number): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => {
      reject(
        error.code === 'EADDRINUSE' || error.code === 'EACCES'
          ? new UsageError(
              `cannot listen on ${host}:${port} (${error.code}); choose another --port (0 picks a free one).`,
              'port_in_use',
              { cause: error },
            )
          : error,
      );
    };
    server.once('error', onError);
    // A client far away opens a thousand connections within a round trip: Node's default queue
    // of 511 waiting to be accepted overflows while the loop is busy, and the dropped SYNs are
    // sent again after 1, 3, 7 s… (the kernel caps this at net.core.somaxconn).
    server.listen({ port, host, backlog: LISTEN_BACKLOG }, () => {
      server.off('error', onError);
      resolve();
    });
  });
}

/** `host:port` of the listening address; listening on every interface, a loopback one, which clients can actually reach. */
function loopbackHost(address: AddressInfo): string {
  const ip = address.address === '0.0.0.0' ? '127.0.0.1' : address.address === '::' ? '::1' : address.address;
  return `${ip.includes(':') ? `[${ip}]` : ip}:${address.port}`;
}
