/**
 * Everything an export decides before its first request, as plain data: the output's filled-in
 * name and whether it replaces a file, the locks, the incremental window and the filters sent.
 * Every refusal (a name, an existing file, a damaged state) happens here, before any request.
 */
import { stat } from 'node:fs/promises';
import { UsageError } from '../errors.js';
import { makeParentFolders } from '../infra/folders.js';
import { lockOutput, refuseLink } from '../infra/output-files.js';
import type { FileLock } from '../infra/lock.js';
import { injected } from '../infra/inject.js';
import { shownPath } from '../infra/printable.js';
import { sweepStaleTemps } from '../infra/temp-files.js';
import type { IncrementalRun, LastOutput } from './incremental.js';
import { replacesLast } from './incremental.js';
import { readReported, startNewSinceLast } from './new-since-last.js';
import type { checkExportSettings } from './options.js';
import { datedNameHint, expandOutName, isGzipName } from './out-name.js';
import type { PageFilters } from './page.js';
import type { Client } from '../service/schemas.js';
import { readState, startSinceLast } from './since-last.js';
import { datesIn, planWindow, type RunWindow } from './window.js';

export type CheckedSettings = ReturnType<typeof checkExportSettings>;

export interface PlanInput {
  out: string | NodeJS.WritableStream;
  sinceLast?: string | undefined;
  newSinceLast?: string | undefined;
  overwrite?: boolean | undefined;
  gzip?: boolean | undefined;
  report?: string | undefined;
  now?: (() => Date) | undefined;
  onStaleTemps?: ((removed: string[]) => void) | undefined;
  /** The output's name with its placeholders filled in ('stream' for one), as soon as it is known (for a log). */
  onOutName?: ((out: string) => void) | undefined;
}

export interface ExportPlan {
  started: Date;
  /** The file, its placeholders filled in, or the stream. */
  out: string | NodeJS.WritableStream;
  gzip: boolean;
  /** An existing file will be replaced when the export succeeds. */
  replaces: boolean;
  incremental: IncrementalRun | undefined;
  filters: PageFilters;
  /** The window as decided (a period, if any); a period report up to date plans nothing else. */
  window: RunWindow;
  /** The clients of a page to write (a period's own, an incremental run's new ones). */
  select: (clients: readonly Client[]) => Client[];
}

export async function planExport(input: PlanInput, settings: CheckedSettings, locks: FileLock[]): Promise<ExportPlan> {
  const statePath = checkModes(input, settings);
  // A test's clock (injected) stands in for the real one when the caller gave none.
  const started = (input.now ?? injected.now ?? (() => new Date()))();
  const window = await planWindow(input, settings, started);
  if (window.chained && 'upToDate' in window.chained) return upToDate(input, started, window);
  const names = { zone: settings.timeZone, period: window.period };
  const out = typeof input.out === 'string' ? expandOutName(input.out, started, input.report, names) : input.out;
  input.onOutName?.(typeof out === 'string' ? out : 'stream');
  const gzip = typeof out === 'string' && (input.gzip === true || isGzipName(out));
  if (gzip && settings.format === 'xlsx') throw new UsageError('an xlsx workbook is already compressed: drop gzip', 'bad_option');
  if (input.gzip === true && typeof out !== 'string') throw new UsageError('gzip applies to a file output', 'bad_option');
  // One run per output and per state file: two overlapping runs would clobber both.
  // The first night of a schedule starts in an empty directory: its folders are made here.
  makeParentFolders([
    ...(typeof out === 'string' ? [{ file: out, private: false }] : []),
    ...(statePath !== undefined ? [{ file: statePath, private: true }] : []),
  ]);
  // Never written through a link: refused before any request.
  for (const file of [typeof out === 'string' ? out : undefined, statePath, input.newSinceLast]) if (file !== undefined) refuseLink(file);
  if (typeof out === 'string') locks.push(lockOutput(out, 'the export file'));
  if (statePath !== undefined) locks.push(lockOutput(statePath, 'the state file'));
  // Held: a temp file beside them whose writer is gone (kill -9) is removed.
  const swept = sweepStaleTemps(locks);
  if (swept.length > 0) input.onStaleTemps?.(swept);
  const found = typeof out === 'string' ? await stat(out).catch(() => undefined) : undefined;
  if (found?.isDirectory()) {
    throw new UsageError(`cannot write the export to ${out as string}: it is a directory (name a file in it)`, 'output_unwritable');
  }
  const replaces = found !== undefined;
  if (replaces && input.overwrite !== true) throw outputExists(out as string, input.out as string, statePath !== undefined);
  const incremental = await startIncremental(input, settings, started, replaces ? (out as string) : undefined, window);
  const createdFrom = incremental ? incremental.createdFrom : window.createdFrom;
  // Without an upper bound, clients created while we page would shift later pages (in desc
  // order every page) and change the result mid-way; the start instant fixes the set.
  const createdTo = incremental ? incremental.createdTo : (window.createdTo ?? started.toISOString());
  const filters: PageFilters = {
    direction: settings.direction,
    ...(settings.status && { status: settings.status }),
    ...(settings.creditStatus && { credit_status: settings.creditStatus }),
    ...(createdFrom !== undefined && { 'created_at.from': createdFrom }),
    'created_at.to': createdTo,
  };
  const inWindow = window.select ?? ((clients: readonly Client[]) => clients as Client[]);
  const chosen = incremental ? (clients: readonly Client[]) => incremental.select(inWindow(clients)) : inWindow;
  const select = settings.datesInTimeZone ? (clients: readonly Client[]) => chosen(clients).map(datesIn(settings.timeZone)) : chosen;
  return { started, out, gzip, replaces, incremental, filters, window, select };
}

/** A period report that ran again within its period: nothing to name, lock or write. */
function upToDate(input: PlanInput, started: Date, window: RunWindow): ExportPlan {
  const none = (clients: readonly Client[]) => clients as Client[];
  return { started, out: typeof input.out === 'string' ? '' : input.out, gzip: false, replaces: false, incremental: undefined, filters: { direction: 'asc', 'created_at.to': started.toISOString() }, window, select: none };
}

/** The incremental modes' conditions; returns the state file, if any. */
function checkModes(input: PlanInput, settings: CheckedSettings): string | undefined {
  if (input.sinceLast !== undefined && input.newSinceLast !== undefined) {
    throw new UsageError(
      'since-last (clients created since the last run) and new-since-last (clients that entered the filter since the last run) exclude each other: pick one',
      'bad_option',
    );
  }
  const statePath = input.sinceLast ?? input.newSinceLast;
  if (statePath === undefined) return undefined;
  if (typeof input.out !== 'string')
    throw new UsageError('an incremental export needs an output file, not a stream', 'bad_option');
  if (input.sinceLast !== undefined && settings.createdTo !== undefined)
    throw new UsageError('an incremental export (since-last) sets created-to itself: drop it', 'bad_option');
  return statePath;
}

/** The state, read; `replacing` is the existing file this run would replace (allowed only if it is the last output). */
async function startIncremental(
  input: PlanInput,
  settings: CheckedSettings,
  started: Date,
  replacing: string | undefined,
  window: RunWindow,
): Promise<IncrementalRun | undefined> {
  const replay = (path: string, last: LastOutput | undefined) =>
    replacing !== undefined && last !== undefined && replacesLast(path, last, replacing);
  if (input.sinceLast !== undefined) {
    const state = await readState(input.sinceLast);
    const chained = window.chained && 'period' in window.chained ? window.chained : undefined;
    return startSinceLast(input.sinceLast, state, settings, started, replay(input.sinceLast, state?.last), chained);
  }
  if (input.newSinceLast !== undefined) {
    const state = await readReported(input.newSinceLast);
    const bounds = { ...settings, createdFrom: window.createdFrom, createdTo: window.createdTo };
    return startNewSinceLast(input.newSinceLast, state, bounds, started, replay(input.newSinceLast, state?.meta.last));
  }
  return undefined;
}

function outputExists(out: string, template: string, incremental: boolean): UsageError {
  // Only the state's last output may be replaced (replacesLast): the hint must not promise more.
  const again = incremental
    ? " (in an incremental run only if it is the last run's own file: its clients are exported again, with the new ones; any other file: move it away)"
    : '';
  return new UsageError(
    `${shownPath(out)} exists: an export never replaces a file silently; pass --overwrite${again}${datedNameHint(template)}`,
    'output_exists',
  );
}
