/**
 * The export pipeline: page → flatten → escape → write. Settings are checked and the upper
 * bound pinned before the first request; then pages stream through, one at a time, into the
 * output, which is committed (renamed into place) only when the last page is written.
 */

import { type OnProgress, progressReporter } from '../progress-report.js';
import type { ServiceClient } from '../service/client.js';
import type { ClientStatus, CreditStatus, Direction } from '../service/schemas.js';
import type { ExportColumn } from './columns.js';
import { flattenClient } from './columns.js';
import { createEncoder } from './encode.js';
import { checkExportSettings, type ExportFormat, type ExportSettings } from './options.js';
import { openOutput } from './output.js';
import { zipWorkbook } from './xlsx-package.js';
import { newPagingStats, type PageFilters, pageClients } from './page.js';

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
  /** Clients the server sent again (already written) and that were dropped. */
  duplicatesDropped: number;
  pageBase: 0 | 1 | undefined;
  pageSize: number;
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
}

export async function exportClients(options: ExportClientsOptions): Promise<ExportSummary> {
  const settings = checkExportSettings(options, 'library', typeof options.out === 'string' ? options.out : undefined);
  if (options.out === '-')
    throw new TypeError("exportClients: pass a writable stream (stdout, say), not '-'");
  const started = (options.now ?? (() => new Date()))();
  const clock = Date.now();
  // Without an upper bound, clients created while we page would shift later pages (in desc
  // order every page) and change the result mid-way; the start instant fixes the set.
  const createdTo = settings.createdTo ?? started.toISOString();
  const filters: PageFilters = {
    direction: settings.direction,
    ...(settings.status && { status: settings.status }),
    ...(settings.creditStatus && { credit_status: settings.creditStatus }),
    ...(settings.createdFrom !== undefined && { 'created_at.from': settings.createdFrom }),
    'created_at.to': createdTo,
  };
  const encoder = createEncoder(settings);
  const stats = newPagingStats(settings.pageSize);
  const target = await openOutput(options.out);
  const output = settings.format === 'xlsx' ? zipWorkbook(target) : target;
  let rows = 0;
  const progress = progressReporter(
    options.onProgress,
    () => ({ done: rows, counters: { pages: stats.pages } }),
    options.progressIntervalMs,
  );
  try {
    const head = encoder.start();
    if (head !== '') await output.write(head);
    const pages = pageClients(
      {
        service: options.service,
        filters,
        pageSize: settings.pageSize,
        prefetch: settings.prefetch,
        signal: options.signal,
      },
      stats,
    );
    for await (const page of pages) {
      if (page.clients.length === 0) continue;
      await output.write(encoder.encode(page.clients.map(flattenClient)));
      rows += page.clients.length;
      progress.tick();
    }
    const tail = encoder.end();
    if (tail !== '') await output.write(tail);
    await output.commit();
  } catch (error) {
    await output.abort();
    throw error;
  } finally {
    progress.finish();
  }
  const elapsedMs = Date.now() - clock;
  return {
    out: output.target,
    format: settings.format,
    columns: settings.columns,
    rows,
    pages: stats.pages,
    requests: stats.requests,
    duplicatesDropped: stats.duplicates,
    pageBase: stats.pageBase,
    pageSize: stats.pageSize,
    bytes: output.bytes,
    startedAt: started.toISOString(),
    elapsedMs,
    rowsPerSecond: Math.round(rows / Math.max(0.001, elapsedMs / 1000)),
    filters: {
      status: settings.status,
      creditStatus: settings.creditStatus,
      createdFrom: settings.createdFrom,
      createdTo,
      direction: settings.direction,
    },
    createdToPinned: settings.createdTo === undefined,
  };
}
