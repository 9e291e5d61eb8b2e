/**
 * "Did you mean …?" for a value that failed its check: the one known value nearest to it, by
 * edit distance with adjacent swaps counted as one edit (`Untied` → `United`, `gmial` →
 * `gmail`). Only ever part of a message: the row stays invalid until a person fixes it.
 * Called only for values already rejected, so the valid rows of a large file pay nothing.
 */
import { createRequire } from 'node:module';
import countries from 'i18n-iso-countries';
import { memoize } from './normalize.js';

const require = createRequire(import.meta.url);
const currencyCodes: typeof import('currency-codes') = require('currency-codes');

/**
 * Edit distance between `a` and `b` (insert, delete, substitute, swap two adjacent
 * characters: the optimal-string-alignment Damerau-Levenshtein), or `max + 1` once it must
 * exceed `max`. Three rolling rows; stops early when a whole row is over the bound.
 */
export function editDistance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let before = new Array<number>(b.length + 1).fill(0);
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  let current = new Array<number>(b.length + 1).fill(0);
  for (let i = 1; i <= a.length; i++) {
    current[0] = i;
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a.charCodeAt(i - 1) === b.charCodeAt(j - 1) ? 0 : 1;
      let value = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) value = Math.min(value, before[j - 2]! + 1);
      current[j] = value;
      if (value < rowMin) rowMin = value;
    }
    if (rowMin > max) return max + 1;
    [before, previous, current] = [previous, current, before];
  }
  return Math.min(previous[b.length]!, max + 1);
}

/**
 * How far a value of this length may be from its suggestion: one edit up to 5 characters,
 * two up to 9, three beyond. Tighter would miss `Untied Sttes`; looser suggests noise.
 */
export function allowedDistance(length: number): number {
  return length <= 5 ? 1 : length <= 9 ? 2 : 3;
}

interface Candidate {
  /** what the value is compared with: lower case, spaces collapsed */
  key: string;
  /** what the message says: `Germany (DE)`, `EUR` */
  label: string;
  /** candidates with the same target are one answer, not a tie */
  target: string;
}

const fold = (value: string) => value.trim().toLowerCase().replace(/\s+/g, ' ');

/**
 * The nearest candidate's label, when exactly one target is nearest and within the allowed
 * distance; else undefined (two equally near answers are a guess, not a suggestion).
 */
export function nearest(value: string, candidates: readonly Candidate[]): string | undefined {
  const key = fold(value);
  let best = allowedDistance(key.length);
  let found: Candidate | undefined;
  let tied = false;
  for (const candidate of candidates) {
    const distance = editDistance(key, candidate.key, best);
    if (distance > best) continue;
    if (found !== undefined && distance === best && candidate.target !== found.target) tied = true;
    else if (found === undefined || distance < best) [found, tied] = [candidate, false];
    best = distance;
  }
  return found === undefined || tied ? undefined : found.label;
}

/** Every English name (alternates included) and alpha-3 code; alpha-2 codes are too dense to guess between. */
function countryCandidates(): Candidate[] {
  const list: Candidate[] = [];
  for (const [alpha2, names] of Object.entries(countries.getNames('en', { select: 'all' }))) {
    for (const name of names) list.push({ key: fold(name), label: `${name} (${alpha2})`, target: alpha2 });
    const alpha3 = countries.alpha2ToAlpha3(alpha2);
    if (alpha3 !== undefined) list.push({ key: alpha3.toLowerCase(), label: alpha2, target: alpha2 });
  }
  return list;
}

/** Codes and the dataset's names (`Euro`, `Pound Sterling`): `EURO` and `euros` → `EUR`. */
function currencyCandidates(): Candidate[] {
  return currencyCodes.data.flatMap(({ code, currency }) => [
    { key: code.toLowerCase(), label: code, target: code },
    { key: fold(currency), label: code, target: code },
  ]);
}

let countryList: Candidate[] | undefined;
let currencyList: Candidate[] | undefined;

/** `Germny` → `Germany (DE)`, `Untied States` → `United States (US)`; 2-letter values get none. */
export const suggestCountry = memoize((value) =>
  value.trim().length < 3 ? undefined : nearest(value, (countryList ??= countryCandidates())),
);

/** `EURO` → `EUR`, `euros` → `EUR`, `Pund Sterling` → `GBP`. */
export const suggestCurrency = memoize((value) =>
  value.trim().length < 3 ? undefined : nearest(value, (currencyList ??= currencyCandidates())),
);
