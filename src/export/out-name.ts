/**
 * `--out` placeholders for reports run on a schedule: `{date}` (2026-11-25), `{datetime}`
 * (2026-11-25T031500Z: no colons, safe on every file system) and `{report}` (the report's name),
 * all UTC, taken from the export's start instant.
 */
import { UsageError } from '../errors.js';

const PLACEHOLDER = /\{([a-z]*)\}/g;

export function expandOutName(out: string, started: Date, report: string | undefined): string {
  const iso = started.toISOString();
  const values: Record<string, string | undefined> = {
    date: iso.slice(0, 10),
    datetime: `${iso.slice(0, 10)}T${iso.slice(11, 19).replace(/:/g, '')}Z`,
    report,
  };
  return out.replace(PLACEHOLDER, (whole, name: string) => {
    const value = values[name];
    if (value !== undefined) return value;
    const why = name === 'report' ? '{report} needs --report NAME' : `unknown placeholder ${whole}`;
    throw new UsageError(`--out ${out}: ${why}; placeholders are {date}, {datetime}, {report}`, 'bad_option');
  });
}

/** Whether the name asks for gzip. */
export const isGzipName = (out: string): boolean => /\.gz$/i.test(out);
