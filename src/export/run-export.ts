/**
 * The export pipeline: page → flatten → escape → write. Settings are checked and the upper
 * bound pinned before the first request; then pages stream through, one at a time, into the
 * output, which is committed (renamed into place) only when the last page is written.
 */

import { type OnProgress, progressReporter } from '../progress-report.js';
import { createAdaptiveLimit, type LimitReport } from '../service/adaptive-limit.js';
import type { ServiceClient } from '../service/client.js';
import type { ClientStatus, CreditStatus, Direction } from '../service/schemas.js';
import type { ExportColumn } from './columns.js';
import { flattenClient } from './columns.js';
import { EXPORT_DEFAULTS } from './defaults.js';
import { createEncoder } from './encode.js';
import { checkExportSettings, type ExportFormat, type ExportSettings } from './options.js';
import { expandOutName, isGzipName } from './out-name.js';
import { openOutput } from './output.js';
import { zipWorkbook } from './xlsx-package.js';
import { busyPrefetch, newPagingStats, type PageFilters, pageClients } from './page.js';
import { UsageError } from '../errors.js';
import { makeParentFolders } from '../folders.js';
import { lockOutput } from '../import/output-files.js';
import type { FileLock } from '../lock.js';
import { sweepStaleTemps } from '../temp-files.js';
import {
  checkStateFilters,
  NearBound,
  readState,
  type SinceLastState,
  stateFilters,
  writeState,
} from './since-last.js';

export interface ExportClientsOptions extends ExportSettings {
  service: ServiceClient;
  /** A file path (written via a temp file, renamed on success), or a stream (written, not ended). */
  out: string | NodeJS.WritableStream;
  /** Aborting stops the export; a file output is then not created. */
  signal?: AbortSignal | undefined;
  /** Progress as data: a snapshot at most every `progressIntervalMs` (default 100), and at the end. */
  onProgress?: OnProgress | undefined;
  progressIntervalMs?: number | undefined;
  /** The export's start instant (the pinned upper bound); tests fix it. Default: now. */
  now?: (() => Date) | undefined;
  /**
   * A state file: export only clients created since the previous successful run's bound, then
   * record the new bound (only once the output is in place). Needs a file `out`, no createdTo.
   */
  sinceLast?: string | undefined;
  /** Replace an existing output file (default: refuse it, output_exists). */
  overwrite?: boolean | undefined;
  /** gzip the file (also when its name ends in .gz). */
  gzip?: boolean | undefined;
  /** The report's name, for `{report}` in `out`. */
  report?: string | undefined;
  /** Called with the temp files of dead runs removed beside the output and state files. */
  onStaleTemps?: ((removed: string[]) => void) | undefined;
}

export interface IncrementalSummary {
  state: string;
  /** False on the first run (no state file yet). */
  resumed: boolean;
  /** The previous run's bound, sent as created_at.from; absent on a first run. */
  previousBound: string | undefined;
  /** Clients at the previous bound that the previous runs wrote, dropped here. */
  skippedAtBound: number;
}

export interface ExportSummary {
  /** The file written, or 'stream' (the command says 'stdout'). */
  out: string;
  format: ExportFormat;
  columns: readonly ExportColumn[];
  rows: number;
  /** Non-empty pages read. */
  pages: number;
  requests: number;
  /** True when the file was gzip-compressed (`bytes` counts the bytes before compression). */
  gzip: boolean;
  /** Clients the server sent again (already written) and that were dropped. */
  duplicatesDropped: number;
  pageBase: 0 | 1 | undefined;
  pageSize: number;
  /** Pages requested ahead of the writer: fixed, or where `auto` settled. */
  prefetch: LimitReport;
  bytes: number;
  startedAt: string;
  elapsedMs: number;
  rowsPerSecond: number;
  filters: {
    status: readonly ClientStatus[] | undefined;
    creditStatus: readonly CreditStatus[] | undefined;
    createdFrom: string | undefined;
    /** The upper bound sent: --created-to, or the start instant when pinned. */
    createdTo: string;
    direction: Direction;
  };
  /** True when no --created-to was given and the bound was pinned to the export's start. */
  createdToPinned: boolean;
  /** Rows written per status × credit_status, e.g. { approved: { active: 3, inactive: 1 } }. */
  counts: Record<string, Record<string, number>>;
  /** With sinceLast: the window's origin. */
  incremental?: IncrementalSummary | undefined;
}

export async function exportClients(options: ExportClientsOptions): Promise<ExportSummary> {
  const settings = checkExportSettings(options, 'library', typeof options.out === 'string' ? options.out : undefined);
  if (options.out === '-')
    throw new TypeError("exportClients: pass a writable stream (stdout, say), not '-'");
  const locks: FileLock[] = [];
  try {
    return await runExport(options, settings, locks);
  } finally {
    for (const lock of locks) lock.release();
  }
}

async function runExport(
  options: ExportClientsOptions,
  settings: ReturnType<typeof checkExportSettings>,
  locks: FileLock[],
): Promise<ExportSummary> {
  const statePath = options.sinceLast;
  if (statePath !== undefined) {
    if (typeof options.out !== 'string')
      throw new UsageError('an incremental export (since-last) needs an output file, not a stream', 'bad_option');
    if (settings.createdTo !== undefined)
      throw new UsageError('an incremental export (since-last) sets created-to itself: drop it', 'bad_option');
  }
  const started = (options.now ?? (() => new Date()))();
  const clock = Date.now();
  const out = typeof options.out === 'string' ? expandOutName(options.out, started, options.report) : options.out;
  const gzip = typeof out === 'string' && (options.gzip === true || isGzipName(out));
  if (gzip && settings.format === 'xlsx') throw new UsageError('an xlsx workbook is already compressed: drop gzip', 'bad_option');
  if (options.gzip === true && typeof out !== 'string') throw new UsageError('gzip applies to a file output', 'bad_option');
  // The first night of a schedule starts in an empty directory: its folders are made here.
  makeParentFolders([
    ...(typeof out === 'string' ? [{ file: out, private: false }] : []),
    ...(statePath !== undefined ? [{ file: statePath, private: true }] : []),
  ]);
  // One run per output and per state file: two overlapping runs would clobber both.
  if (typeof out === 'string') locks.push(lockOutput(out, 'the export file'));
  if (statePath !== undefined) locks.push(lockOutput(statePath, 'the state file'));
  // Held: a temp file beside them whose writer is gone (kill -9) is removed.
  const swept = sweepStaleTemps(locks);
  if (swept.length > 0) options.onStaleTemps?.(swept);
  let state: SinceLastState | undefined;
  if (statePath !== undefined) {
    state = await readState(statePath);
    if (state) checkStateFilters(statePath, state, stateFilters(settings.status, settings.creditStatus));
  }
  // Without an upper bound, clients created while we page would shift later pages (in desc
  // order every page) and change the result mid-way; the start instant fixes the set.
  let createdTo = settings.createdTo ?? started.toISOString();
  // A clock set back since the last run: keep the old bound rather than send from > to.
  if (state && state.bound > createdTo) createdTo = state.bound;
  const createdFrom = state ? state.bound : settings.createdFrom;
  const skip = new Set(state?.near.map((client) => client.id));
  const near = statePath === undefined ? undefined : new NearBound(createdTo);
  near?.carry(state?.near ?? []);
  let skippedAtBound = 0;
  const counts: Record<string, Record<string, number>> = {};
  const filters: PageFilters = {
    direction: settings.direction,
    ...(settings.status && { status: settings.status }),
    ...(settings.creditStatus && { credit_status: settings.creditStatus }),
    ...(createdFrom !== undefined && { 'created_at.from': createdFrom }),
    'created_at.to': createdTo,
  };
  const encoder = createEncoder(settings);
  const stats = newPagingStats(settings.pageSize);
  const prefetch = createAdaptiveLimit({
    limit: settings.prefetch,
    start: EXPORT_DEFAULTS.startPrefetch,
    max: settings.maxPrefetch,
  });
  const target = await openOutput(out, 'stream', { gzip, overwrite: options.overwrite });
  const output = settings.format === 'xlsx' ? zipWorkbook(target) : target;
  let rows = 0;
  const progress = progressReporter(
    options.onProgress,
    () => ({ done: rows, counters: { pages: stats.pages, prefetch: prefetch.current } }),
    options.progressIntervalMs,
  );
  const unwatch = options.service.watchAnswers((answer) => prefetch.observe(answer, busyPrefetch(stats)));
  try {
    const head = encoder.start();
    if (head !== '') await output.write(head);
    const pages = pageClients(
      {
        service: options.service,
        filters,
        pageSize: settings.pageSize,
        prefetch: () => prefetch.current,
        signal: options.signal,
      },
      stats,
    );
    for await (const page of pages) {
      let clients = page.clients;
      if (skip.size > 0) {
        clients = clients.filter((client) => !skip.has(client.id));
        skippedAtBound += page.clients.length - clients.length;
      }
      if (clients.length === 0) continue;
      if (near) for (const client of clients) near.add(client.id, client.created_at ?? '');
      for (const client of clients) {
        const row = (counts[client.status ?? '?'] ??= {});
        row[client.credit_status ?? '?'] = (row[client.credit_status ?? '?'] ?? 0) + 1;
      }
      await output.write(encoder.encode(clients.map(flattenClient)));
      rows += clients.length;
      progress.tick();
    }
    const tail = encoder.end();
    if (tail !== '') await output.write(tail);
    await output.commit();
  } catch (error) {
    await output.abort();
    throw error;
  } finally {
    unwatch();
    progress.finish();
  }
  // Only now, with the output in place: a failed or killed run leaves the old state.
  if (statePath !== undefined && near) {
    await writeState(statePath, {
      version: 1,
      bound: createdTo,
      near: near.list(),
      filters: stateFilters(settings.status, settings.creditStatus),
      last: { out: output.target, rows, finishedAt: new Date().toISOString() },
    });
  }
  const elapsedMs = Date.now() - clock;
  return {
    out: output.target,
    format: settings.format,
    columns: settings.columns,
    rows,
    gzip,
    pages: stats.pages,
    requests: stats.requests,
    duplicatesDropped: stats.duplicates,
    pageBase: stats.pageBase,
    pageSize: stats.pageSize,
    prefetch: prefetch.limits(),
    bytes: output.bytes,
    startedAt: started.toISOString(),
    elapsedMs,
    rowsPerSecond: Math.round(rows / Math.max(0.001, elapsedMs / 1000)),
    filters: {
      status: settings.status,
      creditStatus: settings.creditStatus,
      createdFrom,
      createdTo,
      direction: settings.direction,
    },
    createdToPinned: settings.createdTo === undefined,
    counts,
    ...(statePath !== undefined && {
      incremental: {
        state: statePath,
        resumed: state !== undefined,
        previousBound: state?.bound,
        skippedAtBound,
      },
    }),
  };
}
