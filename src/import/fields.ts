/** The fields an input row can carry, and the header spellings that map to them. */

export const FIELDS = [
  'name',
  'email',
  'country',
  'address',
  'currency',
  'application_date',
  'liquidity_type',
  'idempotency_key',
] as const;
export type Field = (typeof FIELDS)[number];

export const REQUIRED_FIELDS: readonly Field[] = ['name', 'email', 'country', 'address'];

/**
 * Headers are compared after folding case, accents, spaces and punctuation
 * ("E-mail", "EMAIL ", "e_mail" → "email"). Beyond the field name itself, these are the
 * spellings CRMs and spreadsheets commonly use; anything else takes --map field=Header.
 */
export const ALIASES: Record<Field, readonly string[]> = {
  name: ['name', 'full name', 'client name', 'customer name', 'legal name'],
  email: ['email', 'e-mail', 'email address', 'e-mail address', 'mail'],
  country: ['country', 'country code', 'country iso', 'nation'],
  address: ['address', 'street address', 'postal address', 'full address'],
  currency: ['currency', 'currency code', 'ccy'],
  application_date: ['application date', 'application_date', 'applied on', 'date applied', 'applicationdate'],
  liquidity_type: ['liquidity type', 'liquidity'],
  idempotency_key: ['idempotency key', 'idempotency_key', 'external id', 'import key'],
};

/** Folds a header for matching: lower case, no accents, no spaces or punctuation, NBSP as space. */
export function foldHeader(header: string): string {
  return header
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, '');
}
