/**
 * The order an address's last lines run in, by country: a recognized export's address is put
 * together in the order of each row's own country (its ISO code, read as the country field
 * is), not in one order for the whole file. One table, the countries each order is for; any
 * other country, and a row whose country cannot be read, gets the default. Pure.
 */
import { foldHeader } from '../fields.js';
import { EXPORT_KINDS, type ExportKind } from './crm-exports.js';

/**
 * `city-region-postal`: street, city, region and postal code (`5 Main St, Boston, MA 02110`);
 * `postal-city`: street, postal code and city, then the region (`Hauptstr. 5, 10115 Berlin`);
 * `city-postal-line`: street, town, county, and the postcode on its own (`1 High St, Leeds, LS1 4AP`).
 */
export type AddressOrder = 'city-region-postal' | 'postal-city' | 'city-postal-line';

/** Every order, the default first. */
export const ADDRESS_ORDERS: readonly AddressOrder[] = ['city-region-postal', 'postal-city', 'city-postal-line'];

/**
 * North America's and Australia's order (US, CA, AU), and the one for any country not listed
 * below: it is also how most of the rest of the world writes city, region and postal code.
 */
export const DEFAULT_ORDER: AddressOrder = 'city-region-postal';

// From the Universal Postal Union's address formats (its "Postal addressing systems" of each member country), for the order of city, region and postal code.
const COUNTRIES: Readonly<Record<Exclude<AddressOrder, typeof DEFAULT_ORDER>, readonly string[]>> = {
  // Continental Europe: the postal code before the city.
  'postal-city': [
    'AD', 'AL', 'AT', 'BA', 'BE', 'BG', 'CH', 'CY', 'CZ', 'DE', 'DK', 'EE', 'ES', 'FI', 'FO', 'FR', 'GL', 'GR', 'HR', 'HU', 'IS',
    'IT', 'LI', 'LT', 'LU', 'MC', 'ME', 'MK', 'NL', 'NO', 'PL', 'PT', 'RO', 'RS', 'SE', 'SI', 'SK', 'SM', 'VA',
  ],
  // The UK, its Crown Dependencies and Ireland: the postcode (Eircode) on a line of its own, after the town and county.
  'city-postal-line': ['GB', 'GG', 'IE', 'IM', 'JE'],
};

const ORDER_OF = new Map<string, AddressOrder>(
  Object.entries(COUNTRIES).flatMap(([order, codes]) => codes.map((code) => [code, order as AddressOrder] as const)),
);

/** The order a country (ISO 3166-1 alpha-2) writes an address in; the default when none is known. */
export function addressOrderOf(code: string | undefined): AddressOrder {
  return (code === undefined ? undefined : ORDER_OF.get(code)) ?? DEFAULT_ORDER;
}

/** An export's address parts, as crm-exports.ts names them. */
type AddressParts = Pick<ExportKind, 'street' | 'city' | 'region' | 'postal'>;

/** An export's address as a template, in one order (the street's own lines keep their separators). */
export function orderedAddress(kind: AddressParts, order: AddressOrder): string {
  const city = `{${kind.city}}`;
  const postal = `{${kind.postal}}`;
  const region = kind.region === undefined ? [] : [`{${kind.region}}`];
  const lines =
    order === 'postal-city'
      ? [kind.street, `${postal} ${city}`, ...region]
      : order === 'city-postal-line'
        ? [kind.street, city, ...region, postal]
        : [kind.street, city, [...region, postal].join(' ')];
  return lines.join(', ');
}

/** The headers an export's address is built from: its street lines, city, region and postal code. */
export function addressHeaders(kind: AddressParts): string[] {
  // The table's street templates hold no literal braces: each `{…}` is one header.
  const street = [...kind.street.matchAll(/\{([^{}]+)\}/g)].map((match) => match[1]!);
  return [...street, kind.city, ...(kind.region === undefined ? [] : [kind.region]), kind.postal];
}

/** The first export kind whose address parts include every header given (folded): the one a `(by country)` template orders. */
export function addressKindOf(headers: readonly string[]): ExportKind | undefined {
  const wanted = headers.map(foldHeader);
  return EXPORT_KINDS.find((kind) => {
    const own = new Set(addressHeaders(kind).map(foldHeader));
    return wanted.every((header) => own.has(header));
  });
}
