/**
 * `--created-from` / `--created-to` text → an inclusive bound as a UTC instant with milliseconds.
 *
 * The rule: both bounds are inclusive, and everything is UTC. A bare date as the lower bound
 * means its first millisecond (00:00:00.000Z); as the upper bound it covers the whole day
 * (23:59:59.999Z), so `--created-from 2025-01-01 --created-to 2025-01-31` is all of January;
 * `YYYY-MM` is the whole month the same way. A date-time without an offset is UTC (and said so);
 * one with an offset is converted. The service's own reading of a bare date is not published,
 * so only explicit instants are sent. A refused value says what is wrong with it.
 */
import { UsageError } from '../errors.js';

export interface CreatedBound {
  iso: string;
  /** Said in the summary: how a value without a time zone was read. */
  note?: string | undefined;
}

const MONTH = /^(\d{4})-(\d{1,2})$/;
const DATE = /^(\d{4})-(\d{1,2})-(\d{1,2})$/;
const DATE_TIME = /^(\d{4}-\d{1,2}-\d{1,2})[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/i;
const SLASHED = /^(\d{1,2})[/.](\d{1,2})[/.](\d{4})$/;
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

const two = (n: number) => String(n).padStart(2, '0');

export function readCreatedBound(text: string, bound: 'from' | 'to', label: string): CreatedBound {
  const value = text.trim();
  const fail = (why: string) =>
    new UsageError(`${label} ${JSON.stringify(text)}: ${why}; e.g. 2025-01-31, 2025-01 or 2025-01-31T18:00:00Z (UTC)`, 'bad_option');
  const month = MONTH.exec(value);
  if (month) {
    const [y, m] = [Number(month[1]), Number(month[2])];
    if (m < 1 || m > 12) throw fail(`month ${month[2]} does not exist`);
    const day = bound === 'from' ? 1 : daysIn(y, m);
    return { iso: `${y}-${two(m)}-${two(day)}T${bound === 'from' ? '00:00:00.000' : '23:59:59.999'}Z` };
  }
  const date = DATE.exec(value);
  if (date) return { iso: `${checkDate(value, fail)}T${bound === 'from' ? '00:00:00.000' : '23:59:59.999'}Z` };
  const slashed = SLASHED.exec(value);
  if (slashed) throw fail(slashedReadings(Number(slashed[1]), Number(slashed[2]), Number(slashed[3])));
  const match = DATE_TIME.exec(value);
  if (!match) throw fail('not an ISO 8601 date or date-time');
  const [, day = '', hh = '', mm = '', ss = '00', fraction = '', zone] = match;
  const iso = checkDate(day, fail);
  if (Number(hh) > 23) throw fail(`hour ${hh} does not exist (00–23)`);
  if (Number(mm) > 59) throw fail(`minute ${mm} does not exist (00–59)`);
  if (Number(ss) > 59) throw fail(`second ${ss} does not exist (00–59)`);
  // Date.parse takes milliseconds at most and an offset with a colon; finer digits are cut.
  const millis = fraction.slice(1).padEnd(3, '0').slice(0, 3);
  const offset = zone === undefined || zone.toUpperCase() === 'Z' ? 'Z' : `${zone.slice(0, 3)}:${zone.slice(-2)}`;
  const ms = Date.parse(`${iso}T${hh}:${mm}:${ss}.${millis}${offset}`);
  if (Number.isNaN(ms)) throw fail('not an ISO 8601 date-time');
  const instant = new Date(ms).toISOString();
  return {
    iso: instant,
    ...(zone === undefined && { note: `${label} ${JSON.stringify(text)} has no time zone: taken as UTC (${instant})` }),
  };
}

/** The bound's ISO text, for callers that need no note. */
export function parseCreatedBound(text: string, bound: 'from' | 'to', label: string): string {
  return readCreatedBound(text, bound, label).iso;
}

function daysIn(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/** `YYYY-M-D` → `YYYY-MM-DD`, or what is wrong with it. */
function checkDate(text: string, fail: (why: string) => UsageError): string {
  const [y, m, d] = text.split('-').map(Number) as [number, number, number];
  if (m < 1 || m > 12) throw fail(`month ${text.split('-')[1]} does not exist`);
  const days = daysIn(y, m);
  if (d < 1 || d > days) {
    throw fail(d < 1 ? `day ${text.split('-')[2]} does not exist` : `${MONTHS[m - 1]} has ${days} days${m === 2 ? ` in ${y}` : ''}`);
  }
  return `${y}-${two(m)}-${two(d)}`;
}

/** `01/02/2025`: both readings when both are dates, so the user picks, in ISO. */
function slashedReadings(a: number, b: number, year: number): string {
  const reading = (day: number, month: number) =>
    month >= 1 && month <= 12 && day >= 1 && day <= daysIn(year, month)
      ? { text: `${day} ${MONTHS[month - 1]} ${year}`, iso: `${year}-${two(month)}-${two(day)}` }
      : undefined;
  const dayFirst = reading(a, b);
  const monthFirst = reading(b, a);
  if (dayFirst && monthFirst && dayFirst.iso !== monthFirst.iso) {
    return (
      `ambiguous: ${dayFirst.text} (day first) or ${monthFirst.text} (month first); ` +
      `write ${dayFirst.iso} or ${monthFirst.iso}`
    );
  }
  const only = dayFirst ?? monthFirst;
  return only ? `write it as ${only.iso} (${only.text})` : 'not a date';
}
