/** What an export reports when it is done: the library's return value and the command's --json. */
import type { LimitReport } from '../service/adaptive-limit.js';
import type { ClientStatus, CreditStatus, Direction } from '../service/schemas.js';
import type { AccountFigures } from './account.js';
import type { ExportColumn } from './columns.js';
import type { ExportFormat } from './defaults.js';
import type { IncrementalSummary } from './incremental.js';
import type { CheckedSettings, ExportPlan } from './plan.js';
import type { PagingStats } from './page.js';

export type { IncrementalSummary };

/** What an export did: the file, its rows and bytes, the paging, the filters sent, and the end-of-run account. */
export interface ExportSummary {
  /** The file written, or 'stream' (the command says 'stdout'). */
  out: string;
  /** The format written. */
  format: ExportFormat;
  /** The columns written, in order. */
  columns: readonly ExportColumn[];
  /** Clients written. */
  rows: number;
  /** Non-empty pages read. */
  pages: number;
  /** List Clients requests sent, retries included. */
  requests: number;
  /** True when the file was gzip-compressed (`bytes` counts the bytes before compression). */
  gzip: boolean;
  /** An existing file was replaced (--overwrite). */
  replaced: boolean;
  /** The file's permission bits (0o600 unless `fileMode` widened them); undefined for a stream. */
  fileMode: number | undefined;
  /** Clients the server sent again (already written) and that were dropped. */
  duplicatesDropped: number;
  /**
   * Clients written although their id's 64-bit fingerprint matched a client written more than a
   * few pages before: another id with the same print (odds ~2.7·10⁻⁸ for a million clients),
   * or the service repeating a client from far back. Normally 0; never dropped on a print alone.
   */
  possibleRepeats: number;
  /** The first page's number as the service counts (0 or 1); undefined when no page was read. */
  pageBase: 0 | 1 | undefined;
  /** Clients per page asked for. */
  pageSize: number;
  /** Pages requested ahead of the writer: fixed, or where `auto` settled. */
  prefetch: LimitReport;
  /** Bytes written (before gzip). */
  bytes: number;
  /** When the export started (ISO instant): the pinned upper bound unless createdTo was given. */
  startedAt: string;
  /** Wall time of the run, ms. */
  elapsedMs: number;
  /** Rows written per second of the run. */
  rowsPerSecond: number;
  /** The filters as sent to the service. */
  filters: {
    /** The statuses asked for; undefined: all. */
    status: readonly ClientStatus[] | undefined;
    /** The credit statuses asked for; undefined: all. */
    creditStatus: readonly CreditStatus[] | undefined;
    /** The lower bound sent (UTC), if any. */
    createdFrom: string | undefined;
    /** The upper bound sent (UTC): --created-to, or the start instant when pinned. */
    createdTo: string;
    /** The order by created_at. */
    direction: Direction;
    /** How a bound given without a time zone was read. */
    notes: readonly string[];
  };
  /** True when no --created-to was given and the bound was pinned to the export's start. */
  createdToPinned: boolean;
  /** Rows written per status × credit_status, e.g. { approved: { active: 3, inactive: 1 } }. */
  counts: Record<string, Record<string, number>>;
  /** The end-of-run account: pages and clients, checked before the file was put in place. */
  account: AccountFigures;
  /** With sinceLast or newSinceLast: the window's origin and the state. */
  incremental?: IncrementalSummary | undefined;
}

export interface RunFigures {
  target: string;
  rows: number;
  bytes: number;
  stats: PagingStats;
  prefetch: LimitReport;
  counts: ExportSummary['counts'];
  account: AccountFigures;
  elapsedMs: number;
}

export function summarize(plan: ExportPlan, settings: CheckedSettings, run: RunFigures, fileMode?: number): ExportSummary {
  const { filters, incremental } = plan;
  return {
    out: run.target,
    fileMode: typeof plan.out === 'string' ? (fileMode ?? 0o600) : undefined,
    format: settings.format,
    columns: settings.columns,
    rows: run.rows,
    gzip: plan.gzip,
    replaced: plan.replaces,
    pages: run.stats.pages,
    requests: run.stats.requests,
    duplicatesDropped: run.stats.duplicates,
    possibleRepeats: run.stats.unverified,
    pageBase: run.stats.pageBase,
    pageSize: run.stats.pageSize,
    prefetch: run.prefetch,
    bytes: run.bytes,
    startedAt: plan.started.toISOString(),
    elapsedMs: run.elapsedMs,
    rowsPerSecond: Math.round(run.rows / Math.max(0.001, run.elapsedMs / 1000)),
    filters: {
      status: settings.status,
      creditStatus: settings.creditStatus,
      createdFrom: filters['created_at.from'],
      createdTo: filters['created_at.to'] ?? plan.started.toISOString(),
      direction: settings.direction,
      notes: settings.boundNotes,
    },
    createdToPinned: settings.createdTo === undefined,
    counts: run.counts,
    account: run.account,
    ...(incremental && { incremental: incremental.summary() }),
  };
}
