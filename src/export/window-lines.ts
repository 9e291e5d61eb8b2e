/**
 * The summary's lines about time: the period and its zone, both bounds on the zone's clocks and
 * in UTC as sent, and what a period report did besides this file (periods caught up, or none
 * ended since its last run). A plain UTC window keeps the command's one `created_at (UTC)` line.
 */
import type { ExportSummary } from './summary.js';
import { localText } from './time-zone.js';

const PINNED = " (pinned to the export's start: clients created during the export are not included)";

/** The window's lines, or undefined for a UTC window without a period. */
export function windowLines(summary: ExportSummary): string[] | undefined {
  const { filters, period, timeZone } = summary;
  if (period === undefined && timeZone === 'UTC' && !summary.datesInTimeZone) return undefined;
  const lines: string[] = [];
  const utcFrom = filters.createdFrom ?? 'the first client';
  if (period !== undefined) {
    const end = period.ended ? `${period.endLocal} (end excluded)` : `the export's start (${localText(Date.parse(filters.createdTo), period.zone)})`;
    lines.push(`  period: ${period.name} = ${period.label} in ${period.zone}: ${period.fromLocal} to ${end}`);
    lines.push(`  created_at (UTC): ${utcFrom} to ${filters.createdTo}${period.ended ? ', end excluded' : PINNED}`);
  } else {
    const local = (iso: string | undefined) => (iso === undefined ? 'the first client' : localText(Date.parse(iso), timeZone));
    lines.push(`  created_at (${timeZone}): ${local(filters.createdFrom)} to ${local(filters.createdTo)}`);
    lines.push(`  created_at (UTC): ${utcFrom} to ${filters.createdTo}${summary.createdToPinned ? PINNED : ''}`);
  }
  if (summary.datesInTimeZone) lines.push(`  created_at written in ${timeZone}, with its offset`);
  return [...lines, ...filters.notes.map((note) => `  ${note}`)];
}

/** One line per file written before this one, for periods a period report caught up. */
export function earlierLines(summary: ExportSummary): string[] {
  return (summary.earlierPeriods ?? []).map(
    (earlier) =>
      `Exported ${earlier.rows} client${earlier.rows === 1 ? '' : 's'} to ${earlier.out}: ${earlier.period?.name ?? 'period'} ` +
      `${earlier.period?.label ?? '?'} (${earlier.period?.fromLocal ?? '?'} to ${earlier.period?.endLocal ?? '?'} ${earlier.timeZone}, ` +
      'a period no run had exported)',
  );
}

/** A period report with no period ended since its last run: what it said instead of a file. */
export function upToDateLines(summary: ExportSummary): string {
  const incremental = summary.incremental!;
  const upToDate = incremental.upToDate!;
  return (
    `Nothing to export: no period ended since the last run, whose file is ${upToDate.lastOut}; ` +
    `the next, ${upToDate.next}, ends ${upToDate.nextEnd} (${incremental.state} unchanged, no file written)\n`
  );
}
