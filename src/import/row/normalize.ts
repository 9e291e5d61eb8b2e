/**
 * Value normalizers for row checks: each returns the normalized value or undefined.
 * Countries and currencies come from maintained datasets, not hand-typed tables.
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
// The library without its Node entry, which registers all 80 languages (40 ms of every start);
// only English is used.
export const countries: typeof import('i18n-iso-countries') = require('i18n-iso-countries/index.js');
countries.registerLocale(require('i18n-iso-countries/langs/en.json'));
// CommonJS without a default export in its types.
const currencyCodes: typeof import('currency-codes') = require('currency-codes');

export type DateFormat = 'YYYY-MM-DD' | 'DD/MM/YYYY' | 'MM/DD/YYYY';

/**
 * Memoizes a lookup: a file holds few distinct countries and currencies, and the name lookup
 * scans the whole dataset. Bounded, so a file of random junk cannot grow it without limit.
 */
export function memoize(lookup: (value: string) => string | undefined): (value: string) => string | undefined {
  const cache = new Map<string, string | undefined>();
  return (value) => {
    const known = cache.get(value);
    if (known !== undefined || cache.has(value)) return known;
    const result = lookup(value);
    if (cache.size >= 10_000) cache.clear();
    cache.set(ownCopy(value), result);
    return result;
  };
}

/**
 * The same text in a string of its own. A value cut from a larger string (the reader thread
 * sends a batch as one) can be a slice that keeps the whole batch alive: a cached key must
 * not. UTF-16 both ways keeps every code unit, lone surrogates included.
 */
function ownCopy(value: string): string {
  return value.length < 13 ? value : Buffer.from(value, 'utf16le').toString('utf16le');
}

/** ISO 3166-1 alpha-2, alpha-3 or an English name (any case) → alpha-2. */
export const toCountryCode = memoize((value) => {
  const upper = value.toUpperCase();
  if (upper.length === 2) return countries.isValid(upper) ? upper : undefined;
  if (upper.length === 3 && /^[A-Z]{3}$/.test(upper)) return countries.alpha3ToAlpha2(upper) || undefined;
  return countries.getAlpha2Code(value, 'en') || undefined;
});

/** ISO 4217 alphabetic code (any case) → upper case. */
export const toCurrencyCode = memoize((value) => {
  const upper = value.toUpperCase();
  return /^[A-Z]{3}$/.test(upper) && currencyCodes.code(upper) !== undefined ? upper : undefined;
});

const ISO_DATE = /^(\d{4})-(\d{1,2})-(\d{1,2})(?:[T ][\d:.]+(?:Z|[+-]\d\d:?\d\d)?)?$/;
const SLASHED = /^(\d{1,2})[/.-](\d{1,2})[/.-](\d{4})$/;

/**
 * A real calendar date → YYYY-MM-DD. ISO dates are always accepted (spreadsheet date cells
 * arrive as ISO); --date-format adds one day-first or month-first form.
 */
export function toIsoDate(value: string, format: DateFormat): string | undefined {
  let year: number;
  let month: number;
  let day: number;
  const iso = ISO_DATE.exec(value);
  const slashed = iso ? null : format !== 'YYYY-MM-DD' ? SLASHED.exec(value) : null;
  if (iso) {
    [year, month, day] = [Number(iso[1]), Number(iso[2]), Number(iso[3])];
  } else if (slashed) {
    const [a, b] = [Number(slashed[1]), Number(slashed[2])];
    [day, month] = format === 'DD/MM/YYYY' ? [a, b] : [b, a];
    year = Number(slashed[3]);
  } else {
    return undefined;
  }
  const date = new Date(Date.UTC(year, month - 1, day));
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day)
    return undefined;
  return `${String(year).padStart(4, '0')}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
}

/**
 * Undoes the formula-injection escape of the files ccs-bulk writes (export, results, --failed):
 * a cell written as `'=…`, or with `;'=…` after a separator, is read back without that quote.
 * The rule lives beside the escape, so the two stay each other's inverse.
 */
export { unescapeFormula } from '../../export/escape.js';
