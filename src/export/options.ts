/**
 * Export settings → one checked, plain ExportOptions, before the first request. The command
 * (options.ts) and the library (`exportClients`) both go through `checkExportSettings`, so a
 * typo in a status or a column is a UsageError (exit 2) listing the valid values either way.
 */
import { UsageError } from '../errors.js';
import { didYouMean } from '../infra/did-you-mean.js';
import {
  CLIENT_STATUSES,
  type ClientStatus,
  CREDIT_STATUSES,
  type CreditStatus,
  DIRECTIONS,
  type Direction,
} from '../service/schemas.js';
import { MAX_IN_FLIGHT, machineLimits, pageBound } from '../service/in-flight-bound.js';
import type { ExportColumn } from './columns.js';
import { readCreatedBound } from './created-bound.js';
import { checkPeriod } from './period.js';
import { checkTimeZone, UTC } from './time-zone.js';
import { EXPORT_DEFAULTS, EXPORT_FORMATS, type ExportFormat } from './defaults.js';
import { checkReportSettings, formatWithDelimiter, parseLabelledColumns, type ReportLayout, type ReportSettings } from './report-options.js';

export { parseCreatedBound } from './created-bound.js';
export { EXPORT_DEFAULTS, EXPORT_FORMATS, type ExportFormat };

export const MAX_PAGE_SIZE = 1000;
/** A fixed --prefetch or --max-prefetch: no more than the sockets one address can take. */
export const MAX_PREFETCH = MAX_IN_FLIGHT;

/** Every export setting, checked; the report's layout (headers, split, summary…) included. */
export interface ExportOptions extends ReportLayout {
  /** A file path, or '-' for stdout. */
  out: string;
  format: ExportFormat;
  columns: readonly ExportColumn[];
  /** UTF-8 BOM before the CSV header (Excel); CSV only. */
  bom: boolean;
  /** Prefix `'` to CSV cells a spreadsheet would run as formulas; JSONL and xlsx cells are never escaped. */
  escapeFormulas: boolean;
  status: readonly ClientStatus[] | undefined;
  creditStatus: readonly CreditStatus[] | undefined;
  /** Inclusive lower bound, an ISO instant in UTC with milliseconds. */
  createdFrom: string | undefined;
  /** Inclusive upper bound, as createdFrom; absent = pinned to the export's start at run time. */
  createdTo: string | undefined;
  /** How a bound without a time zone was read, for the summary. */
  boundNotes: readonly string[];
  /** `YYYY-MM` given as the lower bound with no upper one: two readings, refused when the run is planned (not incremental). */
  createdFromMonth: string | undefined;
  /** A period (`previous-month`, `2026-02`), resolved against the run's start; excludes createdFrom/createdTo. */
  period: string | undefined;
  /** The IANA zone of the window, the dates in file names and (datesInTimeZone) the dates written; default UTC. */
  timeZone: string;
  /** Write created_at in timeZone's local time, with its offset, instead of UTC. */
  datesInTimeZone: boolean;
  direction: Direction;
  pageSize: number;
  /** Pages requested ahead of the writer: a fixed number, or `auto` (adapted, up to maxPrefetch). */
  prefetch: number | 'auto';
  maxPrefetch: number;
}

/** What a library caller may pass: every field optional, lists as arrays or comma strings. */
export interface ExportSettings extends ReportSettings {
  /** csv (default), csv-semicolon, jsonl or xlsx; a file `out` ending in .xlsx or .jsonl picks its format. */
  format?: ExportFormat | undefined;
  /**
   * The columns, in order (EXPORT_COLUMNS; an array or a comma-separated string), each with the
   * header to write after a colon if wanted (`id:Client ID`); default: all, headed by their names.
   */
  columns?: readonly string[] | string | undefined;
  /** A UTF-8 BOM before the CSV header, for Excel (CSV only). */
  bom?: boolean | undefined;
  /** Prefix `'` to CSV cells a spreadsheet would run as formulas (`=`, `+`, `-`, `@`…); default true. */
  escapeFormulas?: boolean | undefined;
  /** Only clients in these statuses (`approved`, `pending_review`…): an array or a comma-separated string; default: all. */
  status?: readonly string[] | string | undefined;
  /** Only clients with these credit statuses (`active`, `inactive`); default: all. */
  creditStatus?: readonly string[] | string | undefined;
  /**
   * Inclusive lower bound on created_at: an ISO 8601 date (`2025-01-01`, its first millisecond),
   * month (`2025-01`) or date-time; everything is UTC, and a time without an offset is read as UTC.
   */
  createdFrom?: string | undefined;
  /**
   * Inclusive upper bound on created_at, as createdFrom; default: the export's start instant, so clients
   * created meanwhile are left for the next run.
   */
  createdTo?: string | undefined;
  /** Order by created_at: asc (default, oldest first) or desc. */
  direction?: Direction | undefined;
  /** Clients per page asked of the service (up to 1000; a service that refuses the size is a UsageError `page_size_refused`). */
  pageSize?: number | undefined;
  /** Pages requested ahead of the writer: a fixed number, or `auto` (default: adapted to the service, up to maxPrefetch). */
  prefetch?: number | 'auto' | undefined;
  /** The most pages `prefetch: 'auto'` requests ahead. */
  maxPrefetch?: number | undefined;
  /** Notes of an earlier reading of the bounds (the command's), kept for the summary. */
  boundNotes?: readonly string[] | undefined;
  /** An earlier reading's `YYYY-MM` lower bound given without an upper one (the command's), refused when the run is planned. */
  createdFromMonth?: string | undefined;
  /**
   * A calendar window instead of createdFrom/createdTo: `previous-day`, `previous-week` (ISO,
   * Monday to Sunday), `previous-month`, `last-7-days` (the seven whole days before today),
   * `month-to-date`, or a month `2026-02`, ISO week `2026-W07` or day `2026-02-14`; in timeZone.
   */
  period?: string | undefined;
  /** An IANA time zone (`Europe/Berlin`) for the window, the period, `{date}` in names; default UTC. */
  timeZone?: string | undefined;
  /** Write created_at as timeZone's local time with its offset (`2026-03-01T00:30:00.000+01:00`); default false (UTC). */
  datesInTimeZone?: boolean | undefined;
}

const bad = (message: string) => new UsageError(message, 'bad_option');

/** `style` only changes how options are named in messages: `--page-size` or `pageSize`. */
export function checkExportSettings(
  settings: ExportSettings,
  style: 'flag' | 'library' = 'library',
  out?: string,
): Omit<ExportOptions, 'out'> {
  const name = (flag: string, key: string) => (style === 'flag' ? `--${flag}` : key);
  const named = out === undefined ? undefined : formatOf(out);
  const asked = settings.format ?? named ?? EXPORT_DEFAULTS.format;
  if (!EXPORT_FORMATS.includes(asked)) {
    throw bad(`${name('format', 'format')} must be one of ${EXPORT_FORMATS.join(', ')} (got "${asked}")`);
  }
  const format = formatWithDelimiter(asked, settings.delimiter, name);
  // Excel refuses a .xlsx file holding text, and a workbook named .csv is as useless.
  if (named !== undefined && named !== format && (named === 'xlsx' || format === 'xlsx')) {
    throw bad(
      `${name('format', 'format')} ${format} does not match ${out}: name the file .${format} or drop ${name('format', 'format')}`,
    );
  }
  const bom = settings.bom ?? EXPORT_DEFAULTS.bom;
  // A BOM in JSONL breaks line-by-line JSON readers (jq, JSON.parse of line 1); xlsx is not text.
  if (bom && format !== 'csv' && format !== 'csv-semicolon') throw bad(`${name('bom', 'bom')} applies to CSV only`);
  const direction = settings.direction ?? EXPORT_DEFAULTS.direction;
  if (!DIRECTIONS.includes(direction)) {
    throw bad(`${name('direction', 'direction')} must be asc or desc (got "${direction}")`);
  }
  const timeZone = settings.timeZone === undefined ? UTC : checkTimeZone(settings.timeZone, name('timezone', 'timeZone'));
  const period = settings.period === undefined ? undefined : checkPeriod(settings.period, name('period', 'period'));
  // An xlsx date cell is labelled UTC: local times there would need a format per zone.
  if (settings.datesInTimeZone === true && format === 'xlsx') {
    throw bad(`${name('dates-in-timezone', 'datesInTimeZone')} writes dates as text with their offset: it applies to csv and jsonl, not xlsx (whose date cells are UTC)`);
  }
  if (period !== undefined && (settings.createdFrom !== undefined || settings.createdTo !== undefined)) {
    throw bad(`${name('period', 'period')} sets the window: drop ${name(settings.createdFrom !== undefined ? 'created-from' : 'created-to', settings.createdFrom !== undefined ? 'createdFrom' : 'createdTo')}`);
  }
  const from =
    settings.createdFrom === undefined
      ? undefined
      : readCreatedBound(settings.createdFrom, 'from', name('created-from', 'createdFrom'), timeZone);
  const to =
    settings.createdTo === undefined ? undefined : readCreatedBound(settings.createdTo, 'to', name('created-to', 'createdTo'), timeZone);
  const [createdFrom, createdTo] = [from?.iso, to?.iso];
  if (createdFrom !== undefined && createdTo !== undefined && createdFrom > createdTo) {
    throw bad(
      `${name('created-from', 'createdFrom')} (${createdFrom}) is after ${name('created-to', 'createdTo')} (${createdTo})`,
    );
  }
  const labelled = parseLabelledColumns(settings.columns, name('columns', 'columns'), settings.headers);
  const prefetch = settings.prefetch ?? EXPORT_DEFAULTS.prefetch;
  const pageSize = wholeNumber(settings.pageSize ?? EXPORT_DEFAULTS.pageSize, name('page-size', 'pageSize'), MAX_PAGE_SIZE);
  return {
    format,
    ...labelled,
    ...checkReportSettings(settings, format, name),
    bom,
    escapeFormulas: settings.escapeFormulas ?? EXPORT_DEFAULTS.escapeFormulas,
    status: parseChoices(settings.status, CLIENT_STATUSES, name('status', 'status'), {
      hint: CREDIT_STATUSES,
      hintName: name('credit-status', 'creditStatus'),
    }),
    creditStatus: parseChoices(
      settings.creditStatus,
      CREDIT_STATUSES,
      name('credit-status', 'creditStatus'),
      {
        hint: CLIENT_STATUSES,
        hintName: name('status', 'status'),
      },
    ),
    createdFrom,
    createdTo,
    boundNotes: [...(settings.boundNotes ?? []), from?.note, to?.note].filter((note) => note !== undefined),
    createdFromMonth: to === undefined ? (from?.month ?? settings.createdFromMonth) : undefined,
    period,
    timeZone,
    datesInTimeZone: settings.datesInTimeZone ?? false,
    direction,
    pageSize,
    prefetch: prefetch === 'auto' ? prefetch : wholeNumber(prefetch, name('prefetch', 'prefetch'), MAX_PREFETCH),
    maxPrefetch: wholeNumber(
      settings.maxPrefetch ?? pageBound(machineLimits(), pageSize),
      name('max-prefetch', 'maxPrefetch'),
      MAX_PREFETCH,
    ),
  };
}

/** Spreadsheet and data formats a name may ask for that the export does not write. */
const UNWRITTEN = new Set(['xls', 'xlsm', 'xlsb', 'xltx', 'ods', 'fods', 'numbers', 'json', 'xml', 'parquet']);

/**
 * The format a file name asks for by its extension, if any. A name asking for a format the
 * export does not write (`.xls`, `.ods`, `.json`) is refused: CSV under that name opens as
 * garbage or not at all.
 */
export function formatOf(out: string): ExportFormat | undefined {
  // `report.csv.gz` is a compressed CSV.
  const extension = /\.([a-z0-9]+)(?:\.gz)?$/i.exec(out)?.[1]?.toLowerCase();
  if (extension !== undefined && UNWRITTEN.has(extension)) {
    const hint = extension === 'json' ? ' (JSON Lines, one client a line: name it .jsonl)' : extension === 'xls' || extension === 'ods' ? ' (every spreadsheet program opens .xlsx)' : '';
    throw bad(`${out}: the export does not write .${extension} files; it writes .csv (csv, csv-semicolon), .jsonl and .xlsx${hint}`);
  }
  if (extension === 'xlsx') return 'xlsx';
  if (extension === 'jsonl' || extension === 'ndjson') return 'jsonl';
  if (extension === 'csv') return 'csv';
  return undefined;
}

function wholeNumber(value: number, label: string, max: number): number {
  if (!Number.isInteger(value) || value < 1 || value > max) {
    throw bad(`${label} must be a whole number from 1 to ${max} (got ${value})`);
  }
  return value;
}

function splitList(value: readonly string[] | string): string[] {
  const items = typeof value === 'string' ? value.split(',') : value.flatMap((item) => item.split(','));
  return items.map((item) => item.trim()).filter((item) => item !== '');
}

/** A comma list checked against documented values; a value of the sibling filter gets a hint. */
function parseChoices<T extends string>(
  value: readonly string[] | string | undefined,
  allowed: readonly T[],
  label: string,
  sibling: { hint: readonly string[]; hintName: string },
): readonly T[] | undefined {
  if (value === undefined) return undefined;
  const items = splitList(value).map((item) => item.toLowerCase());
  if (items.length === 0) throw bad(`${label} is empty; values are ${allowed.join(', ')}`);
  for (const item of items) {
    if ((allowed as readonly string[]).includes(item)) continue;
    const hint = sibling.hint.includes(item) ? ` ("${item}" is a value of ${sibling.hintName})` : didYouMean(item, allowed);
    throw bad(`${label}: unknown value "${item}"${hint}; valid values are ${allowed.join(', ')}`);
  }
  return [...new Set(items)] as T[];
}
