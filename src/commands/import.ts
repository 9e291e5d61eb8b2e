/**
 * `ccs-bulk import` and `validate`: connect, run the pipeline, print the plan and summary,
 * and turn the outcome into an exit code.
 */
import type { ExitCode } from '../errors.js';
import { IMPORT_DEFAULTS } from '../import/defaults.js';
import { positionWord } from '../import/read/index.js';
import { type ImportPlan, type ImportSummary, importClients, type RunAccount } from '../import/run-import.js';
import type { Io } from '../io.js';
import { type LogFile, withLogFile } from '../log-file.js';
import type { ImportOptions } from '../options.js';
import { counted, createProgress, formatDuration, formatLimits, NO_PROGRESS, progressDisplay } from '../progress.js';
import type { Connected } from './connect.js';
import { reportSweep } from './stale-temps.js';
import { resumeCommand } from '../resume-command.js';

export async function runImport(options: ImportOptions, io: Io): Promise<ExitCode> {
  return withLogFile(options.logFile, options.run.dryRun ? 'validate' : 'import', (log) => importWith(options, io, log));
}

async function importWith(options: ImportOptions, io: Io, log: LogFile | undefined): Promise<ExitCode> {
  let connected: Connected | undefined;
  const { run } = options;
  log?.run('run_started', {
    input: run.file,
    results: run.results,
    failed: run.failed,
    resume: run.resume,
    shard: run.shard && `${run.shard.index}/${run.shard.count}`,
    concurrency: run.concurrency,
    max_concurrency: run.concurrency === 'auto' ? run.maxConcurrency : undefined,
    rate: run.rate,
    max_errors: run.maxErrors,
  });
  if (!run.dryRun && options.connection) {
    // Loaded only when something is sent: validate needs no HTTP stack (~20 MB of undici).
    const { connect } = await import('./connect.js');
    connected = await connect(
      options.connection,
      {
        scheme: options.scheme,
        retries: options.retries,
        timeoutMs: options.timeoutMs,
        connections: run.concurrency === 'auto' ? (run.maxConcurrency ?? IMPORT_DEFAULTS.maxConcurrency) : run.concurrency,
        needSigner: true,
        applicationDateField: options.applicationDateField,
        quiet: options.quiet,
        log,
      },
      io,
    );
  }
  const display = progressDisplay(options, io);
  let progress = NO_PROGRESS;
  let summary: ImportSummary;
  try {
    summary = await importClients({
      ...run,
      service: connected?.service,
      signal: io.signal,
      onPlan: (plan) => {
        if (run.resume) log?.run('run_resumed', { results: plan.results, rows_created_earlier: plan.resumedCreated });
        if (!options.quiet) io.stderr.write(formatPlan(plan, options));
        // After the plan's lines: a bar redraws its own line.
        progress = createProgress({ ...display, unit: 'rows' });
      },
      onProgress: (snapshot) => progress.update(snapshot),
      onStaleTemps: reportSweep(options.quiet, io, log),
    });
  } finally {
    progress.stop();
    await connected?.close();
  }
  const exitCode = exitCodeOf(summary);
  log?.run('run_finished', {
    rows: summary.rows,
    counts: summary.counts,
    stopped: summary.stopped?.reason,
    concurrency: summary.dryRun ? undefined : summary.concurrency,
    elapsed_ms: summary.elapsedMs,
    account: summary.account && accountFields(summary.account),
    exit_code: exitCode,
  });
  if (options.json) io.stdout.write(`${JSON.stringify(summary)}\n`);
  if (!options.quiet || summary.stopped) io.stderr.write(formatSummary(summary, options));
  return exitCode;
}

export function exitCodeOf(summary: ImportSummary): ExitCode {
  if (summary.stopped?.reason === 'input_error' || summary.stopped?.reason === 'connection') return 2;
  if (summary.stopped) return 3;
  return summary.counts.invalid + summary.counts.failed > 0 ? 1 : 0;
}

function formatPlan(plan: ImportPlan, options: ImportOptions): string {
  const { source } = plan;
  const lines = [
    `ccs-bulk ${options.run.dryRun ? 'validate' : 'import'}: ${source.file} (${source.format}` +
      (source.format === 'csv'
        ? `, ${source.encoding} [${source.encodingSource}], delimiter ${JSON.stringify(source.delimiter)} [${source.delimiterSource}]`
        : `, sheet ${JSON.stringify(source.sheet ?? '')}`) +
      ')',
    `  columns: ${Object.entries(plan.columns)
      .map(([field, header]) => (field === header ? field : `${field} ← ${JSON.stringify(header)}`))
      .join(', ')}`,
  ];
  const { header } = source;
  if (header.source !== 'first' || header.skipped.length > 0) {
    const where = positionWord(source.format);
    const skipped = header.skipped.length === 0 ? '' : `; ${where}${header.skipped.length > 1 ? 's' : ''} ${header.skipped.join(', ')} above it skipped (not data)`;
    lines.push(`  header: ${where} ${header.line}${header.source === 'option' ? ' (--header-row)' : ''}${skipped}`);
  }
  if (plan.unknownColumns.length > 0) {
    lines.push(`  ignored columns: ${plan.unknownColumns.map((h) => JSON.stringify(h)).join(', ')}`);
  }
  if (plan.resumedCreated > 0)
    lines.push(`  resuming: ${plan.resumedCreated} rows already created will be skipped`);
  return `${lines.join('\n')}\n`;
}

function formatSummary(summary: ImportSummary, options: ImportOptions): string {
  const c = summary.counts;
  const parts = summary.dryRun
    ? [`${c.valid} valid`, `${c.invalid} invalid`, `${c.duplicate} duplicate`]
    : [`${c.created} created`, `${c.failed} failed`, `${c.invalid} invalid`, `${c.duplicate} duplicate`];
  if (c.skipped) parts.push(`${c.skipped} skipped (created earlier)`);
  if (c.not_attempted) parts.push(`${c.not_attempted} not attempted`);
  const lines = [
    `${summary.dryRun ? 'Validated' : 'Imported'} ${counted(summary.rows, 'row')} in ${formatDuration(summary.elapsedMs)} (${summary.rowsPerSecond} rows/s): ${parts.join(', ')}`,
  ];
  if (summary.topErrors.length > 0) {
    lines.push(`  top errors: ${summary.topErrors.map((e) => `${e.code} ×${e.count}`).join(', ')}`);
  }
  if (!summary.dryRun) lines.push(`  concurrency: ${formatLimits(summary.concurrency, 'in flight')}`);
  if (summary.shard) {
    const { index, count, otherRows } = summary.shard;
    lines.push(`  shard ${index} of ${count}: ${otherRows} rows belong to the other shards (ccs-bulk results merge combines the files)`);
  }
  if (summary.account) lines.push(`  account: ${formatAccount(summary.account)}`);
  lines.push(`  results: ${summary.results}`);
  if (summary.failed) lines.push(`  rows to fix and import again: ${summary.failed}`);
  if (summary.stopped) {
    lines.push(`ccs-bulk: stopped: ${summary.stopped.message}`);
    if (summary.stopped.reason !== 'input_error')
      lines.push(`  to continue: ${resumeCommand(options.commandLine)}`);
  }
  return `${lines.join('\n')}\n`;
}

/** The end-of-run account's figures, in the log's snake_case. */
function accountFields(account: RunAccount) {
  return {
    complete: account.complete,
    input_end: account.inputEnd,
    bytes_read: account.bytesRead,
    size_bytes: account.sizeBytes,
    rows_read: account.rowsRead,
    outcomes_recorded: account.outcomesRecorded,
    created_earlier: account.createdEarlier,
    other_shard_rows: account.otherShardRows,
    first_missing: account.firstMissing,
  };
}

function formatAccount(account: RunAccount): string {
  const extra = [
    account.createdEarlier > 0 ? `, ${account.createdEarlier} created earlier` : '',
    account.otherShardRows > 0 ? `, ${account.otherShardRows} in other shards` : '',
  ].join('');
  return (
    `${account.rowsRead} rows read (${account.bytesRead} of ${account.sizeBytes} bytes), ` +
    `${account.outcomesRecorded} outcomes recorded${extra}` +
    (account.complete ? ': every row accounted for' : `: INCOMPLETE from row ${account.firstMissing}`)
  );
}
