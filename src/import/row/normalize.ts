/**
 * Value normalizers for row checks: each returns the normalized value or undefined.
 * Countries and currencies come from maintained datasets, not hand-typed tables.
 */
import { createRequire } from 'node:module';
import { readCountryName } from './country-names.js';
import { readCurrencyName } from './currency-names.js';
import { type DateOrder, readDate } from './dates.js';

const require = createRequire(import.meta.url);
// The library without its Node entry, which registers all 80 languages (40 ms of every start):
// its codes here; the names of the languages we read are loaded by country-names.ts, when used.
export const countries: typeof import('i18n-iso-countries') = require('i18n-iso-countries/index.js');

export type { DateFormat } from './dates.js';

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

/**
 * ISO 3166-1 alpha-2 or alpha-3 (any case), or a name in one of the languages we read
 * (country-names.ts) → alpha-2. A name that means two countries is none (the message says which).
 */
export const toCountryCode = memoize((value) => {
  const upper = value.toUpperCase();
  if (upper.length === 2 && countries.isValid(upper)) return upper;
  if (upper.length === 3 && /^[A-Z]{3}$/.test(upper)) {
    const alpha2 = countries.alpha3ToAlpha2(upper);
    if (alpha2) return alpha2;
  }
  const readings = readCountryName(value);
  return readings.length === 1 ? readings[0]!.code : undefined;
});

/**
 * An ISO 4217 code (any case), or a sign or name people write (currency-names.ts) → the code.
 * A sign that means several currencies (`$`, `kr`) is none (the message names them).
 */
export const toCurrencyCode = memoize((value) => {
  const codes = readCurrencyName(value);
  return codes.length === 1 ? codes[0] : undefined;
});

/** A date as the run reads it (dates.ts) → YYYY-MM-DD, or undefined. */
export function toIsoDate(value: string, order: DateOrder): string | undefined {
  const read = readDate(value, order);
  return 'iso' in read ? read.iso : undefined;
}

/**
 * Undoes the formula-injection escape of the files ccs-bulk writes (export, results, --failed):
 * a cell written as `'=…`, or with `;'=…` after a separator, is read back without that quote.
 * The rule lives beside the escape, so the two stay each other's inverse.
 */
export { unescapeFormula } from '../../export/escape.js';
