/**
 * Resolving templates against a file's headers, and the known exports (crm-exports.ts): which
 * export a header row is, and the templates it gives each field; its address in each row's
 * country's order (address-order.ts). Pure.
 */
import { InputError } from '../../errors.js';
import { closest } from '../../infra/did-you-mean.js';
import { shownPath } from '../../infra/printable.js';
import { type Field, foldHeader } from '../fields.js';
import { ADDRESS_ORDERS, addressKindOf, DEFAULT_ORDER, orderedAddress } from './address-order.js';
import { BY_COUNTRY, type ColumnPart, type Composite, type CountryOrders, formatTemplate, parseCountryTemplate, parseTemplate, type Template } from './composite.js';
import { EXPORT_KINDS, type ExportKind } from './crm-exports.js';

/** The export a file was recognized as, as the plan keeps it. */
export interface RecognizedExport {
  /** `a Salesforce contacts report`. */
  label: string;
  /** Header prefixes of the export's other addresses (not parts left out of this one). */
  otherAddresses: readonly string[];
  /** Header prefixes of the export's own bookkeeping columns (record dates, checksums): dropped on purpose. */
  bookkeeping: readonly string[];
}

/** The column a header names: exact, else folded; -1 when none. */
export function findColumn(headers: readonly string[], folded: readonly string[], header: string): number {
  const index = headers.indexOf(header);
  return index >= 0 ? index : folded.indexOf(foldHeader(header));
}

/**
 * A --map template resolved: every part must name a column of the file. One ending in
 * ` (by country)` is a known export's address, put together in each row's country's order.
 */
export function resolveTemplate(file: string, field: Field, text: string, headers: readonly string[], line: number): Composite {
  const template = parseCountryTemplate(field, text);
  const folded = headers.map(foldHeader);
  const parts = template.parts.map((part) => {
    const column = findColumn(headers, folded, part.header);
    if (column < 0) {
      const found = headers.length === 0 ? '(none)' : headers.map((h) => JSON.stringify(h)).join(', ');
      const near = closest(part.header, headers);
      const hint = near === undefined ? '' : ` (did you mean ${JSON.stringify(near)}?)`;
      throw new InputError(`${shownPath(file)}: --map ${field}=${text}: no column ${JSON.stringify(part.header)}${hint}; headers found: ${found}`, 'map_unknown_header', {
        file,
        line,
      });
    }
    return { ...part, header: headers[column]!, column };
  });
  const kind = template.byCountry ? addressKindOf(parts.map((part) => part.header)) : undefined;
  if (kind === undefined) return withText({ lead: template.lead, parts });
  // The parts the template names, each in its place in every order.
  return countryAddress(kind, headers, new Set(), new Set(parts.map((part) => part.column)))!;
}

/** The first export kind whose signature headers are all in the file. */
export function recognizeExport(headers: readonly string[]): ExportKind | undefined {
  const folded = new Set(headers.map(foldHeader));
  return EXPORT_KINDS.find((kind) => kind.signature.every((header) => folded.has(foldHeader(header))));
}

/**
 * The templates an export kind gives each field, with the parts the file lacks (or another
 * field already takes) left out; a field none of whose parts is there is left to the header words.
 */
export function exportTemplates(kind: ExportKind, headers: readonly string[], taken: ReadonlySet<number>): Partial<Record<Field, Composite>> {
  const folded = headers.map(foldHeader);
  const wanted: [Field, string][] = [
    ['name', kind.name],
    ['country', `{${kind.country}}`],
  ];
  if (kind.email !== undefined) wanted.push(['email', `{${kind.email}}`]);
  const found: Partial<Record<Field, Composite>> = {};
  for (const [field, text] of wanted) {
    const template = parseTemplate(field, text);
    const parts = template.parts.flatMap((part) => {
      const column = findColumn(headers, folded, part.header);
      return column < 0 || taken.has(column) ? [] : [{ ...part, header: headers[column]!, column }];
    });
    if (parts.length > 0) found[field] = withText({ lead: template.lead, parts: keepSeparators(template, parts) });
  }
  const address = countryAddress(kind, headers, taken);
  if (address !== undefined) found.address = address;
  return found;
}

/**
 * An export's address: its parts the file has (and no other field takes; `only`: those a
 * template names), in the default order, and in each country's order where the file has the
 * address's country column. Undefined when none of its parts is there.
 */
function countryAddress(kind: ExportKind, headers: readonly string[], taken: ReadonlySet<number>, only?: ReadonlySet<number>): Composite | undefined {
  const folded = headers.map(foldHeader);
  const inOrder = (order: (typeof ADDRESS_ORDERS)[number]) => {
    const template = parseTemplate('address', orderedAddress(kind, order));
    const parts = template.parts.flatMap((part) => {
      const column = findColumn(headers, folded, part.header);
      return column < 0 || taken.has(column) || (only !== undefined && !only.has(column)) ? [] : [{ ...part, header: headers[column]!, column }];
    });
    return { lead: template.lead, parts: parts.length === 0 ? [] : keepSeparators(template, parts) };
  };
  const base = inOrder(DEFAULT_ORDER);
  if (base.parts.length === 0) return undefined;
  const country = findColumn(headers, folded, kind.country);
  if (country < 0) return withText(base);
  const orders = Object.fromEntries(ADDRESS_ORDERS.map((order) => [order, inOrder(order)])) as CountryOrders['orders'];
  return withText({ ...base, byCountry: { country, orders } });
}

/**
 * A template's parts with some left out: each kept part keeps the text after it, as a row's
 * empty part drops with its own separator (composite.ts); the last keeps the template's tail.
 */
function keepSeparators(template: Template, kept: ColumnPart[]): ColumnPart[] {
  const tail = template.parts[template.parts.length - 1]!.after;
  return kept.map((part, index) => {
    if (index === kept.length - 1) return { ...part, after: tail };
    const own = template.parts.find((p) => foldHeader(p.header) === foldHeader(part.header));
    return { ...part, after: own?.after ?? ' ' };
  });
}

/** The template as --map takes it back: an address in each country's order ends in ` (by country)`. */
function withText(template: Omit<Composite, 'template'>): Composite {
  return { ...template, template: template.byCountry === undefined ? formatTemplate(template) : `${formatTemplate(template)} ${BY_COUNTRY}` };
}

/** The plan's record of a recognized export. */
export function recognizedOf(kind: ExportKind): RecognizedExport {
  return { label: kind.label, otherAddresses: kind.otherAddresses ?? [], bookkeeping: kind.bookkeeping ?? [] };
}
