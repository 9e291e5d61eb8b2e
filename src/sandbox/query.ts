/**
 * List Clients query parameters → a filter, or the 400 a strict service would give. Unknown
 * parameters are refused rather than ignored: a misspelt `created_at_from` silently ignored
 * would make an export quietly wrong, and the emulator exists to catch exactly that.
 */
import { parse } from 'node:querystring';
import { CLIENT_STATUSES, CREDIT_STATUSES, type Direction } from '../service/schemas.js';
import type { ErrorSpec } from './respond.js';
import type { ListFilter } from './store.js';
import { isRealDate } from './validate.js';

export interface ListQuery {
  filter: ListFilter;
  page: number;
  size: number;
  direction: Direction;
  /** Identifies (filter, direction) for the store's result cache. */
  cacheKey: string;
}

export interface ListLimits {
  pageBase: 0 | 1;
  maxPageSize: number;
}

export const DEFAULT_PAGE_SIZE = 20;
const KNOWN = new Set([
  'status',
  'credit_status',
  'created_at.from',
  'created_at.to',
  'page',
  'size',
  'direction',
]);
const DAY_MS = 86_400_000;
const DATE_TIME = /^(\d{4}-\d{2}-\d{2})T(\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/i;

type Parsed = { ok: true; query: ListQuery } | { ok: false; error: ErrorSpec };

function bad(param: string, message: string): Parsed {
  return {
    ok: false,
    error: { status: 400, type: 'invalid_request_error', code: 'parameter_invalid', message, param },
  };
}

export function parseListQuery(search: string, limits: ListLimits): Parsed {
  const raw = parse(search);
  const single: Record<string, string> = {};
  const lists: Record<string, string> = {};
  for (const [key, value] of Object.entries(raw)) {
    if (!KNOWN.has(key)) {
      return {
        ok: false,
        error: {
          status: 400,
          type: 'invalid_request_error',
          code: 'parameter_unknown',
          message: `Received unknown query parameter: ${key}.`,
          param: key,
        },
      };
    }
    const values = Array.isArray(value) ? value : [value ?? ''];
    if (key === 'status' || key === 'credit_status') lists[key] = values.join(',');
    else if (values.length > 1) return bad(key, `${key} was given more than once.`);
    else single[key] = values[0] ?? '';
  }

  const statuses = parseList('status', lists.status, CLIENT_STATUSES);
  if (!statuses.ok) return statuses.error;
  const credits = parseList('credit_status', lists.credit_status, CREDIT_STATUSES);
  if (!credits.ok) return credits.error;

  const from = single['created_at.from'];
  const fromMs = from === undefined ? null : parseInstant(from, 'from');
  if (Number.isNaN(fromMs)) return bad('created_at.from', dateMessage('created_at.from', from ?? ''));
  const to = single['created_at.to'];
  const toMs = to === undefined ? null : parseInstant(to, 'to');
  if (Number.isNaN(toMs)) return bad('created_at.to', dateMessage('created_at.to', to ?? ''));

  const page = single.page === undefined ? limits.pageBase : parseCount(single.page);
  if (page < limits.pageBase) {
    return bad(
      'page',
      `page must be an integer >= ${limits.pageBase} (pages are numbered from ${limits.pageBase}).`,
    );
  }
  const size = single.size === undefined ? DEFAULT_PAGE_SIZE : parseCount(single.size);
  if (size < 1 || size > limits.maxPageSize) {
    return bad('size', `size must be an integer from 1 to ${limits.maxPageSize}.`);
  }
  const direction = single.direction ?? 'asc';
  if (direction !== 'asc' && direction !== 'desc')
    return bad('direction', 'direction must be "asc" or "desc".');

  const filter: ListFilter = { statuses: statuses.set, creditStatuses: credits.set, fromMs, toMs };
  const cacheKey = [keyOf(statuses.set), keyOf(credits.set), fromMs, toMs, direction].join('|');
  return { ok: true, query: { filter, page, size, direction, cacheKey } };
}

function parseList(
  param: string,
  text: string | undefined,
  allowed: readonly string[],
): { ok: true; set: ReadonlySet<string> | null } | { ok: false; error: Parsed } {
  if (text === undefined) return { ok: true, set: null };
  const set = new Set<string>();
  for (const item of text.split(',')) {
    if (!allowed.includes(item)) {
      const message = `${param} has an unknown value ${JSON.stringify(item)}; use a comma-separated list of ${allowed.join(', ')}.`;
      return { ok: false, error: bad(param, message) };
    }
    set.add(item);
  }
  return { ok: true, set };
}

function keyOf(set: ReadonlySet<string> | null): string {
  return set ? [...set].sort().join(',') : '*';
}

/** A non-negative decimal integer, or -1. */
function parseCount(text: string): number {
  return /^\d{1,9}$/.test(text) ? Number(text) : -1;
}

/**
 * ISO 8601 date or date-time → ms, NaN when invalid. Bounds are inclusive, so a bare date
 * as the upper bound covers that whole day (UTC). A date-time without an offset is UTC.
 */
export function parseInstant(text: string, bound: 'from' | 'to'): number {
  if (isRealDate(text)) {
    const start = Date.parse(`${text}T00:00:00.000Z`);
    return bound === 'to' ? start + DAY_MS - 1 : start;
  }
  const match = DATE_TIME.exec(text);
  if (!match) return Number.NaN;
  const [, date = '', hh = '', mm = '', ss = '00', fraction = '', zone] = match;
  if (!isRealDate(date) || Number(hh) > 23 || Number(mm) > 59 || Number(ss) > 59) return Number.NaN;
  // Date.parse wants at most milliseconds and an offset with a colon.
  const millis = fraction.slice(1).padEnd(3, '0').slice(0, 3);
  const offset =
    zone === undefined || zone.toUpperCase() === 'Z' ? 'Z' : `${zone.slice(0, 3)}:${zone.slice(-2)}`;
  return Date.parse(`${date}T${hh}:${mm}:${ss}.${millis}${offset}`);
}

function dateMessage(param: string, value: string): string {
  const hint = value.includes(' ')
    ? " (a '+' in a query string means a space: percent-encode it as %2B)"
    : '';
  return `${param} must be an ISO 8601 date or date-time such as 2024-05-01 or 2024-05-01T12:00:00Z${hint}.`;
}
