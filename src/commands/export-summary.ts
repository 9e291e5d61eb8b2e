/**
 * The export's human summary on stderr: what was written where, the window as understood (UTC),
 * the incremental state, the counts by status. Tuning figures (prefetch) are for --json only.
 */
import type { ExportSummary } from '../export/run-export.js';
import type { ResolvedExportOptions } from '../config/options.js';
import { counted, formatDuration } from '../cli/progress.js';
import { shellQuote } from '../cli/resume-command.js';

/**
 * The command that runs a config file's report again, by its name (said after a failure): the
 * same report, its state and its file name filled in anew, from any folder.
 */
export function exportAgain(options: ResolvedExportOptions): string | undefined {
  const { report } = options.export;
  if (report === undefined) return undefined;
  const args = ['ccs-bulk', 'export', ...(options.configFile === undefined ? [] : ['--config', options.configFile]), '--report', report];
  return args.map(shellQuote).join(' ');
}
import { earlierLines, upToDateLines, windowLines } from '../export/window-lines.js';

export function formatExportSummary(summary: ExportSummary): string {
  if (summary.incremental?.upToDate) return upToDateLines(summary);
  const { filters } = summary;
  const lines = [
    `Exported ${counted(summary.rows, 'client')} in ${formatDuration(summary.elapsedMs)} (${summary.rowsPerSecond} rows/s) ` +
      `to ${summary.out} (${summary.format}${summary.gzip ? ', gzip' : ''}): ${counted(summary.pages, 'page')} of up to ${summary.pageSize}, ` +
      `page base ${summary.pageBase ?? '?'}, ${filters.direction}`,
  ];
  if (summary.fileMode !== undefined) lines.push(`  ${readableBy(summary.fileMode)}`);
  if (summary.rows === 0) {
    lines.push(
      summary.format === 'csv'
        ? '  no client matched: the file holds the header row only'
        : '  no client matched: the file holds no rows',
    );
  }
  const where = [
    filters.status && `status in ${filters.status.join(',')}`,
    filters.creditStatus && `credit_status in ${filters.creditStatus.join(',')}`,
    summary.country && `country in ${summary.country.join(',')} (applied here after paging: the service has no country filter, the whole window was read)`,
  ].filter(Boolean);
  if (where.length > 0) lines.push(`  filters: ${where.join(', ')}`);
  lines.push(...formatWindow(summary), ...formatIncremental(summary), ...(summary.warnings ?? []).map((warning) => `  warning: ${warning}`));
  lines.push(...formatCounts(summary.counts));
  if (summary.parts) for (const part of summary.parts) lines.push(`  part ${part.name}: ${counted(part.rows, 'client')}`);
  if (summary.summaryFile !== undefined) lines.push(`  summary: ${summary.summaryFile}`);
  if (summary.duplicatesDropped > 0) {
    lines.push(`  ${counted(summary.duplicatesDropped, 'client')} sent again by the service written once`);
  }
  if (summary.possibleRepeats > 0) {
    lines.push(
      `  ${counted(summary.possibleRepeats, 'client')} written although the id matched, by its 64-bit fingerprint, one written ` +
        'several pages before: a rare fingerprint twin, or the service repeating a client from far back (the file may hold it twice)',
    );
  }
  return `${[...earlierLines(summary), ...lines].join('\n')}\n`;
}

/** Who can read the file, and how to share it when only its owner can. */
export function readableBy(mode: number): string {
  const octal = (mode & 0o777).toString(8).padStart(3, '0');
  if ((mode & 0o004) !== 0) return `readable by everyone on this machine (mode ${octal})`;
  if ((mode & 0o040) !== 0) return `readable by you and your group (mode ${octal})`;
  return `readable by you alone (mode ${octal}: it holds client data); to share it, --file-mode 640 (your group) or 644 (everyone)`;
}

/** The created_at window as sent, in UTC, and how a bound without a zone was read. */
function formatWindow(summary: ExportSummary): string[] {
  const zoned = windowLines(summary);
  if (zoned !== undefined) return zoned;
  const { filters } = summary;
  const from = filters.createdFrom === undefined ? 'the first client' : filters.createdFrom;
  const pinned = summary.createdToPinned
    ? " (pinned to the export's start: clients created during the export are not included)"
    : '';
  return [`  created_at (UTC): ${from} to ${filters.createdTo}${pinned}`, ...filters.notes.map((note) => `  ${note}`)];
}

function formatIncremental(summary: ExportSummary): string[] {
  const incremental = summary.incremental;
  if (!incremental) return [];
  const lines: string[] = [];
  if (incremental.replaced) {
    lines.push(`  ${incremental.replaced.out} replaced: the clients it held were exported again, with the new ones`);
  }
  if (incremental.mode === 'new-since-last') {
    const size = incremental.stateBytes === undefined ? '' : `, ${formatBytes(incremental.stateBytes)}`;
    lines.push(
      `  incremental: clients that entered the filter since the last run (${incremental.skippedAtBound} already reported skipped); ` +
        `${incremental.state} ${incremental.resumed ? 'updated' : 'created'} (${counted(incremental.reported ?? 0, 'client')} reported${size})`,
    );
  } else if (incremental.period) {
    lines.push(`  incremental: one file per ${incremental.period.name} period, ${incremental.state} ${incremental.resumed ? 'updated' : 'created'}`);
  } else {
    lines.push(
      incremental.previousBound === undefined
        ? `  incremental: first run, ${incremental.state} created`
        : `  incremental: clients created since the last run (${incremental.skippedAtBound} already exported at the bound skipped), ` +
            `${incremental.state} updated`,
    );
  }
  return lines;
}

function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

/** A small status × credit_status table, for the report's reader: the statuses with clients (--json has every cell). */
function formatCounts(counts: ExportSummary['counts']): string[] {
  const statuses = Object.keys(counts)
    .filter((status) => status !== 'total' && Object.entries(counts[status]!).some(([credit, n]) => credit !== 'total' && n > 0))
    .sort();
  if (statuses.length === 0) return [];
  const credits = [...new Set(statuses.flatMap((status) => Object.keys(counts[status]!)))].filter((credit) => credit !== 'total').sort();
  const header = ['status', ...credits, 'total'];
  const rows = statuses.map((status) => {
    const cells = credits.map((credit) => counts[status]![credit] ?? 0);
    return [status, ...cells.map(String), String(cells.reduce((a, b) => a + b, 0))];
  });
  const widths = header.map((cell, i) => Math.max(cell.length, ...rows.map((row) => row[i]!.length)));
  const line = (row: string[]) => `  ${row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ')}`;
  return [line(header), ...rows.map(line)];
}
