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
import { NO_HEARTBEAT } from '../cli/heartbeat.js';
import { heartbeatFor } from './run-heartbeat.js';
import { createProgress, formatDuration, NO_PROGRESS, progressDisplay } from '../cli/progress.js';
import type { Connected } from './connect.js';
import { formatSummary, INVALID_ROWS_SHOWN } from './import-summary.js';
import { acceptedRows, acceptedWords, exitCodeOf, jsonSummary, quietLine, resumeCommandOf, stopNowWords } from './import-stop.js';
import { currentRun, reportRunAs } from '../cli/run-report.js';
import type { ProgressSnapshot } from '../infra/progress-report.js';
import { describeLookalike, type LookalikeColumn, lookalikeFixes } from '../import/row/unmapped.js';
import { describeDateOrder } from '../import/row/date-order.js';
import { BY_COUNTRY, describeSample } from '../import/row/composite.js';
import { writeMappingFile } from '../config/mapping-file.js';
import { partialAddressFixes } from '../import/row/address-parts.js';
import { type Field, LANGUAGE_NAMES } from '../import/fields.js';
import { reportLockReplaced, reportSourceChanged, reportSweep } from './stale-temps.js';
import { shardPath } from '../import/send/shard.js';

/**
 * --json lists every invalid row, up to this many (memory: a row's problems each hold a short
 * message); the results file holds every one whatever their number.
 */
const MAX_INVALID_ROWS_JSON = 100_000;

export async function runImport(options: ImportOptions, io: Io): Promise<ExitCode> {
  const command = options.run.dryRun ? 'validate' : 'import';
  reportRunAs({ command, json: options.json ? 'stdout' : undefined });
  return withLogFile(options.logFile, command, (log) => importWith(options, io, log));
}

async function importWith(options: ImportOptions, io: Io, log: LogFile | undefined): Promise<ExitCode> {
  let connected: Connected | undefined;
  const { run } = options;
  logStart(options, log);
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
  const heartbeat = connected ? heartbeatFor(options, connected, io) : NO_HEARTBEAT;
  let progress = NO_PROGRESS;
  let planned = false;
  let summary: ImportSummary;
  const resume = run.dryRun ? undefined : resumeCommandOf(options);
  // A second Ctrl-C prints the counts of the last snapshot (one a row: see progressIntervalMs below) and the way back.
  let latest: ProgressSnapshot | undefined;
  const said = currentRun();
  if (said !== undefined && resume !== undefined) said.stopNow = () => stopNowWords(latest, resume);
  try {
    summary = await runImportClients({
      ...run,
      service: connected?.service,
      // Each in-process sandbox is new and empty: its results file can never be resumed elsewhere.
      serviceIdentity: connected?.sandbox ? `in-process sandbox ${randomUUID()}` : undefined,
      invalidRowsListed: options.json ? MAX_INVALID_ROWS_JSON : INVALID_ROWS_SHOWN,
      resumeCommand: resume,
      // A snapshot as each row finishes: what a second Ctrl-C says is exact (the command's lines keep their own interval).
      ...(!run.dryRun && { progressIntervalMs: 0 }),
      commandLine: ['ccs-bulk', ...options.commandLine],
      // A new, empty sandbox each time: nothing to keep between runs.
      ...(connected?.sandbox && { heldCache: false, paceMemory: false as const }),
      onListing: listingReporter(options.quiet, io, log),
      signal: io.signal,
      onPlan: (plan) => {
        if (run.resume) log?.run('run_resumed', { results: plan.results, rows_created_earlier: plan.resumedCreated });
        announcePlan(plan, options, io);
        planned = true;
        // From here a failure leaves a results file to continue.
        if (said !== undefined) said.resumeCommand = resume;
      },
      onProgress: (snapshot) => {
        // After the plan's lines and the listing's (the service's people, before the first row):
        // a bar redraws its own line, which a line written under it would break.
        if (planned && progress === NO_PROGRESS) progress = createProgress({ ...display, unit: 'rows' });
        if (snapshot.done !== latest?.done) heartbeat.beat();
        latest = snapshot;
        progress.update(snapshot);
      },
      onStaleTemps: reportSweep(options.quiet, io, log),
      onLockReplaced: reportLockReplaced(options.quiet, io, log),
      onLockTakenOver: (lock, dead) => log?.run('lock_taken_over', { lock, dead_pid: dead.pid, dead_host: dead.host, dead_since: dead.since }),
      onSourceChanged: reportSourceChanged(options.quiet, io, log),
    });
  } finally {
    heartbeat.stop();
    progress.stop();
    await connected?.close();
  }
  return sayEnd(summary, options, io, log, resume);
}

/** The run's end: the log's run_finished, --json's object, the summary (or --quiet's one line); the exit code. */
function sayEnd(summary: ImportSummary, options: ImportOptions, io: Io, log: LogFile | undefined, resume: string | undefined): ExitCode {
  const exitCode = exitCodeOf(summary, options.acceptFailedRows);
  const accepted = acceptedRows(summary, exitCode);
  log?.run('run_finished', {
    rows: summary.rows,
    counts: summary.counts,
    accepted_failed_rows: accepted > 0 ? accepted : undefined,
    in_flight_at_stop: summary.inFlightAtStop > 0 ? summary.inFlightAtStop : undefined,
    stopped: summary.stopped?.reason,
    concurrency: summary.dryRun ? undefined : summary.concurrency,
    elapsed_ms: summary.elapsedMs,
    account: summary.account && accountFields(summary.account),
    exit_code: exitCode,
  });
  if (options.json) io.stdout.write(`${JSON.stringify(jsonSummary(summary, exitCode, resume))}\n`);
  const signal = io.signal?.reason instanceof Error ? io.signal.reason.message : undefined;
  if (!options.quiet) io.stderr.write(formatSummary(summary, options, { accepted: accepted > 0, signal }));
  // --quiet silences progress, never why a run did not succeed, nor rows let through.
  else if (exitCode !== 0 || summary.stopped) io.stderr.write(quietLine(summary, exitCode, resume));
  else if (accepted > 0) io.stderr.write(`ccs-bulk: ${acceptedWords(summary)}\n`);
  return exitCode;
}

/** The log's run_started: what this run was asked to do. */
function logStart(options: ImportOptions, log: LogFile | undefined): void {
  const { run } = options;
  log?.run('run_started', {
    config: options.configFile,
    service: options.connection?.kind === 'service' ? options.connection.baseUrl : options.connection?.kind === 'sandbox' ? 'in-process sandbox' : undefined,
    input: run.file,
    results: shardPath(run.results, run.shard),
    failed: shardPath(run.failed, run.shard),
    report: shardPath(run.report, run.shard),
    resume: run.resume,
    shard: run.shard && `${run.shard.index}/${run.shard.count}`,
    concurrency: run.concurrency,
    max_concurrency: run.concurrency === 'auto' ? run.maxConcurrency : undefined,
    rate: run.rate,
    max_errors: run.maxErrors,
  });
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

function formatPlan(plan: ImportPlan, options: ImportOptions): string {
  const { source } = plan;
  const lines = [
    `ccs-bulk ${options.run.dryRun ? 'validate' : 'import'}: ${shownPath(source.file)} (${source.format}` +
      (source.format === 'csv'
        ? `, ${describeEncoding(source)}, delimiter ${JSON.stringify(source.delimiter)} [${source.delimiterSource}]`
        : `, sheet ${JSON.stringify(source.sheet ?? '')}`) +
      ')',
    `  columns: ${Object.entries(plan.columns)
      .map(([field, header]) => {
        const composite = plan.composites?.[field as Field];
        // A template of one's own as written, separators and all; an export's, described.
        const own = options.run.map?.[field as Field] !== undefined && !composite?.template.endsWith(BY_COUNTRY);
        if (composite !== undefined) return `${field} ← ${own ? composite.template : composite.described}`;
        return field === header ? field : `${field} ← ${JSON.stringify(header)}${languageOf(plan, field)}`;
      })
      .join(', ')}`,
    ...compositeLines(plan, options.run.map ?? {}),
  ];
  if (plan.dates?.seen === true) lines.push(`  dates: ${describeDateOrder(plan.dates)}`);
  if (options.configFile !== undefined) lines.push(`  config: ${shownPath(options.configFile)}`);
  if (options.saveMapping !== undefined) lines.push(`  mapping: written to ${shownPath(options.saveMapping)} (reuse it with --mapping ${shownPath(options.saveMapping)})`);
  const { header } = source;
  if (header.source !== 'first' || header.skipped.length > 0) {
    const where = positionWord(source.format);
    const skipped = header.skipped.length === 0 ? '' : `; ${where}${header.skipped.length > 1 ? 's' : ''} ${header.skipped.join(', ')} above it skipped (not data)`;
    lines.push(`  header: ${where} ${header.line}${header.source === 'option' ? ' (--header-row)' : ''}${skipped}`);
  }
  if (plan.unknownColumns.length > 0) {
    lines.push(`  ignored columns: ${plan.unknownColumns.map((h) => JSON.stringify(h)).join(', ')}`);
  }
  lines.push(...lookalikeLines(plan.lookalikeColumns), ...partialAddressLines(plan));
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

/** The plan settled: the mapping kept (--save-mapping), then the plan printed; with --quiet only its warnings. */
function announcePlan(plan: ImportPlan, options: ImportOptions, io: Io): void {
  if (options.saveMapping !== undefined) writeMappingFile(options.saveMapping, plan.columns);
  if (!options.quiet) io.stderr.write(formatPlan(plan, options));
  // A warning, said even with --quiet: validate's exit code does not show it.
  else io.stderr.write([...lookalikeLines(plan.lookalikeColumns), ...partialAddressLines(plan)].map((line) => `ccs-bulk: ${line.trim()}\n`).join(''));
}

/** The export recognized, and each field built from several columns with its first results. */
function compositeLines(plan: ImportPlan, map: Partial<Record<Field, string>>): string[] {
  const fields = Object.entries(plan.composites ?? {});
  const lines: string[] = [];
  if (plan.recognized !== undefined) {
    // The fields the export gave; a --map's own are in the columns line.
    const given = fields.filter(([field]) => map[field as Field] === undefined).map(([field, composite]) => `${field} ← ${composite.described}`);
    lines.push(`  recognized: ${[plan.recognized, ...given].join('; ')}`);
  }
  for (const [field, composite] of fields) {
    const samples = composite.samples.length === 0 ? '(no row has a value yet)' : composite.samples.map(describeSample).join('; ');
    lines.push(`  ${field}: ${samples}`);
  }
  return lines;
}

/** validate's warning for city or postal-code columns the address leaves out: an import stops there. */
function partialAddressLines(plan: ImportPlan): string[] {
  const partial = plan.partialAddress;
  if (partial === undefined) return [];
  const { send, drop } = partialAddressFixes(partial);
  const many = partial.columns.length > 1;
  return [
    `  warning: the address is ${partial.address} only, but ${partial.columns.map((h) => JSON.stringify(h)).join(', ')} ${many ? 'hold' : 'holds'} ` +
      `part of an address too; import stops here until ${send} sends ${many ? 'them' : 'it'} or ${drop} drops ${many ? 'them' : 'it'} on purpose`,
  ];
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
