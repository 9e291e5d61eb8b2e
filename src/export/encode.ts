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

export type { Encoder };

export interface EncoderOptions {
  format: ExportFormat;
  columns: readonly ExportColumn[];
  bom: boolean;
  escapeFormulas: boolean;
}

function csvLine(cells: readonly string[]): string {
  return csvRecord(cells, '\r\n');
}

/** csv-semicolon's record: `;` between cells (csvCell quotes a cell holding one, as it does a comma). */
function semicolonLine(cells: readonly string[]): string {
  return `${cells.map(csvCell).join(';')}\r\n`;
}

export function createEncoder(options: EncoderOptions): Encoder {
  const { columns } = options;
  if (options.format === 'xlsx') return createSheetEncoder(columns);
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
  const line = semicolon ? semicolonLine : csvLine;
  return {
    start: () => (options.bom || semicolon ? '\uFEFF' : '') + line(columns),
    end: () => '',
    encode(clients) {
      let text = '';
      for (const client of clients) text += line(columns.map((column) => cell(csvText(client, column))));
      return text;
    },
  };
}

function csvText(client: FlatClient, column: ExportColumn): string {
  if (column === 'documents') return JSON.stringify(client.documents);
  if (column === 'documents_count') return String(client.documents_count);
  return client[column] ?? '';
}
