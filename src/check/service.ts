/**
 * check's service half: token, page base, clock, signature. Raw requests on the same
 * transport an import would use (proxy, CAs, client certificate), without retries or the
 * breaker: check reports what happens, it does not wait it out.
 *
 * The signature is proven without creating anything: a signed Create Client body without
 * `name` gets 401 when the signature is refused and 400/422 when it was accepted, if the
 * service verifies signatures before fields. That last condition is checked too, with the
 * same body under a wrong signature: it must get 401.
 */
import { type KeyObject, randomBytes } from 'node:crypto';
import type { Dispatcher } from 'undici';
import { diagnoseNetworkError } from '../service/diagnose.js';
import { createTransport, type NetworkSettings } from '../service/dispatcher.js';
import { calledUrl, LIST_PATH, MISSING_ROUTE_STATUSES } from '../service/missing-route.js';
import { createSigner, type SignatureScheme } from '../service/signing.js';
import { type Answer, type Call, describeError } from './answer.js';
import { createPathLine } from './create-path.js';
import { type CheckLine, type CheckName, failed, ok, skipped, warning } from './types.js';
import type { CheckWords } from './words.js';

export interface ServiceCheckInput {
  base: URL;
  token: string;
  network: NetworkSettings;
  proxy: string | undefined;
  timeoutMs: number;
  key: KeyObject | undefined;
  scheme: SignatureScheme;
  detectSignature: boolean;
  /** The settings the fixes name: flags or options. */
  words: CheckWords;
}

export const SCHEMES: readonly SignatureScheme[] = [
  { hash: 'sha256', padding: 'pkcs1' },
  { hash: 'sha256', padding: 'pss' },
  { hash: 'sha512', padding: 'pkcs1' },
  { hash: 'sha512', padding: 'pss' },
];

const label = (scheme: SignatureScheme) => `${scheme.hash}/${scheme.padding}`;
/** A clock this far from the service's gets a warning (created_at filters, certificate validity). */
const SKEW_WARNING_MS = 60_000;

export async function checkService(input: ServiceCheckInput): Promise<{ lines: CheckLine[]; acceptedSchemes?: string[] | undefined }> {
  const { base, token } = input;
  const prefix = base.pathname.replace(/\/+$/, '');
  const { dispatcher } = createTransport(base, { connections: 1, connectTimeoutMs: input.timeoutMs, network: input.network });
  const call: Call = (method, path, body) =>
    request(dispatcher, base.origin, prefix + path, token, input.timeoutMs, method, body);
  const lines: CheckLine[] = [];
  const rest = (names: CheckName[], why: string) => {
    for (const name of names) lines.push(skipped(name, why));
  };
  try {
    let answer: Answer;
    try {
      answer = await call('GET', '/v1/clients?size=1');
    } catch (error) {
      const diagnosis = diagnoseNetworkError(error, { origin: base.origin, proxy: input.proxy, answered: false });
      lines.push(failed('token', `no answer to GET /v1/clients?size=1: ${diagnosis.cause}`, diagnosis.fix || 'check the base URL and that the service is up'));
      rest(['create path', 'page base', 'clock', 'signature'], 'not checked (the service did not answer)');
      return { lines };
    }
    lines.push(tokenLine(answer, token, input.words, base.origin + prefix));
    // Whatever the token got: a wrong path shows here too, and a refusal needs no token.
    lines.push(await createPathLine(call, base.origin + prefix, input.words));
    if (answer.status !== 200) {
      rest(['page base'], 'not checked (the token was not accepted)');
      lines.push(clockLine(answer, input.words));
      rest(['signature'], 'not checked (the token was not accepted)');
      return { lines };
    }
    lines.push(await pageBaseLine(call));
    lines.push(clockLine(answer, input.words));
    if (input.key === undefined) {
      rest(['signature'], 'not checked (no usable signing key)');
      return { lines };
    }
    return await signatureLines(call, input, input.key, lines);
  } finally {
    await dispatcher.close();
  }
}

async function request(
  dispatcher: Dispatcher,
  origin: string,
  path: string,
  token: string,
  timeoutMs: number,
  method: 'GET' | 'POST',
  body?: { bytes: Buffer; signature?: string | undefined },
): Promise<Answer> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: 'application/json', 'user-agent': 'ccs-bulk check' };
  if (body) {
    headers['content-type'] = 'application/json';
    if (body.signature !== undefined) headers['x-signature'] = body.signature;
  }
  const started = Date.now();
  const response = await dispatcher.request({ origin, path, method, headers, body: body?.bytes ?? null, headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
  const at = Date.now();
  const text = await response.body.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  const first = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);
  const location = first(response.headers.location);
  return { status: response.statusCode, date: first(response.headers.date), json, at, took: at - started, ...(location !== undefined && { location }) };
}

function tokenLine(answer: Answer, token: string, words: CheckWords, baseUrl: string): CheckLine {
  const kind = /^lk_live_/.test(token) ? 'live' : /^lk_sandbox_/.test(token) ? 'sandbox' : 'unrecognised';
  if (answer.status === 200) return ok('token', `accepted (${kind} key; GET /v1/clients?size=1 → 200 in ${answer.took} ms)`);
  const what = describeError(answer);
  if (answer.status === 401) {
    return failed('token', `refused: ${what}`, `check that ${words.token} holds the key for this base URL (lk_live_ for live, lk_sandbox_ for the sandbox) and that it was not revoked`);
  }
  if (answer.status === 403) {
    return failed('token', `forbidden: ${what}`, "check that this machine's IP address is on the key's allow-list and that the key may list and create clients");
  }
  if (MISSING_ROUTE_STATUSES.has(answer.status)) {
    const url = calledUrl('GET', baseUrl, `${LIST_PATH}?size=1`);
    return failed('token', `not checked: ${url} answered ${what}: the service's List Clients is not at this base URL`, words.baseUrlFix);
  }
  return failed('token', `unexpected answer: ${what}`, 'check the base URL points at the Client Credit Service and that it is up');
}

function clockLine(answer: Answer, words: CheckWords): CheckLine {
  const server = answer.date === undefined ? Number.NaN : Date.parse(answer.date);
  if (Number.isNaN(server)) return skipped('clock', 'the service sent no Date header');
  // The Date header is whole seconds, stamped while the request was served.
  const skew = answer.at - answer.took / 2 - server - 500;
  const seconds = Math.round(Math.abs(skew) / 1000);
  const detail = seconds === 0 ? "within a second of the service's clock" : `${seconds} s ${skew > 0 ? 'ahead of' : 'behind'} the service's clock`;
  if (Math.abs(skew) > SKEW_WARNING_MS) {
    return warning('clock', detail, `set this machine's clock (NTP): certificate validity and ${words.dateFilters} depend on it`);
  }
  return ok('clock', detail);
}

async function pageBaseLine(call: Call): Promise<CheckLine> {
  const ids = (answer: Answer): string[] => {
    const data = (answer.json as { data?: { clients?: { id?: unknown }[] } } | undefined)?.data;
    return (data?.clients ?? []).map((client) => String(client.id));
  };
  try {
    const zero = await call('GET', '/v1/clients?page=0&size=1');
    if (zero.status === 400 || zero.status === 422) return ok('page base', '1 (page=0 is refused)');
    if (zero.status !== 200) return warning('page base', `page=0 got ${describeError(zero)}`, 'export detects the base on its own; nothing to set');
    const one = await call('GET', '/v1/clients?page=1&size=1');
    const [first, second] = [ids(zero), one.status === 200 ? ids(one) : []];
    if (first.length === 0 && second.length === 0) return ok('page base', 'cannot tell: no clients visible yet (export detects it on its own)');
    if (first.length === 0) return ok('page base', '1 (page=0 is empty, page=1 is not)');
    if (second[0] === first[0]) return ok('page base', '1 (page=0 and page=1 are the same page)');
    if (second.length === 0) return ok('page base', 'cannot tell: one client visible (export detects it on its own)');
    return ok('page base', '0 (page=0 and page=1 are different pages)');
  } catch (error) {
    return warning('page base', `not checked: ${(error as Error).message}`, 'export detects the base on its own');
  }
}

/** A Create Client body that cannot create a client: no `name`. */
function probeBody(): Buffer {
  return Buffer.from(JSON.stringify({ idempotency_key: `ccs-bulk-check-${randomBytes(8).toString('hex')}`, email: 'check@example.invalid' }));
}

const isRefusedBody = (status: number) => status === 400 || status === 422;

async function signatureLines(
  call: Call,
  { scheme, detectSignature: detect, words }: ServiceCheckInput,
  key: KeyObject,
  lines: CheckLine[],
): Promise<{ lines: CheckLine[]; acceptedSchemes?: string[] | undefined }> {
  const bytes = probeBody();
  const post = async (signature: string) => call('POST', '/v1/client', { bytes, signature });
  try {
    const schemes = detect ? SCHEMES : [scheme];
    const answers = new Map<string, Answer>();
    for (const candidate of schemes) answers.set(label(candidate), await post(await createSigner(key, candidate).sign(bytes)));
    // A signature no key made: it must be refused, or a 400/422 proves nothing.
    const control = await post(randomBytes(512).toString('base64'));
    const accepted = [...answers].filter(([, answer]) => isRefusedBody(answer.status)).map(([name]) => name);
    const mine = answers.get(label(scheme));
    if (detect) {
      lines.push(
        accepted.length > 0 && control.status === 401
          ? ok('detect', `the service accepts ${accepted.join(', ')}; refuses ${[...answers.keys()].filter((n) => !accepted.includes(n)).join(', ') || 'none'}`)
          : accepted.length === 0
            ? failed('detect', 'no scheme accepted (sha256/sha512 × pkcs1/pss): the key is not the registered one', 'register this key\'s public key with the service (check its fingerprint above), or use the key that is registered')
            : warning('detect', `inconclusive: a wrong signature got ${describeError(control)} too`, 'the service checks fields before signatures; a one-row import shows whether signing works'),
      );
    }
    lines.push(signatureLine(scheme, mine, control, accepted, words));
    return { lines, acceptedSchemes: detect ? accepted : undefined };
  } catch (error) {
    lines.push(failed('signature', `no answer to POST /v1/client: ${(error as Error).message}`, 'run check again; if it persists, the service or the network is failing'));
    return { lines };
  }
}

function signatureLine(scheme: SignatureScheme, mine: Answer | undefined, control: Answer, accepted: string[], words: CheckWords): CheckLine {
  const name = label(scheme);
  if (mine === undefined) return skipped('signature', 'not checked');
  if (mine.status === 401) {
    const other = SCHEMES.find((candidate) => label(candidate) === accepted[0]);
    const fix = other
      ? `the service accepts ${label(other)}: ${words.useScheme(other)}`
      : `the key is not the one registered, or the scheme differs: compare the fingerprint above with the registered key, and ${words.detect}`;
    return failed('signature', `${name} refused: ${describeError(mine)}`, fix);
  }
  if (isRefusedBody(mine.status)) {
    if (control.status === 401) {
      return ok('signature', `${name} accepted (a body without name got ${mine.status}; a wrong signature got 401)`);
    }
    return warning(
      'signature',
      `cannot be proven without creating a client: a wrong signature got ${describeError(control)} too (the service checks fields first)`,
      'import one row first and look at its result',
    );
  }
  if (mine.status === 403) return failed('signature', `forbidden: ${describeError(mine)}`, 'check that the key may create clients and that this IP address is allowed');
  if (mine.status >= 200 && mine.status < 300) {
    return warning('signature', `${name} accepted, but the service created a client from a body without name (${mine.status})`, "tell the service's operator: a client without a name exists");
  }
  return failed('signature', `unexpected answer: ${describeError(mine)}`, 'run check again; if it persists, the service is failing');
}
