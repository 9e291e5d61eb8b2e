import { isIP } from 'node:net';
import { UsageError } from '../errors.js';

/**
 * HTTPS is mandatory for the real service; plain http:// is allowed only to
 * loopback hosts (the sandbox). Checked before any connection is made.
 */
export function checkBaseUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError(
      `base URL "${text}" is not a URL (expected e.g. https://api.example.com)`,
      'bad_base_url',
    );
  }
  if (url.username !== '' || url.password !== '') {
    throw new UsageError(
      'base URL must not carry credentials; use CCS_TOKEN or --token-file',
      'bad_base_url',
    );
  }
  if (url.protocol === 'https:') return url;
  if (url.protocol === 'http:') {
    if (isLoopback(url.hostname)) return url;
    throw new UsageError(
      `refusing plain http:// to ${url.hostname}: the service requires HTTPS (http is allowed only to loopback hosts such as the sandbox)`,
      'insecure_base_url',
    );
  }
  throw new UsageError(`base URL must be https:// (got ${url.protocol}//)`, 'bad_base_url');
}

export function isLoopback(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  // Only `localhost` itself: resolvers may send `*.localhost` names to DNS.
  if (host === 'localhost') return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  if (isIP(host) === 6) return host === '::1' || host === '0:0:0:0:0:0:0:1';
  return false;
}

/** `http://user:secret@proxy:3128` → `http://[redacted]@proxy:3128`: credentials in a URL are never printed. */
export function redactUrl(text: string): string {
  return text.replace(/\b([a-z][a-z0-9+.-]*:\/\/)[^/\s@]*@/gi, '$1[redacted]@');
}
