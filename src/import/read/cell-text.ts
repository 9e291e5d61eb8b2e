/**
 * A spreadsheet cell's value as the text a user sees in Excel, for an importer that never
 * casts: dates as ISO, numbers in full (no `1.23E+12`). Both readers pass numbers (a
 * formula's cell holds its cached result); the other value shapes are kept for callers that
 * hold typed values (booleans, dates, rich text, formula objects).
 */

const DAY_MS = 86_400_000;

/** `value` is a cell's value; `numFmt` the cell's number format; `date1904` the workbook's epoch. */
export function cellText(value: unknown, numFmt: string | undefined, date1904: boolean): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number') {
    if (!isDateFormat(numFmt)) return formatNumber(value, numFmt);
    // A serial past the years a Date holds (±275,000) is no date: shown as the number it is.
    const date = excelToDate(value, date1904);
    return Number.isNaN(date.getTime()) ? formatNumber(value, numFmt) : isoDate(date);
  }
  if (typeof value === 'boolean') return value ? 'TRUE' : 'FALSE';
  if (value instanceof Date) return isoDate(value);
  if (typeof value !== 'object') return String(value);
  const cell = value as Record<string, unknown>;
  if (Array.isArray(cell.richText)) {
    return cell.richText
      .map((run: { text?: unknown }) => (typeof run.text === 'string' ? run.text : ''))
      .join('');
  }
  // Formulas: the result Excel cached at save time.
  if ('formula' in cell || 'sharedFormula' in cell) {
    const result = cell.result;
    if (typeof result === 'number' && Number.isNaN(result)) return '';
    if (result !== null && typeof result === 'object' && 'error' in result) return String(result.error);
    return cellText(result, numFmt, date1904);
  }
  if ('error' in cell) return String(cell.error);
  if ('text' in cell) return cellText(cell.text, numFmt, date1904);
  return '';
}

/** Same test as Excel's renderer: date/time letters outside quotes and [brackets]. */
export function isDateFormat(numFmt: string | undefined): boolean {
  if (!numFmt) return false;
  const bare = numFmt
    .replace(/\[[^\]]*]/g, '')
    .replace(/"[^"]*"/g, '')
    .replace(/\\./g, '');
  return /[ymdhsb]/i.test(bare) && !/^general$/i.test(bare.trim());
}

export function excelToDate(serial: number, date1904: boolean): Date {
  return new Date(Math.round((serial - 25569 + (date1904 ? 1462 : 0)) * DAY_MS));
}

/** `YYYY-MM-DD`, or `YYYY-MM-DDTHH:MM:SS` when there is a time of day (to the second). */
export function isoDate(date: Date): string {
  const ms = Math.round(date.getTime() / 1000) * 1000;
  const iso = new Date(ms).toISOString();
  return ms % DAY_MS === 0 ? iso.slice(0, 10) : iso.slice(0, 19);
}

// Excel keeps 15 significant digits; anything past them is float noise (0.1+0.2).
const PLAIN = new Intl.NumberFormat('en-US', { useGrouping: false, maximumSignificantDigits: 15 });

/**
 * Numbers in full, never in exponent form. Two formats change what the user sees in a way
 * that matters for IDs and amounts, and are applied: zero-padding (`00000` shows 123 as
 * `00123`) and fixed decimals (`0.00`). Grouping, currency and percent formats are not.
 */
export function formatNumber(value: number, numFmt: string | undefined): string {
  if (!Number.isFinite(value)) return '';
  const padded = numFmt === undefined ? null : /^(0+)(?:\.(0+))?$/.exec(firstSection(numFmt));
  if (padded) {
    const [, integer = '0', decimals = ''] = padded;
    const fixed = Math.abs(value).toFixed(decimals.length);
    const [whole = '0', fraction] = fixed.split('.');
    const text = whole.padStart(integer.length, '0') + (fraction === undefined ? '' : `.${fraction}`);
    return value < 0 && Number(fixed) !== 0 ? `-${text}` : text;
  }
  return value === 0 ? '0' : PLAIN.format(value);
}

/** The format for positive numbers, without colours, locales, literals or escapes. */
function firstSection(numFmt: string): string {
  return (numFmt.split(';')[0] ?? '')
    .replace(/\[[^\]]*]/g, '')
    .replace(/"[^"]*"/g, '')
    .replace(/\\./g, '');
}
