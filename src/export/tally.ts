/**
 * The counts a report's reader wants, added up while the rows stream by (memory: one cell per
 * status × credit status, country, month and week seen, whatever the number of clients): the
 * total, status × credit status with the zero cells of the statuses asked for, by country, by
 * month and by ISO week of created_at, in the report's time zone (UTC unless one is given).
 */
import { CLIENT_STATUSES, CREDIT_STATUSES } from '../service/schemas.js';
import type { FlatClient } from './columns.js';

/** What a tally holds at the end, as plain data (--json, the summary sheet, the summary file). */
export interface TallyFigures {
  total: number;
  /** status → credit status → clients, every cell of the statuses asked for (0 included), a `total` column and row. */
  counts: Record<string, Record<string, number>>;
  /** ISO country code → clients, most first ('' for none). */
  byCountry: Record<string, number>;
  /** `2025-01` → clients, in order. */
  byMonth: Record<string, number>;
  /** `2025-W05` (ISO week, from Monday) → clients, in order. */
  byWeek: Record<string, number>;
}

const QUARTER_HOUR_MS = 15 * 60_000;
const DAY_MS = 86_400_000;

/**
 * A created_at as the service writes it: a UTC instant, its time of day in range. Its UTC day
 * is its first ten characters, whatever the time: in UTC its month and week need no Date.parse.
 */
const PLAIN_UTC = /^\d{4}-\d\d-\d\dT(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:\.\d{1,3})?Z$/;

/** The month and ISO week a created_at is counted in. */
interface Periods {
  month: string;
  week: string;
}

export class ExportTally {
  readonly #counts = new Map<string, Map<string, number>>();
  readonly #countries = new Map<string, number>();
  readonly #months = new Map<string, number>();
  readonly #weeks = new Map<string, number>();
  readonly #statuses: readonly string[];
  readonly #credits: readonly string[];
  readonly #localDay: (ms: number) => string;
  readonly #periods = new Map<number, Periods>();
  /** UTC only: the periods of a plain created_at's day (yyyymmdd), or null where Date.parse refuses the day (the full path says what then). */
  readonly #days: Map<number, Periods | null> | undefined;
  #total = 0;

  constructor(statuses: readonly string[] | undefined, credits: readonly string[] | undefined, timeZone?: string) {
    this.#statuses = statuses ?? CLIENT_STATUSES;
    this.#credits = credits ?? CREDIT_STATUSES;
    this.#localDay = localDayIn(timeZone);
    if (isUtc(timeZone)) this.#days = new Map();
  }

  add(client: FlatClient): void {
    this.#total++;
    const status = client.status ?? '?';
    let row = this.#counts.get(status);
    if (row === undefined) this.#counts.set(status, (row = new Map<string, number>()));
    bump(row, client.credit_status ?? '?');
    bump(this.#countries, (client.country ?? '').toUpperCase());
    const when = client.created_at === null ? undefined : this.#periodsOfText(client.created_at);
    bump(this.#months, when?.month ?? '?');
    bump(this.#weeks, when?.week ?? '?');
  }

  /** The month and ISO week of a created_at; undefined where it is no instant. */
  #periodsOfText(text: string): Periods | undefined {
    if (this.#days !== undefined && PLAIN_UTC.test(text)) {
      const periods = this.#dayPeriods(this.#days, text);
      if (periods !== null) return periods;
    }
    const ms = Date.parse(text);
    return Number.isNaN(ms) ? undefined : this.#periodsOf(ms);
  }

  /** A plain UTC created_at's periods, worked out once per day seen; null: the full path decides. */
  #dayPeriods(days: Map<number, Periods | null>, text: string): Periods | null {
    const digit = (at: number) => text.charCodeAt(at) - 48;
    const key =
      ((((((digit(0) * 10 + digit(1)) * 10 + digit(2)) * 10 + digit(3)) * 10 + digit(5)) * 10 + digit(6)) * 10 + digit(8)) * 10 + digit(9);
    let periods = days.get(key);
    if (periods === undefined) {
      if (days.size > 4096) days.clear();
      // Date.parse's own reading of the day (it rolls 02-30 over into March, refuses 02-32).
      const ms = Date.parse(`${text.slice(0, 10)}T00:00:00Z`);
      periods = Number.isNaN(ms) ? null : this.#periodsOf(ms);
      days.set(key, periods);
    }
    return periods;
  }

  /** The month and ISO week of an instant, worked out once per quarter hour seen (every zone offset is a multiple of it). */
  #periodsOf(ms: number): Periods {
    const slot = Math.floor(ms / QUARTER_HOUR_MS);
    let periods = this.#periods.get(slot);
    if (periods === undefined) {
      if (this.#periods.size > 4096) this.#periods.clear();
      const day = this.#localDay(ms);
      periods = { month: day.slice(0, -3), week: isoWeek(day) };
      this.#periods.set(slot, periods);
    }
    return periods;
  }

  figures(): TallyFigures {
    const statuses = [...this.#statuses, ...[...this.#counts.keys()].filter((s) => !this.#statuses.includes(s)).sort()];
    const seenCredits = [...this.#counts.values()].flatMap((row) => [...row.keys()]);
    const credits = [...this.#credits, ...[...new Set(seenCredits)].filter((c) => !this.#credits.includes(c)).sort()];
    const counts: TallyFigures['counts'] = {};
    const totals: Record<string, number> = Object.fromEntries(credits.map((credit) => [credit, 0]));
    for (const status of statuses) {
      const row = this.#counts.get(status);
      const cells: Record<string, number> = {};
      let sum = 0;
      for (const credit of credits) {
        const n = row?.get(credit) ?? 0;
        cells[credit] = n;
        totals[credit]! += n;
        sum += n;
      }
      counts[status] = { ...cells, total: sum };
    }
    counts.total = { ...totals, total: this.#total };
    const byCountry = Object.fromEntries([...this.#countries].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])));
    return { total: this.#total, counts, byCountry, byMonth: withGaps(this.#months, nextMonth), byWeek: withGaps(this.#weeks, nextWeek) };
  }
}

/**
 * Gaps are filled across at most this many years of four digits: a created_at the service wrote
 * in year 1 or 9999 would otherwise list every week between (or, past year 9999, never end).
 */
const MAX_GAP_YEARS = 100;

/** In order, each month or week between the first and the last seen listed, with 0 where none was (periods seen only, past MAX_GAP_YEARS). */
function withGaps(map: Map<string, number>, next: (key: string) => string): Record<string, number> {
  const keys = [...map.keys()].filter((key) => key !== '?').sort();
  const out: Record<string, number> = {};
  const first = keys[0];
  const last = keys[keys.length - 1];
  if (first !== undefined && last !== undefined && fillable(first, last)) {
    for (let key = first; key <= last; key = next(key)) out[key] = map.get(key) ?? 0;
  } else {
    for (const key of keys) out[key] = map.get(key)!;
  }
  if (map.has('?')) out['?'] = map.get('?')!;
  return out;
}

/** Periods from `first` to `last` (sorted: a year of more or fewer digits, or signed, sorts first) that gaps may be filled across. */
function fillable(first: string, last: string): boolean {
  const from = /^(\d{4})-/.exec(first)?.[1];
  const to = /^(\d{4})-/.exec(last)?.[1];
  return from !== undefined && to !== undefined && Number(from) >= 1000 && Number(to) - Number(from) <= MAX_GAP_YEARS;
}

function nextMonth(month: string): string {
  const [year, m] = month.split('-').map(Number) as [number, number];
  return m === 12 ? `${year + 1}-01` : `${year}-${String(m + 1).padStart(2, '0')}`;
}

/** The ISO week after `2025-W05`: its Thursday plus 7 days, named again. */
function nextWeek(week: string): string {
  const [year, w] = [Number(week.slice(0, 4)), Number(week.slice(6))];
  const jan4 = utcDay(year, 0, 4);
  const monday1 = jan4 - ((new Date(jan4).getUTCDay() + 6) % 7) * DAY_MS;
  return isoWeek(new Date(monday1 + w * 7 * DAY_MS).toISOString().slice(0, 10));
}

function bump(map: Map<string, number>, key: string): void {
  map.set(key, (map.get(key) ?? 0) + 1);
}

/** No zone given, or UTC by name: days and weeks are UTC's. */
function isUtc(timeZone: string | undefined): boolean {
  return timeZone === undefined || timeZone.toUpperCase() === 'UTC';
}

/**
 * The local date (YYYY-MM-DD) of an instant. UTC is a slice; a zone asks Intl once per quarter
 * hour of time seen (every offset in use is a multiple of 15 minutes), not once per client.
 */
export function localDayIn(timeZone: string | undefined): (ms: number) => string {
  if (isUtc(timeZone)) {
    return (ms) => {
      const iso = new Date(ms).toISOString();
      return iso.slice(0, iso.indexOf('T'));
    };
  }
  const format = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' });
  const cache = new Map<number, string>();
  return (ms) => {
    const slot = Math.floor(ms / QUARTER_HOUR_MS);
    let day = cache.get(slot);
    if (day === undefined) {
      if (cache.size > 4096) cache.clear();
      day = format.format(new Date(slot * QUARTER_HOUR_MS));
      cache.set(slot, day);
    }
    return day;
  };
}

/** `2025-01-01` → `2025-W01` (ISO 8601: weeks from Monday, week 1 holds the year's first Thursday). */
export function isoWeek(day: string): string {
  const ms = Date.parse(`${day}T00:00:00Z`);
  const weekday = (new Date(ms).getUTCDay() + 6) % 7;
  const thursday = new Date(ms + (3 - weekday) * DAY_MS);
  const year = thursday.getUTCFullYear();
  const week = Math.floor((thursday.getTime() - utcDay(year, 0, 1)) / DAY_MS / 7) + 1;
  return `${yearText(year)}-W${String(week).padStart(2, '0')}`;
}

/** Date.UTC, but years 0–99 are those years (Date.UTC reads them as 1900–1999). */
function utcDay(year: number, month: number, day: number): number {
  return new Date(0).setUTCFullYear(year, month, day);
}

/** A year as ISO 8601 and toISOString write it: four digits, or signed six outside 0–9999. */
function yearText(year: number): string {
  if (year >= 0 && year <= 9999) return String(year).padStart(4, '0');
  return `${year < 0 ? '-' : '+'}${String(Math.abs(year)).padStart(6, '0')}`;
}
