/**
 * The transport for one service origin: a keep-alive Pool when requests go direct, undici's
 * ProxyAgent for --proxy, EnvHttpProxyAgent for HTTPS_PROXY/HTTP_PROXY/NO_PROXY. TLS settings
 * (extra CAs, a client certificate) apply to the service's connection either way; there is
 * no setting that turns verification off.
 */
import { createRequire } from 'node:module';
import { rootCertificates } from 'node:tls';
import type * as Undici from 'undici';
import type { Dispatcher } from 'undici';
import { UsageError } from '../errors.js';
import { redactUrlValue } from './url.js';

/**
 * undici, loaded with the first transport rather than with this module: `validate` and the
 * sandbox reach this module without sending anything, and loading undici took ~80 ms of their
 * start-up.
 */
let loaded: typeof Undici | undefined;
const undici = (): typeof Undici => (loaded ??= createRequire(import.meta.url)('undici') as typeof Undici);

/** TLS for the connection to the service: extra CAs, and a client certificate for mutual TLS. */
export interface TlsSettings {
  /** Extra trusted CAs (PEM), added to Node's own roots, never replacing them. */
  ca?: string | undefined;
  /** Client certificate and key (PEM) for services that require mutual TLS. */
  cert?: string | undefined;
  /** The client certificate's private key (PEM), with `cert`. */
  key?: string | undefined;
}

/** The proxy environment, read once by the caller (the command reads the process's), in undici's precedence. */
export interface ProxyEnv {
  /** HTTP_PROXY: the proxy for http:// URLs (and https:// when HTTPS_PROXY is unset). */
  httpProxy?: string | undefined;
  /** HTTPS_PROXY: the proxy for https:// URLs. */
  httpsProxy?: string | undefined;
  /** NO_PROXY: hosts reached directly, comma-separated (`.example.com`, `10.0.0.0/8`, `*`). */
  noProxy?: string | undefined;
}

/** Proxy and TLS settings for the transport a service client makes. */
export interface NetworkSettings {
  /** --proxy / CCS_PROXY: every request goes through it, whatever NO_PROXY says. */
  proxy?: string | undefined;
  /** HTTPS_PROXY, HTTP_PROXY, NO_PROXY (either case). */
  env?: ProxyEnv | undefined;
  /** Extra CAs and a client certificate. */
  tls?: TlsSettings | undefined;
}

export interface Transport {
  dispatcher: Dispatcher;
  /** The proxy this origin's requests go through, credentials redacted; undefined = direct. */
  proxy: string | undefined;
  /** Where that proxy setting came from, for messages. */
  proxySource: '--proxy' | 'HTTPS_PROXY' | 'HTTP_PROXY' | undefined;
}

/** Reads the proxy variables the way undici does: lower case first, then upper case. */
export function proxyEnvFrom(env: NodeJS.ProcessEnv): ProxyEnv {
  const pick = (name: string) => {
    const value = env[name.toLowerCase()] ?? env[name];
    return value === undefined || value.trim() === '' ? undefined : value.trim();
  };
  return { httpProxy: pick('HTTP_PROXY'), httpsProxy: pick('HTTPS_PROXY'), noProxy: pick('NO_PROXY') };
}

/** A proxy URL must be http(s)://host:port; the message never shows its credentials. */
export function checkProxyUrl(text: string, source: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    // Not even a URL: nothing of it is shown, it may hold a password.
    throw new UsageError(`${source} is not a URL (expected http://HOST:PORT or http://USER:PASSWORD@HOST:PORT)`, 'bad_proxy');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(
      `${source} must be an http:// or https:// proxy URL (got ${url.protocol}//)`,
      'bad_proxy',
    );
  }
  return url;
}

/**
 * Whether NO_PROXY exempts this host and port, by undici's EnvHttpProxyAgent rules (so what is
 * reported matches what it does): entries split on commas or spaces, `*` matches all, an
 * entry matches the host itself and its subdomains (a leading `.` or `*.` is dropped), and an
 * entry with `:port` matches that port only.
 */
export function bypassesProxy(hostname: string, port: number, noProxy: string | undefined): boolean {
  if (noProxy === undefined || noProxy === '') return false;
  if (noProxy === '*') return true;
  const host = hostname.toLowerCase();
  for (const entry of noProxy.split(/[,\s]/)) {
    if (entry === '') continue;
    const parsed = /^(.+):(\d+)$/.exec(entry);
    const name = (parsed ? parsed[1]! : entry).replace(/^\*?\./, '').toLowerCase();
    const entryPort = parsed ? Number.parseInt(parsed[2]!, 10) : 0;
    if (entryPort !== 0 && entryPort !== port) continue;
    if (host === name || host.endsWith(`.${name}`)) return true;
  }
  return false;
}

/** Which proxy, if any, requests to `origin` go through. */
export function proxyFor(origin: URL, network: NetworkSettings): Pick<Transport, 'proxy' | 'proxySource'> {
  if (network.proxy !== undefined) return { proxy: redactUrlValue(network.proxy), proxySource: '--proxy' };
  const env = network.env ?? {};
  const https = origin.protocol === 'https:';
  // undici: an https origin uses HTTPS_PROXY, falling back to HTTP_PROXY.
  const chosen = https ? (env.httpsProxy ?? env.httpProxy) : env.httpProxy;
  if (chosen === undefined) return { proxy: undefined, proxySource: undefined };
  // Bracketed IPv6 hosts stay bracketed, as undici compares them.
  const hostname = origin.host.replace(/:\d*$/, '');
  const port = Number.parseInt(origin.port, 10) || (https ? 443 : 80);
  if (bypassesProxy(hostname, port, env.noProxy)) return { proxy: undefined, proxySource: undefined };
  return {
    proxy: redactUrlValue(chosen),
    proxySource: https && env.httpsProxy !== undefined ? 'HTTPS_PROXY' : 'HTTP_PROXY',
  };
}

/** Node's roots plus the extra CAs: passing `ca` alone would replace the roots. */
export function trustedCas(extra: string | undefined): string[] | undefined {
  return extra === undefined ? undefined : [...rootCertificates, extra];
}

export function createTransport(
  origin: URL,
  options: { connections: number; connectTimeoutMs: number; network?: NetworkSettings | undefined },
): Transport {
  const network = options.network ?? {};
  const tls = network.tls ?? {};
  const connect = {
    timeout: options.connectTimeoutMs,
    // Set on every connection, never left to Node's default: NODE_TLS_REJECT_UNAUTHORIZED=0 in
    // the environment (set machine-wide on some CI runners) would otherwise turn checks off.
    rejectUnauthorized: true,
    ...(tls.ca !== undefined && { ca: trustedCas(tls.ca) }),
    ...(tls.cert !== undefined && { cert: tls.cert }),
    ...(tls.key !== undefined && { key: tls.key }),
  };
  // The proxy's own TLS (an https:// proxy) is verified too, against the same extra CAs.
  const proxyTls = { timeout: options.connectTimeoutMs, rejectUnauthorized: true, ...(tls.ca !== undefined && { ca: trustedCas(tls.ca) }) };
  const route = proxyFor(origin, network);
  const pool = { connections: options.connections, keepAliveTimeout: 30_000 };
  if (network.proxy !== undefined) {
    checkProxyUrl(network.proxy, '--proxy');
    const dispatcher = new (undici().ProxyAgent)({ uri: network.proxy, requestTls: connect, proxyTls, ...pool });
    return { dispatcher, ...route };
  }
  if (route.proxy !== undefined) {
    const env = network.env ?? {};
    if (env.httpsProxy !== undefined) checkProxyUrl(env.httpsProxy, 'HTTPS_PROXY');
    if (env.httpProxy !== undefined) checkProxyUrl(env.httpProxy, 'HTTP_PROXY');
    // Passed explicitly (read once by the caller): '' is "none" to undici, so it never reads process.env.
    const dispatcher = new (undici().EnvHttpProxyAgent)({
      httpProxy: env.httpProxy ?? '',
      httpsProxy: env.httpsProxy ?? '',
      noProxy: env.noProxy ?? '',
      connect,
      requestTls: connect,
      proxyTls,
      ...pool,
    });
    return { dispatcher, ...route };
  }
  // The pool is for the origin alone: a base URL's path prefix goes on each request's path.
  return { dispatcher: new (undici().Pool)(origin.origin, { ...pool, connect }), ...route };
}
