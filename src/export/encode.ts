/**
 * Flat clients → text, one page at a time, with no I/O (node-csv's core/adapter split): the
 * writer only ever holds one page's text.
 *
 * CSV: RFC 4180 (CRLF between records, quotes where needed; newlines inside a cell stay as
 * they are, quoted), absent values empty, `documents` as JSON, formula cells escaped.
 * JSONL: one object per line with the chosen columns, native JSON types (`documents` an array,
 * `documents_count` a number, absent values null) and never formula-escaped: JSON is read by
 * programs, and a `'` would corrupt the data they read.
 * csv-semicolon: the same with `;` between cells and a UTF-8 BOM, for Excel where `;` is the
 * list separator (German, French, Spanish… settings), which opens a comma CSV in one column.
 * xlsx: typed worksheet cells (xlsx-sheet.ts), zipped by the output (xlsx-package.ts).
 */
import type { ExportColumn, FlatClient } from './columns.js';
import { csvCell, csvRecord } from '../infra/csv-text.js';
import type { Encoder } from './encoder.js';
import { escapeFormula } from './escape.js';
import type { ExportFormat } from './options.js';
import { createSheetEncoder } from './xlsx-sheet.js';
import { documentsBytes, NOT_PLAIN, writeDocuments } from './documents-cell.js';

export type { Encoder };

export interface EncoderOptions {
  format: ExportFormat;
  columns: readonly ExportColumn[];
  /** The header row's text per column; default: the column names. */
  headers?: readonly string[] | undefined;
  bom: boolean;
  escapeFormulas: boolean;
  /** CSV: between cells (csv-semicolon: always `;`). */
  delimiter?: string | undefined;
  /** CSV: created_at as the ISO instant, or as `2025-01-31 18:00:00` (UTC, or the zone's with dates in a time zone) that spreadsheets read as a date. */
  csvDates?: 'iso' | 'spreadsheet' | undefined;
  /** xlsx: the tab the workbook opens on. */
  selected?: boolean | undefined;
}

function csvLine(cells: readonly string[]): string {
  return csvRecord(cells, '\r\n');
}

/** Another delimiter's record (csvCell quotes a cell holding `;` or tab, as it does a comma; `|` is added). */
function delimitedLine(delimiter: string): (cells: readonly string[]) => string {
  return (cells) => {
    let text = '';
    for (let i = 0; i < cells.length; i++) {
      let cell = csvCell(cells[i]!);
      if (cell.charCodeAt(0) !== 34 && cell.includes(delimiter)) cell = `"${cell}"`;
      text += i === 0 ? cell : `${delimiter}${cell}`;
    }
    return `${text}\r\n`;
  };
}

export function createEncoder(options: EncoderOptions): Encoder {
  const { columns } = options;
  const headers = options.headers ?? columns;
  if (options.format === 'xlsx') return createSheetEncoder(columns, headers, options.selected ?? true);
  if (options.format === 'jsonl') {
    return {
      start: () => '',
      end: () => '',
      encode(clients) {
        let text = '';
        for (const client of clients) {
          const record: Record<string, unknown> = {};
          for (const column of columns) record[column] = client[column];
          text += `${JSON.stringify(record)}\n`;
        }
        return text;
      },
    };
  }
  const cell = options.escapeFormulas ? escapeFormula : (value: string) => value;
  // Excel reads a CSV without a BOM in the machine's legacy code page: the BOM keeps accents whole.
  const semicolon = options.format === 'csv-semicolon';
  const delimiter = semicolon ? ';' : (options.delimiter ?? ',');
  const line = delimiter === ',' ? csvLine : delimitedLine(delimiter);
  // One reader a column: each reads its own property (a keyed read by column name costs more).
  const texts = columns.map((column) => (column === 'created_at' && options.csvDates === 'spreadsheet' ? spreadsheetDate : CELL_TEXT[column]));
  /** Columns [from, to) of a record, without the line break. */
  const cells = (client: FlatClient, from: number, to: number): string => {
    let row = '';
    for (let i = from; i < to; i++) {
      const value = texts[i]!(client);
      // Most values need no quotes and no escape: written as they are, with no arrays or copies.
      const field = isPlain(value, delimiter) ? value : quotedCell(cell(value), delimiter);
      row += i === from ? field : delimiter + field;
    }
    return row;
  };
  const record = (client: FlatClient): string => `${cells(client, 0, columns.length)}\r\n`;
  const at = columns.indexOf('documents');
  const around: Around | undefined =
    at === -1
      ? undefined
      : {
          head: (client) => (at === 0 ? '' : cells(client, 0, at) + delimiter),
          tail: (client) => (at === columns.length - 1 ? '' : delimiter + cells(client, at + 1, columns.length)),
        };
  return {
    start: () => (options.bom || semicolon ? '\uFEFF' : '') + line(headers.map(cell)),
    end: () => '',
    encode(clients) {
      let out = '';
      for (const client of clients) out += record(client);
      return out;
    },
    encodeBytes: (clients) => utf8Lines(clients, record, around),
  };
}

/** A record's text before its documents cell (its delimiter included), and after it ('' when the line break follows it). */
interface Around {
  head(client: FlatClient): string;
  tail(client: FlatClient): string;
}

/**
 * Records as UTF-8, each written straight into one buffer: encoding a page-long string costs
 * several times more. Plain documents (documents-cell.ts) go in as bytes, the text around them
 * as it is.
 */
function utf8Lines(clients: readonly FlatClient[], record: (client: FlatClient) => string, around: Around | undefined): Uint8Array {
  let bytes = Buffer.allocUnsafe(64 * 1024);
  let used = 0;
  // A UTF-16 unit is at most 3 bytes of UTF-8.
  const room = (more: number) => {
    if (used + more <= bytes.length) return;
    const grown = Buffer.allocUnsafe(Math.max(bytes.length * 2, used + more));
    bytes.copy(grown, 0, 0, used);
    bytes = grown;
  };
  for (const client of clients) {
    if (around !== undefined) {
      const start = used;
      const head = around.head(client);
      const tail = around.tail(client);
      room(3 * (head.length + tail.length) + documentsBytes(client.documents) + 2);
      if (head.length > 0) used += bytes.write(head, used, 'utf8');
      const end = writeDocuments(bytes, used, client.documents);
      if (end !== NOT_PLAIN) {
        used = end;
        if (tail.length > 0) used += bytes.write(tail, used, 'utf8');
        bytes[used++] = 13;
        bytes[used++] = 10;
        continue;
      }
      // Documents to escape: the record's text instead, over what was written.
      used = start;
    }
    const line = record(client);
    room(line.length * 3);
    used += bytes.write(line, used, 'utf8');
  }
  return bytes.subarray(0, used);
}

/** Characters that make csvCell quote a cell (and, after a separator, escapeFormula look closer). */
const SPECIAL = /[",;\t\r\n]/;

/**
 * Whether a value is written unchanged: it starts with no formula trigger or `'` (escapeFormula
 * leaves it), and holds no quote, separator or line break (csvCell leaves it, as does the
 * delimiter's own check).
 */
function isPlain(value: string, delimiter: string): boolean {
  const first = value.charCodeAt(0);
  if (first === 61 || first === 43 || first === 45 || first === 64 || first === 39) return false;
  return !SPECIAL.test(value) && (delimiter === ',' || !value.includes(delimiter));
}

/** One cell as csvLine or delimitedLine writes it. */
function quotedCell(value: string, delimiter: string): string {
  const cell = csvCell(value);
  return delimiter !== ',' && cell.charCodeAt(0) !== 34 && cell.includes(delimiter) ? `"${cell}"` : cell;
}

/** A column's text in a CSV cell, before quotes and escapes: absent values empty, `documents` as JSON. */
const CELL_TEXT: Readonly<Record<ExportColumn, (client: FlatClient) => string>> = {
  id: (client) => client.id ?? '',
  name: (client) => client.name ?? '',
  email: (client) => client.email ?? '',
  country: (client) => client.country ?? '',
  address: (client) => client.address ?? '',
  currency: (client) => client.currency ?? '',
  status: (client) => client.status ?? '',
  credit_status: (client) => client.credit_status ?? '',
  created_at: (client) => client.created_at ?? '',
  bank_iban: (client) => client.bank_iban ?? '',
  bank_account_number: (client) => client.bank_account_number ?? '',
  bank_swift_code: (client) => client.bank_swift_code ?? '',
  documents_count: (client) => String(client.documents_count),
  documents: (client) => JSON.stringify(client.documents),
};

/**
 * created_at as `2025-01-31 18:00:00`, UTC: the one date-time text Excel, LibreOffice and
 * Google Sheets all take for a date whatever the language settings. Milliseconds are left
 * out (Excel reads them in some settings only); anything that is not an instant stays as is.
 */
function spreadsheetDate(client: FlatClient): string {
  if (client.created_at === null) return '';
  // The wall-clock time as written: UTC, or the zone's own with --dates-in-timezone (its offset
  // dropped: a spreadsheet date has none; the summary names the zone).
  const wall = /^(\d{4}-\d\d-\d\d)T(\d\d:\d\d:\d\d)/.exec(client.created_at);
  return wall === null || Number.isNaN(Date.parse(client.created_at)) ? client.created_at : `${wall[1]} ${wall[2]}`;
}
