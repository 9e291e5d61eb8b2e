/**
 * Create Client body checks, in the order a strict API applies them: content type, JSON
 * object, unknown fields, required fields, types, then values (422). The first problem wins,
 * named by `param`, so the importer's error columns can be tested against real-looking errors.
 */
import type { ErrorSpec } from './respond.js';

export type CreateFields = Record<string, string>;

export type BodyCheck = { ok: true; fields: CreateFields } | { ok: false; error: ErrorSpec };

const REQUIRED = ['name', 'idempotency_key', 'email', 'country', 'address'] as const;
const OPTIONAL = ['currency', 'liquidity_type'] as const;

// Deliberately loose (one @, a dot in the domain, no spaces): strict enough to catch
// spreadsheet typos, loose enough never to refuse an address a real service would accept.
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const COUNTRY = /^[A-Z]{2}$/;
const CURRENCY = /^[A-Z]{3}$/;
const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;

function invalid(status: number, code: string, message: string, param: string | null = null): BodyCheck {
  return { ok: false, error: { status, type: 'invalid_request_error', code, message, param } };
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** A calendar date that exists (no 2023-02-29), without allocating a Date per request. */
export function isRealDate(text: string): boolean {
  if (!ISO_DATE.test(text)) return false;
  const year = Number(text.slice(0, 4));
  const month = Number(text.slice(5, 7));
  const day = Number(text.slice(8, 10));
  if (month < 1 || month > 12 || day < 1) return false;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return day <= (month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1]!);
}

/**
 * Idempotency compares request content, not bytes: key order and whitespace do not matter,
 * and a null optional field equals an absent one (both were dropped from `fields`).
 */
export function sameFields(a: CreateFields, b: CreateFields): boolean {
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  for (const key of keys) if (a[key] !== b[key]) return false;
  return true;
}

/** A checker for one sandbox's configured application date field name. */
export function checkCreateBody(
  dateField: string,
): (raw: Buffer, contentType: string | undefined) => BodyCheck {
  const allowed = new Set<string>([...REQUIRED, ...OPTIONAL, dateField]);
  const optional = [...OPTIONAL, dateField];
  return (raw, contentType) => checkBody(raw, contentType, dateField, allowed, optional);
}

function checkBody(
  raw: Buffer,
  contentType: string | undefined,
  dateField: string,
  allowed: ReadonlySet<string>,
  optional: readonly string[],
): BodyCheck {
  const mediaType =
    contentType === 'application/json' ? contentType : contentType?.split(';')[0]?.trim().toLowerCase();
  if (mediaType !== 'application/json') {
    return invalid(
      400,
      'invalid_content_type',
      `Content-Type must be application/json (got ${contentType === undefined ? 'none' : JSON.stringify(contentType)}).`,
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw.toString('utf8'));
  } catch {
    return invalid(400, 'invalid_json', 'The request body is not valid JSON.');
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    return invalid(400, 'invalid_json', 'The request body must be a JSON object.');
  }
  const body = parsed as Record<string, unknown>;
  for (const key of Object.keys(body)) {
    if (!allowed.has(key)) {
      return invalid(400, 'parameter_unknown', `Received unknown parameter: ${key}.`, key);
    }
  }
  const fields: CreateFields = {};
  for (const key of REQUIRED) {
    const value = body[key];
    if (value === undefined || value === null || (typeof value === 'string' && value.trim() === '')) {
      return invalid(400, 'parameter_missing', `Missing required parameter: ${key}.`, key);
    }
    if (typeof value !== 'string') {
      return invalid(400, 'parameter_invalid_type', `${key} must be a string.`, key);
    }
    fields[key] = value;
  }
  // Optional fields may be omitted or null; present ones must be strings.
  for (const key of optional) {
    const value = body[key];
    if (value === undefined || value === null) continue;
    if (typeof value !== 'string') {
      return invalid(400, 'parameter_invalid_type', `${key} must be a string.`, key);
    }
    fields[key] = value;
  }
  const problem = checkValues(fields, dateField);
  if (problem) return problem;
  return { ok: true, fields };
}

function checkValues(fields: CreateFields, dateField: string): BodyCheck | undefined {
  if (!EMAIL.test(fields.email ?? '')) {
    return invalid(422, 'invalid_email', `email is not a valid e-mail address.`, 'email');
  }
  if (!COUNTRY.test(fields.country ?? '')) {
    return invalid(
      422,
      'invalid_country',
      'country must be an ISO 3166-1 alpha-2 code such as "DE".',
      'country',
    );
  }
  const { currency, liquidity_type: liquidity } = fields;
  if (currency !== undefined && !CURRENCY.test(currency)) {
    return invalid(422, 'invalid_currency', 'currency must be an ISO 4217 code such as "EUR".', 'currency');
  }
  if (liquidity !== undefined && liquidity !== 'chain') {
    return invalid(422, 'invalid_liquidity_type', 'liquidity_type must be "chain".', 'liquidity_type');
  }
  const date = fields[dateField];
  if (date !== undefined && !isRealDate(date)) {
    return invalid(422, 'invalid_date', `${dateField} must be a real date in YYYY-MM-DD form.`, dateField);
  }
  return undefined;
}
