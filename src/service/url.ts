import { isIP } from 'node:net';
import { UsageError } from '../errors.js';

/** A base URL taken apart: where to connect, and the path prefix requests go under. */
export interface BaseUrl {
  /** `https://gw.example.com:8443`: what the connection pool is for. */
  origin: string;
  /** `/ccs`, or '' at the root: requests go to `${prefix}/v1/…`. */
  prefix: string;
  /** origin + prefix, the one spelling printed and recorded (no trailing slash). */
  text: string;
}

const EXAMPLE = 'https://ccs.example.com, or https://gw.example.com/ccs behind a gateway';

/** The text as typed, fit for one line: escaped, bounded, credentials hidden. */
function shown(text: string): string {
  const short = text.length > 200 ? `${text.slice(0, 200)}…` : text;
  return JSON.stringify(redactUrl(short));
}

/**
 * The service's root, as configured: `https://host` or `https://host/prefix` (a gateway's
 * path), to which request paths add `/v1/…`. HTTPS is mandatory for the real service; plain
 * http:// is allowed only to loopback hosts (the sandbox). A path ending in `/v1` (or naming an
 * operation, `/v1/clients`) is refused with the root to use instead: it is the API's path
 * copied by mistake, and taking it as a prefix would send every request to `/v1/v1/…`.
 * Checked before any connection is made; any string is either accepted or a UsageError.
 */
export function parseBaseUrl(input: string): BaseUrl {
  const text = input.trim();
  if (/[\s\x00-\x1f\x7f]/.test(text)) {
    throw new UsageError(`base URL ${shown(text)} holds spaces or control characters (expected e.g. ${EXAMPLE})`, 'bad_base_url');
  }
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError(`base URL ${shown(text)} is not a URL (expected e.g. ${EXAMPLE})`, 'bad_base_url');
  }
  if (url.username !== '' || url.password !== '') {
    throw new UsageError('base URL must not carry credentials; use CCS_TOKEN or --token-file', 'bad_base_url');
  }
  if (url.protocol === 'http:' && !isLoopback(url.hostname)) {
    throw new UsageError(
      `refusing plain http:// to ${url.hostname}: the service requires HTTPS (http is allowed only to loopback hosts such as the sandbox)`,
      'insecure_base_url',
    );
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new UsageError(`base URL must be https:// (got ${shown(url.protocol)})`, 'bad_base_url');
  }
  if (url.search !== '' || url.hash !== '') {
    throw new UsageError(`base URL ${shown(text)} must not carry a query (?…) or fragment (#…): give the service's root, e.g. ${EXAMPLE}`, 'bad_base_url');
  }
  const prefix = url.pathname.replace(/\/+$/, '');
  const api = /^(.*?)\/v1(\/clients?(\/.*)?)?$/i.exec(prefix);
  if (api !== null) {
    const root = `${url.origin}${api[1]}`;
    throw new UsageError(
      `base URL ${shown(text)} ends in the API's path (/v1…): give the service's root, ${root} (ccs-bulk adds /v1/client and /v1/clients itself)`,
      'bad_base_url',
    );
  }
  return { origin: url.origin, prefix, text: `${url.origin}${prefix}` };
}

/** parseBaseUrl as a URL object (origin and pathname = the prefix). */
export function checkBaseUrl(text: string): URL {
  return new URL(parseBaseUrl(text).text);
}

export function isLoopback(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  // Only `localhost` itself: resolvers may send `*.localhost` names to DNS.
  if (host === 'localhost') return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  if (isIP(host) === 6) return host === '::1' || host === '0:0:0:0:0:0:0:1';
  return false;
}

/**
 * `http://user:secret@proxy:3128` → `http://[redacted]@proxy:3128`: credentials in a URL are
 * never printed. As a URL parser reads it, the credentials run to the last `@` before the
 * host's end (`/`, `?`, `#`, `\`), so a password holding an `@` is hidden whole; in running
 * text, a space ends the URL too. A scheme is at most 32 characters: unbounded, a server's
 * `a.a.a.…` would cost time growing with the square of its length.
 */
export function redactUrl(text: string): string {
  return text.replace(/\b([a-z][a-z0-9+.-]{0,31}:\/\/)[^/?#\\\s]*@/gi, '$1[redacted]@');
}

/** redactUrl for a value that is one URL as typed (a flag's, a setting's): a space in its password too. */
export function redactUrlValue(value: string): string {
  return redactUrl(value.replace(/^(\s*[a-z][a-z0-9+.-]{0,31}:\/\/)[^/?#\\]*@/i, '$1[redacted]@'));
}
