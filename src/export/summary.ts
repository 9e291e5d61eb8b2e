/** What an export reports when it is done: the library's return value and the command's --json. */
import type { LimitReport } from '../service/adaptive-limit.js';
import type { ClientStatus, CreditStatus, Direction } from '../service/schemas.js';
import type { AccountFigures } from './account.js';
import type { ExportColumn } from './columns.js';
import type { ExportFormat } from './defaults.js';
import type { IncrementalSummary } from './incremental.js';
import type { CheckedSettings, ExportPlan } from './plan.js';
import type { PagingStats } from './page.js';
import { firstWarnings, type PeriodSummary, periodSummary } from './window.js';
import { toolVersion } from '../import/record/provenance.js';
import type { ReportPart, ReportResult } from './report-writer.js';
import type { SummaryFacts } from './summary-sheet.js';

export type { PeriodSummary };

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
  /** The IANA time zone of the window, the period and the dates in the file's name (`UTC` unless one was given). */
  timeZone: string;
  /** created_at was written in timeZone, with its offset (`datesInTimeZone`). */
  datesInTimeZone: boolean;
  /** With a period: the one this file holds, [from, end) in its zone. */
  period?: PeriodSummary | undefined;
  /** A period report that caught up: the files written before this one, one per missed period, oldest first. */
  earlierPeriods?: ExportSummary[] | undefined;
  /** Said once, when the state is made: what this kind of report leaves out; and an xlsx that went on past a sheet's row limit. */
  warnings?: string[] | undefined;
  /**
   * Rows written per status × credit_status, every cell of the statuses and credit statuses
   * asked for (zeros included), with a `total` per status and a `total` row:
   * { approved: { active: 3, inactive: 0, total: 3 }, …, total: { active: 9, inactive: 2, total: 11 } }.
   */
  counts: Record<string, Record<string, number>>;
  /** The header written for each column (the column's name unless relabelled). */
  headers: readonly string[];
  /** Rows written per country code ('' for none), most first. */
  byCountry: Record<string, number>;
  /** Rows written per month of created_at (`2025-01`) in timeZone, in order. */
  byMonth: Record<string, number>;
  /** Rows written per ISO week of created_at (`2025-W05`) in timeZone, in order. */
  byWeek: Record<string, number>;
  /** Only clients of these countries (ISO codes), filtered client-side after paging the whole window; undefined: all. */
  country: readonly string[] | undefined;
  /** With `split`: the sheets (xlsx) or files written, and the clients in each. */
  parts?: ReportPart[] | undefined;
  /** With `summaryFile`: the summary's CSV file, written beside the report. */
  summaryFile?: string | undefined;
  /** `--out -` whose reader closed the pipe early (`| head`): the export stopped there, as `cat` does; exit 0. */
  readerClosed?: boolean | undefined;
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
  byCountry?: Record<string, number> | undefined;
  byMonth?: Record<string, number> | undefined;
  byWeek?: Record<string, number> | undefined;
  parts?: ReportPart[] | undefined;
  summaryFile?: string | undefined;
  readerClosed?: boolean | undefined;
  warnings?: string[] | undefined;
}

/** The writer's result as run figures (counts, parts, the file written). */
export function reportFigures(report: ReportResult, readerClosed: boolean): Omit<RunFigures, 'rows' | 'stats' | 'prefetch' | 'account' | 'elapsedMs'> {
  const { tally } = report;
  return {
    target: report.target,
    bytes: report.bytes,
    counts: tally.counts,
    byCountry: tally.byCountry,
    byMonth: tally.byMonth,
    byWeek: tally.byWeek,
    ...(report.parts && { parts: report.parts }),
    ...(report.summaryFile !== undefined && { summaryFile: report.summaryFile }),
    ...(readerClosed && { readerClosed }),
    ...(report.warnings.length > 0 && { warnings: report.warnings }),
  };
}

/** What the summary sheet and file say of the run besides the counts. */
export function reportFacts(plan: ExportPlan, settings: CheckedSettings, report: string | undefined): Omit<SummaryFacts, 'out' | 'madeAt'> {
  const period = periodSummary(plan);
  const notes = [...settings.boundNotes];
  if (period !== undefined) notes.unshift(`period ${period.name}: ${period.label}, ${period.fromLocal} to ${period.endLocal} (excluded), ${period.zone}`);
  const incremental = plan.incremental?.summary();
  if (incremental !== undefined) {
    notes.push(
      incremental.mode === 'since-last'
        ? `incremental: clients created since the last run (state ${incremental.state})`
        : `incremental: clients that entered the filter since the last run (state ${incremental.state})`,
    );
  }
  return {
    format: settings.format,
    report,
    from: plan.filters['created_at.from'],
    // A period ends at its first instant after it, excluded; the pinned end of one not over is the run's start.
    to: period?.ended === true ? period.end : (plan.filters['created_at.to'] ?? plan.started.toISOString()),
    toExcluded: period?.ended === true,
    pinned: period === undefined ? settings.createdTo === undefined && incremental === undefined : !period.ended,
    timeZone: settings.timeZone,
    status: settings.status,
    creditStatus: settings.creditStatus,
    country: settings.country,
    order: settings.sort ? `${settings.sort.column} ${settings.sort.desc ? 'descending' : 'ascending'}` : `created_at ${settings.direction === 'asc' ? 'ascending' : 'descending'}`,
    notes,
    version: toolVersion(),
  };
}

/** The state's first-run warnings, and the writer's (a workbook grown past a sheet). */
const warningsOf = (plan: ExportPlan, settings: CheckedSettings, run: RunFigures) => [...firstWarnings(plan, settings), ...(run.warnings ?? [])];

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
    createdToPinned: plan.window.period === undefined ? settings.createdTo === undefined : !periodSummary(plan)!.ended,
    timeZone: settings.timeZone,
    datesInTimeZone: settings.datesInTimeZone,
    ...(plan.window.period && { period: periodSummary(plan) }),
    ...(warningsOf(plan, settings, run).length > 0 && { warnings: warningsOf(plan, settings, run) }),
    counts: run.counts,
    headers: settings.headers,
    byCountry: run.byCountry ?? {},
    byMonth: run.byMonth ?? {},
    byWeek: run.byWeek ?? {},
    country: settings.country,
    ...(run.parts && { parts: run.parts }),
    ...(run.summaryFile !== undefined && { summaryFile: run.summaryFile }),
    ...(run.readerClosed === true && { readerClosed: true }),
    account: run.account,
    ...(incremental && { incremental: incremental.summary() }),
  };
}
