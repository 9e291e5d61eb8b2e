/**
 * check's network half: base URL, proxy, DNS, TCP, TLS, each step on its own socket work so
 * a failure names the layer that failed. Only what a request would use is checked: the same
 * proxy choice (NO_PROXY included), the same CAs, the same client certificate.
 */
import { lookup } from 'node:dns/promises';
import { isIP, type Socket, connect as tcpConnect } from 'node:net';
import { connect as tlsConnect, type PeerCertificate, type TLSSocket } from 'node:tls';
import { diagnoseNetworkError, TRUST_FIX } from '../service/diagnose.js';
import { type NetworkSettings, proxyFor, trustedCas } from '../service/dispatcher.js';
import { type CheckLine, type CheckName, failed, ok, skipped, warning } from './types.js';

export interface NetworkCheckInput {
  base: URL;
  network: NetworkSettings;
  /** Files the extra CAs came from (--ca-file, NODE_EXTRA_CA_CERTS), for the TLS line. */
  caFiles: readonly string[];
  timeoutMs: number;
}

export interface NetworkCheckResult {
  lines: CheckLine[];
  /** The service can be spoken to: every step held (warnings allowed). */
  reachable: boolean;
  proxy: string | undefined;
}

/** Certificates expiring sooner than this get a warning. */
const EXPIRY_WARNING_DAYS = 14;

export async function checkNetwork(input: NetworkCheckInput): Promise<NetworkCheckResult> {
  const { base, network, timeoutMs } = input;
  const lines: CheckLine[] = [];
  const https = base.protocol === 'https:';
  const port = Number(base.port) || (https ? 443 : 80);
  const host = base.hostname.replace(/^\[|\]$/g, '');
  // The prefix too: requests go to it, so it is part of what is checked.
  const shown = base.href.replace(/\/$/, '');
  lines.push(
    https
      ? ok('base URL', `${shown} (HTTPS)`)
      : warning('base URL', `${shown} (plain HTTP, allowed to loopback only)`, 'the real service is HTTPS: use its https:// base URL'),
  );

  const { proxy, proxySource } = proxyFor(base, network);
  const proxyUrl = network.proxy ?? (proxySource === 'HTTPS_PROXY' ? network.env?.httpsProxy : network.env?.httpProxy);
  const proxyIndex = lines.length;
  lines.push(ok('proxy', proxy === undefined ? `none: direct connection${bypassNote(network)}` : `${proxy} (${proxySource})`));

  const facts = { origin: base.origin, proxy, answered: false };
  const target = proxyUrl !== undefined ? new URL(proxyUrl) : undefined;
  const dialHost = target ? target.hostname.replace(/^\[|\]$/g, '') : host;
  const dialPort = target ? Number(target.port) || (target.protocol === 'https:' ? 443 : 80) : port;
  const stop = (from: CheckName[]) => {
    for (const name of from) lines.push(skipped(name, 'not checked (an earlier step failed)'));
    return { lines, reachable: false, proxy };
  };

  // DNS: of the proxy when there is one (it resolves the service's name itself).
  if (isIP(dialHost)) lines.push(ok('DNS', `${dialHost} is an IP address: nothing to resolve`));
  else {
    try {
      const addresses = await withTimeout(lookup(dialHost, { all: true }), timeoutMs, 'EAI_AGAIN');
      const list = addresses.map((a) => a.address).slice(0, 4).join(', ');
      lines.push(ok('DNS', `${dialHost} → ${list}${target ? ' (the proxy; it resolves the service\'s name)' : ''}`));
    } catch (error) {
      const diagnosis = diagnoseNetworkError(error, facts);
      lines.push(failed('DNS', diagnosis.cause, diagnosis.fix));
      return stop(https ? ['TCP', 'TLS'] : ['TCP']);
    }
  }

  let socket: Socket;
  const started = performance.now();
  try {
    socket = await connectTcp(dialHost, dialPort, timeoutMs);
    lines.push(ok('TCP', `connected to ${target ? 'the proxy at ' : ''}${dialHost}:${dialPort} in ${Math.round(performance.now() - started)} ms`));
  } catch (error) {
    const diagnosis = diagnoseNetworkError(error, facts);
    lines.push(failed('TCP', diagnosis.cause, diagnosis.fix));
    return stop(https ? ['TLS'] : []);
  }

  try {
    if (target) {
      try {
        socket = await openTunnel(socket, target, `${host.includes(':') ? `[${host}]` : host}:${port}`, timeoutMs);
        lines[proxyIndex] = ok('proxy', `${proxy} (${proxySource}): tunnel to ${base.host} opened`);
      } catch (error) {
        const diagnosis = diagnoseNetworkError(error, facts);
        lines[proxyIndex] = failed('proxy', `${proxy} (${proxySource}): ${diagnosis.cause}`, diagnosis.fix);
        return stop(https ? ['TLS'] : []);
      }
    }
    if (!https) return { lines, reachable: true, proxy };
    const line = await checkTls(socket, host, input);
    lines.push(line);
    return { lines, reachable: line.status !== 'failed', proxy };
  } finally {
    socket.destroy();
  }
}

function bypassNote(network: NetworkSettings): string {
  const env = network.env ?? {};
  return env.httpsProxy !== undefined || env.httpProxy !== undefined ? ' (NO_PROXY exempts this host)' : '';
}

function connectTcp(host: string, port: number, timeoutMs: number): Promise<Socket> {
  const socket = tcpConnect({ host, port });
  return settled(socket, 'connect', timeoutMs, 'connect').catch((error: unknown) => {
    socket.destroy();
    throw error;
  });
}

/** The socket once `event` fires; its error, or ETIMEDOUT after timeoutMs, otherwise. */
function settled<S extends Socket>(socket: S, event: 'connect' | 'secureConnect', timeoutMs: number, what: string): Promise<S> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(Object.assign(new Error(`${what} timed out after ${timeoutMs} ms`), { code: 'ETIMEDOUT' })), timeoutMs);
    socket.once(event, () => {
      clearTimeout(timer);
      resolve(socket);
    });
    socket.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
}

/** CONNECT through the proxy on an open socket (TLS to the proxy first for an https:// proxy). */
async function openTunnel(raw: Socket, proxy: URL, authority: string, timeoutMs: number): Promise<Socket> {
  let socket: Socket = raw;
  if (proxy.protocol === 'https:') {
    const secure = tlsConnect({ socket: raw, ...(isIP(proxy.hostname) === 0 && { servername: proxy.hostname }) });
    socket = await settled(secure, 'secureConnect', timeoutMs, 'TLS handshake with the proxy');
  }
  const headers = [`CONNECT ${authority} HTTP/1.1`, `Host: ${authority}`];
  if (proxy.username !== '') {
    const credentials = `${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}`;
    headers.push(`Proxy-Authorization: Basic ${Buffer.from(credentials).toString('base64')}`);
  }
  socket.write(`${headers.join('\r\n')}\r\n\r\n`);
  const head = await readHead(socket, timeoutMs);
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1] ?? 0);
  if (status !== 200) throw new Error(`Proxy response (${status}) !== 200 when HTTP Tunneling`);
  return socket;
}

/** The proxy's answer up to the blank line; nothing after it is read (the tunnel starts there). */
function readHead(socket: Socket, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => done(new Error('the proxy did not answer CONNECT')), timeoutMs);
    const onData = (chunk: Buffer) => {
      text += chunk.toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      if (end !== -1) {
        const rest = chunk.subarray(chunk.length - (text.length - end - 4));
        if (rest.length > 0) socket.unshift(rest);
        done(undefined, text.slice(0, end));
      }
    };
    const onClose = () => done(Object.assign(new Error('the proxy closed the connection'), { code: 'ECONNRESET' }));
    const done = (error: Error | undefined, head?: string) => {
      clearTimeout(timer);
      socket.off('data', onData);
      socket.off('close', onClose);
      socket.off('error', onClose);
      if (error) reject(error);
      else resolve(head ?? '');
    };
    socket.on('data', onData);
    socket.once('close', onClose);
    socket.once('error', onClose);
  });
}

async function checkTls(socket: Socket, host: string, input: NetworkCheckInput): Promise<CheckLine> {
  const tls = input.network.tls ?? {};
  let secure: TLSSocket;
  try {
    const handshake = tlsConnect({
      socket,
      ...(isIP(host) === 0 && { servername: host }),
      ...(tls.ca !== undefined && { ca: trustedCas(tls.ca) }),
      ...(tls.cert !== undefined && { cert: tls.cert, key: tls.key }),
      // Inspection only: the certificate is read and judged (`authorized` below) and the
      // socket closed; nothing is ever sent on it. Requests always verify.
      rejectUnauthorized: false,
    });
    secure = await settled(handshake, 'secureConnect', input.timeoutMs, 'TLS handshake');
  } catch (error) {
    const diagnosis = diagnoseNetworkError(error, { origin: input.base.origin, proxy: undefined, answered: false });
    return failed('TLS', diagnosis.cause, diagnosis.fix);
  }
  try {
    const cert = secure.getPeerCertificate();
    const expires = new Date(cert.valid_to);
    const days = Math.floor((expires.getTime() - Date.now()) / 86_400_000);
    const sources = input.caFiles.length > 0 ? ` + ${input.caFiles.join(', ')}` : '';
    const client = tls.cert !== undefined ? '; client certificate offered' : '';
    const detail = `${secure.getProtocol() ?? 'TLS'}, certificate for ${name(cert.subject)} issued by ${name(cert.issuer)}, expires ${expires.toISOString().slice(0, 10)} (in ${days} days)${client}`;
    if (!secure.authorized) {
      const code = String(secure.authorizationError ?? 'UNTRUSTED');
      const diagnosis = diagnoseNetworkError(Object.assign(new Error(code), { code }), { origin: input.base.origin, proxy: undefined, answered: false });
      return failed('TLS', `${detail}: NOT trusted (${code}; trusted: Node's roots${sources})`, diagnosis.kind === 'tls' ? diagnosis.fix : TRUST_FIX);
    }
    if (days < EXPIRY_WARNING_DAYS) {
      return warning('TLS', `${detail}, trusted (Node's roots${sources})`, "the certificate expires soon: tell the service's operator (or check this machine's clock)");
    }
    return ok('TLS', `${detail}, trusted (Node's roots${sources})`);
  } finally {
    secure.destroy();
  }
}

/** A certificate name as a person reads it: its CN, with the organisation when there is one. */
function name(subject: PeerCertificate['subject'] | undefined): string {
  if (!subject) return '(no name)';
  const cn = pick(subject.CN);
  const org = pick(subject.O);
  return JSON.stringify(cn && org && !cn.includes(org) ? `${cn} (${org})` : (cn ?? org ?? '(no name)'));
}

function pick(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function withTimeout<T>(promise: Promise<T>, ms: number, code: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(Object.assign(new Error(`timed out after ${ms} ms`), { code })), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
