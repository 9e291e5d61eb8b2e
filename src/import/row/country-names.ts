/**
 * Country names as people write them, in the languages of fields.ts: the names of
 * i18n-iso-countries (its alternates included: `USA`, `U.S.A.`, `Großbritannien`), and the
 * variants it lacks, in VARIANTS. English is loaded with the module; the other languages only
 * when a value is neither a code nor an English name (a file of codes never pays for them).
 */
import { createRequire } from 'node:module';
import { LANGUAGES, type Language } from '../fields.js';

const require = createRequire(import.meta.url);

/**
 * What people type that the dataset lacks, with the language(s) it is written in. Only names
 * of one country: `Korea` or `Congo` stay out (an ISO code says which).
 */
export const VARIANTS: readonly { name: string; code: string; languages: readonly Language[] }[] = [
  { name: 'BRD', code: 'DE', languages: ['de'] },
  { name: 'Bundesrepublik Deutschland', code: 'DE', languages: ['de'] },
  { name: 'Grossbritannien', code: 'GB', languages: ['de'] },
  { name: 'Grande-Bretagne', code: 'GB', languages: ['fr'] },
  { name: 'Gran Bretaña', code: 'GB', languages: ['es'] },
  { name: 'Gran Bretagna', code: 'GB', languages: ['it'] },
  { name: 'Grã-Bretanha', code: 'GB', languages: ['pt'] },
  { name: 'Groot-Brittannië', code: 'GB', languages: ['nl'] },
  { name: 'England', code: 'GB', languages: ['en', 'de'] },
  { name: 'Angleterre', code: 'GB', languages: ['fr'] },
  { name: 'Inglaterra', code: 'GB', languages: ['es', 'pt'] },
  { name: 'Inghilterra', code: 'GB', languages: ['it'] },
  { name: 'Engeland', code: 'GB', languages: ['nl'] },
  { name: 'Holland', code: 'NL', languages: ['en', 'de', 'nl'] },
  { name: 'Hollande', code: 'NL', languages: ['fr'] },
  { name: 'Holanda', code: 'NL', languages: ['es', 'pt'] },
  { name: 'Olanda', code: 'NL', languages: ['it'] },
  { name: 'États-Unis', code: 'US', languages: ['fr'] },
  { name: 'EEUU', code: 'US', languages: ['es'] },
  { name: 'EE.UU.', code: 'US', languages: ['es'] },
  { name: 'Stati Uniti', code: 'US', languages: ['it'] },
  { name: 'Stati Uniti d’America', code: 'US', languages: ['it'] },
  { name: 'EUA', code: 'US', languages: ['pt'] },
  { name: 'Tschechei', code: 'CZ', languages: ['de'] },
  { name: 'Türkiye', code: 'TR', languages: ['en'] },
];

/** A name's reading: the country, and the languages that call it so. */
export interface CountryReading {
  code: string;
  languages: Language[];
  /** the name as the dataset spells it (for suggestions) */
  name: string;
}

type Index = Map<string, CountryReading[]>;

/**
 * Folds a name for lookup: case, accents, spaces and punctuation (`U.S.A.` = `usa`,
 * `Cote d'Ivoire` = `Côte d’Ivoire`), ß as ss.
 */
export function foldName(value: string): string {
  return value
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/ß/g, 'ss')
    .replace(/[^\p{L}\p{N}]+/gu, '');
}

function add(index: Index, name: string, code: string, language: Language): void {
  const key = foldName(name);
  if (key === '') return;
  const readings = index.get(key) ?? [];
  const known = readings.find((r) => r.code === code);
  if (known === undefined) readings.push({ code, languages: [language], name });
  else if (!known.languages.includes(language)) known.languages.push(language);
  index.set(key, readings);
}

/** One language's names: i18n-iso-countries' JSON, read without registering it in the library. */
export function namesOf(language: Language): Record<string, string[]> {
  const data = require(`i18n-iso-countries/langs/${language}.json`) as { countries: Record<string, string | string[]> };
  return Object.fromEntries(Object.entries(data.countries).map(([code, names]) => [code, Array.isArray(names) ? names : [names]]));
}

function indexOf(languages: readonly Language[]): Index {
  const index: Index = new Map();
  for (const language of languages) {
    for (const [code, names] of Object.entries(namesOf(language))) for (const name of names) add(index, name, code, language);
  }
  for (const variant of VARIANTS) {
    for (const language of variant.languages) if (languages.includes(language)) add(index, variant.name, variant.code, language);
  }
  return index;
}

let english: Index | undefined;
let others: Index | undefined;
const OTHERS = LANGUAGES.filter((language) => language !== 'en');

/** Which languages are loaded so far (the start-up cost is measured on it). */
export function loadedLanguages(): Language[] {
  return [...(english ? (['en'] as const) : []), ...(others ? OTHERS : [])];
}

/**
 * The readings of a name: English first; the other languages only when English has none. No
 * English name means another country in another language (test/import.languages.test.ts
 * holds the dataset to that), so an English hit needs no other language to be sure.
 */
export function readCountryName(value: string): CountryReading[] {
  const key = foldName(value);
  if (key === '') return [];
  const found = (english ??= indexOf(['en'])).get(key);
  if (found !== undefined) return found;
  return (others ??= indexOf(OTHERS)).get(key) ?? [];
}

/** Every name in every language, each with its country: what suggestions are drawn from. */
export function everyCountryName(): CountryReading[] {
  english ??= indexOf(['en']);
  others ??= indexOf(OTHERS);
  return [...english.values(), ...others.values()].flat();
}
