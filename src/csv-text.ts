/**
 * CSV records as text (RFC 4180 quoting), for the files ccs-bulk writes: the export, the
 * results file and the --failed file. A cell with a comma, a quote, CR or LF is quoted, its
 * quotes doubled. By hand: it is on every writer's hot path (csv-stringify's per-call set-up
 * showed in validate's profile), and csv-stringify with CRLF leaves a bare LF unquoted.
 */
import { escapeFormula } from './export/escape.js';

const NEEDS_QUOTES = /[",\r\n]/;

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
 * as the export escapes it (import strips the prefix again when the file is read back).
 */
export function csvSafeCell(value: string): string {
  const first = value.charCodeAt(0);
  // = + - @ tab CR, or a leading ' (escapeFormula's rule covers quotes before a trigger)
  const risky = first === 61 || first === 43 || first === 45 || first === 64 || first === 9 || first === 13 || first === 39;
  return csvCell(risky ? escapeFormula(value) : value);
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
    // csvSafeCell quotes for a comma; a cell holding the delimiter needs quotes too.
    if (cell.charCodeAt(0) !== 34 && cell.includes(delimiter)) cell = `"${cell}"`;
    text += i === 0 ? cell : `${delimiter}${cell}`;
  }
  return text + eol;
}
