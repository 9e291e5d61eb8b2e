/**
 * `--period`: a window named in words (`previous-month`) or as a calendar unit (`2026-02`,
 * `2026-W07`, `2026-02-14`), resolved against the run's start instant in a time zone. A period
 * is half-open, [from, end): months, ISO weeks (Monday to Sunday) and days tile time exactly, so
 * one period's end is the next one's start, whatever daylight saving does in between.
 */
import { UsageError } from '../errors.js';
import type { Client } from '../service/schemas.js';
import { didYouMean } from '../infra/did-you-mean.js';
import { instantOf, isoDate, wallTime, weekday } from './time-zone.js';

/** The periods named relative to the run. */
export const PERIOD_NAMES = ['previous-day', 'previous-week', 'previous-month', 'last-7-days', 'month-to-date'] as const;

/** The calendar units a scheduled (since-last) period steps by. */
export type PeriodUnit = 'day' | 'week' | 'month';

export interface Period {
  /** As given: `previous-month`, `2026-02`. */
  name: string;
  /** The unit it is one of (undefined for last-7-days and month-to-date, which are not one unit). */
  unit: PeriodUnit | undefined;
  /** For names and the summary: `2026-02`, `2026-W07`, `2026-02-14`, `2026-02-07_2026-02-13`. */
  label: string;
  zone: string;
  /** First instant, ms. */
  fromMs: number;
  /** First instant after it, ms (exclusive). */
  endMs: number;
}

const MONTH = /^(\d{4})-(\d{2})$/;
const WEEK = /^(\d{4})-W(\d{2})$/i;
const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;

const EXAMPLES = `${PERIOD_NAMES.join(', ')}, or a month (2026-02), ISO week (2026-W07) or day (2026-02-14)`;

/** Refuses a period that is neither a known name nor a calendar unit, before any request. */
export function checkPeriod(text: string, label: string): string {
  const name = text.trim().toLowerCase();
  if ((PERIOD_NAMES as readonly string[]).includes(name)) return name;
  const month = MONTH.exec(name);
  const week = WEEK.exec(name);
  const day = DAY.exec(name);
  const fail = (why: string) => new UsageError(`${label} ${JSON.stringify(text)}: ${why}; periods are ${EXAMPLES}`, 'bad_option');
  if (month && (Number(month[2]) < 1 || Number(month[2]) > 12)) throw fail(`month ${month[2]} does not exist`);
  if (week && (Number(week[2]) < 1 || Number(week[2]) > isoWeeksIn(Number(week[1])))) {
    throw fail(`${week[1]} has ${isoWeeksIn(Number(week[1]))} ISO weeks`);
  }
  if (day) {
    const [y, m, d] = [Number(day[1]), Number(day[2]), Number(day[3])];
    const days = new Date(Date.UTC(y, m, 0)).getUTCDate();
    if (m < 1 || m > 12 || d < 1 || d > days) throw fail('not a date');
  }
  if (month || week || day) return name.toUpperCase();
  throw fail(`unknown period${SAID_OTHERWISE[name] ?? didYouMean(name, PERIOD_NAMES)}`);
}

/** Words people use for a period, and which of ours they mean (both, when they could mean either). */
const SAID_OTHERWISE: Record<string, string> = {
  'last-month': ' (the calendar month before this one is previous-month)',
  'last-week': ' (previous-week: the ISO week before this one, Monday to Sunday; last-7-days: the seven whole days before today)',
  yesterday: ' (previous-day)',
  'this-month': ' (month-to-date)',
};

/** The period `name` (checked) at the instant `nowMs`, in `zone`. */
export function resolvePeriod(name: string, nowMs: number, zone: string): Period {
  const today = unitStart('day', nowMs, zone);
  switch (name) {
    case 'previous-day':
      return periodAt('day', step('day', today, zone, -1), zone, name);
    case 'previous-week':
      return periodAt('week', step('week', unitStart('week', nowMs, zone), zone, -1), zone, name);
    case 'previous-month':
      return periodAt('month', step('month', unitStart('month', nowMs, zone), zone, -1), zone, name);
    case 'last-7-days': {
      const fromMs = step('day', today, zone, -7);
      return { name, unit: undefined, label: spanLabel(fromMs, today, zone), zone, fromMs, endMs: today };
    }
    case 'month-to-date': {
      const fromMs = unitStart('month', nowMs, zone);
      // Up to the run's start, inclusive, as any window without an end.
      return { name, unit: undefined, label: spanLabel(fromMs, nowMs + 1, zone), zone, fromMs, endMs: nowMs + 1 };
    }
  }
  return explicitPeriod(name, zone);
}

/** `2026-02`, `2026-W07`, `2026-02-14` as a period in `zone`. */
function explicitPeriod(name: string, zone: string): Period {
  const [y, m, d] = name.split('-');
  const year = Number(y);
  if (m?.startsWith('W')) {
    // ISO week 1 holds 4 January; its Monday starts the week-year.
    const jan4 = { year, month: 1, day: 4 };
    const monday = 4 - (weekday(jan4) - 1) + (Number(m.slice(1)) - 1) * 7;
    return periodAt('week', instantOf({ year, month: 1, day: monday }, zone), zone, name);
  }
  if (d === undefined) return periodAt('month', instantOf({ year, month: Number(m), day: 1 }, zone), zone, name);
  return periodAt('day', instantOf({ year, month: Number(m), day: Number(d) }, zone), zone, name);
}

/** The first instant of the unit holding `ms`. */
export function unitStart(unit: PeriodUnit, ms: number, zone: string): number {
  const { year, month, day } = wallTime(ms, zone);
  if (unit === 'month') return instantOf({ year, month, day: 1 }, zone);
  if (unit === 'week') return instantOf({ year, month, day: day - (weekday({ year, month, day }) - 1) }, zone);
  return instantOf({ year, month, day }, zone);
}

/** The start of the unit `count` units after the one starting at `startMs` (negative: before). */
export function step(unit: PeriodUnit, startMs: number, zone: string, count: number): number {
  // The start's date, not its time: a day whose midnight falls in a gap starts at 01:00.
  const { year, month, day } = wallTime(startMs + 12 * 3_600_000, zone);
  if (unit === 'month') return instantOf({ year, month: month + count, day: 1 }, zone);
  return instantOf({ year, month, day: day + count * (unit === 'week' ? 7 : 1) }, zone);
}

/** The unit starting at `startMs`, named `name`. */
export function periodAt(unit: PeriodUnit, startMs: number, zone: string, name: string): Period {
  const endMs = step(unit, startMs, zone, 1);
  return { name, unit, label: unitLabel(unit, startMs, zone), zone, fromMs: startMs, endMs };
}

function unitLabel(unit: PeriodUnit, startMs: number, zone: string): string {
  const wall = wallTime(startMs + 12 * 3_600_000, zone);
  if (unit === 'month') return isoDate(wall).slice(0, 7);
  if (unit === 'day') return isoDate(wall);
  // The ISO week-year is the year of the week's Thursday.
  const thursday = new Date(Date.UTC(wall.year, wall.month - 1, wall.day + 3));
  const jan1 = Date.UTC(thursday.getUTCFullYear(), 0, 1);
  const week = Math.floor((thursday.getTime() - jan1) / 86_400_000 / 7) + 1;
  return `${thursday.getUTCFullYear()}-W${String(week).padStart(2, '0')}`;
}

/** `2026-02-07_2026-02-13`: the first and last local dates of [fromMs, endMs). */
function spanLabel(fromMs: number, endMs: number, zone: string): string {
  return `${isoDate(wallTime(fromMs, zone))}_${isoDate(wallTime(endMs - 1, zone))}`;
}

/** 52 or 53: a year has 53 ISO weeks when it starts on a Thursday, or is a leap year starting on a Wednesday. */
function isoWeeksIn(year: number): number {
  const first = weekday({ year, month: 1, day: 1 });
  const leap = new Date(Date.UTC(year, 1, 29)).getUTCDate() === 29;
  return first === 4 || (leap && first === 3) ? 53 : 52;
}

/** Keeps the clients created in [from, end), by their own created_at: the end itself is the next period's. */
export function inPeriod(period: Pick<Period, 'fromMs' | 'endMs'>): (clients: readonly Client[]) => Client[] {
  return (clients) =>
    clients.filter((client) => {
      const ms = Date.parse(client.created_at ?? '');
      return ms >= period.fromMs && ms < period.endMs;
    });
}
