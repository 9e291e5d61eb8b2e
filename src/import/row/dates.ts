/**
 * Dates as people write them: ISO (`2024-12-31`, which is also how the readers give workbook
 * date cells, so those stay exact), and day and month in either order with `.`, `/` or `-`
 * (`31.12.2024`, `1.7.2024`, `31/12/2024`, `31-12-2024`). Which order a file uses is settled
 * once for the run (date-order.ts); a value whose first or second number is over 12 has only
 * one reading and is read so. Two-digit years are refused: `1.7.24` could be 1924.
 */

/** How a run reads dates that are not ISO: day first, month first, not at all, or not yet known. */
export type DateOrder = 'day' | 'month' | 'iso' | 'ask';

/** --date-format: `auto` takes the order from the file; the others name it. */
export const DATE_FORMATS = ['auto', 'YYYY-MM-DD', 'DD.MM.YYYY', 'DD/MM/YYYY', 'DD-MM-YYYY', 'MM/DD/YYYY', 'MM-DD-YYYY'] as const;
export type DateFormat = (typeof DATE_FORMATS)[number];

/** The order a --date-format names (`auto`: undefined, the file decides). */
export function orderOfFormat(format: DateFormat): DateOrder | undefined {
  if (format === 'auto') return undefined;
  return format === 'YYYY-MM-DD' ? 'iso' : format.startsWith('DD') ? 'day' : 'month';
}

const ISO_DATE = /^(\d{4})-(\d{1,2})-(\d{1,2})(?:[T ][\d:.]+(?:Z|[+-]\d\d:?\d\d)?)?$/;
/** Day and month either way, a four-digit year, and a time of day as a CSV of date-time cells holds it. */
const NUMERIC = /^(\d{1,2})([./-])(\d{1,2})[./-](\d{4})(?: \d{1,2}:\d{2}(?::\d{2})?)?$/;
const TWO_DIGIT_YEAR = /^(\d{1,2})[./-](\d{1,2})[./-](\d{2})$/;

/** A value's two leading numbers and separator, when it is written day/month/year or month/day/year. */
export function numericParts(value: string): { a: number; b: number; separator: string; year: number } | undefined {
  const match = NUMERIC.exec(value);
  return match ? { a: Number(match[1]), b: Number(match[3]), separator: match[2]!, year: Number(match[4]) } : undefined;
}

export type ReadDate = { iso: string; form: string } | { problem: string };

/** `DD.MM.YYYY`, `MM/DD/YYYY`: the form a value is written in, under an order. */
function formName(order: 'day' | 'month', separator: string): string {
  return order === 'day' ? `DD${separator}MM${separator}YYYY` : `MM${separator}DD${separator}YYYY`;
}

/** A value as the run reads it: its ISO date and the form it was written in, or what is wrong. */
export function readDate(value: string, order: DateOrder): ReadDate {
  const iso = ISO_DATE.exec(value);
  if (iso) return calendar(Number(iso[1]), Number(iso[2]), Number(iso[3]), 'YYYY-MM-DD', value);
  if (order === 'iso') return { problem: `not a real date in YYYY-MM-DD (${JSON.stringify(value)})` };
  const short = TWO_DIGIT_YEAR.exec(value);
  if (short) {
    return {
      problem: `not a real date in ${order === 'month' ? 'MM' : 'DD'}.${order === 'month' ? 'DD' : 'MM'}.YYYY (${JSON.stringify(value)}): the year has two digits; write it in full (20${short[3]} or 19${short[3]}?)`,
    };
  }
  const parts = numericParts(value);
  if (parts === undefined) {
    const expected = order === 'ask' ? 'YYYY-MM-DD' : formName(order, order === 'day' ? '.' : '/');
    return { problem: `not a real date in ${expected} (${JSON.stringify(value)})` };
  }
  const { a, b, separator, year } = parts;
  // A number over 12 cannot be the month: such a value has one reading whatever the order.
  const own = a > 12 && b <= 12 ? 'day' : b > 12 && a <= 12 ? 'month' : undefined;
  const reading = order === 'ask' ? own : order;
  if (reading === undefined) {
    return {
      problem:
        `day and month order unknown (${JSON.stringify(value)}: ${a}/${b} could be either): the file does not say; ` +
        `give --date-format DD${separator}MM${separator}YYYY or MM${separator}DD${separator}YYYY`,
    };
  }
  const [day, month] = reading === 'day' ? [a, b] : [b, a];
  return calendar(year, month, day, formName(reading, separator), value);
}

function calendar(year: number, month: number, day: number, form: string, value: string): ReadDate {
  const date = new Date(Date.UTC(year, month - 1, day));
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) {
    return { problem: `not a real date in ${form} (${JSON.stringify(value)})` };
  }
  return { iso: `${String(year).padStart(4, '0')}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`, form };
}
