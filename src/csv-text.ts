/**
 * CSV records as text (RFC 4180 quoting), for the files ccs-bulk writes: the export, the
 * results file and the --failed file. A cell with a comma, a quote, CR or LF is quoted, its
 * quotes doubled. By hand: it is on every writer's hot path (csv-stringify's per-call set-up
 * showed in validate's profile), and csv-stringify with CRLF leaves a bare LF unquoted.
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
