/**
 * Which network failures no retry can fix, and what the user should change. Pure: an error
 * and what is known of the connection in, a diagnosis out.
 *
 * TLS and certificate failures, and a proxy asking for credentials, are systemic whenever
 * they happen. DNS failures, a refused connection and a proxy that cannot be reached or
 * refuses the tunnel are systemic only before the service has answered anything: after
 * that the configuration is known to work, and they are an outage (the breaker's business).
 */

export type FailureKind = 'tls' | 'dns' | 'proxy' | 'refused' | 'transient';

export interface Diagnosis {
  kind: FailureKind;
  /** True when retrying cannot help: stop the run. */
  systemic: boolean;
  /** What happened, one clause. */
  cause: string;
  /** What to change, one sentence. */
  fix: string;
}

export interface ConnectionFacts {
  /** The service's origin, e.g. https://api.example.com */
  origin: string;
  /** The proxy requests go through (credentials already redacted), if any. */
  proxy: string | undefined;
  /** Whether the service has answered any request of this run. */
  answered: boolean;
}

const UNTRUSTED = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_UNTRUSTED',
  'CERT_SIGNATURE_FAILURE',
  'CERT_REVOKED',
  'INVALID_CA',
]);
const EXPIRED = new Set(['CERT_HAS_EXPIRED', 'CERT_NOT_YET_VALID']);
const DNS = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NONAME', 'EAI_NODATA']);
const UNREACHABLE = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT', 'ETIMEDOUT']);

export const TRUST_FIX =
  "add the CA that signed the service's certificate: --ca-file FILE (or CCS_CA_FILE), or NODE_EXTRA_CA_CERTS=FILE; ask your IT for the company root CA in PEM form (TLS verification is never turned off)";

/** The first `code` (and its message) along the error's cause chain. */
export function errorCode(error: unknown): { code: string | undefined; message: string } {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && code !== 'UND_ERR_ABORTED' && code !== 'UND_ERR_PRX_TLS') {
      return { code, message: current.message };
    }
    if (/Proxy response \(\d+\)|Proxy Authentication Required/.test(current.message)) {
      return { code: 'PROXY_REFUSED', message: current.message };
    }
    current = current.cause;
  }
  return { code: undefined, message: error instanceof Error ? error.message : String(error) };
}

export function diagnoseNetworkError(error: unknown, facts: ConnectionFacts): Diagnosis {
  const { code, message } = errorCode(error);
  const host = hostOf(facts.origin);
  const early = !facts.answered;
  if (code !== undefined && UNTRUSTED.has(code)) {
    return {
      kind: 'tls',
      systemic: true,
      cause: `the certificate of ${host} is not trusted (${code})`,
      fix: TRUST_FIX,
    };
  }
  if (code !== undefined && EXPIRED.has(code)) {
    return {
      kind: 'tls',
      systemic: true,
      cause: `the certificate of ${host} is not valid now (${code})`,
      fix: "check this machine's clock; if it is right, the service's certificate has expired: tell its operator",
    };
  }
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') {
    return {
      kind: 'tls',
      systemic: true,
      cause: `the certificate presented is not for ${host} (${code})`,
      fix: 'check the base URL uses the host name the certificate names; a proxy that intercepts TLS needs its CA added with --ca-file',
    };
  }
  if (code !== undefined && /CERTIFICATE_REQUIRED|HANDSHAKE_FAILURE|BAD_CERTIFICATE|UNKNOWN_CA/.test(code)) {
    return {
      kind: 'tls',
      systemic: true,
      cause: `${host} refused the TLS handshake (${code})`,
      fix: 'if the service requires a client certificate, give it with --client-cert FILE and --client-key FILE (CCS_CLIENT_CERT_FILE, CCS_CLIENT_KEY_FILE)',
    };
  }
  if (code === 'ERR_SSL_WRONG_VERSION_NUMBER' || code === 'ERR_SSL_PACKET_LENGTH_TOO_LONG') {
    return {
      kind: 'tls',
      systemic: true,
      cause: `${host} does not speak HTTPS on this port (${code})`,
      fix: 'check the base URL: scheme (https://), host and port',
    };
  }
  if (code !== undefined && (code.startsWith('ERR_SSL_') || code.startsWith('ERR_TLS_') || code === 'EPROTO')) {
    return { kind: 'tls', systemic: true, cause: `TLS with ${host} failed (${code}: ${message})`, fix: TRUST_FIX };
  }
  if (code === 'PROXY_REFUSED') {
    const status = /\((\d+)\)/.exec(message)?.[1] ?? (/Authentication/.test(message) ? '407' : '?');
    if (status === '407') {
      return {
        kind: 'proxy',
        systemic: true,
        cause: `the proxy ${facts.proxy ?? ''} asks for credentials (407)`.replace('  ', ' '),
        fix: 'put them in the proxy URL: --proxy http://USER:PASSWORD@HOST:PORT (better in CCS_PROXY or HTTPS_PROXY, so they stay out of ps)',
      };
    }
    return {
      kind: 'proxy',
      systemic: early,
      cause: `the proxy ${facts.proxy ?? ''} refused to open a tunnel to ${host} (${status})`,
      fix: `check that the proxy lets this machine reach ${host}, or that it should be bypassed (NO_PROXY)`,
    };
  }
  if (facts.proxy !== undefined && code !== undefined && (UNREACHABLE.has(code) || DNS.has(code))) {
    return {
      kind: 'proxy',
      systemic: early,
      cause: `the proxy ${facts.proxy} cannot be reached (${code})`,
      fix: 'check --proxy / CCS_PROXY / HTTPS_PROXY (host and port), or set NO_PROXY for this host if it is reached directly',
    };
  }
  if (code !== undefined && DNS.has(code)) {
    return {
      kind: 'dns',
      systemic: early,
      cause: `the host name ${host} does not resolve (${code})`,
      fix: 'check the base URL (CCS_BASE_URL / --base-url); if this machine reaches the internet only through a proxy, set HTTPS_PROXY or --proxy',
    };
  }
  if (code !== undefined && UNREACHABLE.has(code)) {
    return {
      kind: 'refused',
      systemic: early,
      cause: `nothing answers at ${facts.origin} (${code})`,
      fix: 'check the base URL (host and port) and that the service is up; if this machine reaches the internet only through a proxy, set HTTPS_PROXY or --proxy',
    };
  }
  return { kind: 'transient', systemic: false, cause: code ? `${code} ${message}` : message, fix: '' };
}

function hostOf(origin: string): string {
  try {
    return new URL(origin).host;
  } catch {
    return origin;
  }
}
