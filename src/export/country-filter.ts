/**
 * `--country DE,FR`: the service's List Clients has no country parameter, so the whole window
 * is paged and the clients of other countries are dropped here, before the writer. A value is
 * an ISO 3166 alpha-2 code or a country's name as import reads one (`Germany`, `Deutschland`).
 */
import { UsageError } from '../errors.js';
import { didYouMean } from '../infra/did-you-mean.js';
import { namesOf, readCountryName } from '../import/row/country-names.js';
import { suggestCountry } from '../import/row/suggest.js';
import type { Client } from '../service/schemas.js';

let codes: ReadonlySet<string> | undefined;

/** The ISO alpha-2 codes, from the names table import uses. */
function isoCodes(): ReadonlySet<string> {
  return (codes ??= new Set(Object.keys(namesOf('en'))));
}

/** One `--country` value → its alpha-2 code; an unknown or ambiguous one is a UsageError. */
export function readCountry(value: string, label: string): string {
  const upper = value.toUpperCase();
  if (/^[A-Z]{2}$/.test(upper)) {
    if (isoCodes().has(upper)) return upper;
    throw new UsageError(`${label}: "${value}" is not an ISO 3166 country code${didYouMean(upper, [...isoCodes()])}`, 'bad_option');
  }
  const readings = [...new Set(readCountryName(value).map((reading) => reading.code))];
  if (readings.length === 1) return readings[0]!;
  if (readings.length > 1) {
    throw new UsageError(`${label}: "${value}" names more than one country (${readings.join(', ')}): give the code`, 'bad_option');
  }
  const near = suggestCountry(value);
  const hint = near === undefined ? '' : ` (did you mean ${near}?)`;
  throw new UsageError(`${label}: unknown country "${value}"${hint}: give an ISO code (DE, FR) or a country's name`, 'bad_option');
}

/** The clients of the countries asked for; all of them when none were. */
export function keepCountries(countries: readonly string[] | undefined): ((clients: Client[]) => Client[]) | undefined {
  if (countries === undefined) return undefined;
  const wanted = new Set(countries);
  return (clients) => clients.filter((client) => wanted.has((client.country ?? '').toUpperCase()));
}
