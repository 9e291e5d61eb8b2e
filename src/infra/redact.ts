import { redactUrl, redactUrlValue } from '../service/url.js';

/** Any letter case: a service or a proxy may echo a header upper-cased. */
const TOKEN_SHAPE = /(lk_(?:live|sandbox|test)_)[^\s"',;]+/gi;

/** Tokens have a known shape: whatever a message quotes (a path, a header, a server's echo), never print one. */
export function redactSecrets(text: string): string {
  return redactUrl(text.replace(TOKEN_SHAPE, '$1[redacted]'));
}

/** redactSecrets for one value as typed (a setting, a proxy URL whose password may hold a space). */
export function redactValue(value: string): string {
  return redactSecrets(redactUrlValue(value));
}

/** redactValue for a command-line word, `--proxy=URL` included. */
export function redactArg(arg: string): string {
  const inline = /^(--[\w-]+=)([\s\S]*)$/.exec(arg);
  return inline ? `${inline[1]}${redactValue(inline[2]!)}` : redactValue(arg);
}

/** Shorter than this, a token's encodings would match ordinary words: only the token itself is redacted. */
const MIN_ENCODED = 8;

let cached: { token: string; pattern: RegExp | undefined } | undefined;

/**
 * redactSecrets, and this run's token in every form a server might echo it in: as sent, in
 * any letter case, percent-encoded, and base64-encoded (standard or URL-safe, padded or not)
 * on its own or inside a longer encoded text such as `Bearer <token>` or `user:<token>`.
 */
export function redactToken(text: string, token: string): string {
  if (cached?.token !== token) cached = { token, pattern: tokenPattern(token) };
  const pattern = cached.pattern;
  return redactSecrets(pattern === undefined ? text : text.replace(pattern, '[redacted]'));
}

function tokenPattern(token: string): RegExp | undefined {
  if (token.length < 4) return undefined;
  const forms = new Set([token, encodeURIComponent(token)]);
  if (token.length >= MIN_ENCODED) {
    for (const cased of [token, token.toUpperCase(), token.toLowerCase()]) {
      for (const core of base64Cores(Buffer.from(cased, 'utf8'))) {
        forms.add(core);
        forms.add(core.replace(/\+/g, '-').replace(/\//g, '_'));
      }
    }
  }
  const escaped = [...forms].sort((a, b) => b.length - a.length).map((form) => form.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&'));
  return new RegExp(escaped.join('|'), 'gi');
}

/**
 * The base64 characters that encode `bytes` alone, for each of the three positions they can
 * start at inside a longer text: any base64 of a text holding `bytes` holds one of these.
 * A character is kept only when all 6 of its bits come from `bytes`.
 */
function base64Cores(bytes: Buffer): string[] {
  const cores: string[] = [];
  for (let offset = 0; offset < 3; offset++) {
    const encoded = Buffer.concat([Buffer.alloc(offset), bytes, Buffer.alloc(2)]).toString('base64');
    const first = Math.ceil((offset * 8) / 6);
    const last = Math.floor(((offset + bytes.length) * 8) / 6);
    cores.push(encoded.slice(first, last));
  }
  return cores;
}
