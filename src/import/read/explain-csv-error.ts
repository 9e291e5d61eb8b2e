import { CsvError } from 'csv-parse';
import { type CodeOf, InputError } from '../../errors.js';
import { shownPath } from '../../infra/printable.js';

export interface ParseContext {
  file: string;
  /** Line where the record being parsed when the error struck starts. */
  recordLine: number;
  /** csv-parse's line count minus the true one, as of the last record (see read-csv.ts). */
  drift: number;
  maxRecordSize: number;
}

/**
 * Turns a csv-parse error into an InputError that names the line a user must fix. csv-parse
 * notices an unclosed quote only where parsing ends (EOF, the size bound, a later quote): the
 * line that matters is where the record, and so the quoted field, started.
 */
export function explainCsvError(error: unknown, context: ParseContext): InputError {
  if (error instanceof InputError) return error;
  const { file, recordLine } = context;
  if (!(error instanceof CsvError)) {
    const reason = error instanceof Error ? error.message : String(error);
    return new InputError(`${shownPath(file)}: cannot read the file: ${reason}`, 'input_unreadable', {
      file,
      cause: error,
    });
  }
  const at = (line: number, message: string, code: CodeOf<'InputError'>) =>
    new InputError(`${shownPath(file)}: line ${line}: ${message}`, code, { file, line, cause: error });
  const errorLine =
    typeof error.lines === 'number' ? Math.max(recordLine, error.lines - context.drift) : recordLine;
  const column = typeof error.column === 'number' ? ` (column ${error.column + 1})` : '';
  switch (error.code) {
    case 'CSV_QUOTE_NOT_CLOSED':
      return at(
        recordLine,
        `unbalanced quote: a quoted field opened on line ${recordLine} is never closed; ` +
          'a quote inside a field must be doubled ("")',
        'csv_unclosed_quote',
      );
    case 'CSV_INVALID_CLOSING_QUOTE':
      if (errorLine > recordLine) {
        return at(
          recordLine,
          `unbalanced quote: a quoted field opened on line ${recordLine} runs on to line ${errorLine}; ` +
            'a quote inside a field must be doubled ("")',
          'csv_unclosed_quote',
        );
      }
      return at(
        errorLine,
        `text follows the closing quote of a field${column}; a quote inside a field must be doubled ("")`,
        'csv_bad_quote',
      );
    case 'INVALID_OPENING_QUOTE':
      return at(
        errorLine,
        `a quote appears inside an unquoted field${column}: quote the whole field and double the inner quote, e.g. "5"" pipe"`,
        'csv_bad_quote',
      );
    case 'CSV_MAX_RECORD_SIZE':
      // csv-parse cannot tell a genuine huge field from a quote left open: name both.
      return at(
        recordLine,
        `the record starting on line ${recordLine} is larger than the limit of ${formatBytes(context.maxRecordSize)}: ` +
          'an unbalanced quote on that line would swallow the lines after it; if the data is genuine, raise --max-record-size',
        'record_too_large',
      );
    default:
      return at(errorLine, error.message, 'csv_malformed');
  }
}

export function formatBytes(bytes: number): string {
  if (bytes >= 1_048_576 && bytes % 1_048_576 === 0) return `${bytes / 1_048_576} MiB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}
