/**
 * The import's plan: everything that can refuse a run does so here, before the first request
 * — output paths, the input's format and headers, the column mapping, the results file.
 */
import { type ColumnPlan, headerTest, mapColumns, usedColumns } from './row/columns.js';
import { checkTemplates, formatTemplate, isTemplate } from './row/composite.js';
import { type FailedFile, openFailed } from './record/failed.js';
import type { Field } from './fields.js';
import { checkDistinctPaths, INPUT, lockOutput } from '../infra/output-files.js';
import { openObjectRows, openRows, positionWord, type ReadOptions, type RowSource, type RowsInput } from './read/index.js';
import { openResults, type ResultsFile } from './record/results.js';
import { assertResultsUsable } from './record/results-guard.js';
import { describeRunner, hashFile, stampSource } from './record/provenance.js';
import { basename } from 'node:path';
import { sweepStaleTemps } from '../infra/temp-files.js';
import { retireReport } from '../report/retire-report.js';
import { checkSource, type SourceChanges, sourceChangedError } from './record/source-changes.js';
import type { LockHolder } from '../infra/lock.js';

export interface PlanInput {
  /** The input file; with `rows`, the name its messages and files give the rows. */
  file: string;
  /** Rows from code instead of a file (read/object-rows.ts). */
  rows?: RowsInput | undefined;
  results: string;
  failed: string | undefined;
  /** --report: only checked here (written when the run ends). */
  report?: string | undefined;
  read: ReadOptions;
  map: Partial<Record<Field, string>>;
  resume: boolean;
  overwrite: boolean;
  dryRun: boolean;
  /** Recorded beside the results file: the base URL, or the in-process sandbox's identity. */
  service: string | undefined;
  /** Called with the temp files of dead runs removed beside the results file. */
  onStaleTemps?: ((removed: string[]) => void) | undefined;
  /** Called for a lock file found beside an output that was not believed and was replaced (lock.ts). */
  onLockReplaced?: ((path: string, why: string) => void) | undefined;
  /** Called when the results file's lock was a dead run's, taken over (its pid, host and start). */
  onLockTakenOver?: ((path: string, dead: LockHolder) => void) | undefined;
  /** The command as typed, recorded (redacted) in the results file's sidecar; absent: not recorded. */
  commandLine?: readonly string[] | undefined;
  /** --resume goes on though rows of the input changed since the results file's last run. */
  acceptChangedSource?: boolean | undefined;
  /** Called (--resume) when the input changed since the last run and the run goes on: rows only added, or accepted. */
  onSourceChanged?: ((changes: SourceChanges) => void) | undefined;
}

export interface OpenPlan {
  source: RowSource;
  plan: ColumnPlan;
  results: ResultsFile;
  failedFile: FailedFile | undefined;
  /** field → the header that feeds it (a template for a field built from several columns) */
  columns: Partial<Record<Field, string>>;
  /** The results file existed, written by validate, and is replaced. */
  replacesValidate: boolean;
  /** The import's results file that --overwrite replaced, kept beside it under this name. */
  backup: string | undefined;
  /** An earlier run's review page at --report, kept beside it under this name (report/retire-report.ts). */
  retiredReport: string | undefined;
}

export async function planImport(input: PlanInput): Promise<OpenPlan> {
  // A template's braces are checked before any file is touched (its columns once the header is read).
  checkTemplates(input.map);
  checkDistinctPaths([
    { flag: INPUT, path: input.rows === undefined ? input.file : undefined },
    { flag: '--results', path: input.results },
    { flag: '--failed', path: input.failed },
    { flag: '--report', path: input.report },
  ]);
  // First: a live run holding the results file refuses this one before anything is read or decided.
  const resultsLock = lockOutput(input.results, 'results file');
  if (resultsLock.replaced !== undefined) input.onLockReplaced?.(resultsLock.path, resultsLock.replaced);
  if (resultsLock.tookOver !== undefined) input.onLockTakenOver?.(resultsLock.path, resultsLock.tookOver);
  const swept = sweepStaleTemps([resultsLock]);
  if (swept.length > 0) input.onStaleTemps?.(swept);
  let source: RowSource;
  try {
    source = input.rows === undefined ? await openRows(input.file, { headerTest: headerTest(input.map), ...input.read }) : await openObjectRows(input.rows, input.file);
  } catch (error) {
    resultsLock.release();
    throw error;
  }
  let failedFile: FailedFile | undefined;
  let results: ResultsFile | undefined;
  try {
    const plan = mapColumns(input.file, source.headers, input.map, source.info.header.line, positionWord(source.info.format));
    const dropColumn = failedFilesError(source.headers, plan);
    const resultsOptions = {
      headers: source.headers,
      dropColumn,
      resume: input.resume,
      overwrite: input.overwrite,
      buffered: input.dryRun,
      lock: resultsLock,
      meta: {
        writtenBy: input.dryRun ? ('validate' as const) : ('import' as const),
        service: input.dryRun ? undefined : input.service,
        input: input.file,
        startedAt: new Date().toISOString(),
        runner: describeRunner(input.commandLine),
        source: input.rows === undefined ? stampSource(input.file) : undefined,
      },
    };
    // Checked before the failed file is opened, so a refused run leaves both files as they were.
    const usable = await assertResultsUsable(input.results, resultsOptions);
    if (input.failed !== undefined) {
      const { info } = source;
      failedFile = openFailed(input.failed, source.headers, {
        addKeyColumn: plan.columns.idempotency_key === undefined,
        delimiter: info.delimiter,
        encoding: info.format === 'csv' ? { name: info.encoding, bom: info.encodingSource === 'bom' } : undefined,
        dropColumn,
        columns: plan.columns,
        composites: plan.composites,
        source: { name: basename(input.file), word: positionWord(info.format) },
      });
    }
    // Hashed beside the run (the sidecar gets it when it is known), not before its first request;
    // a resumed run hashes it first, to compare it with what the last run read.
    let sourceHash: Promise<string | undefined>;
    if (input.rows !== undefined) sourceHash = Promise.resolve(undefined);
    else if (input.resume && usable.exists && !usable.replacesValidate && !input.dryRun) {
      const check = await checkSource(input.file, input.results, usable.resumed?.source, { headerTest: headerTest(input.map), ...input.read }, dropColumn);
      const { changes } = check;
      if (changes !== undefined) {
        const refused = changes.changedRows > 0 || changes.goneRows > 0;
        if (refused && input.acceptChangedSource !== true) throw sourceChangedError(input.file, input.results, changes);
        input.onSourceChanged?.(changes);
      }
      sourceHash = Promise.resolve(check.sha256);
    } else sourceHash = hashFile(input.file);
    results = await openResults(input.results, { ...resultsOptions, usable, sourceHash, trail: !input.dryRun });
    // A field built from several columns is named by its template, as --map takes it (and a header with a brace as one).
    const columns = Object.fromEntries(
      Object.entries(plan.columns).map(([field, index]) => [field, plan.composites[field as Field]?.template ?? asMapValue(source.headers[index] ?? '')]),
    ) as Partial<Record<Field, string>>;
    // Last: a refused run leaves the earlier page where it was.
    const retiredReport = input.report === undefined ? undefined : retireReport(input.report, { startedAt: resultsOptions.meta.startedAt, results: input.results });
    return { source, plan, results, failedFile, columns, replacesValidate: usable.replacesValidate, backup: results.backup, retiredReport };
  } catch (error) {
    failedFile?.close();
    // openResults releases the lock it was given when it fails; before it is reached, it is released here.
    if (results === undefined) resultsLock.release();
    await source.close();
    throw error;
  }
}

/** A header as --map takes it back: one with a brace in it is written as a one-part template. */
function asMapValue(header: string): string {
  return isTemplate(header) ? formatTemplate({ lead: '', parts: [{ header, after: '' }] }) : header;
}

/**
 * The `error` column a --failed file ends with: when that file is imported again, the old text
 * is not carried into the new results or --failed file (it would sit beside rows now created).
 * Only an unmapped last column named exactly `error`.
 */
function failedFilesError(headers: readonly string[], plan: ColumnPlan): number | undefined {
  const last = headers.length - 1;
  if (last < 0 || headers[last] !== 'error') return undefined;
  return usedColumns(plan).has(last) ? undefined : last;
}
