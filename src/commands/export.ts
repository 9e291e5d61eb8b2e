/**
 * `ccs-bulk export`: connect, run the export pipeline, print the summary. Failures are thrown
 * (main.ts maps them: AuthError and an interrupt → 3, a broken server → 1, a refused page
 * size → 2); this only adds a line saying what happened to the output.
 *
 * With --json the summary goes to stdout, except when the data itself goes there (`--out -`):
 * then it goes to stderr as one JSON line, so stdout stays a clean CSV/JSONL/xlsx stream.
 */
import { type ExitCode, StoppedError, UsageError } from '../errors.js';
import { type ExportSummary, exportClients } from '../export/run-export.js';
import type { Io } from '../io.js';
import type { Connection, ResolvedExportOptions } from '../options.js';
import { counted, createProgress, formatDuration, formatLimits, progressDisplay } from '../progress.js';
import { type LogFile, withLogFile } from '../log-file.js';
import { connect } from './connect.js';
import { reportSweep } from './stale-temps.js';

export async function runExport(options: ResolvedExportOptions, io: Io): Promise<ExitCode> {
  const { export: settings, connection } = options;
  if (!connection)
    throw new UsageError('export needs a service connection (or --sandbox)', 'connection_missing');
  const toStdout = settings.out === '-';
  // A workbook is binary: piped or redirected it is fine, on a terminal it is noise.
  if (toStdout && settings.format === 'xlsx' && io.stdout.isTTY === true) {
    throw new UsageError(
      'an xlsx workbook is binary: name a file with --out report.xlsx, or redirect stdout to one',
      'xlsx_to_terminal',
    );
  }
  return withLogFile(settings.logFile, 'export', (log) => exportWith(options, connection, io, log));
}

async function exportWith(
  options: ResolvedExportOptions,
  connection: Connection,
  io: Io,
  log: LogFile | undefined,
): Promise<ExitCode> {
  const settings = options.export;
  const toStdout = settings.out === '-';
  log?.run('run_started', {
    out: settings.out,
    report: settings.report,
    since_last: settings.sinceLast,
    status: settings.status,
    credit_status: settings.creditStatus,
  });
  const connected = await connect(
    connection,
    {
      scheme: options.scheme,
      retries: options.retries,
      timeoutMs: options.timeoutMs,
      // One connection per page in flight; `auto` may grow to its bound.
      connections: settings.prefetch === 'auto' ? settings.maxPrefetch : settings.prefetch,
      needSigner: false,
      quiet: options.quiet,
      log,
    },
    io,
  );
  const progress = createProgress({ ...progressDisplay(options, io), unit: 'clients', knownTotal: false });
  let summary: ExportSummary;
  try {
    summary = await exportClients({
      ...settings,
      service: connected.service,
      out: toStdout ? io.stdout : settings.out,
      sinceLast: settings.sinceLast,
      overwrite: settings.overwrite,
      gzip: settings.gzip,
      signal: io.signal,
      onProgress: (snapshot) => progress.update(snapshot),
      onStaleTemps: reportSweep(options.quiet, io, log),
    }).finally(() => progress.stop());
  } catch (error) {
    const what = error instanceof StoppedError ? 'export interrupted' : 'export failed';
    io.stderr.write(
      toStdout
        ? `ccs-bulk: ${what}: what was written to stdout is incomplete\n`
        : `ccs-bulk: ${what}: ${settings.out} was not written (an existing file keeps its old content)\n`,
    );
    throw error;
  } finally {
    await connected.close();
  }
  const report: ExportSummary = { ...summary, out: toStdout ? 'stdout' : summary.out };
  log?.run('run_finished', {
    out: report.out,
    rows: report.rows,
    pages: report.pages,
    requests: report.requests,
    created_from: report.filters.createdFrom,
    created_to: report.filters.createdTo,
    elapsed_ms: report.elapsedMs,
    exit_code: 0,
  });
  if (options.json) (toStdout ? io.stderr : io.stdout).write(`${JSON.stringify(report)}\n`);
  if (!options.quiet) io.stderr.write(formatExportSummary(report));
  return 0;
}

export function formatExportSummary(summary: ExportSummary): string {
  const { filters } = summary;
  const lines = [
    `Exported ${counted(summary.rows, 'client')} in ${formatDuration(summary.elapsedMs)} (${summary.rowsPerSecond} rows/s) ` +
      `to ${summary.out} (${summary.format}${summary.gzip ? ', gzip' : ''}): ${summary.pages} pages of up to ${summary.pageSize}, ` +
      `page base ${summary.pageBase ?? '?'}, ${filters.direction}`,
  ];
  const where = [
    filters.status && `status in ${filters.status.join(',')}`,
    filters.creditStatus && `credit_status in ${filters.creditStatus.join(',')}`,
    filters.createdFrom && `created_at ≥ ${filters.createdFrom}`,
  ].filter(Boolean);
  if (summary.rows === 0) {
    lines.push(
      summary.format === 'csv'
        ? '  no client matched: the file holds the header row only'
        : '  no client matched: the file holds no rows',
    );
  }
  if (where.length > 0) lines.push(`  filters: ${where.join(', ')}`);
  const incremental = summary.incremental;
  if (incremental) {
    lines.push(
      incremental.previousBound === undefined
        ? `  incremental: first run, ${incremental.state} created`
        : `  incremental: clients created since the last run (created_at ≥ ${incremental.previousBound}; ` +
            `${incremental.skippedAtBound} already exported at that bound skipped), ${incremental.state} updated`,
    );
  }
  lines.push(
    summary.createdToPinned
      ? `  created_at ≤ ${filters.createdTo}: pinned to the export's start (no --created-to), so clients created during the export are not included`
      : `  created_at ≤ ${filters.createdTo}`,
  );
  lines.push(`  prefetch: ${formatLimits(summary.prefetch, 'pages ahead')}`);
  lines.push(...formatCounts(summary.counts));
  if (summary.duplicatesDropped > 0) {
    lines.push(`  ${summary.duplicatesDropped} clients sent again by the service were written once`);
  }
  return `${lines.join('\n')}\n`;
}

/** A small status × credit_status table, for the report's reader. */
function formatCounts(counts: ExportSummary['counts']): string[] {
  const statuses = Object.keys(counts).sort();
  if (statuses.length === 0) return [];
  const credits = [...new Set(statuses.flatMap((status) => Object.keys(counts[status]!)))].sort();
  const header = ['status', ...credits, 'total'];
  const rows = statuses.map((status) => {
    const cells = credits.map((credit) => counts[status]![credit] ?? 0);
    return [status, ...cells.map(String), String(cells.reduce((a, b) => a + b, 0))];
  });
  const widths = header.map((cell, i) => Math.max(cell.length, ...rows.map((row) => row[i]!.length)));
  const line = (row: string[]) => `  ${row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ')}`;
  return [line(header), ...rows.map(line)];
}
