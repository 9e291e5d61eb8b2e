/**
 * Currencies as people write them: ISO codes, the signs and short words in SIGNS (one table,
 * with the currencies each can mean: `$` and `kr` mean several and are refused with them
 * named), and the names CLDR gives in the languages of fields.ts (`Euro`, `euros`,
 * `Schweizer Franken`, `dollar canadien`, `US-Dollar`), read from Node's Intl. The names are
 * built only when a value is none of the first two (a file of codes never pays for them).
 */
import { createRequire } from 'node:module';
import { LANGUAGES } from '../fields.js';

const require = createRequire(import.meta.url);
const currencyCodes: typeof import('currency-codes') = require('currency-codes');

/**
 * Signs and short words → the currencies they mean in the languages we read. `¥` is the yen in
 * all of them (Chinese reads it as the yuan, and is not among them). One entry per currency
 * means the value is read so; several mean it is refused with them named.
 */
export const SIGNS: Readonly<Record<string, readonly string[]>> = {
  '€': ['EUR'],
  '£': ['GBP'],
  '¥': ['JPY'],
  '₹': ['INR'],
  '₽': ['RUB'],
  '₺': ['TRY'],
  '₪': ['ILS'],
  '₩': ['KRW'],
  '₫': ['VND'],
  '₴': ['UAH'],
  '₦': ['NGN'],
  '₱': ['PHP'],
  '฿': ['THB'],
  'zł': ['PLN'],
  'Kč': ['CZK'],
  'Ft': ['HUF'],
  'lei': ['RON'],
  'Fr.': ['CHF'],
  'SFr.': ['CHF'],
  'SFr': ['CHF'],
  'US$': ['USD'],
  'U$S': ['USD'],
  'C$': ['CAD'],
  'CA$': ['CAD'],
  'A$': ['AUD'],
  'AU$': ['AUD'],
  'NZ$': ['NZD'],
  'HK$': ['HKD'],
  'S$': ['SGD'],
  'R$': ['BRL'],
  'Mex$': ['MXN'],
  '$': ['USD', 'CAD', 'AUD', 'NZD', 'MXN', 'ARS'],
  'kr': ['SEK', 'NOK', 'DKK', 'ISK'],
  'kr.': ['DKK', 'ISK', 'SEK', 'NOK'],
  // Words CLDR has only as part of a longer name.
  'Franken': ['CHF'],
  'Schweizer Fr.': ['CHF'],
  'Yen': ['JPY'],
  'Złoty': ['PLN'],
  'Zloty': ['PLN'],
  'Pfund': ['GBP'],
  'Sterling': ['GBP'],
  'Dollar': ['USD', 'CAD', 'AUD', 'NZD'],
  'Dollars': ['USD', 'CAD', 'AUD', 'NZD'],
  'dólar': ['USD', 'CAD', 'AUD', 'MXN'],
  'dólares': ['USD', 'CAD', 'AUD', 'MXN'],
  'dollaro': ['USD', 'CAD', 'AUD'],
  'Krone': ['SEK', 'NOK', 'DKK', 'CZK', 'ISK'],
  'Kronen': ['SEK', 'NOK', 'DKK', 'CZK', 'ISK'],
  'couronne': ['SEK', 'NOK', 'DKK', 'CZK', 'ISK'],
  'franc': ['CHF', 'XOF', 'XAF'],
  'francs': ['CHF', 'XOF', 'XAF'],
};

/** Signs compared as written but for case and spaces; names folded further (accents, punctuation). */
const foldSign = (value: string) => value.normalize('NFC').toLowerCase().replace(/\s+/g, ' ');
export function foldCurrencyName(value: string): string {
  return value
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, '');
}

let signs: Map<string, readonly string[]> | undefined;
let singular: Map<string, Set<string>> | undefined;
let plural: Map<string, Set<string>> | undefined;

function add(index: Map<string, Set<string>>, name: string, code: string): void {
  const key = foldCurrencyName(name);
  if (key === '') return;
  const codes = index.get(key) ?? new Set<string>();
  codes.add(code);
  index.set(key, codes);
}

/** CLDR's display names (`Euro`, `Schweizer Franken`) in each language. */
function singularNames(): Map<string, Set<string>> {
  const index = new Map<string, Set<string>>();
  for (const language of LANGUAGES) {
    const names = new Intl.DisplayNames([language], { type: 'currency', fallback: 'none' });
    for (const { code, currency } of currencyCodes.data) {
      if (language === 'en') add(index, currency, code);
      const name = names.of(code);
      if (name !== undefined) add(index, name, code);
    }
  }
  return index;
}

/** CLDR's plural names (`euros`, `francs suisses`), as a number formats them: built only when needed (it is the slower half). */
function pluralNames(): Map<string, Set<string>> {
  const index = new Map<string, Set<string>>();
  for (const language of LANGUAGES) {
    for (const { code } of currencyCodes.data) {
      try {
        const format = new Intl.NumberFormat(language, { style: 'currency', currency: code, currencyDisplay: 'name' });
        const name = format.formatToParts(2).find((part) => part.type === 'currency')?.value;
        if (name !== undefined) add(index, name, code);
      } catch {
        // A code Intl does not know (a fund code): it has no plural to read.
      }
    }
  }
  return index;
}

/**
 * The currencies a value can mean: one (read so), several (refused with them named), or none.
 * ISO codes first, then SIGNS, then CLDR's names.
 */
export function readCurrencyName(value: string): readonly string[] {
  const upper = value.toUpperCase();
  if (/^[A-Z]{3}$/.test(upper) && currencyCodes.code(upper) !== undefined) return [upper];
  signs ??= new Map(Object.entries(SIGNS).map(([sign, codes]) => [foldSign(sign), codes]));
  const sign = signs.get(foldSign(value));
  if (sign !== undefined) return sign;
  const key = foldCurrencyName(value);
  if (key.length < 3) return [];
  const found = (singular ??= singularNames()).get(key) ?? (plural ??= pluralNames()).get(key);
  return found === undefined ? [] : [...found];
}

/** Every name CLDR gives, in every language (suggestions are drawn from them). */
export function everyCurrencyName(): { name: string; code: string }[] {
  singular ??= singularNames();
  plural ??= pluralNames();
  const list: { name: string; code: string }[] = [];
  for (const index of [singular, plural]) {
    for (const [name, codes] of index) if (codes.size === 1) list.push({ name, code: [...codes][0]! });
  }
  return list;
}
