/**
 * `ccs-bulk export`: connect, run the export pipeline, print the summary. Failures are thrown
 * (main.ts maps them: AuthError, an interrupt and an incomplete run → 3, a broken server → 1, a
 * refused page size → 2); this only adds a line saying what happened to the output, once the
 * run had started writing it.
 *
 * With --json the summary goes to stdout, except when the data itself goes there (`--out -`):
 * then it goes to stderr as one JSON line, so stdout stays a clean CSV/JSONL/xlsx stream.
 */
import { type ExitCode, StoppedError, UsageError } from '../errors.js';
import { type ExportSummary, runExportClients } from '../export/run-export.js';
import type { Io } from '../infra/io.js';
import type { Connection, ResolvedExportOptions } from '../config/options.js';
import { createProgress, progressDisplay } from '../cli/progress.js';
import { type LogFile, withLogFile } from '../infra/log-file.js';
import { connect } from './connect.js';
import { formatExportSummary } from './export-summary.js';
import { shownPath } from '../infra/printable.js';
import { reportLockReplaced, reportSweep } from './stale-temps.js';
import { reportRunAs } from '../cli/run-report.js';
import { heartbeatFor } from './run-heartbeat.js';
import { exportAgain } from './export-summary.js';

export { formatExportSummary };

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
  const run: RunState = { out: undefined, planned: false, replaces: false };
  // A failure's --json object (on stderr when the data goes to stdout) and the command that runs it again.
  reportRunAs({ command: 'export', json: options.json ? (toStdout ? 'stderr' : 'stdout') : undefined, nextCommand: exportAgain(options) });
  return withLogFile(
    settings.logFile,
    'export',
    (log) => exportWith(options, connection, io, log, run),
    () => ({ out: run.out ?? settings.out }),
  );
}

/** What the run learnt of its output before failing: its filled-in name, whether it started, whether a file was there. */
interface RunState {
  out: string | undefined;
  planned: boolean;
  replaces: boolean;
}

async function exportWith(
  options: ResolvedExportOptions,
  connection: Connection,
  io: Io,
  log: LogFile | undefined,
  run: RunState,
): Promise<ExitCode> {
  const settings = options.export;
  const toStdout = settings.out === '-';
  if (options.configFile !== undefined && !options.quiet) io.stderr.write(`ccs-bulk export: config ${shownPath(options.configFile)}\n`);
  if (settings.country !== undefined && !options.quiet) {
    io.stderr.write(
      `ccs-bulk export: --country ${settings.country.join(',')} is applied here, after paging: the service has no country filter, so every client of the window is read\n`,
    );
  }
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
  const heartbeat = heartbeatFor(options, connected, io);
  let summary: ExportSummary;
  try {
    summary = await runExportClients({
      ...settings,
      service: connected.service,
      // A new in-process sandbox each run: nothing to remember of its pace.
      ...(connected.sandbox && { paceMemory: false as const }),
      out: toStdout ? io.stdout : settings.out,
      signal: io.signal,
      onProgress: (snapshot) => {
        heartbeat.beat();
        progress.update(snapshot);
      },
      onStaleTemps: reportSweep(options.quiet, io, log),
      onLockReplaced: reportLockReplaced(options.quiet, io, log),
      // Logged once the name is filled in: the log says which file this run was about.
      onOutName: (out) => {
        run.out = toStdout ? 'stdout' : out;
        log?.run('run_started', {
          config: options.configFile,
          out: run.out,
          report: settings.report,
          since_last: settings.sinceLast,
          new_since_last: settings.newSinceLast,
          status: settings.status,
          credit_status: settings.creditStatus,
        });
      },
      onPlan: (plan) => {
        run.planned = true;
        run.replaces = plan.replaces;
      },
    }).finally(() => {
      heartbeat.stop();
      progress.stop();
    });
  } catch (error) {
    io.stderr.write(failureLine(error, run, toStdout));
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
    account: report.account,
    elapsed_ms: report.elapsedMs,
    exit_code: 0,
  });
  if (options.json) (toStdout ? io.stderr : io.stdout).write(`${JSON.stringify(report)}\n`);
  // A reader that closed the pipe early (`| head`) ended it, as for `cat`: nothing to say but in --json.
  if (!options.quiet && report.readerClosed !== true) io.stderr.write(formatExportSummary(report));
  return 0;
}

/**
 * What became of the output, said only once the run had planned it (before that, the error
 * alone says what is wrong): the file it names, and its old content only if there was one.
 */
function failureLine(error: unknown, run: RunState, toStdout: boolean): string {
  // A state that could not be saved after the file was put in place: its message says so.
  if (!run.planned || (error instanceof UsageError && error.code === 'state_invalid')) return '';
  const what = error instanceof StoppedError && error.code === 'interrupted' ? 'export interrupted' : 'export failed';
  if (toStdout) return `ccs-bulk: ${what}: what was written to stdout is incomplete\n`;
  const kept = run.replaces ? ' (the existing file keeps its old content)' : '';
  return `ccs-bulk: ${what}: ${run.out} was not written${kept}\n`;
}
