/**
 * "Did you mean …?" for a value that failed its check: the one known value nearest to it, by
 * edit distance with adjacent swaps counted as one edit (`Untied` → `United`, `gmial` →
 * `gmail`). Only ever part of a message: the row stays invalid until a person fixes it.
 * Called only for values already rejected, so the valid rows of a large file pay nothing.
 */
import { createRequire } from 'node:module';
import { editDistance } from '../../infra/did-you-mean.js';
import { countries, memoize } from './normalize.js';
import { everyCountryName } from './country-names.js';
import { everyCurrencyName, foldCurrencyName, readCurrencyName } from './currency-names.js';

export { editDistance };

const require = createRequire(import.meta.url);
const currencyCodes: typeof import('currency-codes') = require('currency-codes');

/**
 * How far a value of this length may be from its suggestion: one edit up to 5 characters,
 * two up to 9, three beyond. Tighter would miss `Untied Sttes`; looser suggests noise.
 */
export function allowedDistance(length: number): number {
  return length <= 5 ? 1 : length <= 9 ? 2 : 3;
}

export interface Candidate {
  /** what the value is compared with: lower case, spaces collapsed */
  key: string;
  /** what the message says: `Germany (DE)`, `EUR` */
  label: string;
  /** candidates with the same target are one answer, not a tie */
  target: string;
  /** letters present (letterMask): a cheap lower bound that skips most candidates */
  mask?: number;
}

/** Which of a-z (bits 0-25), and whether any other character (bit 26), the text holds. */
export function letterMask(text: string): number {
  let mask = 0;
  for (let i = 0; i < text.length; i++) {
    const letter = text.charCodeAt(i) - 97;
    mask |= letter >= 0 && letter < 26 ? 1 << letter : 1 << 26;
  }
  return mask;
}

function bits(value: number): number {
  let count = 0;
  for (let v = value; v !== 0; v &= v - 1) count++;
  return count;
}

const fold = (value: string) => value.trim().toLowerCase().replace(/\s+/g, ' ');

/**
 * The nearest candidate's label, when exactly one target is nearest and within the allowed
 * distance; else undefined (two equally near answers are a guess, not a suggestion).
 */
export function nearest(value: string, candidates: ByLength, foldValue: (value: string) => string = fold): string | undefined {
  const key = foldValue(value);
  const mask = letterMask(key);
  let best = allowedDistance(key.length);
  let found: Candidate | undefined;
  let tied = false;
  // Only candidates whose length is within reach: the distance is at least the difference.
  for (let length = key.length - best; length <= key.length + best; length++) {
    for (const candidate of candidates[length] ?? []) {
      // Each letter one side has and the other lacks costs an edit at least.
      const other = (candidate.mask ??= letterMask(candidate.key));
      if (Math.max(bits(mask & ~other), bits(other & ~mask)) > best) continue;
      const distance = editDistance(key, candidate.key, best);
      if (distance > best) continue;
      if (found !== undefined && distance === best && candidate.target !== found.target) tied = true;
      else if (found === undefined || distance < best) [found, tied] = [candidate, false];
      best = distance;
    }
  }
  return found === undefined || tied ? undefined : found.label;
}

/** Candidates indexed by the length of their key. */
export type ByLength = Candidate[][];

function byLength(candidates: readonly Candidate[]): ByLength {
  const index: ByLength = [];
  for (const candidate of candidates) (index[candidate.key.length] ??= []).push(candidate);
  return index;
}

/**
 * Every name in every language we read (alternates included) and alpha-3 code; alpha-2 codes
 * are too dense to guess between. A name two countries share is no candidate.
 */
function countryCandidates(): Candidate[] {
  const list: Candidate[] = [];
  const names = everyCountryName();
  const codes = new Set(names.map((reading) => reading.code));
  for (const { name, code } of names) list.push({ key: fold(name), label: `${name} (${code})`, target: code });
  for (const alpha2 of codes) {
    const alpha3 = countries.alpha2ToAlpha3(alpha2);
    if (alpha3 !== undefined) list.push({ key: alpha3.toLowerCase(), label: alpha2, target: alpha2 });
  }
  return list;
}

/** Codes and the names in every language we read (`Euro`, `Schweizer Franken`), folded: `EURO` and `euross` → `EUR`. */
function currencyCandidates(): Candidate[] {
  return [
    ...currencyCodes.data.map(({ code }) => ({ key: code.toLowerCase(), label: code, target: code })),
    ...everyCurrencyName().map(({ name, code }) => ({ key: name, label: code, target: code })),
  ];
}

let countryList: ByLength | undefined;
let currencyList: ByLength | undefined;

/** `Germny` → `Germany (DE)`, `Deutschalnd` → `Deutschland (DE)`; 2-letter values get none. */
export const suggestCountry = memoize((value) =>
  value.trim().length < 3 ? undefined : nearest(value, (countryList ??= byLength(countryCandidates()))),
);

/** `EURO` → `EUR`, `euros` → `EUR`, `Pund Sterling` → `GBP`. */
export const suggestCurrency = memoize((value) =>
  // A word that means several currencies (`Dollar`) is named with them, not guessed at.
  value.trim().length < 3 || readCurrencyName(value).length > 1
    ? undefined
    : nearest(value, (currencyList ??= byLength(currencyCandidates())), foldCurrencyName),
);
