/**
 * `ccs-bulk import` and `validate`: connect, run the pipeline, print the plan and summary,
 * and turn the outcome into an exit code.
 */
import { randomUUID } from 'node:crypto';
import type { ExitCode } from '../errors.js';
import { IMPORT_DEFAULTS } from '../import/defaults.js';
import { describeEncoding, positionWord } from '../import/read/index.js';
import { type ImportPlan, type ImportSummary, runImport as runImportClients, type RunAccount } from '../import/run-import.js';
import type { ListingProgress } from '../import/send/held-emails.js';
import type { Io } from '../infra/io.js';
import { shownPath } from '../infra/printable.js';
import { type LogFile, withLogFile } from '../infra/log-file.js';
import type { ImportOptions } from '../config/options.js';
import { createProgress, formatDuration, NO_PROGRESS, progressDisplay } from '../cli/progress.js';
import type { Connected } from './connect.js';
import { formatSummary, INVALID_ROWS_SHOWN, resumeCommand } from './import-summary.js';
import { describeLookalike, type LookalikeColumn, lookalikeFixes } from '../import/row/unmapped.js';
import { describeDateOrder } from '../import/row/date-order.js';
import { type Field, LANGUAGE_NAMES } from '../import/fields.js';
import { reportLockReplaced, reportSourceChanged, reportSweep } from './stale-temps.js';

/**
 * --json lists every invalid row, up to this many (memory: a row's problems each hold a short
 * message); the results file holds every one whatever their number.
 */
const MAX_INVALID_ROWS_JSON = 100_000;

export async function runImport(options: ImportOptions, io: Io): Promise<ExitCode> {
  return withLogFile(options.logFile, options.run.dryRun ? 'validate' : 'import', (log) => importWith(options, io, log));
}

async function importWith(options: ImportOptions, io: Io, log: LogFile | undefined): Promise<ExitCode> {
  let connected: Connected | undefined;
  const { run } = options;
  log?.run('run_started', {
    config: options.configFile,
    service: options.connection?.kind === 'service' ? options.connection.baseUrl : options.connection?.kind === 'sandbox' ? 'in-process sandbox' : undefined,
    input: run.file,
    results: run.results,
    failed: run.failed,
    report: run.report,
    resume: run.resume,
    shard: run.shard && `${run.shard.index}/${run.shard.count}`,
    concurrency: run.concurrency,
    max_concurrency: run.concurrency === 'auto' ? run.maxConcurrency : undefined,
    rate: run.rate,
    max_errors: run.maxErrors,
  });
  // validate --check-service asks the service too (run.matchService), without signing.
  if (options.connection && (!run.dryRun || run.matchService === true)) {
    // Loaded only when the service is asked: validate needs no HTTP stack (~20 MB of undici).
    const { connect } = await import('./connect.js');
    connected = await connect(
      options.connection,
      {
        scheme: options.scheme,
        retries: options.retries,
        timeoutMs: options.timeoutMs,
        connections: run.concurrency === 'auto' ? (run.maxConcurrency ?? IMPORT_DEFAULTS.maxConcurrency) : run.concurrency,
        needSigner: !run.dryRun,
        applicationDateField: options.applicationDateField,
        quiet: options.quiet,
        log,
      },
      io,
    );
  }
  const display = progressDisplay(options, io);
  let progress = NO_PROGRESS;
  let planned = false;
  let summary: ImportSummary;
  try {
    summary = await runImportClients({
      ...run,
      service: connected?.service,
      // Each in-process sandbox is new and empty: its results file can never be resumed elsewhere.
      serviceIdentity: connected?.sandbox ? `in-process sandbox ${randomUUID()}` : undefined,
      invalidRowsListed: options.json ? MAX_INVALID_ROWS_JSON : INVALID_ROWS_SHOWN,
      resumeCommand: run.dryRun ? undefined : resumeCommand(options.commandLine),
      commandLine: ['ccs-bulk', ...options.commandLine],
      // A new, empty sandbox each time: nothing to keep between runs.
      ...(connected?.sandbox && { heldCache: false, paceMemory: false as const }),
      onListing: listingReporter(options.quiet, io, log),
      signal: io.signal,
      onPlan: (plan) => {
        if (run.resume) log?.run('run_resumed', { results: plan.results, rows_created_earlier: plan.resumedCreated });
        if (!options.quiet) io.stderr.write(formatPlan(plan, options));
        // A warning, said even with --quiet: validate's exit code does not show it.
        else io.stderr.write(lookalikeLines(plan.lookalikeColumns).map((line) => `ccs-bulk: ${line.trim()}\n`).join(''));
        planned = true;
      },
      onProgress: (snapshot) => {
        // After the plan's lines and the listing's (the service's people, before the first row):
        // a bar redraws its own line, which a line written under it would break.
        if (planned && progress === NO_PROGRESS) progress = createProgress({ ...display, unit: 'rows' });
        progress.update(snapshot);
      },
      onStaleTemps: reportSweep(options.quiet, io, log),
      onLockReplaced: reportLockReplaced(options.quiet, io, log),
      onLockTakenOver: (lock, dead) => log?.run('lock_taken_over', { lock, dead_pid: dead.pid, dead_host: dead.host, dead_since: dead.since }),
      onSourceChanged: reportSourceChanged(options.quiet, io, log),
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

/** Seconds between the listing's progress lines. */
const LISTING_LINE_MS = 2000;

/**
 * The listing of who the service holds, before the first row: a line every few seconds while it
 * lasts (a million clients take a while), one when it is done; the log gets the figures.
 */
function listingReporter(quiet: boolean, io: Io, log: LogFile | undefined): (progress: ListingProgress) => void {
  let last = performance.now();
  return (progress) => {
    const { listed, known, pages, elapsedMs, done } = progress;
    if (done) log?.run('service_listed', { clients_listed: listed, people_known: known, pages, elapsed_ms: elapsedMs });
    if (quiet || (!done && performance.now() - last < LISTING_LINE_MS)) return;
    last = performance.now();
    const figures = `${listed.toLocaleString('en')} clients listed, ${known.toLocaleString('en')} people known`;
    io.stderr.write(done ? `  service: ${figures} (${formatDuration(elapsedMs)}): rows they hold are existing, not created\n` : `  service: listing who it holds… ${figures}\n`);
  };
}

export function exitCodeOf(summary: ImportSummary): ExitCode {
  if (summary.stopped?.reason === 'input_error' || summary.stopped?.reason === 'connection') return 2;
  if (summary.stopped) return 3;
  return summary.counts.invalid + summary.counts.failed > 0 ? 1 : 0;
}

function formatPlan(plan: ImportPlan, options: ImportOptions): string {
  const { source } = plan;
  const lines = [
    `ccs-bulk ${options.run.dryRun ? 'validate' : 'import'}: ${shownPath(source.file)} (${source.format}` +
      (source.format === 'csv'
        ? `, ${describeEncoding(source)}, delimiter ${JSON.stringify(source.delimiter)} [${source.delimiterSource}]`
        : `, sheet ${JSON.stringify(source.sheet ?? '')}`) +
      ')',
    `  columns: ${Object.entries(plan.columns)
      .map(([field, header]) => (field === header ? field : `${field} ← ${JSON.stringify(header)}${languageOf(plan, field)}`))
      .join(', ')}`,
  ];
  if (plan.dates?.seen === true) lines.push(`  dates: ${describeDateOrder(plan.dates)}`);
  if (options.configFile !== undefined) lines.push(`  config: ${shownPath(options.configFile)}`);
  const { header } = source;
  if (header.source !== 'first' || header.skipped.length > 0) {
    const where = positionWord(source.format);
    const skipped = header.skipped.length === 0 ? '' : `; ${where}${header.skipped.length > 1 ? 's' : ''} ${header.skipped.join(', ')} above it skipped (not data)`;
    lines.push(`  header: ${where} ${header.line}${header.source === 'option' ? ' (--header-row)' : ''}${skipped}`);
  }
  if (plan.unknownColumns.length > 0) {
    lines.push(`  ignored columns: ${plan.unknownColumns.map((h) => JSON.stringify(h)).join(', ')}`);
  }
  lines.push(...lookalikeLines(plan.lookalikeColumns));
  if (plan.backup !== undefined) lines.push(`  results: the import's old file is kept as ${shownPath(plan.backup)}`);
  if (plan.retiredReport !== undefined) lines.push(`  report: the earlier run's page is kept as ${shownPath(plan.retiredReport)}, marked as replaced`);
  if (plan.replacesValidate)
    lines.push(`  results: replacing ${plan.results}, written by validate (it records no sends)`);
  if (plan.resumedCreated > 0)
    lines.push(`  resuming: ${plan.resumedCreated} rows already created will be skipped`);
  return `${lines.join('\n')}\n`;
}

/** ` (German)` after a header only another language than English reads. */
function languageOf(plan: ImportPlan, field: string): string {
  const language = plan.columnLanguages?.[field as Field];
  return language === undefined ? '' : ` (${LANGUAGE_NAMES[language]})`;
}

/** validate's warning, one line per column: an import stops there, before sending. */
function lookalikeLines(lookalikes: readonly LookalikeColumn[]): string[] {
  return lookalikes.map((column) => {
    const { send, drop } = lookalikeFixes([column]);
    return `  warning: ${describeLookalike(column)}; import stops here until ${send} sends it or ${drop} drops it on purpose`;
  });
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
