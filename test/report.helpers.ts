/**
 * A review page's input with hostile values (markup, a closing script tag, a right-to-left
 * override), a duplicate and more bad rows of one kind than a group lists; and the page's
 * figures read back from its HTML.
 */
import { stringify } from 'csv-stringify/sync';

export const HOSTILE = {
  imgName: '<img src=x onerror=alert(1)>',
  scriptAddress: '</script><b>bold</b><script>alert(2)</script>',
  imgCountry: '<img src=x onerror=alert(3)>',
  rloName: '\u202EAcme Ltd',
  closingScript: '</script>',
} as const;

/** Bad e-mails (with row 6's) beyond the 200 a group lists: the page says "and 6 more". */
export const BULK_INVALID = 205;

/** 211 rows: 2 valid, 1 duplicate (of row 2), 208 invalid. */
export function hostileCsv(): string {
  const rows = [
    ['name', 'email', 'country', 'address', 'Notes'],
    [HOSTILE.imgName, 'a1@example.com', 'DE', HOSTILE.scriptAddress, 'x'],
    [HOSTILE.rloName, 'rlo@example.com', 'France', 'Rue 1', 'y'],
    [HOSTILE.rloName, 'rlo@example.com', 'France', 'Rue 1', 'z'],
    ['Ann', 'ann@example.com', HOSTILE.imgCountry, 'Street 4', ''],
    ['Bob', 'bob@gmial.com', 'Germny', 'Street 5', ''],
    ['Cy', HOSTILE.closingScript, 'DE', 'Street 6', ''],
  ];
  for (let i = 0; i < BULK_INVALID; i++) rows.push([`Client ${i}`, `not-an-email-${i}`, 'DE', `Street ${i}`, '']);
  return stringify(rows);
}

export const HOSTILE_COUNTS = { valid: 2, invalid: 3 + BULK_INVALID, duplicate: 1 };

/** `data-count` figures as the page states them (`1,234`). */
export function pageCounts(html: string): Record<string, number> {
  return Object.fromEntries([...html.matchAll(/data-count="([a-z_]+)">([\d,]+)</g)].map((m) => [m[1]!, Number(m[2]!.replaceAll(',', ''))]));
}
