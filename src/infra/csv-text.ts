/**
 * CSV records as text (RFC 4180 quoting), for the files ccs-bulk writes: the export, the
 * results file and the --failed file. By hand: it is on every writer's hot path (csv-stringify's
 * per-call set-up showed in validate's profile), and csv-stringify with CRLF leaves a bare LF
 * unquoted.
 */
import { escapeFormula, hasSegmentTrigger } from '../export/escape.js';

/**
 * A cell holding a quote, CR, LF or any common list separator (comma, semicolon, tab) is
 * quoted, its quotes doubled, whatever the file's own delimiter. A spreadsheet opens a CSV with
 * the user's list separator (`;` in much of Europe), not ours: quoted, a cell is one cell
 * wherever its quote opens a field. Mid-line, a reader on another separator takes the quote as
 * text and splits the cell anyway, which is why the safe writers below also escape each of its
 * segments (export/escape.ts).
 */
const NEEDS_QUOTES = /[",;\t\r\n]/;

export function csvCell(value: string): string {
  return NEEDS_QUOTES.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

/** One record, ending with `eol`: CRLF in exports (RFC 4180, Excel), LF in ccs-bulk's own files. */
export function csvRecord(cells: readonly string[], eol: '\n' | '\r\n'): string {
  let text = '';
  for (let i = 0; i < cells.length; i++) text += i === 0 ? csvCell(cells[i]!) : `,${csvCell(cells[i]!)}`;
  return text + eol;
}

/**
 * csvCell for the results and --failed files: users open them in spreadsheets, and their
 * cells hold input values and server text, so a cell that would run as a formula is escaped
 * as the export escapes it (import strips the prefix again when the file is read back). A
 * cell holding a separator is escaped after each one too (export/escape.ts says why).
 */
export function csvSafeCell(value: string): string {
  const first = value.charCodeAt(0);
  // = + - @ tab CR, or a leading ' (escapeFormula's rule covers quotes before a trigger)
  const risky = first === 61 || first === 43 || first === 45 || first === 64 || first === 9 || first === 13 || first === 39;
  if (!NEEDS_QUOTES.test(value)) return risky ? escapeFormula(value) : value;
  const text = risky || hasSegmentTrigger(value) ? escapeFormula(value) : value;
  return `"${text.replaceAll('"', '""')}"`;
}

/** csvRecord with every cell through csvSafeCell. */
export function csvSafeRecord(cells: readonly string[], eol: '\n' | '\r\n'): string {
  let text = '';
  for (let i = 0; i < cells.length; i++) text += i === 0 ? csvSafeCell(cells[i]!) : `,${csvSafeCell(cells[i]!)}`;
  return text + eol;
}

/** csvSafeRecord with another delimiter (the --failed file keeps the input's `;` or tab). */
export function csvSafeRecordWith(cells: readonly string[], delimiter: string, eol: '\n' | '\r\n'): string {
  if (delimiter === ',') return csvSafeRecord(cells, eol);
  let text = '';
  for (let i = 0; i < cells.length; i++) {
    let cell = csvSafeCell(cells[i]!);
    // csvSafeCell quotes for , ; and tab; a cell holding another delimiter (`|`) needs quotes too.
    if (cell.charCodeAt(0) !== 34 && cell.includes(delimiter)) cell = `"${cell}"`;
    text += i === 0 ? cell : `${delimiter}${cell}`;
  }
  return text + eol;
}
