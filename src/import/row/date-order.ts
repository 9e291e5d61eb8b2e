/**
 * The day/month order of a run, settled before the first row and said in the plan: the one
 * --date-format names; else the file's first rows (a value with a number over 12 has only
 * one reading); else the headers' language (day first in German, French, Spanish, Italian,
 * Portuguese, Dutch); else none, and a value that could be either asks for --date-format.
 */
import { DAY_FIRST, LANGUAGE_NAMES } from '../fields.js';
import { peekRows, type RawRecord, type RowSource } from '../read/index.js';
import type { ColumnPlan } from './columns.js';
import { type DateFormat, type DateOrder, numericParts, orderOfFormat } from './dates.js';
import { SAMPLE_ROWS } from './lookalike.js';

/** How the run reads dates not in ISO form, and why. */
export interface DateReading {
  /**
   * `day` (day first: 31.12.2024), `month` (month first: 12/31/2024), `iso` (YYYY-MM-DD only), or
   * `ask`: the order is unknown, so a date that could be read either way is invalid (set `dateFormat`).
   */
  order: DateOrder;
  /** Why, for the plan: `"31.12.2024" on line 4 has a day over 12`. */
  why: string;
  /** The sample held dates written day/month either way (the plan says how it reads them only then). */
  seen: boolean;
}

/** The order from the format, else the sample rows, else the headers' language. */
export function settleDateOrder(
  format: DateFormat,
  plan: Pick<ColumnPlan, 'columns' | 'language'>,
  sample: readonly RawRecord[],
  /** how the file counts its records: `line` (CSV), `row` (sheets) */
  unit = 'line',
): DateReading {
  const named = orderOfFormat(format);
  if (named !== undefined) return { order: named, why: `--date-format ${format}`, seen: true };
  const column = plan.columns.application_date;
  let dayFirst: { value: string; at: number } | undefined;
  let monthFirst: { value: string; at: number } | undefined;
  let seen = false;
  if (column !== undefined) {
    for (const record of sample) {
      const value = record.values[column]?.trim() ?? '';
      const parts = numericParts(value);
      if (parts === undefined) continue;
      seen = true;
      if (parts.a > 12 && parts.b <= 12) dayFirst ??= { value, at: record.line };
      if (parts.b > 12 && parts.a <= 12) monthFirst ??= { value, at: record.line };
    }
  }
  const where = (found: { value: string; at: number }) => `${JSON.stringify(found.value)} on ${unit} ${found.at}`;
  if (dayFirst && monthFirst) {
    return { order: 'ask', why: `the file has both ${where(dayFirst)} (day first) and ${where(monthFirst)} (month first)`, seen };
  }
  if (dayFirst) return { order: 'day', why: `${where(dayFirst)} has a day over 12`, seen };
  if (monthFirst) return { order: 'month', why: `${where(monthFirst)} has a day over 12 in second place`, seen };
  if (DAY_FIRST.has(plan.language)) return { order: 'day', why: `the headers are ${LANGUAGE_NAMES[plan.language]}`, seen };
  return { order: 'ask', why: `the file does not say (no day over 12 in its first ${SAMPLE_ROWS} rows; English headers)`, seen };
}

/**
 * The run's order, reading the first rows only when it takes them (--date-format auto and a
 * date column); the source returned replays those rows.
 */
export async function settleDates(
  source: RowSource,
  plan: ColumnPlan,
  format: DateFormat,
  unit: string,
): Promise<{ source: RowSource; dates: DateReading }> {
  if (orderOfFormat(format) !== undefined || plan.columns.application_date === undefined) {
    return { source, dates: settleDateOrder(format, plan, [], unit) };
  }
  const peeked = await peekRows(source, SAMPLE_ROWS);
  return { source: peeked.source, dates: settleDateOrder(format, plan, peeked.rows, unit) };
}

/** The plan's line: `day first (31.12.2024): the headers are German`. */
export function describeDateOrder(reading: DateReading): string {
  const how =
    reading.order === 'day'
      ? 'day first (31.12.2024)'
      : reading.order === 'month'
        ? 'month first (12/31/2024)'
        : reading.order === 'iso'
          ? 'YYYY-MM-DD only'
          : 'day/month order unknown: a date that could be either is refused (give --date-format)';
  return `${how}: ${reading.why}`;
}
