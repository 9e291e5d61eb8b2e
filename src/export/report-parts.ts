/**
 * `--split rows:N|month|status`: which part each client goes to, and the names of the parts:
 * sheets of one workbook (xlsx) or files beside `--out` (`jan.csv` → `jan-2025-01.csv`,
 * `jan-approved.csv`, `jan-1.csv`). Rows and months arrive in order (created_at), so their
 * parts follow one another; statuses interleave.
 */
import { readdirSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { UsageError } from '../errors.js';
import { shownPath } from '../infra/printable.js';
import type { FlatClient } from './columns.js';
import type { SplitRule } from './report-options.js';
import { localDayIn } from './tally.js';

/** The part key of each client, in order. */
export function partKeys(rule: SplitRule, timeZone: string | undefined): (client: FlatClient) => string {
  if (rule.by !== 'rows') return rule.by === 'status' ? (client) => client.status ?? 'none' : monthKeys(timeZone);
  let index = 0;
  const rows = rule.rows;
  return () => String(Math.floor(index++ / rows) + 1);
}

function monthKeys(timeZone: string | undefined): (client: FlatClient) => string {
  const day = localDayIn(timeZone);
  return (client) => {
    const ms = client.created_at === null ? Number.NaN : Date.parse(client.created_at);
    return Number.isNaN(ms) ? 'undated' : day(ms).slice(0, 7);
  };
}

/** Whether a part, once left, never comes back (its file can be closed). */
export const partsInOrder = (rule: SplitRule): boolean => rule.by !== 'status';

/** A sheet's name for a part: the data sheet's name and the part's number, or the month or status. */
export function sheetNameOf(rule: SplitRule, sheetName: string, key: string): string {
  return rule.by === 'rows' ? `${sheetName} ${key}`.slice(0, 31) : key.slice(0, 31);
}

/** `reports/jan.csv.gz` → `reports/jan` and `.csv.gz`. */
function stemOf(out: string): { stem: string; extension: string } {
  const name = basename(out);
  const match = /^(.+?)((?:\.[A-Za-z0-9]+)?(?:\.gz)?)$/i.exec(name);
  const stem = match?.[1] ?? name;
  return { stem: join(dirname(out), stem), extension: match?.[2] ?? '' };
}

/** A part's file: the key after the name, before the extension. */
export function partFile(out: string, key: string): string {
  const { stem, extension } = stemOf(out);
  return `${stem}-${key}${extension}`;
}

/** The summary's companion file: `jan.csv` → `jan.summary.csv`. */
export function summaryFileOf(out: string): string {
  const { stem } = stemOf(out.replace(/\.gz$/i, ''));
  return `${stem}.summary.csv`;
}

/** Refuses, before any request, part files that exist already (unless replacing is allowed). */
export function refuseExistingParts(out: string, overwrite: boolean): void {
  if (overwrite) return;
  const { stem, extension } = stemOf(out);
  const prefix = `${basename(stem)}-`;
  let names: string[];
  try {
    names = readdirSync(dirname(out));
  } catch {
    return;
  }
  const found = names.filter((name) => name.startsWith(prefix) && name.endsWith(extension) && name.length > prefix.length + extension.length);
  if (found.length > 0) {
    throw new UsageError(
      `${shownPath(join(dirname(out), found[0]!))} exists and a split export would write files named so: pass --overwrite, or name another file`,
      'output_exists',
    );
  }
}
