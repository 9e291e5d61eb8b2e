/**
 * The report's summary as a table of typed cells, and that table as an xlsx sheet (xlsx
 * reports) or as CSV (the companion file of a CSV or JSONL report): what the file covers (the
 * window, the filters, the time zone), when and by which version it was made, the total, and the
 * counts by status × credit status, by country, by month and by ISO week of creation.
 */
import { csvCell, csvRecord } from '../infra/csv-text.js';
import { escapeFormula } from './escape.js';
import type { TallyFigures } from './tally.js';
import { columnLetter, excelSerial, textCell } from './xlsx-sheet.js';
import { STYLE } from './xlsx-styles.js';

/** A cell: text, a number, or an instant (a date cell in xlsx, ISO text in CSV); `bold` for headings. */
export type SummaryCell = string | number | { instant: string } | { bold: string };
export type SummaryRow = readonly SummaryCell[];

/** What the summary says besides the counts. */
export interface SummaryFacts {
  /** The file's name as written, or `stdout`. */
  out: string;
  format: string;
  report: string | undefined;
  /** Inclusive bounds on created_at as sent, UTC; `from` undefined: from the first client. */
  from: string | undefined;
  to: string;
  /** `to` is the first instant after the window (a period's end), not its last. */
  toExcluded: boolean;
  /** The upper bound was the export's start, not asked for. */
  pinned: boolean;
  timeZone: string;
  status: readonly string[] | undefined;
  creditStatus: readonly string[] | undefined;
  country: readonly string[] | undefined;
  order: string;
  /** How a bound was read, the incremental window, the parts a split made. */
  notes: readonly string[];
  /** What the reader must know (the sheets past Excel's row limit): a `Warning` row each. */
  warnings?: readonly string[] | undefined;
  madeAt: Date;
  version: string | undefined;
}

const all = (values: readonly string[] | undefined) => (values === undefined ? 'all' : values.join(', '));

export function summaryRows(facts: SummaryFacts, tally: TallyFigures): SummaryRow[] {
  const rows: SummaryRow[] = [[{ bold: 'ccs-bulk export' }, facts.report === undefined ? '' : `report ${facts.report}`]];
  rows.push(['File', facts.out], ['Format', facts.format]);
  // The instant as a date cell, and as ISO text beside it: a date format may round the milliseconds away.
  rows.push(['Created from (inclusive)', ...(facts.from === undefined ? ['the first client'] : [{ instant: facts.from }, facts.from])]);
  rows.push([
    facts.toExcluded ? 'Created before (excluded)' : 'Created to (inclusive)',
    { instant: facts.to },
    facts.to,
    ...(facts.pinned ? ["the export's start: clients created during it are in the next report"] : []),
  ]);
  rows.push(['Time zone', facts.timeZone, facts.timeZone === 'UTC' ? 'dates and months are UTC' : 'months and weeks are counted in it; date cells are UTC']);
  rows.push(['Status', all(facts.status)], ['Credit status', all(facts.creditStatus)]);
  rows.push(['Country', all(facts.country), ...(facts.country ? ['filtered by ccs-bulk after paging: the service has no country filter, the whole window was read'] : [])]);
  rows.push(['Order', facts.order]);
  rows.push(['Made at', { instant: facts.madeAt.toISOString() }], ['Made by', `ccs-bulk ${facts.version ?? '(unknown version)'}`]);
  rows.push(['Clients', tally.total]);
  for (const note of facts.notes) rows.push(['Note', note]);
  for (const warning of facts.warnings ?? []) rows.push(['Warning', warning]);
  rows.push([], ...crossTable(tally));
  rows.push([], [{ bold: 'By country' }, { bold: 'Clients' }]);
  for (const [country, n] of Object.entries(tally.byCountry)) rows.push([country === '' ? '(none)' : country, n]);
  rows.push([], [{ bold: `By month created (${facts.timeZone})` }, { bold: 'Clients' }]);
  for (const [month, n] of Object.entries(tally.byMonth)) rows.push([month, n]);
  rows.push([], [{ bold: `By ISO week created (${facts.timeZone})` }, { bold: 'Clients' }]);
  for (const [week, n] of Object.entries(tally.byWeek)) rows.push([week, n]);
  return rows;
}

/** Status down, credit status across, totals right and below; every cell, zeros included. */
function crossTable(tally: TallyFigures): SummaryRow[] {
  const statuses = Object.keys(tally.counts);
  const credits = Object.keys(tally.counts.total ?? {});
  const rows: SummaryRow[] = [[{ bold: 'Status × credit status' }, ...credits.map((credit) => ({ bold: credit === 'total' ? 'Total' : credit }))]];
  for (const status of statuses) {
    const row = tally.counts[status]!;
    rows.push([status === 'total' ? { bold: 'Total' } : status, ...credits.map((credit) => row[credit] ?? 0)]);
  }
  return rows;
}

const SHEET_HEAD =
  '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n' +
  '<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" ' +
  'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">';

/** The rows as a worksheet: typed cells (never a formula), the first column wide. */
export function summarySheetXml(rows: readonly SummaryRow[], selected: boolean): string {
  const width = Math.max(1, ...rows.map((row) => row.length));
  const widths = Array.from({ length: width }, (_, i) => `<col min="${i + 1}" max="${i + 1}" width="${i === 0 ? 30 : i === 1 ? 26 : 14}" customWidth="1"/>`);
  let xml = `${SHEET_HEAD}<sheetViews><sheetView${selected ? ' tabSelected="1"' : ''} workbookViewId="0"/></sheetViews>`;
  xml += `<sheetFormatPr defaultRowHeight="15"/><cols>${widths.join('')}</cols><sheetData>`;
  rows.forEach((row, r) => {
    xml += `<row r="${r + 1}">`;
    row.forEach((cell, c) => {
      const ref = `${columnLetter(c)}${r + 1}`;
      if (typeof cell === 'number') xml += `<c r="${ref}"><v>${cell}</v></c>`;
      else if (typeof cell === 'string') xml += cell === '' ? '' : textCell(ref, cell, 0);
      else if ('bold' in cell) xml += textCell(ref, cell.bold, STYLE.header);
      else {
        const serial = excelSerial(cell.instant);
        xml += serial === undefined ? textCell(ref, cell.instant, 0) : `<c r="${ref}" s="${STYLE.dateTime}"><v>${serial}</v></c>`;
      }
    });
    xml += '</row>';
  });
  return `${xml}</sheetData></worksheet>`;
}

/** The rows as CSV (comma, CRLF, a BOM for Excel), every text cell formula-escaped. */
export function summaryCsv(rows: readonly SummaryRow[], delimiter = ','): string {
  const text = (cell: SummaryCell) =>
    typeof cell === 'number' ? String(cell) : typeof cell === 'string' ? escapeFormula(cell) : 'bold' in cell ? escapeFormula(cell.bold) : cell.instant;
  // The report's own separator: a `;` report's summary opens in the same Excel as the report.
  const record = (cells: string[]) =>
    delimiter === ','
      ? csvRecord(cells, '\r\n')
      : `${cells.map((cell) => (csvCell(cell).startsWith('"') || !cell.includes(delimiter) ? csvCell(cell) : `"${cell}"`)).join(delimiter)}\r\n`;
  return `\uFEFF${rows.map((row) => record(row.map(text))).join('')}`;
}
