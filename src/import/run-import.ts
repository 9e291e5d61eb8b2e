/**
 * The import pipeline: read → map columns → validate → key → drop duplicates → send → record.
 * The plan (source, column mapping, results file) is settled before the first request; then
 * rows stream through a bounded send window, and every row read gets exactly one outcome.
 */
import { rmSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { CcsError, InputError } from '../errors.js';
import { injected } from '../infra/inject.js';
import { FinishPace, type OnProgress, type ProgressReporter, progressReporter, type ProgressSnapshot, rowProgress } from '../infra/progress-report.js';
import { type LimitReport, paceNote } from '../service/adaptive-limit.js';
import { type PaceMemory, paceMemoryFor } from '../service/pace-memory.js';
import type { ServiceClient } from '../service/client.js';
import { accountForRun, refusedRow, RowLedger, type RunAccount } from './record/account.js';
import { type ClassifyRules, classifyRow, type Held, type RowVerdict } from './row/classify-row.js';
import { defaultResultsPath, IMPORT_DEFAULTS } from './defaults.js';
import type { Field } from './fields.js';
import { KeySet } from './row/key-set.js';
import type { DateFormat } from './row/normalize.js';
import { type OpenPlan, planImport, type PlanInput } from './plan.js';
import type { SourceChanges } from './record/source-changes.js';
import { positionWord, type RawRecord, type ReadOptions, type RowSource, type RowsInput, type SourceInfo } from './read/index.js';
import { Recorder, type Stop } from './record/recorder.js';
import { metaPath } from './record/results-meta.js';
import { trailPath } from './record/trail.js';
import { OUTCOMES, type Outcome } from './record/results.js';
import { createSender, type SendRow } from './send/sender.js';
import { type Shard, shardOfKey, shardOfRow, shardResultsPath } from './send/shard.js';
import { createSendWindow, type SendWindow, signedBacklog } from './send/send-window.js';
import { type InvalidRow, type Normalization, RunNotes } from './record/run-notes.js';
import { AnswerStreak, settleOpening, systemicMessage } from './send/systemic.js';
import { rowValidator } from './row/validate-row.js';
import type { HeldSummary, ListingProgress } from './send/held-emails.js';
import { type Matching, settleHeld, startMatching, stopFor } from './send/match.js';
import type { LockHolder } from '../infra/lock.js';
import { CallbackGuard } from '../infra/callbacks.js';
import { inLibraryWords, toLibraryWords } from '../infra/library-words.js';
import { type RunStopped, stopError } from './record/stop-error.js';
import { type RowResult, rowResultOf } from './record/row-result.js';
import type { Identity } from './row/identity.js';
import { dropExportFooter } from './row/export-footer.js';
import { checkUnmapped, type LookalikeColumn } from './row/unmapped.js';
import type { CompositeField } from './row/composite.js';
import type { PartialAddress } from './row/address-parts.js';
import { type DateReading, settleDates } from './row/date-order.js';
import { type LostLetters, watchLostLetters } from './row/lost-letters.js';
import type { Language } from './fields.js';
import { renderReport, writeReport } from '../report/write-report.js';
import { type ReportTracker, trackReport } from '../report/track.js';

export type { StopReason } from './record/recorder.js';
export type { RunStopped } from './record/stop-error.js';
export type { RowError, RowResult } from './record/row-result.js';
export type { RunAccount } from './record/account.js';

/** What to import and how; every field but `file` has a default (IMPORT_DEFAULTS). */
export interface ImportSettings {
  /** The input file: CSV, .xlsx, .ods or .xls. With `rows`, only the name messages and the results file give the rows. */
  file: string;
  /**
   * Rows from code instead of a file: plain objects (field → value, or your own column names with
   * `map`) from an Iterable or AsyncIterable, pulled as the run sends (a database cursor streams
   * through in flat memory). The first object's keys are the header; numbers, booleans and Dates
   * become text (a Date at midnight UTC its day), undefined or null an empty cell.
   */
  rows?: RowsInput | undefined;
  /** Check every row and write the results file, sending nothing (what `validate` does): rows come out `valid`. Default false. */
  dryRun?: boolean;
  /** Default `<file>.results.csv`. */
  results?: string;
  /**
   * Write the invalid and failed rows to this file, ready to fix and import again (a name ending
   * in `.xlsx`: a workbook with each bad cell marked). Default: none.
   */
  failed?: string | undefined;
  /** Continue the results file: rows it records as created are skipped, the others sent (one that does not exist yet is started). Default false. */
  resume?: boolean;
  /** Replace an existing results file, kept beside it as a dated `.bak.csv` first. Default false: an existing one is refused. */
  overwrite?: boolean;
  /**
   * Field → header, for a column the header matcher does not find (`{ email: 'E-Mail-Adresse' }`); with `rows`, field → your key.
   * A value with braces builds the field from several columns: `{ name: '{First Name} {Last Name}' }` (empty parts drop
   * with their separators; bad braces reject with a UsageError before the file is read).
   */
  map?: Partial<Record<Field, string>>;
  /**
   * The day/month order of dates not in ISO form: `auto` (the default: from the file, a day over
   * 12, else the headers' language), or a form that names it (`DD.MM.YYYY`, `MM/DD/YYYY`…).
   */
  dateFormat?: DateFormat;
  /** How to read the input: encoding, delimiter, sheet, header row, record size; each found from the file when absent. */
  read?: ReadOptions;
  /** `liquidity_type` for rows without that column; default `chain`, the only value the service documents. */
  liquidityType?: string;
  /** Requests in flight: a number, or `auto` (the default) to find it while the run goes. */
  concurrency?: number | 'auto';
  /** `auto`'s upper bound. */
  maxConcurrency?: number | undefined;
  /** At most this many requests a second. Default: no bound but `concurrency`. */
  rate?: number | undefined;
  /** Stop the run (a `StoppedError`, `max_errors`, resumable) once this many rows are invalid or failed. Default: never. */
  maxErrors?: number | undefined;
  /**
   * Take only this shard's rows, so several processes share one file (every shard reads the whole
   * file, so duplicates are judged on all of it); the results file gets `.shard-K-of-N`.
   */
  shard?: Shard | undefined;
  /** The review page (one self-contained HTML file), written when the run ends. */
  report?: string | undefined;
  /**
   * Who a person is, so each is one client: their e-mail (the default), the value of a column the
   * user names (a customer number), or nobody (rows are matched by idempotency key alone).
   */
  identity?: Identity | undefined;
  /**
   * Unmapped columns the run may drop although they look like an optional field (a currency or
   * date column under a header no alias knows); any other such column stops the run before sending.
   */
  ignoreColumns?: readonly string[] | undefined;
  /**
   * The e-mails the service holds, kept between runs so a repeat run lists only the clients
   * created since (see the summary's `matching`): a file path, or false to keep them in memory only.
   * Default: a file per service in the user's cache folder.
   */
  heldCache?: string | false | undefined;
  /** A dry run (validate) that still lists the service's e-mails, to show who is already there. */
  matchService?: boolean | undefined;
  /** The command as typed, recorded (redacted) in the results file's sidecar (`<results>.meta.json`); absent: not recorded. */
  commandLine?: readonly string[] | undefined;
  /**
   * `resume` goes on although rows of the input differ from what the results file recorded for
   * them (see `onSourceChanged`); without it such a resume is refused before anything is sent.
   */
  acceptChangedSource?: boolean | undefined;
}

/** `importClients`' options: the settings, the service to send to, and the callbacks the run reports through. */
export interface ImportClientsOptions extends ImportSettings {
  /** Required unless dryRun. */
  service?: ServiceClient | undefined;
  /** Abort = stop reading, finish what is in flight, flush (Ctrl-C). */
  signal?: AbortSignal | undefined;
  /** Progress as data: a snapshot at most every `progressIntervalMs` (default 100), and at the end. */
  onProgress?: OnProgress | undefined;
  /** The least time between two `onProgress` snapshots, in milliseconds; default 100. */
  progressIntervalMs?: number | undefined;
  /** Called once the plan is settled, before any row is sent (validate prints it). */
  onPlan?: ((plan: ImportPlan) => void) | undefined;
  /** Called with the temp files of dead runs removed beside the results file. */
  onStaleTemps?: ((removed: string[]) => void) | undefined;
  /**
   * Called for a lock file found beside an output that was not believed (not one ccs-bulk writes,
   * or another user's that cannot be checked) and was replaced: its path, and why.
   */
  onLockReplaced?: ((path: string, why: string) => void) | undefined;
  /** Called when the results file's lock was left by a dead run and taken over (for the log). */
  onLockTakenOver?: ((path: string, dead: LockHolder) => void) | undefined;
  /**
   * Called with each row's outcome as it is recorded (the same facts as its results line): a
   * client id to write back, a row to fix. Called in the order rows finish, not their order.
   */
  onRow?: ((result: RowResult) => void) | undefined;
  /** Called (with `resume`) when the input changed since the results file's last run and the run goes on (rows only added, or accepted). */
  onSourceChanged?: ((changes: SourceChanges) => void) | undefined;
  /**
   * The service as the results file records it (in its `<results>.meta.json` sidecar); default:
   * the service's base URL. `resume` refuses a results file written against another.
   */
  serviceIdentity?: string | undefined;
  /**
   * Where `concurrency: 'auto'` keeps the pace it settled at, so the next run against this service
   * starts near it: default, a file per service in the user's cache folder; false, none (the run
   * starts at the usual 8 and leaves nothing).
   */
  paceMemory?: PaceMemory | false | undefined;
  /** Invalid rows listed in the summary's `invalidRows` (default 10; every one is in the results file). */
  invalidRowsListed?: number | undefined;
  /** The command that continues this import if it stops, shown on the review page. */
  resumeCommand?: string | undefined;
  /** While the service's people are listed before the first row (see `identity`, `heldCache`): a snapshot a page. */
  onListing?: ((progress: ListingProgress) => void) | undefined;
}

/** The import as settled before the first row is sent, as `onPlan` receives it: the input, the column mapping, the results file. */
export interface ImportPlan {
  /** The input as read: format, encoding, delimiter (and how each was chosen), where the header is. */
  source: SourceInfo;
  /** Field → the header of the column that feeds it. */
  columns: Partial<Record<Field, string>>;
  /** Headers of the columns no field takes: not sent. */
  unknownColumns: string[];
  /** The results file this run writes. */
  results: string;
  /** With `resume`: rows the results file already records as created, skipped this time. */
  resumedCreated: number;
  /** The results file existed, written by validate (no sends), and is replaced. */
  replacesValidate: boolean;
  /** Unmapped columns that look like an optional field (map them, or list them in `ignoreColumns`): only a dry run gets this far with any. */
  lookalikeColumns: LookalikeColumn[];
  /** The import's results file that `overwrite` replaced, kept beside it under this name. */
  backup: string | undefined;
  /** An earlier run's review page at `report`, kept under this dated name, marked as replaced. */
  retiredReport?: string | undefined;
  /** Fields whose header only a language other than English reads: country ← "Land" (de). */
  columnLanguages?: Partial<Record<Field, Language>>;
  /** How dates not in ISO form are read, and why (see `dateFormat`). */
  dates?: DateReading;
  /** Fields built from several columns (a `map` template, or a recognized export's): parts and first results. */
  composites?: Partial<Record<Field, CompositeField>>;
  /** The export the header row was recognized as (`a Salesforce contacts report`), when it was. */
  recognized?: string | undefined;
  /** City or postal-code columns the address leaves out: only a dry run gets this far with any (an import stops). */
  partialAddress?: PartialAddress | undefined;
}

/**
 * What an import did: `importClients` resolves with it, and a stopped run's error carries it as
 * `summary`.
 */
export interface ImportSummary {
  /** The input file, as given (`rows` for rows from code without a `file`). */
  file: string;
  /** The results file written: one line per row, with its outcome. */
  results: string;
  /** The file of invalid and failed rows, when `failed` asked for one. */
  failed: string | undefined;
  /** The review page, when asked for. */
  report: string | undefined;
  /** Nothing was sent (`dryRun`). */
  dryRun: boolean;
  /** Data rows read (with `shard`, this shard's only). */
  rows: number;
  /** Rows by outcome (`created`, `existing`, `invalid`, `failed`…), every outcome present, 0 included. */
  counts: Record<Outcome, number>;
  /**
   * Of `failed`: rows the service refused for what they hold (a 4xx other than 401, 403, 404, 405 and
   * the retryable 408, 425, 429): neither a retry nor `resume` changes their answer, the row must be fixed.
   */
  refused: number;
  /**
   * Of `not_attempted`: rows whose request had gone out when the run stopped, their answer unknown
   * (the service may hold them); `resume` sends them again under the same idempotency key.
   */
  inFlightAtStop: number;
  /** Of `created`: clients the service already held before the run (replays of an earlier run's rows under the same key). */
  replayed: number;
  /** The first invalid rows (invalidRowsListed), each problem with its column. */
  invalidRows: InvalidRow[];
  /** Values changed on their way out, with how often (`Italy` → `IT`). */
  normalizations: Normalization[];
  /** Rows written to the `failed` file, and the encoding it is in. */
  failedRows: number;
  /** The `failed` file's encoding (undefined without one): a CSV input's own, so it opens as the input did; else UTF-8 with a BOM. */
  failedEncoding:
    | {
        /** The encoding's WHATWG name (`utf-8`, `windows-1252`…), or `xlsx` for a workbook. */
        name: string;
        /** A value the input's encoding cannot hold made the file UTF-8 (with a BOM) instead. */
        changed: boolean;
      }
    | undefined;
  /** The most frequent error codes of invalid and failed rows, the first 5, most frequent first. */
  topErrors: {
    /** The row error's code (`invalid_row`, the service's `email_taken`…). */
    code: string;
    /** How many rows had it. */
    count: number;
  }[];
  /** Milliseconds the run took. */
  elapsedMs: number;
  /** Rows read a second, over the whole run, rounded. */
  rowsPerSecond: number;
  /** The input as read: format, encoding, delimiter (and how each was chosen), where the header is. */
  source: SourceInfo;
  /** Field → the header of the column that fed it. */
  columns: Partial<Record<Field, string>>;
  /** Headers of the columns no field took: not sent. */
  unknownColumns: string[];
  /** As in the plan: a dry run's warning (an import stops before sending instead). */
  lookalikeColumns: LookalikeColumn[];
  /** As in the plan: fields built from several columns, with their parts and first results. */
  composites?: Partial<Record<Field, CompositeField>>;
  /** As in the plan: the export the header row was recognized as. */
  recognized?: string | undefined;
  /** A single-byte file's rows with a `?` where the saving program lost a letter. */
  lostLetters?: LostLetters;
  /** Why the run stopped before the end (the summary a stopped run's error carries); undefined when it finished. */
  stopped: Stop | undefined;
  /** The service's people as learned before the first row, when it was asked (see `identity`, `heldCache`). */
  matching?: HeldSummary;
  /** Rows (with `resume`) changed since an earlier run of the results file created their client: skipped, each with a line saying so. */
  changedRows: number[];
  /** Requests in flight: fixed, or where `auto` settled. */
  concurrency: LimitReport;
  /** With `shard`: which, and the rows read that belong to other shards (not in `rows`). */
  shard?: Shard & {
    /** Rows read that belong to other shards. */
    otherRows: number;
  };
  /**
   * The end-of-run account, checked on every run that ended, a stopped one too: the input read to its
   * end, every row's outcome in the results file (absent when the run failed before its end).
   */
  account?: RunAccount;
}

/**
 * Imports a file's rows (or rows from code): each row checked, normalized, keyed and sent once,
 * its outcome written to the results file as it finishes. Resolves with the summary when every
 * row has an outcome — some may be `failed` or `invalid` (see `counts`). Rejects when the run
 * stopped part-way, with the typed error of the cause (`AuthError`, `ConnectionError`,
 * `OutageError`, `InputError`, `StoppedError` for an abort, `maxErrors` or a gap) carrying
 * `summary` and `resume` (isImportStop); rejects with a callback's own error when one threw.
 * Whatever happens, the lock, the files and the threads are released before it settles.
 */
export async function importClients(input: ImportClientsInput): Promise<ImportSummary> {
  const guard = new CallbackGuard();
  const options: ImportClientsOptions = { ...input, file: input.file ?? 'rows' };
  // Rows from code with no results file named: one of their own, private, gone when the run ends.
  const scratch = input.rows !== undefined && input.results === undefined ? await mkdtemp(join(tmpdir(), 'ccs-bulk-rows-')) : undefined;
  if (scratch !== undefined) options.results = join(scratch, 'results.csv');
  let summary: ImportSummary;
  try {
    summary = await runImport(guardCallbacks(options, guard));
  } catch (error) {
    guard.rethrow();
    throw toLibraryWords(error);
  } finally {
    if (scratch !== undefined) await rm(scratch, { recursive: true, force: true });
  }
  guard.rethrow();
  const { stopped } = summary;
  if (stopped === undefined) return summary;
  // Said as options, not flags: the caller set `maxErrors`, not --max-errors.
  const said = {
    ...stopped,
    message: inLibraryWords(stopped.message),
    ...(stopped.cause !== undefined && { cause: inLibraryWords(stopped.cause) }),
    ...(stopped.fix !== undefined && { fix: inLibraryWords(stopped.fix) }),
  };
  throw stopError(said, { ...summary, stopped: said }, summary.results, options.signal?.reason);
}

/**
 * importClients' options: a `file`, or `rows` from code (then `file` only names them, default
 * `rows`, and the results file is optional: without one the run keeps its own, removed at the end,
 * and `onRow` is how its outcomes come out).
 */
export type ImportClientsInput = Omit<ImportClientsOptions, 'file' | 'rows'> &
  (
    | {
        /** The input file: CSV, .xlsx, .ods or .xls. */
        file: string;
        /** Not with `file`. */
        rows?: undefined;
      }
    | {
        /** Rows from code: plain objects from an Iterable or AsyncIterable, pulled as the run sends. */
        rows: RowsInput;
        /** Only a name for the rows, in messages and the results file; default `rows`. */
        file?: string | undefined;
      }
  );

/** A stopped import's error: `summary` (what it did) and `resume` (how to continue it) attached. */
export function isImportStop(error: unknown): error is CcsError & RunStopped<ImportSummary> {
  return error instanceof CcsError && 'summary' in error && 'resume' in error;
}

/** The caller's callbacks, each called through the guard; its signal joined to the caller's. */
function guardCallbacks(options: ImportClientsOptions, guard: CallbackGuard): ImportClientsOptions {
  return {
    ...options,
    signal: guard.join(options.signal),
    onProgress: guard.wrap(options.onProgress),
    onPlan: guard.wrap(options.onPlan),
    onStaleTemps: guard.wrap(options.onStaleTemps),
    onLockReplaced: guard.wrap(options.onLockReplaced),
    onLockTakenOver: guard.wrap(options.onLockTakenOver),
    onSourceChanged: guard.wrap(options.onSourceChanged),
    onListing: guard.wrap(options.onListing),
    onRow: guard.wrap(options.onRow),
  };
}

/**
 * importClients for the CLI: resolves with the summary however the run ended (the command
 * prints it and turns `stopped` into its exit code); its callbacks are its own.
 */
export async function runImport(options: ImportClientsOptions): Promise<ImportSummary> {
  const run = await startRun(options);
  let ended = false;
  try {
    await importRows(run, options.signal);
    ended = true;
  } catch (error) {
    if (!(error instanceof InputError)) throw error;
    run.recorder.stop('input_error', error.message, error.code);
    ended = true;
  } finally {
    await run.close(ended ? () => settleRun(run, options) : undefined);
  }
  if (run.recorder.outputFailure !== undefined) throw run.recorder.outputFailure;
  const summary: ImportSummary = { ...summarize(run, options), ...(run.account && { account: run.account }) };
  if (run.report) writeRunReport(run.report, summary, options);
  return summary;
}

function writeRunReport(report: ReportTracker, summary: ImportSummary, options: ImportClientsOptions): void {
  report.stop();
  const end = { ...summary, resumeCommand: options.resumeCommand, at: new Date() };
  writeReport(summary.report!, renderReport(report.notes, end));
}

/**
 * How the run ended, once every line is on disk and before the results file is put in row
 * order (the account reads this run's lines where they were appended).
 */
async function settleRun(run: Run, options: ImportClientsOptions): Promise<void> {
  // Ctrl-C after the last row was read still stopped the rows in flight.
  if (options.signal?.aborted) run.recorder.interrupted();
  // Fewer than SYSTEMIC_STREAK answers, every one the same refusal: the endpoint, not the rows.
  const systemic = run.streak.systemic();
  if (systemic) run.recorder.stop('systemic_response', systemicMessage(systemic), 'systemic_response');
  // Every run shows its account, a stopped one too; a gap in one that claims to have finished stops it.
  run.account = await settleAccount(run);
  run.opened.results.end(run.recorder.stopped);
}

/** The end-of-run account (account.ts); a gap stops the run as `incomplete_run`. */
async function settleAccount(run: Run): Promise<RunAccount> {
  const account = await accountForRun({
    ledger: run.ledger,
    results: run.opened.results.path,
    resultsStart: run.resultsStart,
    readerDone: run.readerDone,
    bytesRead: run.source.bytesRead(),
    sizeBytes: run.source.info.sizeBytes,
  });
  if (!account.complete) {
    run.recorder.stop(
      'incomplete_run',
      `the run cannot account for every row: ${account.problem}; the first row without an outcome is row ${account.firstMissing}`,
      'incomplete_run',
    );
  }
  return account;
}

/** The loop: read → (map → validate → key → dedupe: classifyRow) → send → record. */
async function importRows(run: Run, signal: AbortSignal | undefined): Promise<void> {
  const { recorder, window, send, ledger } = run;
  for await (const batch of injected.batches?.(run.source.batches) ?? run.source.batches) {
    sizeKeySet(run, batch.length);
    for (const raw of batch) {
      run.charsTaken += charsOf(raw.values);
      // Ctrl-C: nothing more is sent, and the rest of the file is counted (not_attempted), so the summary adds up.
      if (signal?.aborted) recorder.interrupted();
      // Where a row is named in messages: its line (CSV) or worksheet row, as the person fixing it sees it.
      const verdict = classifyRow(raw.values, raw.line, run.rules, raw.invalidBytes);
      if (run.shard && !inShard(run.shard, verdict, raw.row)) {
        ledger.read(raw.row, 'other_shard');
        run.otherShardRows++;
        continue;
      }
      run.rows++;
      run.report?.notes.row(raw.values);
      // After a stop (auth, --max-errors) the rest of the file is still accounted for.
      if (recorder.stopped) {
        ledger.read(raw.row, 'outcome');
        recorder.notAttempted(raw, 'key' in verdict ? verdict.key : undefined);
        continue;
      }
      if (verdict.kind === 'skipped') ledger.read(raw.row, 'created_earlier', verdict.key);
      else ledger.read(raw.row, 'outcome');
      if (verdict.kind === 'existing' && run.settleHeld && verdict.held.kind === 'one' && !verdict.held.own && !run.opened.results.answered.has(raw.row)) {
        // Resumed, and no earlier run decided this row without a request: that run may have made
        // this client and stopped before writing its answer.
        const settle = run.settleHeld;
        await window.slot();
        window.run(() => settle(raw, verdict));
        continue;
      }
      if (verdict.kind !== 'send') {
        if (verdict.kind === 'invalid') {
          run.notes.invalid(raw.row, raw.line, verdict.list);
          run.report?.notes.invalid(raw.line, raw.values, verdict.list);
        } else if (verdict.kind === 'duplicate') run.report?.notes.duplicate(raw.line, raw.values, verdict.firstRow);
        recorder.settle(raw, verdict);
        continue;
      }
      await window.slot();
      if (signal?.aborted) {
        recorder.notAttempted(raw, verdict.key);
        recorder.interrupted();
        continue;
      }
      const sendRow = (row: RawRecord) => send!(row, verdict.fields, verdict.key);
      window.run(() => (injected.send ? injected.send(sendRow, raw) : sendRow(raw)));
    }
  }
  run.readerDone = true;
}

/** A row's characters as the file holds them, about: its values, a separator each. */
function charsOf(values: readonly string[]): number {
  let chars = values.length;
  for (const value of values) chars += value.length;
  return chars;
}

function inShard(shard: Shard, verdict: ReturnType<typeof classifyRow>, row: number): boolean {
  const owner = 'key' in verdict ? shardOfKey(verdict.key, shard.count) : shardOfRow(row, shard.count);
  return owner === shard.index;
}

/** One import's moving parts, from its plan to its files' closing. */
interface Run {
  started: number;
  source: RowSource;
  opened: OpenPlan;
  window: SendWindow;
  recorder: Recorder;
  notes: RunNotes;
  progress: ProgressReporter;
  rules: ClassifyRules;
  /** Undefined in a dry run. */
  send: SendRow | undefined;
  /** A resumed import's row whose person the service holds under a client its results file does not name (settleHeld). */
  settleHeld?: ((raw: RawRecord, verdict: Extract<RowVerdict, { kind: 'existing' }>) => Promise<void>) | undefined;
  rows: number;
  shard: Shard | undefined;
  otherShardRows: number;
  /** Failed rows the service refused for what they hold (refusedRow). */
  refused: number;
  /** not_attempted rows that were sent at least once, their answer unknown. */
  inFlightAtStop: number;
  /** The characters of the rows handed to the loop, with their separators (the progress's estimate of the file's rows). */
  charsTaken: number;
  /** Every row handed to the loop, for the end-of-run account. */
  ledger: RowLedger;
  /** The results file's size when opened: this run's lines follow. */
  resultsStart: number;
  /** The loop took the reader's last batch. */
  readerDone: boolean;
  /** The rows' final answers in a row (systemic.ts). */
  streak: AnswerStreak;
  /** The end-of-run account, once settled (a run that stopped has none). */
  account?: RunAccount | undefined;
  /** --report's notes, when asked for. */
  report?: ReportTracker | undefined;
  /** Who the people are, and the service's (match.ts). */
  matching: Matching;
  lookalikes: LookalikeColumn[];
  /** Fields built from several columns, as the plan showed them. */
  composites: Partial<Record<Field, CompositeField>>;
  /** A single-byte file's rows with a `?` where a letter was lost (row/lost-letters.ts). */
  lostLetters?: LostLetters | undefined;
  /** Waits for the rows in flight, then closes the input and the output files (`beforeSort`: see results.ts). */
  close(beforeSort?: () => Promise<void>): Promise<void>;
}

/** Settles the plan (which refuses a bad run before any request) and opens everything. */
async function startRun(options: ImportClientsOptions): Promise<Run> {
  const dryRun = options.dryRun === true;
  const { service } = options;
  if (!dryRun && !service) throw new TypeError('importClients needs a service client unless dryRun');
  const started = Date.now();
  const results = resultsPathOf(options);
  // Before any file is opened: it refuses a concurrency that is not a positive integer.
  const window = openWindow(options);
  const opened = await planImport(planInput(options, results));
  const { results: resultsFile, failedFile } = opened;
  const closeFiles = async (sort: boolean, beforeSort?: () => Promise<void>) => {
    failedFile?.close();
    await resultsFile.close({ sort, ...(beforeSort && { beforeSort }) });
  };
  const notes = new RunNotes(options.invalidRowsListed ?? 10, opened.columns);
  // The files are open: whatever throws before the loop closes them (a reader thread would
  // otherwise wait for its consumer).
  let settled: SettledPlan;
  const resultsStart = statSync(resultsFile.path).size;
  try {
    settled = await settlePlan(opened, options, results, notes);
  } catch (error) {
    await opened.source.close();
    await closeFiles(false);
    discardOutputs(options, results);
    throw error;
  }
  const { source, validate, lookalikes, composites, matching, lostLetters } = settled;
  const run: Run = {
    started,
    source,
    opened,
    window,
    recorder: new Recorder({
      results: resultsFile,
      failed: failedFile,
      maxErrors: options.maxErrors,
      signal: options.signal,
      onRecord: () => run.progress.tick(),
      onFailed: (line) => {
        if (refusedRow(line.httpStatus)) run.refused++;
        run.report?.notes.failed(line);
      },
      where: positionWord(opened.source.info.format),
      onLine: (line) => {
        // Sent at least once, its answer unknown: the service may hold it; resume sends it again under its key.
        if (line.outcome === 'not_attempted' && (line.attempts ?? 0) > 0) run.inFlightAtStop++;
        options.onRow?.(rowResultOf(line, opened.source.headers));
      },
    }),
    notes,
    progress: progressReporter(options.onProgress, snapshotter(() => run, dryRun, options.signal), options.progressIntervalMs),
    rules: { validate, seen: new KeySet(), created: resultsFile.created, dryRun, people: matching.people, held: matching.held },
    matching,
    send: undefined,
    rows: 0,
    shard: options.shard,
    otherShardRows: 0,
    refused: 0,
    inFlightAtStop: 0,
    charsTaken: 0,
    ledger: new RowLedger(),
    streak: new AnswerStreak(),
    resultsStart,
    readerDone: false,
    lookalikes,
    composites,
    lostLetters,
    async close(beforeSort) {
      await window.drain();
      // Rows held back while every create answered 404/405 (systemic.ts): recorded before the files close.
      settleOpening(run.streak.opening, run.recorder, options.signal?.aborted === true);
      run.report?.stop();
      unwatch?.();
      await source.close();
      matching.close();
      run.progress.finish();
      // The results file is put in row order (sort-results.ts); a failure leaves it complete, unsorted.
      await closeFiles(true, beforeSort).catch((error: unknown) => run.recorder.outputFailed(error));
    },
  };
  if (matching.stop !== undefined) stopFor(run.recorder, matching.stop);
  if (service) run.send = createSender(service, window, run.recorder, started, run.streak);
  if (service && !dryRun && options.resume === true) run.settleHeld = heldSettler(service, run.recorder);
  run.report = startReport(run, options);
  const unwatch = service?.watchAnswers((answer) => window.observe(answer));
  return run;
}

/** What planImport needs from the options. */
function planInput(options: ImportClientsOptions, results: string): PlanInput {
  const dryRun = options.dryRun === true;
  return {
    file: options.file,
    rows: options.rows,
    results,
    failed: failedPathOf(options),
    report: reportPathOf(options),
    // A dry run is as busy as its parser: a large file is parsed on a second thread. A real
    // import waits on signing and the service; the thread would only add memory there.
    read: { thread: dryRun ? 'large' : 'never', ...options.read },
    map: options.map ?? {},
    resume: options.resume === true,
    overwrite: options.overwrite === true,
    dryRun,
    service: options.serviceIdentity ?? options.service?.baseUrl,
    onStaleTemps: options.onStaleTemps,
    onLockReplaced: options.onLockReplaced,
    onLockTakenOver: options.onLockTakenOver,
    commandLine: options.commandLine,
    acceptChangedSource: options.acceptChangedSource,
    onSourceChanged: options.onSourceChanged,
  };
}

/** A resumed import's rows whose person the service holds under a client the results file does not name (match.ts). */
function heldSettler(service: ServiceClient, recorder: Recorder): NonNullable<Run['settleHeld']> {
  return (raw, verdict) =>
    settleHeld(service, recorder, raw, verdict.fields!, verdict.key, verdict.held as Extract<Held, { kind: 'one' }>).catch(
      (error: unknown) => recorder.outputFailed(error),
    );
}

interface SettledPlan {
  source: RowSource;
  validate: ClassifyRules['validate'];
  lookalikes: LookalikeColumn[];
  composites: Partial<Record<Field, CompositeField>>;
  matching: Matching;
  lostLetters?: LostLetters | undefined;
}

/** The plan's checks on the open files, before any row: unmapped columns (rows read ahead), then the row rules. */
async function settlePlan(opened: OpenPlan, options: ImportClientsOptions, results: string, notes: RunNotes): Promise<SettledPlan> {
  const unmapped = { ignoreColumns: options.ignoreColumns ?? [], refuse: options.dryRun !== true };
  // The footer is left out before the rows are read ahead for the plan's samples.
  const unfooted = dropExportFooter(opened.source, opened.plan.recognized?.label);
  const checked = await checkUnmapped(options.file, unfooted, opened.plan, unmapped);
  const { lookalikes, composites } = checked;
  const dateFormat = options.dateFormat ?? IMPORT_DEFAULTS.dateFormat;
  const { source, dates } = await settleDates(checked.source, opened.plan, dateFormat, positionWord(checked.source.info.format));
  options.onPlan?.({
    source: source.info,
    columns: opened.columns,
    unknownColumns: opened.plan.unknown,
    results,
    resumedCreated: opened.results.created.size,
    replacesValidate: opened.replacesValidate,
    lookalikeColumns: lookalikes,
    backup: opened.backup,
    retiredReport: opened.retiredReport,
    columnLanguages: opened.plan.languages,
    dates,
    composites,
    recognized: opened.plan.recognized?.label,
    partialAddress: checked.partialAddress,
  });
  const validate = rowValidator(opened.plan, { ...rowRules(options), dates }, notes);
  // Last: the listing of who the service holds is the plan's only request.
  const matching = await startMatching({
    identity: options.identity,
    headers: opened.plan.headers,
    file: options.file,
    service: options.service,
    serviceIdentity: options.serviceIdentity ?? options.service?.baseUrl ?? '',
    dryRun: options.dryRun === true,
    matchService: options.matchService === true,
    heldCache: options.heldCache,
    createdIds: opened.results.createdIds,
    signal: options.signal,
    onListing: options.onListing,
  });
  const watched = watchLostLetters(source, opened.plan);
  return { source: watched?.source ?? source, lookalikes, composites, validate, matching, lostLetters: watched?.found };
}

/**
 * A run refused after its files were opened (before any row) leaves no results or --failed file
 * of its own: the next run needs no --overwrite. A resumed results file keeps its rows.
 */
function discardOutputs(options: ImportSettings, results: string): void {
  const paths = [failedPathOf(options), ...(options.resume === true ? [] : [results, metaPath(results), trailPath(results)])];
  for (const path of paths) if (path !== undefined) rmSync(path, { force: true });
}

function openWindow(options: ImportClientsOptions): SendWindow {
  return createSendWindow({
    concurrency: options.concurrency ?? IMPORT_DEFAULTS.concurrency,
    maxConcurrency: options.maxConcurrency ?? IMPORT_DEFAULTS.maxConcurrency,
    startConcurrency: IMPORT_DEFAULTS.startConcurrency,
    ahead: Math.max(16, 4 * availableParallelism()),
    backlog: signedBacklog(availableParallelism()),
    rate: options.rate,
    signal: options.signal,
    paceMemory: paceMemoryOf(options),
  });
}

/** Where `auto` keeps its pace between runs against this service; none for a dry run (no requests). */
function paceMemoryOf(options: ImportClientsOptions): PaceMemory | undefined {
  if (options.dryRun === true || options.paceMemory === false) return undefined;
  const service = options.serviceIdentity ?? options.service?.baseUrl;
  return options.paceMemory ?? (service === undefined ? undefined : paceMemoryFor(service));
}

function rowRules(options: ImportSettings) {
  return {
    dateFormat: options.dateFormat ?? IMPORT_DEFAULTS.dateFormat,
    liquidityType: options.liquidityType ?? IMPORT_DEFAULTS.liquidityType,
  };
}

/** The run's snapshots: rows finished, the phase, the ETA from the pace rows finish at (progress-report.ts). */
function snapshotter(runOf: () => Run, dryRun: boolean, signal: AbortSignal | undefined): () => ProgressSnapshot {
  const pace = new FinishPace();
  return () => {
    const run = runOf();
    const { counts } = run.recorder;
    let finished = 0;
    for (const outcome of OUTCOMES) finished += counts[outcome];
    const figures = {
      finished,
      unsent: counts.not_attempted,
      // A row of another shard is read, not finished here.
      read: run.rows,
      readerDone: run.readerDone,
      bytesRead: run.source.bytesRead(),
      sizeBytes: run.source.info.sizeBytes,
      charsTaken: run.charsTaken,
      rowsTaken: run.ledger.last,
      stopped: run.recorder.stopped !== undefined || signal?.aborted === true,
    };
    const outcomes = dryRun ? VALIDATE_OUTCOMES : IMPORT_OUTCOMES;
    return {
      ...rowProgress(figures, pace),
      counters: Object.fromEntries(outcomes.map((outcome) => [outcome, counts[outcome]])),
      pace: dryRun ? undefined : { inFlight: run.window.inFlight(), limit: run.window.limits().current },
      note: dryRun ? undefined : paceNote(run.window.limits(), 'concurrency'),
    };
  };
}

/** The outcomes a snapshot counts: an import's, and a dry run's (`valid` for `created`; `existing` with --check-service). */
const IMPORT_OUTCOMES = OUTCOMES.filter((outcome) => outcome !== 'valid');
const VALIDATE_OUTCOMES = OUTCOMES.filter((outcome) => outcome !== 'created' && outcome !== 'failed' && outcome !== 'not_attempted');

function summarize(run: Run, options: ImportClientsOptions): ImportSummary {
  const elapsedMs = Date.now() - run.started;
  return {
    file: options.file,
    results: resultsPathOf(options),
    failed: failedPathOf(options),
    report: reportPathOf(options),
    dryRun: options.dryRun === true,
    rows: run.rows,
    counts: run.recorder.counts,
    refused: run.refused,
    inFlightAtStop: run.inFlightAtStop,
    replayed: run.recorder.replayed,
    invalidRows: run.notes.invalidRows,
    normalizations: run.notes.normalizations(),
    failedRows: run.opened.failedFile?.rows ?? 0,
    failedEncoding: run.opened.failedFile?.encoding,
    topErrors: run.recorder.topErrors(5),
    elapsedMs,
    rowsPerSecond: Math.round(run.rows / Math.max(0.001, elapsedMs / 1000)),
    source: run.source.info,
    columns: run.opened.columns,
    unknownColumns: run.opened.plan.unknown,
    lookalikeColumns: run.lookalikes,
    ...(Object.keys(run.composites).length > 0 && { composites: run.composites }),
    ...(run.opened.plan.recognized && { recognized: run.opened.plan.recognized.label }),
    ...(run.lostLetters !== undefined && run.lostLetters.count > 0 && { lostLetters: run.lostLetters }),
    stopped: run.recorder.stopped,
    ...(run.matching.listing && { matching: run.matching.listing }),
    changedRows: run.recorder.changedRows,
    concurrency: run.window.limits(),
    ...(run.shard && { shard: { ...run.shard, otherRows: run.otherShardRows } }),
  };
}

function failedPathOf(options: ImportSettings): string | undefined {
  return options.failed !== undefined && options.shard ? shardResultsPath(options.failed, options.shard) : options.failed;
}

function reportPathOf(options: ImportSettings): string | undefined {
  return options.report !== undefined && options.shard ? shardResultsPath(options.report, options.shard) : options.report;
}

/** --report: its notes, and for an import the chart's clock. */
function startReport(run: Run, options: ImportClientsOptions): ReportTracker | undefined {
  if (options.report === undefined) return undefined;
  const dryRun = options.dryRun === true;
  const { plan } = run.opened;
  const { counts } = run.recorder;
  return trackReport(
    { source: run.source.info, headers: plan.headers, columns: plan.columns, map: options.map ?? {}, unknown: plan.unknown, dryRun, composites: run.composites, recognized: plan.recognized?.label },
    dryRun
      ? undefined
      : {
          started: run.started,
          rows: () => Object.values(counts).reduce((a, b) => a + b, 0),
          inFlight: () => run.window.inFlight(),
          watchOutage: options.service && ((listener) => options.service!.watchOutage(listener)),
        },
  );
}

function resultsPathOf(options: ImportSettings): string {
  const results = options.results ?? defaultResultsPath(options.file);
  return options.shard ? shardResultsPath(results, options.shard) : results;
}

/** Rows read before the file's size is used to size the key set (the estimate is then within a few %). */
const SIZING_ROWS = 8192;

/**
 * Once the rows so far show the file's bytes per row, the key set is sized for the whole file
 * at once, rather than doubled (holding both tables) as it fills.
 */
function sizeKeySet(run: Run, batchLength: number): void {
  const { seen, people } = run.rules;
  if (run.rows < SIZING_ROWS || seen.size + batchLength <= seen.room) return;
  const rows = Math.max(expectedRows(run.rows, run.source), Math.ceil((seen.size + batchLength) * 1.1));
  seen.reserve(rows);
  people?.set.reserve(rows);
}

/** The file's rows, from the bytes per row so far, with a 15% margin (read-ahead, longer rows later). */
function expectedRows(rows: number, source: { info: SourceInfo; bytesRead(): number }): number {
  const read = source.bytesRead();
  if (read <= 0 || source.info.sizeBytes <= read) return rows;
  return Math.ceil(((rows * source.info.sizeBytes) / read) * 1.15);
}
