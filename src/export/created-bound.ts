/**
 * `--created-from` / `--created-to` text → an inclusive bound as a UTC instant with milliseconds.
 *
 * The rule: both bounds are inclusive, and read in the run's time zone (UTC unless one is given).
 * A bare date as the lower bound means its first millisecond (00:00:00.000 there); as the upper
 * bound it covers the whole day (up to the next day's start, less a millisecond), so
 * `--created-from 2025-01-01 --created-to 2025-01-31` is all of January; `YYYY-MM` is the whole
 * month the same way. A date-time without an offset is in the zone (and said so); one with an
 * offset is converted. The service's own reading of a bare date is not published, so only
 * explicit instants are sent. A refused value says what is wrong with it.
 */
import { UsageError } from '../errors.js';
import { instantOf, UTC } from './time-zone.js';

export interface CreatedBound {
  iso: string;
  /** Said in the summary: how a value without a time zone was read. */
  note?: string | undefined;
  /** `YYYY-MM`: a month given alone as a lower bound reads two ways. */
  month?: string | undefined;
}

const MONTH = /^(\d{4})-(\d{1,2})$/;
const DATE = /^(\d{4})-(\d{1,2})-(\d{1,2})$/;
const DATE_TIME = /^(\d{4}-\d{1,2}-\d{1,2})[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/i;
const SLASHED = /^(\d{1,2})[/.](\d{1,2})[/.](\d{4})$/;
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

const two = (n: number) => String(n).padStart(2, '0');

export function readCreatedBound(text: string, bound: 'from' | 'to', label: string, zone: string = UTC): CreatedBound {
  const value = text.trim();
  const fail = (why: string, hint = '') =>
    new UsageError(`${label} ${JSON.stringify(text)}: ${why}; e.g. 2025-01-31, 2025-01 or 2025-01-31T18:00:00Z (UTC)${hint}`, 'bad_option');
  /** The first instant of a local date, or (upper bound) the last millisecond before the next one starts. */
  const edge = (year: number, month: number, day: number) =>
    new Date(bound === 'from' ? instantOf({ year, month, day }, zone) : instantOf(nextDay(year, month, day), zone) - 1).toISOString();
  const month = MONTH.exec(value);
  if (month) {
    const [y, m] = [Number(month[1]), Number(month[2])];
    if (m < 1 || m > 12) throw fail(`month ${month[2]} does not exist`);
    return { iso: edge(y, m, bound === 'from' ? 1 : daysIn(y, m)), month: `${y}-${two(m)}` };
  }
  const date = DATE.exec(value);
  if (date) {
    const [y, m, d] = checkDate(value, fail).split('-').map(Number) as [number, number, number];
    return { iso: edge(y, m, d) };
  }
  const slashed = SLASHED.exec(value);
  if (slashed) throw fail(slashedReadings(Number(slashed[1]), Number(slashed[2]), Number(slashed[3])));
  const match = DATE_TIME.exec(value);
  if (!match) throw fail('not an ISO 8601 date or date-time', /^[a-z]/i.test(value) ? '; a period in words is --period (e.g. --period previous-month)' : '');
  const [, day = '', hh = '', mm = '', ss = '00', fraction = '', written] = match;
  const iso = checkDate(day, fail);
  if (Number(hh) > 23) throw fail(`hour ${hh} does not exist (00–23)`);
  if (Number(mm) > 59) throw fail(`minute ${mm} does not exist (00–59)`);
  if (Number(ss) > 59) throw fail(`second ${ss} does not exist (00–59)`);
  // Date.parse takes milliseconds at most and an offset with a colon; finer digits are cut.
  const millis = fraction.slice(1).padEnd(3, '0').slice(0, 3);
  const [y, m, d] = iso.split('-').map(Number) as [number, number, number];
  const wall = { year: y, month: m, day: d, hour: Number(hh), minute: Number(mm), second: Number(ss), millisecond: Number(millis) };
  const offset = written === undefined || written.toUpperCase() === 'Z' ? 'Z' : `${written.slice(0, 3)}:${written.slice(-2)}`;
  const ms = written === undefined ? instantOf(wall, zone) : Date.parse(`${iso}T${hh}:${mm}:${ss}.${millis}${offset}`);
  if (Number.isNaN(ms)) throw fail('not an ISO 8601 date-time');
  const instant = new Date(ms).toISOString();
  return {
    iso: instant,
    ...(written === undefined && { note: `${label} ${JSON.stringify(text)} has no time zone: taken as ${zone} (${instant})` }),
  };
}

function nextDay(year: number, month: number, day: number): { year: number; month: number; day: number } {
  const next = new Date(Date.UTC(year, month - 1, day + 1));
  return { year: next.getUTCFullYear(), month: next.getUTCMonth() + 1, day: next.getUTCDate() };
}

/** The bound's ISO text, for callers that need no note. */
export function parseCreatedBound(text: string, bound: 'from' | 'to', label: string, zone: string = UTC): string {
  return readCreatedBound(text, bound, label, zone).iso;
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

/**
 * `--created-from 2025-01` with no upper bound: that month only, or from that month until now?
 * Refused with both readings (a plain export; an incremental one only starts there).
 */
export function loneMonth(month: string): UsageError {
  return new UsageError(
    `--created-from ${month} alone reads two ways: that month only (--period ${month}, or add --created-to ${month}) ` +
      `or from ${month}-01 until now (--created-from ${month}-01): write the one you mean`,
    'bad_option',
  );
}
