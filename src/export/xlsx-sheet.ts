/**
 * Flat clients → the worksheet XML of an xlsx report, one page at a time, with no I/O (the
 * zip around it is xlsx-package.ts). Every cell is typed, so none is ever a formula: text is
 * an inline string whatever it starts with, `created_at` a date-time serial, `documents_count`
 * a number. The header is row 1 (bold, frozen); the autofilter covers the rows written.
 */
import { UsageError } from '../errors.js';
import type { ExportColumn } from './columns.js';
import type { Encoder } from './encoder.js';
import { keepLookalike } from './escape.js';
import { STYLE } from './xlsx-styles.js';

/** Excel's limits: rows in a sheet (the header is one) and characters in a cell. */
export const MAX_SHEET_ROWS = 1_048_576;
export const MAX_CELL_CHARS = 32_767;

/** Shown as text even if they look like numbers (leading zeros, long digit runs). */
const IDENTIFIERS: ReadonlySet<ExportColumn> = new Set(['id', 'bank_iban', 'bank_account_number', 'bank_swift_code']);

const WIDTHS: Record<ExportColumn, number> = {
  id: 30,
  name: 28,
  email: 32,
  country: 9,
  address: 40,
  currency: 10,
  status: 18,
  credit_status: 13,
  created_at: 24,
  bank_iban: 26,
  bank_account_number: 20,
  bank_swift_code: 16,
  documents_count: 16,
  documents: 60,
};

/** Only the tab the workbook opens on is selected: two selected tabs are a group that edits both. */
const head = (selected: boolean) =>
  '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n' +
  '<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" ' +
  'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">' +
  `<sheetViews><sheetView${selected ? ' tabSelected="1"' : ''} workbookViewId="0">` +
  '<pane ySplit="1" topLeftCell="A2" activePane="bottomLeft" state="frozen"/>' +
  '<selection pane="bottomLeft" activeCell="A2" sqref="A2"/></sheetView></sheetViews>' +
  '<sheetFormatPr defaultRowHeight="15"/>';

/** `headers`: the header row's text per column (default: the column names). */
export function createSheetEncoder(
  columns: readonly ExportColumn[],
  headers: readonly string[] = columns,
  selected = true,
): Encoder {
  const letters = columns.map((_, index) => columnLetter(index));
  const lastLetter = letters[letters.length - 1] ?? 'A';
  const styles = columns.map((column) => (IDENTIFIERS.has(column) ? STYLE.text : 0));
  let row = 1;
  return {
    start() {
      const widths = columns
        .map((column, i) => `<col min="${i + 1}" max="${i + 1}" width="${headers[i] === column ? WIDTHS[column] : Math.max(WIDTHS[column], headers[i]!.length + 2)}" customWidth="1"/>`)
        .join('');
      const header = columns.map((_, i) => textCell(`${letters[i]}1`, headers[i]!, STYLE.header)).join('');
      return `${head(selected)}<cols>${widths}</cols><sheetData><row r="1">${header}</row>`;
    },
    encode(clients) {
      let xml = '';
      for (const client of clients) {
        row++;
        if (row > MAX_SHEET_ROWS) throw tooManyRows();
        xml += `<row r="${row}">`;
        for (let i = 0; i < columns.length; i++) {
          const column = columns[i]!;
          const ref = `${letters[i]}${row}`;
          if (column === 'documents_count') {
            xml += `<c r="${ref}"><v>${client.documents_count}</v></c>`;
            continue;
          }
          const value = column === 'documents' ? JSON.stringify(client.documents) : client[column];
          if (value === null || value === '') continue;
          const serial = column === 'created_at' ? excelSerial(value) : undefined;
          if (serial !== undefined) xml += `<c r="${ref}" s="${STYLE.dateTime}"><v>${serial}</v></c>`;
          else xml += textCell(ref, keepLookalike(value), styles[i]!, client.id, column);
        }
        xml += '</row>';
      }
      return xml;
    },
    end() {
      const range = `A1:${lastLetter}${row}`;
      // Identifiers such as 0012345678 are text on purpose: no "number stored as text" flags.
      return (
        `</sheetData><autoFilter ref="${range}"/>` +
        `<ignoredErrors><ignoredError sqref="${range}" numberStoredAsText="1"/></ignoredErrors></worksheet>`
      );
    },
  };
}

/** Anything that needs more than copying: XML specials, control characters, `_`, edge spaces. */
const NEEDS_CARE = /[&<>_\x00-\x1f\ufffe\uffff]|^ | $/;
const EDGE_SPACE = /^[ \t\n\r]|[ \t\n\r]$/;

export function textCell(ref: string, value: string, style: number, id?: string, column?: string): string {
  if (value.length > MAX_CELL_CHARS) throw tooLong(id, column, value.length);
  const s = style === 0 ? '' : ` s="${style}"`;
  if (!NEEDS_CARE.test(value)) return `<c r="${ref}"${s} t="inlineStr"><is><t>${value}</t></is></c>`;
  const space = EDGE_SPACE.test(value) ? ' xml:space="preserve"' : '';
  return `<c r="${ref}"${s} t="inlineStr"><is><t${space}>${xmlText(value)}</t></is></c>`;
}

/**
 * Text as an OOXML string: XML's specials escaped; CR as a character reference (a raw CR is
 * read back as LF); characters XML cannot hold as `_xHHHH_`, and the `_` of a literal `_x…_`
 * as `_x005F_`, as Excel and LibreOffice decode them (LibreOffice takes 1 to 4 hex digits).
 */
const XML_SPECIAL = /[&<>\r\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]|_(?=x[0-9a-fA-F]{1,4}_)/g;

export function xmlText(value: string): string {
  return value.replace(XML_SPECIAL, (char) => {
    switch (char) {
      case '&':
        return '&amp;';
      case '<':
        return '&lt;';
      case '>':
        return '&gt;';
      case '\r':
        return '&#13;';
      default:
        return `_x${char.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}_`;
    }
  });
}

const DAY_MS = 86_400_000;
/** Serial 0 of Excel's 1900 date system, in UTC. */
const EPOCH_MS = Date.UTC(1899, 11, 30);
/** Excel's serials before 1900-03-01 are off by its phantom 1900-02-29: such dates stay text. */
const FIRST_SERIAL_MS = Date.UTC(1900, 2, 1);
const ISO_INSTANT = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)(Z|[+-]\d{2}:?\d{2})?$/i;

/**
 * An ISO instant → its Excel serial (days since 1899-12-30, UTC, milliseconds kept); undefined
 * for anything else, which is then written as text. No offset means UTC.
 */
export function excelSerial(text: string): number | undefined {
  const match = ISO_INSTANT.exec(text);
  if (!match) return undefined;
  const [, day, time, zone = 'Z'] = match;
  const offset = zone.toUpperCase() === 'Z' ? 'Z' : `${zone.slice(0, 3)}:${zone.slice(-2)}`;
  const ms = Date.parse(`${day}T${time}${offset}`);
  if (Number.isNaN(ms) || ms < FIRST_SERIAL_MS) return undefined;
  return (ms - EPOCH_MS) / DAY_MS;
}

export function columnLetter(index: number): string {
  let letters = '';
  for (let n = index + 1; n > 0; n = Math.floor((n - 1) / 26)) {
    letters = String.fromCharCode(65 + ((n - 1) % 26)) + letters;
  }
  return letters;
}

function tooManyRows(): UsageError {
  return new UsageError(
    `an xlsx sheet holds ${MAX_SHEET_ROWS - 1} clients below its header and this export has more: ` +
      'split it over sheets (--split rows:1000000, --split month), narrow it (--created-from, --created-to, --status) or export --format csv',
    'xlsx_too_many_rows',
  );
}

function tooLong(id: string | undefined, column: string | undefined, length: number): UsageError {
  return new UsageError(
    `client ${id ?? '?'}: its ${column ?? 'header'} is ${length} characters, over the ${MAX_CELL_CHARS} an xlsx ` +
      `cell holds: export --format csv or jsonl${column === undefined ? '' : `, or leave ${column} out with --columns`}`,
    'xlsx_cell_too_long',
  );
}
