/**
 * Fields built from several columns: `name={First Name} {Last Name}`. A template is text with
 * column headers in braces (`{{` and `}}` are literal braces); a row's value is its parts'
 * cells joined by the text between them, where an empty part drops with its separator and
 * runs of white space become one space. Pure: parsing, composing and describing.
 */
import { UsageError } from '../../errors.js';
import type { Field } from '../fields.js';
import { addressKindOf, type AddressOrder, addressOrderOf } from './address-order.js';
import { toCountryCode, unescapeFormula } from './normalize.js';

/** A template as parsed, before its headers are looked up in a file. */
export interface Template {
  /** Text before the first part (kept only when that part is). */
  lead: string;
  /** Each part's header, and the text after it: the separator to the next kept part, or the tail. */
  parts: { header: string; after: string }[];
}

/** A template part resolved against a file's headers: its column index. */
export interface ColumnPart {
  header: string;
  after: string;
  column: number;
}

/** A template resolved against a file's headers: each part's column index. */
export interface Composite extends Template {
  /** The template as --map takes it, with the file's own headers. */
  template: string;
  parts: ColumnPart[];
  /** A known export's address, in the order of each row's country; `lead` and `parts` are then the default order's. */
  byCountry?: CountryOrders | undefined;
}

/** The same address parts in each country's order (address-order.ts), and where a row's country is. */
export interface CountryOrders {
  /** The column of the address's country. */
  country: number;
  orders: Record<AddressOrder, { lead: string; parts: ColumnPart[] }>;
}

/**
 * Written after a known export's address template (`{Mailing Street}, {Mailing City} … (by
 * country)`): the parts are put together in each row's country's order, not as written. The
 * form --save-mapping keeps a recognized export's address in.
 */
export const BY_COUNTRY = '(by country)';

/** A template without its ` (by country)` mark, and whether it had one. */
export function splitByCountry(text: string): { text: string; byCountry: boolean } {
  const mark = /(?<=\})\s*\(by country\)\s*$/.exec(text);
  return mark === null ? { text, byCountry: false } : { text: text.slice(0, mark.index), byCountry: true };
}

/** Whether a --map value is a template (holds a brace) rather than one header. */
export function isTemplate(text: string): boolean {
  return text.includes('{') || text.includes('}');
}

/**
 * Parses `{First Name} {Last Name}`. Unbalanced or nested braces, an empty `{}` and a template
 * with no part are usage errors, raised before the file is opened.
 */
export function parseTemplate(field: Field | string, text: string): Template {
  const bad = (why: string) => new UsageError(`--map ${field}=${text}: ${why}; write each column as {Header}, e.g. --map 'name={First Name} {Last Name}'`, 'bad_option');
  let lead = '';
  const parts: Template['parts'] = [];
  let literal = '';
  for (let i = 0; i < text.length; i++) {
    const char = text[i]!;
    if ((char === '{' || char === '}') && text[i + 1] === char) {
      literal += char;
      i++;
    } else if (char === '}') {
      throw bad(`a "}" at character ${i + 1} closes no "{"`);
    } else if (char === '{') {
      const { header, end } = readPart(text, i, bad);
      if (header.trim() === '') throw bad(`"{}" at character ${i + 1} names no column`);
      if (parts.length === 0) lead = literal;
      else parts[parts.length - 1]!.after = literal;
      literal = '';
      parts.push({ header, after: '' });
      i = end;
    } else literal += char;
  }
  if (parts.length === 0) throw bad('it names no column');
  parts[parts.length - 1]!.after = literal;
  return { lead, parts };
}

/** The header of the part opened at `start` (doubled braces in it are literal ones), and where it closes. */
function readPart(text: string, start: number, bad: (why: string) => UsageError): { header: string; end: number } {
  let header = '';
  for (let i = start + 1; i < text.length; i++) {
    const char = text[i]!;
    if ((char === '{' || char === '}') && text[i + 1] === char) {
      header += char;
      i++;
    } else if (char === '}') return { header, end: i };
    else if (char === '{') throw bad(`the "{" at character ${start + 1} is not closed before the next "{"`);
    else header += char;
  }
  throw bad(`the "{" at character ${start + 1} is not closed`);
}

/** Writes a template back as --map takes it (braces in headers or text doubled). */
export function formatTemplate(template: Template): string {
  const text = (value: string) => value.replace(/[{}]/g, (brace) => brace + brace);
  return text(template.lead) + template.parts.map((part) => `{${text(part.header)}}${text(part.after)}`).join('');
}

/**
 * One row's value: the non-empty parts (trimmed, a formula escape undone), each joined to the
 * next by the text after it; the lead and the tail only beside the part they touch. All parts
 * empty (white space counts as empty) gives '': the field is empty, as an empty cell is.
 */
export function composeValue(composite: Composite, values: readonly string[]): string {
  return joinParts(composite.byCountry === undefined ? composite : inCountryOrder(composite.byCountry, values), values);
}

/** The parts in the order of the row's country, read as the country field is (an ISO code, or a name). */
function inCountryOrder(orders: CountryOrders, values: readonly string[]): CountryOrders['orders'][AddressOrder] {
  const cell = unescapeFormula(values[orders.country] ?? '').trim();
  return orders.orders[addressOrderOf(cell === '' ? undefined : toCountryCode(cell))];
}

function joinParts(composite: Pick<Composite, 'lead' | 'parts'>, values: readonly string[]): string {
  let out = '';
  let separator = '';
  let first = false;
  let last = false;
  composite.parts.forEach((part, index) => {
    const value = unescapeFormula(values[part.column] ?? '').trim();
    last = false;
    if (value === '') return;
    if (out === '') first = index === 0;
    else out += separator;
    out += value;
    separator = part.after;
    last = true;
  });
  if (out === '') return '';
  const tail = composite.parts[composite.parts.length - 1]!.after;
  return `${first ? composite.lead : ''}${out}${last ? tail : ''}`.replace(/\s+/g, ' ').trim();
}

/**
 * `"First Name" + "Last Name"`; a part's separator shown where it is more than a space. An
 * address in each country's order is its parts and that: `"Mailing Street", "Mailing City",
 * … (in each country's order)`.
 */
export function describeParts(composite: Template & Pick<Composite, 'byCountry'>): string {
  if (composite.byCountry !== undefined) return `${composite.parts.map((part) => JSON.stringify(part.header)).join(', ')} (in each country's order)`;
  return composite.parts
    .map((part, index) => {
      const after = index < composite.parts.length - 1 ? part.after.trim() : '';
      return `${JSON.stringify(part.header)}${after === '' ? '' : after}`;
    })
    .join(composite.parts.some((part) => part.after.trim() !== '') ? ' ' : ' + ');
}

/** One sample: the composed value and the cells it came from (`"Ana Souza" ← "Ana" + "Souza"`). */
export interface CompositeSample {
  /** The value the row sends. */
  value: string;
  /** Each part's cell, as the file has it (trimmed). */
  parts: string[];
}

/** `"Ana Souza" ← "Ana" + "Souza"` (an empty cell shows as ""). */
export function describeSample(sample: CompositeSample): string {
  return `${JSON.stringify(sample.value)} ← ${sample.parts.map((part) => JSON.stringify(part)).join(' + ')}`;
}

/** A field built from several columns, as the plan, the summary and the review page show it. */
export interface CompositeField {
  /** The template, as --map takes it: `{First Name} {Last Name}`. */
  template: string;
  /** The headers of the columns it joins, in order. */
  parts: string[];
  /** The parts as the plan names them: `"First Name" + "Last Name"`. */
  described: string;
  /** The first rows' results, each with the cells it came from. */
  samples: CompositeSample[];
}

/** Checks every template of a map (field → header or template) before anything is read. */
export function checkTemplates(map: Readonly<Partial<Record<Field, string>>>): void {
  for (const [field, text] of Object.entries(map)) if (isTemplate(text)) parseCountryTemplate(field, text);
}

/**
 * Parses a template that may end in ` (by country)`; one that does must be the address, built
 * of one known export's address parts (address-order.ts), whose roles the export's table gives.
 */
export function parseCountryTemplate(field: Field | string, text: string): Template & { byCountry: boolean } {
  const split = splitByCountry(text);
  const template = parseTemplate(field, split.text);
  if (!split.byCountry) return { ...template, byCountry: false };
  const bad = (why: string) => new UsageError(`--map ${field}=${text}: ${why}; write the parts in the order to send them, without "${BY_COUNTRY}"`, 'bad_option');
  if (field !== 'address') throw bad(`"${BY_COUNTRY}" orders an address only`);
  if (addressKindOf(template.parts.map((part) => part.header)) === undefined) {
    throw bad(`"${BY_COUNTRY}" orders the address parts of a known export (its street, city, region and postal-code columns), and these are not one export's`);
  }
  return { ...template, byCountry: true };
}
