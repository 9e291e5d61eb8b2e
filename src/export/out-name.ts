/**
 * `--out` placeholders for reports run on a schedule: `{date}` (2026-11-25), `{datetime}`
 * (2026-11-25T031500Z: no colons, safe on every file system) and `{report}` (the report's name),
 * all UTC, taken from the export's start instant. Anything else in braces is refused, whatever
 * its case: `{Date}` left as text would write one file name forever.
 */
import { UsageError } from '../errors.js';

const PLACEHOLDER = /\{([^{}]*)\}/g;
const NAMES = ['date', 'datetime', 'report'];

export function expandOutName(out: string, started: Date, report: string | undefined): string {
  const iso = started.toISOString();
  const values: Record<string, string | undefined> = {
    date: iso.slice(0, 10),
    datetime: `${iso.slice(0, 10)}T${iso.slice(11, 19).replace(/:/g, '')}Z`,
    report,
  };
  return out.replace(PLACEHOLDER, (whole, name: string) => {
    const value = NAMES.includes(name) ? values[name] : undefined;
    if (value !== undefined) return value;
    const lower = name.trim().toLowerCase();
    const why =
      name === 'report'
        ? '{report} needs --report NAME'
        : NAMES.includes(lower)
          ? `unknown placeholder ${whole} (placeholders are lower case: {${lower}})`
          : `unknown placeholder ${whole}`;
    throw new UsageError(`--out ${out}: ${why}; placeholders are {date}, {datetime}, {report}`, 'bad_option');
  });
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
