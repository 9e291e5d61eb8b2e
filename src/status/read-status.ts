/**
 * One results file's standing: its sidecar (who ran what, on which input, how it ended), its
 * lock (is a run holding it now?) and its lines counted by outcome, streamed from the file
 * itself (memory stays flat whatever its size; a torn last line is left out).
 */
import { statSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { UsageError } from '../errors.js';
import { heldByOther, lockHolderOf } from '../infra/lock.js';
import { shownPath } from '../infra/printable.js';
import { BACKUP_NAME } from '../import/record/results-guard.js';
import { readMeta, type ResultsMeta } from '../import/record/results-meta.js';
import { isResultsHeader, readResultRecords } from '../import/record/results-read.js';
import { OUTCOMES } from '../import/record/results.js';
import { nextStep } from './next-step.js';
import type { ResultsStatus, RunState, SourceStatus } from './types.js';

/** Stops after which the run still reads every row and records the rest `not_attempted` (run-import.ts). */
const READ_TO_END = new Set(['max_errors', 'auth', 'connection', 'outage', 'systemic_response']);

export async function readStatus(results: string, here = process.cwd()): Promise<ResultsStatus> {
  const meta = readMeta(results);
  const lines = await countLines(results);
  // A lock file that is not one (lock.ts would take it over) holds no run.
  const holder = lockHolderOf(results);
  const held = holder !== undefined && heldByOther(results);
  const state = stateOf(meta, held);
  const stop = state === 'stopped' ? meta?.end?.stop : undefined;
  const { counts } = lines;
  const readToEnd = state === 'finished' || (state === 'stopped' && stop !== undefined && READ_TO_END.has(stop.reason));
  const status: ResultsStatus = {
    results,
    writtenBy: meta?.writtenBy,
    backup: BACKUP_NAME.test(basename(results)),
    source: sourceOf(results, meta),
    service: meta?.service,
    state,
    stop,
    heldBy: held && holder ? { pid: holder.pid, host: holder.host, since: holder.since } : undefined,
    startedAt: meta?.startedAt || undefined,
    finishedAt: meta?.end?.finishedAt,
    user: meta?.runner?.user,
    host: meta?.runner?.host,
    toolVersion: meta?.runner?.toolVersion,
    commandLine: meta?.runner?.commandLine,
    earlierRuns: meta?.earlierRuns?.length ?? 0,
    counts,
    rows: lines.rows,
    lastRow: lines.lastRow,
    rowsLeft: meta?.writtenBy === 'import' && readToEnd ? (counts.failed ?? 0) + (counts.invalid ?? 0) + (counts.not_attempted ?? 0) : undefined,
    next: undefined,
    advice: undefined,
  };
  return { ...status, ...nextStep(status, { cwd: meta?.runner?.cwd, here }) };
}

function stateOf(meta: ResultsMeta | undefined, held: boolean): RunState {
  // A live lock first: a run just started holds it before it rewrites the sidecar.
  if (held) return 'in_progress';
  if (meta?.end !== undefined) return meta.end.state;
  // A sidecar that records who started the run (format 2) would record its end too.
  if (meta?.runner !== undefined) return 'killed';
  return 'unknown';
}

/**
 * The input now against what the sidecar recorded; relative paths are the run's (its cwd). With
 * no sidecar, the input its default name comes from (`<input>.results.csv`), when it is there.
 */
function sourceOf(results: string, meta: ResultsMeta | undefined): SourceStatus | undefined {
  if (meta === undefined || meta.input === '') return guessSource(results);
  const recorded = meta.source;
  let now: SourceStatus['now'] = 'unknown';
  const path = resolve(meta.runner?.cwd ?? '.', meta.input);
  try {
    const stats = statSync(path);
    if (recorded !== undefined) now = stats.size === recorded.size && stats.mtime.toISOString() === recorded.mtime ? 'unchanged' : 'changed';
  } catch {
    now = 'missing';
  }
  return { path: meta.input, size: recorded?.size, mtime: recorded?.mtime, sha256: recorded?.sha256, now };
}

function guessSource(results: string): SourceStatus | undefined {
  const input = results.replace(/(?:\.sandbox)?\.results(?:\.shard-\d+-of-\d+)?\.csv$/, '');
  if (input === results) return undefined;
  try {
    if (!statSync(input).isFile()) return undefined;
  } catch {
    return undefined;
  }
  return { path: input, size: undefined, mtime: undefined, sha256: undefined, now: 'unknown' };
}

/** Every outcome at 0, then the file's lines counted (an outcome this version does not know is counted under its name). */
async function countLines(results: string): Promise<{ counts: Record<string, number>; rows: number; lastRow: number | undefined }> {
  const counts: Record<string, number> = Object.fromEntries(OUTCOMES.map((outcome) => [outcome, 0]));
  let rows = 0;
  let lastRow: number | undefined;
  let header = true;
  try {
    for await (const record of readResultRecords(results)) {
      if (header) {
        if (!isResultsHeader(record)) throw new UsageError(`${shownPath(results)} is not a ccs-bulk results file (unexpected header)`, 'results_foreign');
        header = false;
        continue;
      }
      const outcome = record[1] ?? '';
      counts[outcome] = (counts[outcome] ?? 0) + 1;
      rows++;
      const row = Number(record[0]);
      if (Number.isSafeInteger(row) && (lastRow === undefined || row > lastRow)) lastRow = row;
    }
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError(`cannot read results file ${shownPath(results)}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`, 'results_unreadable');
  }
  return { counts, rows, lastRow };
}
