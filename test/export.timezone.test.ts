/**
 * Time zones without a library, and periods in them: local midnights across daylight-saving
 * changes (Europe/Berlin, America/New_York, spring and autumn), months and ISO weeks at month
 * and year ends, a leap February, wall times in a gap or repeated, bounds read in a zone, and
 * `{date}` named after the zone's day, and the summary's months and weeks of created_at as
 * Date.parse reads it. Pure functions against Node's own tz data: no service.
 */
import { describe, expect, it } from 'vitest';
import { readCreatedBound } from '../src/export/created-bound.js';
import { expandOutName } from '../src/export/out-name.js';
import { checkPeriod, resolvePeriod } from '../src/export/period.js';
import { checkTimeZone, instantOf, offsetAt, wallTime, zonedIso } from '../src/export/time-zone.js';
import { UsageError } from '../src/errors.js';
import type { FlatClient } from '../src/export/columns.js';
import { ExportTally, isoWeek, localDayIn } from '../src/export/tally.js';

const iso = (ms: number) => new Date(ms).toISOString();
const BLANK_CLIENT: FlatClient = {
  id: 'cli_1',
  name: null,
  email: null,
  country: 'de',
  address: null,
  currency: null,
  status: 'active',
  credit_status: null,
  created_at: null,
  bank_iban: null,
  bank_account_number: null,
  bank_swift_code: null,
  documents_count: 0,
  documents: [],
};
const at = (text: string) => Date.parse(text);

/** A period's bounds as UTC instants, and its label. */
function period(name: string, now: string, zone: string): { label: string; from: string; end: string; hours: number } {
  const p = resolvePeriod(checkPeriod(name, '--period'), at(now), zone);
  return { label: p.label, from: iso(p.fromMs), end: iso(p.endMs), hours: (p.endMs - p.fromMs) / 3_600_000 };
}

describe('offsets and wall times (Intl.DateTimeFormat)', () => {
  it.each([
    ['2026-01-15T12:00:00Z', 'Europe/Berlin', 60],
    ['2026-07-15T12:00:00Z', 'Europe/Berlin', 120],
    ['2026-03-29T00:59:59.999Z', 'Europe/Berlin', 60],
    ['2026-03-29T01:00:00Z', 'Europe/Berlin', 120],
    ['2026-10-25T00:59:59.999Z', 'Europe/Berlin', 120],
    ['2026-10-25T01:00:00Z', 'Europe/Berlin', 60],
    ['2026-03-08T06:59:59Z', 'America/New_York', -300],
    ['2026-03-08T07:00:00Z', 'America/New_York', -240],
    ['2026-11-01T05:59:59Z', 'America/New_York', -240],
    ['2026-11-01T06:00:00Z', 'America/New_York', -300],
    ['2026-07-01T00:00:00Z', 'UTC', 0],
  ])('%s in %s is UTC%+d min', (instant, zone, minutes) => {
    expect(offsetAt(at(instant), zone) / 60_000).toBe(minutes);
  });

  it.each([
    // Spring: 02:00–03:00 does not exist; a time in it moves forward by the gap.
    [{ year: 2026, month: 3, day: 29, hour: 2, minute: 30 }, 'Europe/Berlin', '2026-03-29T01:30:00.000Z'],
    [{ year: 2026, month: 3, day: 8, hour: 2, minute: 30 }, 'America/New_York', '2026-03-08T07:30:00.000Z'],
    // Autumn: 02:00–03:00 (Berlin) and 01:00–02:00 (New York) happen twice; the first is taken.
    [{ year: 2026, month: 10, day: 25, hour: 2, minute: 30 }, 'Europe/Berlin', '2026-10-25T00:30:00.000Z'],
    [{ year: 2026, month: 11, day: 1, hour: 1, minute: 30 }, 'America/New_York', '2026-11-01T05:30:00.000Z'],
    // Overflowing days and months roll over, year ends included.
    [{ year: 2026, month: 13, day: 1 }, 'Europe/Berlin', '2026-12-31T23:00:00.000Z'],
    [{ year: 2026, month: 3, day: 0 }, 'America/New_York', '2026-02-28T05:00:00.000Z'],
  ])('%o in %s is %s', (wall, zone, expected) => {
    expect(iso(instantOf(wall, zone))).toBe(expected);
  });

  it('every day of 2026 starts at its first instant, in zones whose midnight moves or is skipped', () => {
    // America/Santiago and America/Havana skip or repeat an hour at midnight itself.
    for (const zone of ['Europe/Berlin', 'America/New_York', 'America/Santiago', 'America/Havana', 'Australia/Lord_Howe', 'Asia/Kolkata']) {
      for (let day = 1; day <= 365; day++) {
        const start = instantOf({ year: 2026, month: 1, day }, zone);
        const wall = wallTime(start, zone);
        const before = wallTime(start - 1, zone);
        const expected = new Date(Date.UTC(2026, 0, day));
        expect([zone, wall.year, wall.month, wall.day]).toEqual([zone, 2026, expected.getUTCMonth() + 1, expected.getUTCDate()]);
        expect(before.day).not.toBe(wall.day);
      }
    }
  });

  it('zonedIso writes the local time with its offset; UTC stays Z', () => {
    expect(zonedIso(at('2026-03-29T00:30:00.000Z'), 'Europe/Berlin')).toBe('2026-03-29T01:30:00.000+01:00');
    expect(zonedIso(at('2026-03-29T01:30:00.000Z'), 'Europe/Berlin')).toBe('2026-03-29T03:30:00.000+02:00');
    expect(zonedIso(at('2026-11-01T05:30:00.250Z'), 'America/New_York')).toBe('2026-11-01T01:30:00.250-04:00');
    expect(zonedIso(at('2026-11-01T06:30:00.250Z'), 'America/New_York')).toBe('2026-11-01T01:30:00.250-05:00');
    expect(zonedIso(at('2026-11-01T06:30:00.250Z'), 'UTC')).toBe('2026-11-01T06:30:00.250Z');
  });

  it('names are IANA names, any case; anything else is refused with an example', () => {
    expect(checkTimeZone('europe/berlin', '--timezone')).toBe('Europe/Berlin');
    expect(checkTimeZone('Etc/UTC', '--timezone')).toBe('UTC');
    expect(() => checkTimeZone('Europe/Berln', '--timezone')).toThrow(/--timezone "Europe\/Berln" is not an IANA time zone \(did you mean Europe\/Berlin\?\); e\.g\. Europe\/Berlin/);
    expect(() => checkTimeZone('CEST+2', '--timezone')).toThrow(UsageError);
  });
});

describe('periods across daylight saving (a month is not 30 × 24 hours)', () => {
  it.each([
    // March in Berlin has 743 hours (spring forward), October 745.
    ['previous-month', '2026-04-01T01:15:00Z', 'Europe/Berlin', '2026-03', '2026-02-28T23:00:00.000Z', '2026-03-31T22:00:00.000Z', 743],
    ['previous-month', '2026-11-01T02:15:00Z', 'Europe/Berlin', '2026-10', '2026-09-30T22:00:00.000Z', '2026-10-31T23:00:00.000Z', 745],
    ['previous-month', '2026-04-01T07:00:00Z', 'America/New_York', '2026-03', '2026-03-01T05:00:00.000Z', '2026-04-01T04:00:00.000Z', 743],
    ['previous-month', '2026-12-01T08:00:00Z', 'America/New_York', '2026-11', '2026-11-01T04:00:00.000Z', '2026-12-01T05:00:00.000Z', 721],
    // The change day itself: 23 and 25 hours.
    ['previous-day', '2026-03-30T10:00:00Z', 'Europe/Berlin', '2026-03-29', '2026-03-28T23:00:00.000Z', '2026-03-29T22:00:00.000Z', 23],
    ['previous-day', '2026-10-26T10:00:00Z', 'Europe/Berlin', '2026-10-25', '2026-10-24T22:00:00.000Z', '2026-10-25T23:00:00.000Z', 25],
    ['previous-day', '2026-03-09T12:00:00Z', 'America/New_York', '2026-03-08', '2026-03-08T05:00:00.000Z', '2026-03-09T04:00:00.000Z', 23],
    ['previous-day', '2026-11-02T12:00:00Z', 'America/New_York', '2026-11-01', '2026-11-01T04:00:00.000Z', '2026-11-02T05:00:00.000Z', 25],
    // ISO week 13 of 2026 holds Berlin's change: Monday 23 to Sunday 29 March.
    ['previous-week', '2026-03-30T04:00:00Z', 'Europe/Berlin', '2026-W13', '2026-03-22T23:00:00.000Z', '2026-03-29T22:00:00.000Z', 167],
    ['last-7-days', '2026-03-30T10:00:00Z', 'Europe/Berlin', '2026-03-23_2026-03-29', '2026-03-22T23:00:00.000Z', '2026-03-29T22:00:00.000Z', 167],
  ])('%s at %s in %s is %s', (name, now, zone, label, from, end, hours) => {
    expect(period(name, now, zone)).toEqual({ label, from, end, hours });
  });

  it('month and year ends: the zone decides which month "previous" is', () => {
    // 00:30 on 1 January in Berlin is still 31 December in UTC.
    expect(period('previous-month', '2025-12-31T23:30:00Z', 'Europe/Berlin')).toMatchObject({ label: '2025-12', from: '2025-11-30T23:00:00.000Z', end: '2025-12-31T23:00:00.000Z' });
    expect(period('previous-month', '2025-12-31T23:30:00Z', 'UTC')).toMatchObject({ label: '2025-11', from: '2025-11-01T00:00:00.000Z', end: '2025-12-01T00:00:00.000Z' });
    // 23:30 on 31 December in New York is already 1 January in UTC.
    expect(period('previous-month', '2027-01-01T04:30:00Z', 'America/New_York')).toMatchObject({ label: '2026-11' });
    expect(period('previous-month', '2027-01-01T04:30:00Z', 'UTC')).toMatchObject({ label: '2026-12' });
    // The ISO week of 1 January 2026 starts on 29 December 2025 and is 2026-W01.
    expect(period('previous-week', '2026-01-04T23:30:00Z', 'Europe/Berlin')).toMatchObject({ label: '2026-W01', from: '2025-12-28T23:00:00.000Z', end: '2026-01-04T23:00:00.000Z' });
    // 2026 has 53 ISO weeks: the last holds 1 to 3 January 2027.
    expect(period('previous-week', '2027-01-04T12:00:00Z', 'UTC')).toMatchObject({ label: '2026-W53', from: '2026-12-28T00:00:00.000Z' });
    expect(period('previous-day', '2027-01-01T06:00:00Z', 'America/New_York')).toMatchObject({ label: '2026-12-31' });
    // A leap February.
    expect(period('previous-month', '2028-03-01T12:00:00Z', 'Europe/Berlin')).toMatchObject({ label: '2028-02', hours: 29 * 24 });
  });

  it('month-to-date runs to the start instant; named units are periods too', () => {
    expect(period('month-to-date', '2026-03-30T10:00:00Z', 'Europe/Berlin')).toMatchObject({ label: '2026-03-01_2026-03-30', from: '2026-02-28T23:00:00.000Z', end: '2026-03-30T10:00:00.001Z' });
    expect(period('2026-02', '2026-11-28T00:00:00Z', 'Europe/Berlin')).toMatchObject({ label: '2026-02', from: '2026-01-31T23:00:00.000Z', end: '2026-02-28T23:00:00.000Z' });
    expect(period('2026-w13', '2026-11-28T00:00:00Z', 'UTC')).toMatchObject({ label: '2026-W13', from: '2026-03-23T00:00:00.000Z' });
    expect(period('2026-03-29', '2026-11-28T00:00:00Z', 'Europe/Berlin')).toMatchObject({ hours: 23 });
  });

  it.each([
    ['last-month', /unknown period \(the calendar month before this one is previous-month\)/],
    ['last-week', /previous-week: the ISO week before this one, Monday to Sunday; last-7-days: the seven whole days before today/],
    ['previous-mnth', /did you mean previous-month\?/],
    ['2026-13', /month 13 does not exist/],
    ['2025-W53', /2025 has 52 ISO weeks/],
    ['2026-02-29', /not a date/],
  ])('--period %s is refused, saying what it could be', (name, message) => {
    expect(() => checkPeriod(name, '--period')).toThrow(message);
  });
});

describe('bounds and names in a zone', () => {
  it('dates and zone-less times are read in the zone; an offset is kept', () => {
    expect(readCreatedBound('2026-03-29', 'from', '--created-from', 'Europe/Berlin').iso).toBe('2026-03-28T23:00:00.000Z');
    expect(readCreatedBound('2026-03-29', 'to', '--created-to', 'Europe/Berlin').iso).toBe('2026-03-29T21:59:59.999Z');
    expect(readCreatedBound('2026-03', 'to', '--created-to', 'America/New_York').iso).toBe('2026-04-01T03:59:59.999Z');
    expect(readCreatedBound('2026-10-25 02:30', 'from', '--created-from', 'Europe/Berlin')).toEqual({
      iso: '2026-10-25T00:30:00.000Z',
      note: '--created-from "2026-10-25 02:30" has no time zone: taken as Europe/Berlin (2026-10-25T00:30:00.000Z)',
    });
    expect(readCreatedBound('2026-10-25T02:30Z', 'from', '--created-from', 'Europe/Berlin').iso).toBe('2026-10-25T02:30:00.000Z');
  });

  it('{date} and {datetime} are the zone\'s: a report just after local midnight is named after its own day', () => {
    const started = new Date('2026-02-28T23:15:00Z');
    expect(expandOutName('r-{date}.csv', started, undefined)).toBe('r-2026-02-28.csv');
    expect(expandOutName('r-{date}.csv', started, undefined, { zone: 'Europe/Berlin' })).toBe('r-2026-03-01.csv');
    expect(expandOutName('r-{datetime}.csv', started, undefined, { zone: 'Europe/Berlin' })).toBe('r-2026-03-01T001500+0100.csv');
    expect(expandOutName('r-{datetime}.csv', started, undefined, { zone: 'UTC' })).toBe('r-2026-02-28T231500Z.csv');
    expect(expandOutName('{report}-{period}.csv', started, 'monthly', { period: { label: '2026-02' } })).toBe('monthly-2026-02.csv');
    expect(() => expandOutName('r-{period}.csv', started, undefined, {})).toThrow(/\{period\} needs --period/);
  });
});

describe("the summary's months and ISO weeks (ExportTally)", () => {
  // Plain UTC instants (worked out once a day), and text Date.parse reads otherwise or not at all.
  const texts = [
    '2024-12-29T12:00:00.5Z',
    '2024-12-30T00:00:00Z',
    '2025-01-01T23:59:59.999Z',
    '2025-02-28T23:59:59Z',
    '2025-02-29T10:00:00Z',
    '2025-02-30T23:59:59.999Z',
    '2025-01-32T00:00:00Z',
    '2025-13-01T00:00:00Z',
    '2025-01-31T24:00:00Z',
    '2025-01-05T24:00:00.000Z',
    '2025-01-01T23:59:60Z',
    '2025-12-31T23:30:00+02:00',
    '2025-12-31T23:30:00-02:00',
    '2025-12-31T23:00:00.1234Z',
    '2025-06-01T12:00:00z',
    '2025-06-01 12:00:00Z',
    '2025-06-01',
    'not a date',
  ];
  /** Date.parse's reading, in the zone's calendar: what the tally counts, one path or the other. */
  function expected(zone: string | undefined) {
    const months: Record<string, number> = {};
    const weeks: Record<string, number> = {};
    const day = localDayIn(zone);
    for (const text of [...texts, ...texts]) {
      const ms = Date.parse(text);
      const month = Number.isNaN(ms) ? '?' : day(ms).slice(0, 7);
      const week = Number.isNaN(ms) ? '?' : isoWeek(day(ms));
      months[month] = (months[month] ?? 0) + 1;
      weeks[week] = (weeks[week] ?? 0) + 1;
    }
    return { months, weeks };
  }

  it.each([undefined, 'UTC', 'Europe/Berlin', 'America/St_Johns'])('zone %s: each text counted in the month and week Date.parse puts it in', (zone) => {
    const tally = new ExportTally(undefined, undefined, zone);
    for (const created_at of [...texts, ...texts]) tally.add({ ...BLANK_CLIENT, created_at });
    const { byMonth, byWeek } = tally.figures();
    const { months, weeks } = expected(zone);
    expect(Object.fromEntries(Object.entries(byMonth).filter(([, n]) => n > 0))).toEqual(months);
    expect(Object.fromEntries(Object.entries(byWeek).filter(([, n]) => n > 0))).toEqual(weeks);
  });
});

describe("the summary's periods from years far apart", () => {
  it('a created_at in year 1 or 9999 is counted in its own month and week; gaps are filled only across a century', () => {
    const tally = new ExportTally(undefined, undefined);
    for (const created_at of ['0001-01-01T00:00:00Z', '2025-03-05T00:00:00Z', '9999-12-31T23:59:59Z', '+010000-01-01T00:00:00Z']) tally.add({ ...BLANK_CLIENT, created_at });
    const { byMonth, byWeek } = tally.figures();
    // 1 January of year 1 is a Monday (proleptic Gregorian): ISO week 1 of year 1; 1 January
    // 10000 a Saturday, in the last week of 9999.
    expect(byMonth).toEqual({ '+010000-01': 1, '0001-01': 1, '2025-03': 1, '9999-12': 1 });
    expect(byWeek).toEqual({ '0001-W01': 1, '2025-W10': 1, '9999-W52': 2 });
    const near = new ExportTally(undefined, undefined);
    for (const created_at of ['1990-01-15T00:00:00Z', '2025-03-05T00:00:00Z']) near.add({ ...BLANK_CLIENT, created_at });
    expect(Object.keys(near.figures().byMonth)).toHaveLength(12 * 35 + 3);
  });
});
