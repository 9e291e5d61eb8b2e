/**
 * The export settings a report reader asks for, checked before the first request: column
 * headers (`id:Client ID`), a country filter, the CSV delimiter and date style, the xlsx sheet
 * names, the summary, splitting and sorting. Plain data out; options.ts merges it.
 */
import { UsageError } from '../errors.js';
import { didYouMean } from '../infra/did-you-mean.js';
import { EXPORT_COLUMNS, type ExportColumn } from './columns.js';
import { readCountry } from './country-filter.js';
import type { ExportFormat } from './defaults.js';
import { MAX_SHEET_ROWS } from './xlsx-sheet.js';

/** What separates CSV cells: `;` is the csv-semicolon format (with its BOM). */
export const CSV_DELIMITERS = [',', ';', '\t', '|'] as const;
export type CsvDelimiter = (typeof CSV_DELIMITERS)[number];

/** How CSV writes created_at: the ISO instant, or `2025-01-31 18:00:00` (UTC) that spreadsheets take for a date. */
export const CSV_DATE_STYLES = ['iso', 'spreadsheet'] as const;
export type CsvDateStyle = (typeof CSV_DATE_STYLES)[number];

/** Where the xlsx summary sheet goes among the tabs; the workbook opens on it either way. */
export const SUMMARY_SHEET_PLACES = ['first', 'last', 'none'] as const;
export type SummarySheetPlace = (typeof SUMMARY_SHEET_PLACES)[number];

/** How rows are split over several sheets (xlsx) or files (`{part}` in the name). */
export type SplitRule =
  | {
      /** A part every `rows` clients. */
      by: 'rows';
      /** Clients a part holds (the last one the rest). */
      rows: number;
    }
  | {
      /** A part per month of created_at (in the time zone), or per status. */
      by: 'month' | 'status';
    };

/** A client-side order: a column, ascending unless `desc`. */
export interface SortRule {
  /** The column the rows are ordered by. */
  column: ExportColumn;
  /** Largest first. */
  desc: boolean;
}

export interface ReportLayout {
  /** The header written for each column, in order (the column's name unless relabelled). */
  headers: readonly string[];
  /** Only clients of these countries (ISO alpha-2), filtered here: the service has no such filter. */
  country: readonly string[] | undefined;
  /** CSV only; `;` for csv-semicolon. */
  delimiter: CsvDelimiter;
  csvDates: CsvDateStyle;
  /** The xlsx data sheet's name. */
  sheetName: string;
  summarySheet: SummarySheetPlace;
  /** Also write the summary as `<name>.summary.csv` beside a file output. */
  summaryFile: boolean;
  split: SplitRule | undefined;
  sort: SortRule | undefined;
}

/** The library's spelling of the same settings. */
export interface ReportSettings {
  /**
   * Only clients of these countries: ISO codes or names (`DE,FR`, `['Germany']`). The service
   * has no country filter: the whole window is paged and the others dropped client-side.
   */
  country?: readonly string[] | string | undefined;
  /** CSV: `,` (default), `;` (the csv-semicolon format, BOM included), `tab` or `|`. */
  delimiter?: string | undefined;
  /** CSV: created_at as the ISO instant (`iso`, default) or `2025-01-31 18:00:00`, UTC, that spreadsheets read as a date (`spreadsheet`). */
  csvDates?: CsvDateStyle | undefined;
  /** xlsx: the data sheet's name (default `clients`). */
  sheetName?: string | undefined;
  /** xlsx: the Summary sheet after the data (`last`, default), before it (`first`) or none; the workbook opens on it. */
  summarySheet?: SummarySheetPlace | undefined;
  /** Also write the summary as `NAME.summary.csv` beside a file output. */
  summaryFile?: boolean | undefined;
  /** `rows:N`, `month` or `status` (or the rule as checked): several sheets (xlsx) or files `NAME-PART.csv` (CSV, JSONL). */
  split?: string | SplitRule | undefined;
  /** `COLUMN` or `COLUMN:desc` (or the rule as checked): the rows' order, sorted client-side. */
  sort?: string | SortRule | undefined;
  /** The header of each column, in the order of `columns` (the same as `id:Client ID` labels there). */
  headers?: readonly string[] | undefined;
}

type Name = (flag: string, key: string) => string;

const bad = (message: string) => new UsageError(message, 'bad_option');

/** Splits a column list: a string on commas; an array item is one column unless it holds no label. */
export function columnItems(value: readonly string[] | string): string[] {
  const items = typeof value === 'string' ? value.split(',') : value.flatMap((item) => (item.includes(':') ? [item] : item.split(',')));
  return items.map((item) => item.trim()).filter((item) => item !== '');
}

/** `id:Client ID,name` → the columns and their headers; a header defaults to the column's name. */
export function parseLabelledColumns(
  value: readonly string[] | string | undefined,
  label: string,
  given?: readonly string[],
): { columns: readonly ExportColumn[]; headers: readonly string[] } {
  if (given !== undefined) {
    const { columns } = parseLabelledColumns(value, label);
    if (given.length !== columns.length) throw bad(`headers: ${given.length} headers for ${columns.length} columns`);
    return parseLabelledColumns(columns.map((column, i) => `${column}:${given[i]!}`), label);
  }
  if (value === undefined) return { columns: EXPORT_COLUMNS, headers: EXPORT_COLUMNS };
  const items = columnItems(value);
  if (items.length === 0) throw bad(`${label} is empty; columns are ${EXPORT_COLUMNS.join(', ')}`);
  const columns: ExportColumn[] = [];
  const headers: string[] = [];
  for (const item of items) {
    const colon = item.indexOf(':');
    const name = (colon < 0 ? item : item.slice(0, colon)).trim().toLowerCase();
    const header = colon < 0 ? name : item.slice(colon + 1).trim();
    if (!(EXPORT_COLUMNS as readonly string[]).includes(name)) {
      const unknown = items.filter((i) => !(EXPORT_COLUMNS as readonly string[]).includes(i.split(':')[0]!.trim().toLowerCase()));
      throw bad(
        `${label}: unknown column${unknown.length > 1 ? 's' : ''} ${unknown.map((c) => `"${c.split(':')[0]!.trim().toLowerCase()}"`).join(', ')}` +
          `${didYouMean(name, EXPORT_COLUMNS)}; columns are ${EXPORT_COLUMNS.join(', ')} (a header may follow a colon: id:Client ID)`,
      );
    }
    if (columns.includes(name as ExportColumn)) throw bad(`${label} names "${name}" twice`);
    if (header === '') throw bad(`${label}: "${item}" has an empty header after its colon`);
    // Headers are one line of text: a control character would break the header row of a CSV.
    if (/[\u0000-\u001f\u007f]/.test(header)) throw bad(`${label}: the header of ${name} holds a control character`);
    if (header.length > 255) throw bad(`${label}: the header of ${name} is over 255 characters`);
    if (headers.includes(header)) throw bad(`${label}: two columns are headed "${header}"`);
    columns.push(name as ExportColumn);
    headers.push(header);
  }
  return { columns, headers };
}

/** Everything but columns (options.ts reads those); `format` is the format after --delimiter. */
export function checkReportSettings(
  settings: ReportSettings,
  format: ExportFormat,
  name: Name,
): Omit<ReportLayout, 'headers'> {
  const csv = format === 'csv' || format === 'csv-semicolon';
  const csvOnly = (flag: string, key: string) => {
    throw bad(`${name(flag, key)} applies to CSV only (the format is ${format})`);
  };
  // Defaults pass for any format: the command hands its checked settings to the library, which checks them again.
  if (settings.csvDates !== undefined && settings.csvDates !== 'iso' && !csv) csvOnly('csv-dates', 'csvDates');
  const csvDates = settings.csvDates ?? 'iso';
  if (!CSV_DATE_STYLES.includes(csvDates)) {
    throw bad(`${name('csv-dates', 'csvDates')} must be one of ${CSV_DATE_STYLES.join(', ')} (got "${String(csvDates)}")`);
  }
  const xlsxOnly = (flag: string, key: string) => {
    throw bad(`${name(flag, key)} applies to xlsx only (the format is ${format})`);
  };
  if (settings.sheetName !== undefined && settings.sheetName !== 'clients' && format !== 'xlsx') xlsxOnly('sheet-name', 'sheetName');
  if (settings.summarySheet !== undefined && settings.summarySheet !== 'last' && format !== 'xlsx') xlsxOnly('summary-sheet', 'summarySheet');
  const summarySheet = settings.summarySheet ?? 'last';
  if (!SUMMARY_SHEET_PLACES.includes(summarySheet)) {
    throw bad(`${name('summary-sheet', 'summarySheet')} must be one of ${SUMMARY_SHEET_PLACES.join(', ')} (got "${String(summarySheet)}")`);
  }
  return {
    country: settings.country === undefined ? undefined : parseCountries(settings.country, name('country', 'country')),
    delimiter: format === 'csv-semicolon' ? ';' : (readDelimiter(settings.delimiter, name) ?? ','),
    csvDates,
    sheetName: checkSheetName(settings.sheetName ?? 'clients', name('sheet-name', 'sheetName')),
    summarySheet,
    summaryFile: settings.summaryFile ?? false,
    split: settings.split === undefined ? undefined : parseSplit(ruleText(settings.split), name('split', 'split'), format),
    sort: settings.sort === undefined ? undefined : parseSort(ruleText(settings.sort), name('sort', 'sort')),
  };
}

/**
 * `--delimiter` and `--format` together: `;` is csv-semicolon (Excel where `;` is the list
 * separator needs its BOM too); another delimiter is plain CSV; JSONL and xlsx take none.
 */
export function formatWithDelimiter(format: ExportFormat, delimiter: string | undefined, name: Name): ExportFormat {
  const read = readDelimiter(delimiter, name);
  if (read === undefined || (read === ',' && format !== 'csv-semicolon')) return format;
  if (format !== 'csv' && format !== 'csv-semicolon') {
    throw bad(`${name('delimiter', 'delimiter')} applies to CSV only (the format is ${format})`);
  }
  if (format === 'csv-semicolon' && read !== ';') {
    throw bad(`${name('format', 'format')} csv-semicolon writes ';': drop ${name('delimiter', 'delimiter')} or use --format csv`);
  }
  return read === ';' ? 'csv-semicolon' : 'csv';
}

function readDelimiter(value: string | undefined, name: Name): CsvDelimiter | undefined {
  if (value === undefined) return undefined;
  const words: Record<string, CsvDelimiter> = { comma: ',', semicolon: ';', tab: '\t', '\\t': '\t', pipe: '|' };
  const read = words[value.trim().toLowerCase()] ?? value;
  if ((CSV_DELIMITERS as readonly string[]).includes(read)) return read as CsvDelimiter;
  throw bad(`${name('delimiter', 'delimiter')} must be one of , ; tab | (got ${JSON.stringify(value)})`);
}

function parseCountries(value: readonly string[] | string, label: string): readonly string[] {
  const items = (typeof value === 'string' ? value.split(',') : value.flatMap((item) => item.split(',')))
    .map((item) => item.trim())
    .filter((item) => item !== '');
  if (items.length === 0) throw bad(`${label} is empty: give ISO codes (DE,FR) or country names`);
  return [...new Set(items.map((item) => readCountry(item, label)))];
}

/** Excel's rules for a sheet name: 1–31 characters, none of : \ / ? * [ ], not History. */
export function checkSheetName(value: string, label: string): string {
  const sheet = value.trim();
  if (sheet === '' || sheet.length > 31) throw bad(`${label} must be 1 to 31 characters (got ${JSON.stringify(value)})`);
  if (/[:\\/?*[\]\u0000-\u001f]/.test(sheet)) throw bad(`${label} ${JSON.stringify(value)}: a sheet name cannot hold : \\ / ? * [ ]`);
  if (/^'|'$/.test(sheet)) throw bad(`${label} ${JSON.stringify(value)}: a sheet name cannot start or end with '`);
  if (sheet.toLowerCase() === 'history') throw bad(`${label}: Excel reserves the name History`);
  if (sheet.toLowerCase() === 'summary') throw bad(`${label}: Summary is the summary sheet's name`);
  return sheet;
}

/** A rule as checked before (the command's), back to its text, so it is checked once more the same way. */
function ruleText(rule: string | SplitRule | SortRule): string {
  if (typeof rule === 'string') return rule;
  if ('column' in rule) return `${rule.column}${rule.desc ? ':desc' : ''}`;
  return rule.by === 'rows' ? `rows:${rule.rows}` : rule.by;
}

/** `rows:500000`, `month`, `status`. */
function parseSplit(value: string, label: string, format: ExportFormat): SplitRule {
  const text = value.trim().toLowerCase();
  if (text === 'month' || text === 'status') return { by: text };
  const rows = /^rows:(\d+)$/.exec(text)?.[1];
  if (rows === undefined) throw bad(`${label} takes rows:N, month or status (got ${JSON.stringify(value)})`);
  const n = Number(rows);
  if (n < 1) throw bad(`${label} rows:N needs N of at least 1`);
  if (format === 'xlsx' && n > MAX_SHEET_ROWS - 1) {
    throw new UsageError(
      `${label} rows:${n}: an xlsx sheet holds ${MAX_SHEET_ROWS - 1} clients below its header; split at that or fewer`,
      'xlsx_too_many_rows',
    );
  }
  return { by: 'rows', rows: n };
}

/** `country`, `created_at:desc`. */
function parseSort(value: string, label: string): SortRule {
  const [column = '', order = 'asc', ...rest] = value.trim().toLowerCase().split(':');
  if (rest.length > 0 || (order !== 'asc' && order !== 'desc')) throw bad(`${label} takes COLUMN or COLUMN:desc (got ${JSON.stringify(value)})`);
  if (!(EXPORT_COLUMNS as readonly string[]).includes(column)) {
    throw bad(`${label}: unknown column "${column}"${didYouMean(column, EXPORT_COLUMNS)}; columns are ${EXPORT_COLUMNS.join(', ')}`);
  }
  if (column === 'documents') throw bad(`${label}: documents is a list; sort by documents_count`);
  return { column: column as ExportColumn, desc: order === 'desc' };
}
