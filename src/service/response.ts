/**
 * What the client takes from a response it cannot trust: a bounded body, no redirects,
 * server text made safe to write to files and terminals (no token, no control characters),
 * and an error answer turned into a ServiceError.
 */
import type { Dispatcher } from 'undici';
import type { z } from 'zod';
import { AuthError, ServiceError } from '../errors.js';
import { printable } from '../infra/printable.js';
import { redactToken } from '../infra/redact.js';
import { errorBodySchema } from './schemas.js';

/** A List Clients page of 1,000 clients with documents is ~1–2 MB; nothing documented comes near. */
export const MAX_RESPONSE_BYTES = 4 * 1024 * 1024;

/** Longest server-provided text kept in an error message (results lines stay short). */
const MAX_TEXT = 500;

/**
 * The body as text, refused past `limit` bytes (announced or received) and cut off `timeoutMs`
 * after the headers: undici's bodyTimeout only bounds the gap between chunks, so a body that
 * trickles forever would otherwise never end.
 */
export async function readBody(
  response: Dispatcher.ResponseData,
  what: string,
  options: { limit: number; timeoutMs: number },
): Promise<string> {
  const { body } = response;
  const announced = Number(response.headers['content-length']);
  if (announced > options.limit) {
    discard(body);
    throw tooLarge(response.statusCode, what, `announces ${announced} bytes`, options.limit);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    body.destroy();
  }, options.timeoutMs);
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > options.limit) {
        body.destroy();
        throw tooLarge(response.statusCode, what, `went past ${options.limit} bytes`, options.limit);
      }
      chunks.push(chunk);
    }
  } catch (error) {
    if (!timedOut) throw error;
    throw Object.assign(new Error(`the response body was not complete ${options.timeoutMs} ms after its headers`), {
      code: 'UND_ERR_BODY_TIMEOUT',
    });
  } finally {
    clearTimeout(timer);
  }
  return decode(chunks, size);
}

/**
 * A body of several chunks is put together here, while it fits: a fresh buffer for every page
 * is fresh memory, and its page faults cost more CPU than the copy.
 */
const KEPT_BYTES = 2 * 1024 * 1024;
let gathered: Buffer = Buffer.allocUnsafe(0);

/** The chunks as text, decoded at once: nothing else can use the kept buffer in between. */
function decode(chunks: readonly Buffer[], size: number): string {
  if (chunks.length === 1) return chunks[0]!.toString('utf8');
  let bytes = gathered;
  if (bytes.length < size) {
    bytes = Buffer.allocUnsafe(size <= KEPT_BYTES ? Math.min(KEPT_BYTES, Math.max(size, 2 * bytes.length)) : size);
    if (bytes.length <= KEPT_BYTES) gathered = bytes;
  }
  let at = 0;
  for (const chunk of chunks) at += chunk.copy(bytes, at);
  return bytes.toString('utf8', 0, size);
}

function tooLarge(status: number, what: string, how: string, limit: number): ServiceError {
  return new ServiceError(
    `the response to ${what} (HTTP ${status}) ${how}, more than the ${limit / 1024 / 1024} MiB a response may hold: not read`,
    { status, type: 'bad_response' },
    { code: 'response_too_large' },
  );
}

/**
 * A 3xx is never followed: the Authorization header would go with it, possibly to another
 * host. The base URL is what the user fixes.
 */
export function refuseRedirect(response: Dispatcher.ResponseData, what: string, token: string): ServiceError {
  discard(response.body);
  const location = response.headers.location;
  const where = typeof location === 'string' ? ` to ${cleanServerText(location, token)}` : '';
  return new ServiceError(
    `the service answered ${what} with a redirect (HTTP ${response.statusCode})${where}: redirects are not followed, ` +
      'so the token is never sent elsewhere; check --base-url (CCS_BASE_URL)',
    { status: response.statusCode, type: 'bad_response' },
    { code: 'redirect_refused' },
  );
}

/** Drops a body unread; the abort it causes is expected, not an unhandled error. */
function discard(body: Dispatcher.ResponseData['body']): void {
  body.on('error', () => {});
  body.destroy();
}

/**
 * Server text for messages: the token (in any case, percent- or base64-encoded, and anything
 * shaped like one) redacted, control characters and bidi overrides shown as \uXXXX (no terminal
 * escapes, no line breaks in a results cell, no text turned around), and cut to a readable length.
 */
export function cleanServerText(text: string, token: string): string {
  const clean = printable(redactToken(text, token));
  return clean.length > MAX_TEXT ? `${clean.slice(0, MAX_TEXT)}…` : clean;
}

/** cleanServerText for an optional field. */
export function cleanOptional(text: string | null | undefined, token: string): string | undefined {
  return text === null || text === undefined ? undefined : cleanServerText(text, token);
}

const AUTH_HINTS: Record<number, string> = {
  401:
    'check the token (CCS_TOKEN or --token-file) is valid for this base URL (lk_sandbox_ keys for the sandbox, lk_live_ for live), ' +
    'that the signing key (CCS_SIGNING_KEY_FILE or --signing-key) is the one whose public key is registered, ' +
    'and --signature-hash / --signature-padding',
  403: "check that this machine's IP address is on the service's allow-list and that the token may create and list clients",
};

/** Every text the server chose is cleaned (token redacted, control characters escaped) before it is kept. */
export function errorFromResponse(status: number, text: string, requestId: string | undefined, token: string): ServiceError {
  const parsed = errorBodySchema.safeParse(parseJson(text));
  const body = parsed.success ? parsed.data.error : undefined;
  const info = {
    status,
    type: cleanOptional(body?.type, token),
    errorCode: cleanOptional(body?.code, token),
    param: cleanOptional(body?.param, token),
    requestId: cleanOptional(body?.request_id, token) ?? requestId,
    docUrl: cleanOptional(body?.doc_url, token),
    details: body?.details,
  };
  // Cut after redaction: a cut through an echoed token would leave its start unredacted.
  const message = body?.message ?? undefined;
  const what = message !== undefined ? cleanServerText(message, token) : cleanServerText(text.trim(), token).slice(0, 200) || 'no error body';
  const label = [status, info.type, info.errorCode].filter(Boolean).join(' ');
  const hint = AUTH_HINTS[status];
  if (hint !== undefined)
    return new AuthError(`the service refused the request (${label}: ${what}): ${hint}`, info);
  return new ServiceError(`${label}: ${what}`, info);
}

export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The first few reasons a body failed its schema, for the error message. */
export function describeIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 3)
    .map((issue) => `${issue.path.join('.') || '(body)'}: ${issue.message}`)
    .join('; ');
}

export function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
