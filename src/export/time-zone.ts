/**
 * IANA time zones without a time-zone library: the offset at an instant comes from
 * Intl.DateTimeFormat (Node's ICU carries the tz database), and a local wall time becomes an
 * instant by trying the offsets a day either side. Daylight saving is whatever ICU says:
 * a wall time in a spring gap moves forward by the gap (02:30 on a 02:00→03:00 night is 03:30),
 * one repeated in autumn is the first of the two, and a day starts at its first instant.
 */
import { UsageError } from '../errors.js';
import { didYouMean } from '../infra/did-you-mean.js';

/** The default zone: every window, name and date is UTC unless a zone is given. */
export const UTC = 'UTC';

const DAY_MS = 86_400_000;

/** A local calendar time; months 1–12, weekday 1 (Monday) to 7 (Sunday). */
export interface WallTime {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  millisecond: number;
}

const formats = new Map<string, Intl.DateTimeFormat>();

function formatFor(zone: string): Intl.DateTimeFormat {
  let format = formats.get(zone);
  if (format === undefined) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formats.set(zone, format);
  }
  return format;
}

/** `Europe/Berlin`, `europe/berlin`, `Etc/UTC` → the zone's canonical name; anything Intl does not know is refused. */
export function checkTimeZone(text: string, label: string): string {
  const name = text.trim();
  try {
    if (name === '') throw new RangeError('empty');
    return new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    const hint = didYouMean(name, Intl.supportedValuesOf('timeZone'));
    throw new UsageError(
      `${label} ${JSON.stringify(text)} is not an IANA time zone${hint}; e.g. Europe/Berlin, America/New_York or UTC (the default)`,
      'bad_option',
    );
  }
}

/** The zone's wall time at `ms`. */
export function wallTime(ms: number, zone: string): WallTime {
  const parts: Record<string, number> = {};
  for (const part of formatFor(zone).formatToParts(ms)) {
    if (part.type !== 'literal') parts[part.type] = Number(part.value);
  }
  return {
    year: parts.year!,
    month: parts.month!,
    day: parts.day!,
    // Some ICU builds write midnight as 24 even in h23.
    hour: parts.hour! % 24,
    minute: parts.minute!,
    second: parts.second!,
    millisecond: ((ms % 1000) + 1000) % 1000,
  };
}

/** The zone's offset from UTC at `ms`, in ms (Berlin in winter: +3,600,000). */
export function offsetAt(ms: number, zone: string): number {
  if (zone === UTC) return 0;
  const wall = wallTime(ms, zone);
  return asUtc(wall) - ms;
}

/** The wall time's digits read as if they were UTC. */
function asUtc(wall: Pick<WallTime, 'year' | 'month' | 'day'> & Partial<WallTime>): number {
  const ms = Date.UTC(wall.year, wall.month - 1, wall.day, wall.hour ?? 0, wall.minute ?? 0, wall.second ?? 0, wall.millisecond ?? 0);
  // Date.UTC maps years 0–99 to 1900–1999.
  return wall.year < 100 ? new Date(ms).setUTCFullYear(wall.year) : ms;
}

/**
 * The instant a local wall time names in `zone` (days and months may overflow: day 0 is the
 * month's eve, month 13 next January). Repeated times take the earlier instant; times in a gap
 * are moved forward by the gap.
 */
export function instantOf(wall: Pick<WallTime, 'year' | 'month' | 'day'> & Partial<WallTime>, zone: string): number {
  const local = asUtc(wall);
  if (zone === UTC) return local;
  const before = offsetAt(local - DAY_MS, zone);
  const after = offsetAt(local + DAY_MS, zone);
  const fits = [local - before, local - after].filter((ms) => ms + offsetAt(ms, zone) === local);
  if (fits.length > 0) return Math.min(...fits);
  // In a gap: read with the offset before it, which lands past the change by as much as the wall time is into the gap.
  return local - before;
}

/** `+01:00`, `-04:00`, `Z` for zero. */
export function formatOffset(offsetMs: number): string {
  if (offsetMs === 0) return 'Z';
  const minutes = Math.round(Math.abs(offsetMs) / 60_000);
  return `${offsetMs < 0 ? '-' : '+'}${two(Math.floor(minutes / 60))}:${two(minutes % 60)}`;
}

const two = (n: number) => String(n).padStart(2, '0');

/** `2026-03-29`: the wall time's date. */
export function isoDate(wall: Pick<WallTime, 'year' | 'month' | 'day'>): string {
  return `${String(wall.year).padStart(4, '0')}-${two(wall.month)}-${two(wall.day)}`;
}

/** `2026-03-29T03:00:00.000+02:00` (UTC: `…Z`): the instant as the zone's clocks show it, offset included. */
export function zonedIso(ms: number, zone: string): string {
  if (zone === UTC) return new Date(ms).toISOString();
  const wall = wallTime(ms, zone);
  const time = `${two(wall.hour)}:${two(wall.minute)}:${two(wall.second)}.${String(wall.millisecond).padStart(3, '0')}`;
  return `${isoDate(wall)}T${time}${formatOffset(asUtc(wall) - ms)}`;
}

/** `2026-03-29 03:00` (with `:ss.SSS` when not zero): how the summary shows a local bound. */
export function localText(ms: number, zone: string): string {
  const wall = wallTime(ms, zone);
  const seconds = wall.second === 0 && wall.millisecond === 0 ? '' : `:${two(wall.second)}.${String(wall.millisecond).padStart(3, '0')}`;
  return `${isoDate(wall)} ${two(wall.hour)}:${two(wall.minute)}${seconds}`;
}

/** ISO weekday of a date: 1 Monday … 7 Sunday. */
export function weekday(wall: Pick<WallTime, 'year' | 'month' | 'day'>): number {
  return ((new Date(Date.UTC(wall.year, wall.month - 1, wall.day)).getUTCDay() + 6) % 7) + 1;
}
