/**
 * `--out` placeholders for reports run on a schedule: `{date}` (2026-11-25), `{datetime}`
 * (2026-11-25T031500Z: no colons, safe on every file system), `{report}` (the report's name) and
 * `{period}` (the period the file holds: 2026-02, 2026-W07, 2026-02-14). Dates are the export's
 * start instant in the run's time zone (UTC unless one is given; `{datetime}` then ends in its
 * offset, 2026-11-25T041500+0100), so a report made just after local midnight is named after
 * its own day. Anything else in braces is refused, whatever its case: `{Date}` left as text
 * would write one file name forever.
 */
import { UsageError } from '../errors.js';
import type { Period } from './period.js';
import { formatOffset, isoDate, offsetAt, UTC, wallTime } from './time-zone.js';

const PLACEHOLDER = /\{([^{}]*)\}/g;
const NAMES = ['date', 'datetime', 'report', 'period'];

/** What names are made in: the time zone of `{date}`, and the period `{period}` names. */
export interface NameContext {
  zone?: string | undefined;
  period?: Pick<Period, 'label'> | undefined;
}

/**
 * The name with its placeholders filled in. Without a context (a template checked, or shown
 * before a run), `{period}` stays as it is: the period is known only when the run starts.
 */
export function expandOutName(out: string, started: Date, report: string | undefined, context?: NameContext): string {
  const period = context === undefined ? '{period}' : context.period?.label;
  const values: Record<string, string | undefined> = { ...dateValues(started, context?.zone ?? UTC), report, period };
  return out.replace(PLACEHOLDER, (whole, name: string) => {
    const value = NAMES.includes(name) ? values[name] : undefined;
    if (value !== undefined) return value;
    const lower = name.trim().toLowerCase();
    const why =
      name === 'report'
        ? '{report} needs --report NAME'
        : name === 'period'
          ? '{period} needs --period'
          : NAMES.includes(lower)
            ? `unknown placeholder ${whole} (placeholders are lower case: {${lower}})`
            : `unknown placeholder ${whole}`;
    throw new UsageError(`--out ${out}: ${why}; placeholders are {date}, {datetime}, {report}, {period}`, 'bad_option');
  });
}

/** `{date}` and `{datetime}` of the instant in the zone. */
function dateValues(started: Date, zone: string): { date: string; datetime: string } {
  const ms = started.getTime();
  const wall = wallTime(ms, zone);
  const time = [wall.hour, wall.minute, wall.second].map((n) => String(n).padStart(2, '0')).join('');
  const offset = formatOffset(zone === UTC ? 0 : offsetAt(ms, zone)).replace(':', '');
  return { date: isoDate(wall), datetime: `${isoDate(wall)}T${time}${offset}` };
}

/**
 * The hint of `output_exists`: a name dated by the day collides with the same day's earlier run,
 * so it suggests the same name with the time; a name with no date gets one.
 */
export function datedNameHint(template: string): string {
  if (template.includes('{datetime}')) return '';
  if (template.includes('{date}')) return `, or one with the time: --out '${template.replaceAll('{date}', '{datetime}')}'`;
  return ", or a dated name such as --out 'report-{datetime}.csv'";
}

/** Whether the name asks for gzip. */
export const isGzipName = (out: string): boolean => /\.gz$/i.test(out);
