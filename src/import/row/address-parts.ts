/**
 * No partial address, quietly: a file with city or postal-code columns besides what feeds
 * `address` would send the street without them. Those columns are found by the words of their
 * headers (a table, in every language read), wherever the word stands: `Mailing City`,
 * `Ort geschäftlich`, `Address 1 - Postal Code`. Pure.
 */
import { shellQuote } from '../../cli/resume-command.js';
import { InputError } from '../../errors.js';
import { shownPath } from '../../infra/printable.js';
import { foldHeader, type Language } from '../fields.js';
import { type ColumnPlan, usedColumns } from './columns.js';
import { describeParts, formatTemplate } from './composite.js';

/** What an address part's column is headed, by part, in the languages read (any of them matches). */
export const ADDRESS_PART_WORDS: Record<'city' | 'postal', readonly string[]> = {
  city: [
    'city', 'town', 'ort', 'stadt', 'wohnort', 'ville', 'localité', 'commune', 'ciudad', 'localidad', 'población', 'città',
    'località', 'comune', 'cidade', 'localidade', 'plaats', 'woonplaats', 'stad',
  ],
  postal: [
    'zip', 'zip code', 'zipcode', 'postal code', 'postcode', 'post code', 'plz', 'postleitzahl', 'code postal', 'cp',
    'código postal', 'cap', 'codice postale', 'cep',
  ],
};

/** A header's words: accents, case and punctuation folded, camelCase split (`MailingCity` → mailing city). */
function words(header: string): string[] {
  return header
    .replace(/(\p{Ll})(\p{Lu})/gu, '$1 $2')
    .split(/[^\p{L}\p{N}]+/u)
    .map(foldHeader)
    .filter((word) => word !== '');
}

const PHRASES = Object.entries(ADDRESS_PART_WORDS).flatMap(([part, list]) => list.map((phrase) => ({ part, phrase: words(phrase) })));

/** Whether a header names a city or a postal code: one of the table's phrases among its words. */
export function isAddressPart(header: string): boolean {
  const found = words(header);
  return PHRASES.some(({ phrase }) => found.some((_, at) => phrase.every((word, i) => found[at + i] === word)));
}

/** City and postal-code columns the address leaves out. */
export interface PartialAddress {
  /** What feeds the address now, as the plan names it: `"Street Address"`. */
  address: string;
  /** The left-out columns' headers, in file order. */
  columns: string[];
  /** The --map that would take them in. */
  map: string;
}

/**
 * The city and postal-code columns no field takes, not dropped on purpose (`ignored`) and not
 * another address of a recognized export (`Home City` beside the business address).
 */
export function findPartialAddress(plan: ColumnPlan, ignored: ReadonlySet<number>): PartialAddress | undefined {
  const column = plan.columns.address;
  if (column === undefined) return undefined;
  const taken = usedColumns(plan);
  const others = (plan.recognized?.otherAddresses ?? []).map(foldHeader);
  const left = plan.headers.flatMap((header, index) => {
    if (taken.has(index) || ignored.has(index) || header.trim() === '' || !isAddressPart(header)) return [];
    return others.some((prefix) => foldHeader(header).startsWith(prefix)) ? [] : [index];
  });
  if (left.length === 0) return undefined;
  const composite = plan.composites.address;
  // An address in each country's order is extended as the fixed template of its default order.
  const template = formatTemplate(composite ?? { lead: '', parts: [{ header: plan.headers[column]!, after: '' }] });
  const address = composite === undefined ? JSON.stringify(plan.headers[column]) : describeParts(composite);
  const added = orderParts(left.map((index) => plan.headers[index]!), plan.language);
  const map = `${template}, ${formatTemplate({ lead: '', parts: added.map((header, i) => ({ header, after: i === added.length - 1 ? '' : ' ' })) })}`;
  return { address, columns: left.map((index) => plan.headers[index]!), map };
}

/** Postal code before the city in the languages of Europe, after it in English. */
function orderParts(headers: string[], language: Language): string[] {
  const postal = (header: string) => ADDRESS_PART_WORDS.postal.some((phrase) => isPhraseOf(header, phrase));
  const [first, second] = language === 'en' ? [(h: string) => !postal(h), postal] : [postal, (h: string) => !postal(h)];
  return [...headers.filter(first), ...headers.filter(second)];
}

function isPhraseOf(header: string, phrase: string): boolean {
  const found = words(header);
  const wanted = words(phrase);
  return found.some((_, at) => wanted.every((word, i) => found[at + i] === word));
}

/** The stop: what is left out, and both ways on (send it, or drop it on purpose). */
export function partialAddressError(file: string, partial: PartialAddress): InputError {
  const { send, drop } = partialAddressFixes(partial);
  const many = partial.columns.length > 1;
  return new InputError(
    `${shownPath(file)}: the address is ${partial.address} only, but ${many ? 'columns' : 'column'} ` +
      `${partial.columns.map((header) => JSON.stringify(header)).join(', ')} ${many ? 'hold' : 'holds'} part of an address too; ` +
      `nothing was sent (the import would send addresses without ${many ? 'them' : 'it'}). To send ${many ? 'them' : 'it'}: ${send}; ` +
      `to drop ${many ? 'them' : 'it'} on purpose: ${drop}`,
    'unmapped_field_column',
    { file },
  );
}

/** The flags that settle a partial address, as they would be typed. */
export function partialAddressFixes(partial: PartialAddress): { send: string; drop: string } {
  return {
    send: `--map ${shellQuote(`address=${partial.map}`)}`,
    drop: partial.columns.map((header) => `--ignore-column ${shellQuote(header)}`).join(' '),
  };
}
