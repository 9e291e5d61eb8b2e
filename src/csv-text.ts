/**
 * CSV records as text (RFC 4180 quoting), for the files ccs-bulk writes: the export, the
 * results file and the --failed file. A cell with a comma, a quote, CR or LF is quoted, its
 * quotes doubled. By hand because it is three lines on the hot path of every writer:
 * csv-stringify cost a sixth of `validate`'s time (its options and per-call set-up), and with
 * a CRLF record delimiter it leaves a cell holding a bare LF unquoted, which splits the record
 * for every reader.
 */
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
