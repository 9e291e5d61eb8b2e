/** The contract between the row readers and the import pipeline. */

export interface ReadOptions {
  /** A WHATWG label; absent = detect (BOM; else any multi-byte UTF-8 sequence → utf-8; else windows-1252). */
  encoding?: string;
  /** Absent = sniff among , ; \t | from the first lines (an Excel `sep=;` first line wins). */
  delimiter?: string;
  /** Spreadsheets: sheet name or 1-based index as a string; default the first sheet. */
  sheet?: string;
  /** The header's line (CSV) or sheet row, 1-based: pinned, no search. */
  headerRow?: number;
  /** What a header row holds: when the first non-blank row does not, one of the next rows may. */
  headerTest?: HeaderTest;
  /** Bound for one record or field, in bytes of UTF-8; default 1 MiB. */
  maxRecordSize?: number;
  /**
   * CSV and .xlsx: parse on a second thread. 'large' (what validate uses) = for CSV files of
   * 8 MiB or more and .xlsx files of 1 MiB or more, when the machine has a second core;
   * default 'never'. .ods and .xls are always read inline (they are read whole).
   */
  thread?: 'never' | 'large' | 'always';
}

/**
 * Plain data (it crosses to the reader thread): for each required field, the folded header
 * names that would feed it. A row is a header when every group has one of its names.
 */
export interface HeaderTest {
  /** One group per required field: the folded header names, any one of which feeds it. */
  required: string[][];
}

/** How far down a title block may push the header, in records. */
export const HEADER_SEARCH_ROWS = 20;

/** 'large' files for `thread: 'large'`: below this the thread's start-up is not paid back. */
export const THREAD_MIN_BYTES = 8 * 1024 * 1024;
/** The same for .xlsx, whose XML is compressed about tenfold and slower to parse than CSV. */
export const THREAD_MIN_XLSX_BYTES = 1024 * 1024;

/** The input as read: its format, encoding and delimiter (and how each was chosen), where its header is. */
export interface SourceInfo {
  /** The input file's path as given (`rows` for rows from code with no `file`). */
  file: string;
  /** What kind of input it is: `csv`, `xlsx`, `ods`, `xls`, or `rows` for rows from code. */
  format: SourceFormat;
  /** WHATWG name: 'utf-8', 'utf-16le', 'utf-16be', 'windows-1252'… ('utf-8' for spreadsheets). */
  encoding: string;
  /**
   * How the encoding was chosen: `bom` (the file starts with a byte-order mark), `detected` (from
   * the bytes), `option` (the `read.encoding` setting), `default` (utf-8: nothing said otherwise,
   * and always for spreadsheets and rows from code).
   */
  encodingSource: 'bom' | 'detected' | 'option' | 'default';
  /** Why detection chose this encoding, when it is a single-byte one: 'no UTF-8 sequences'. */
  encodingReason?: string;
  /**
   * Rows read so far (header and title rows aside) that hold bytes invalid in the encoding
   * (UTF-8 only: each such row is invalid); set once there is one, final when reading ends.
   */
  rowsWithInvalidBytes?: number;
  /**
   * A known export's footer after its rows (a Salesforce report's export details): its lines,
   * left out of the rows; set when reading reaches it.
   */
  exportFooter?: {
    /** The footer's lines (CSV) or sheet rows. */
    lines: number[];
    /** What it is, in words: `Salesforce's export details`. */
    of: string;
  };
  /** ',' for spreadsheets. */
  delimiter: string;
  /**
   * How the delimiter was chosen: `sniffed` (from the first lines), `sep-line` (an Excel `sep=;`
   * first line), `option` (the `read.delimiter` setting), `default` (a comma: nothing to go on,
   * and always for spreadsheets and rows from code).
   */
  delimiterSource: 'sniffed' | 'sep-line' | 'option' | 'default';
  /** Spreadsheets: the sheet name used. */
  sheet?: string;
  /** Where the header is, and the non-blank rows above it that were skipped (a title block). */
  header: HeaderPlace;
  /** File size, for ETA. */
  sizeBytes: number;
  /** Present when the file is parsed on a second thread (ReadOptions.thread). */
  thread?: true;
}

/** `rows`: objects from code (importClients' `rows`), not a file. */
export type SourceFormat = 'csv' | 'xlsx' | 'ods' | 'xls' | 'rows';

/** What a position in the input counts, in messages: a CSV's lines, a sheet's rows. */
export function positionWord(format: SourceFormat): 'line' | 'row' {
  return format === 'csv' ? 'line' : 'row';
}

export interface HeaderPlace {
  /** The header's line (CSV) or sheet row. */
  line: number;
  /** Lines of the non-blank rows above the header, not imported. */
  skipped: number[];
  /** 'first' = the first non-blank row; 'found' = further down (a title above it); 'option' = `headerRow` (the CLI's --header-row). */
  source: 'first' | 'found' | 'option';
}

export interface RawRecord {
  /**
   * 1-based index among the non-blank data records: the header and blank rows (every cell
   * empty or whitespace) are not counted, so `row` matches what a user counts in the data.
   */
  row: number;
  /** 1-based physical line (CSV) or sheet row number (spreadsheets) where the record starts. */
  line: number;
  /** As read: not trimmed, never cast (IDs like 00123 stay strings). */
  values: string[];
  /** Bytes that were not valid UTF-8 (each a U+FFFD in `values`): the row is invalid. */
  invalidBytes?: InvalidCell[];
  /**
   * The end of the record's results line, ready-made by the reader thread (reader-thread.ts):
   * a comma and csvSafeCell of each value, then the line's LF, as UTF-8.
   */
  echo?: ByteRange;
}

/** `bytes[start, end)`. */
export interface ByteRange {
  bytes: Buffer;
  start: number;
  end: number;
}

/** An invalid byte sequence in a cell: `column` indexes the values (-1: none holds it). */
export interface InvalidCell {
  column: number;
  /** As shown to the user: `0xE9`, `0xE2 0x82`. */
  bytes: string;
}

/** `utf-8 [detected]`, `windows-1252 [detected: no UTF-8 sequences]`, `utf-8 [bom; 2 rows with invalid bytes]`. */
export function describeEncoding(info: SourceInfo): string {
  const reason = info.encodingReason === undefined ? '' : `: ${info.encodingReason}`;
  const rows = info.rowsWithInvalidBytes ?? 0;
  const invalid = rows === 0 ? '' : `; ${rows} row${rows === 1 ? '' : 's'} with invalid bytes`;
  return `${info.encoding} [${info.encodingSource}${reason}${invalid}]`;
}

export interface RowSource {
  info: SourceInfo;
  /** Header cells as read, BOM removed, trailing empty header cells dropped. */
  headers: string[];
  /**
   * The data records, in batches (one per chunk of the file, so the per-record cost of async
   * iteration is paid per batch). Streams; consumed once; reading advances at the consumer's
   * pace. Batches are never empty.
   */
  batches: AsyncIterable<RawRecord[]>;
  /** Bytes of the file consumed so far (progress/ETA). */
  bytesRead(): number;
  /** Release the file early (the consumer stopped); idempotent. */
  close(): Promise<void>;
}

/** A record before header handling: the values and the line where it starts. */
export interface LineRecord {
  values: string[];
  line: number;
  invalidBytes?: InvalidCell[];
}

export const DEFAULT_MAX_RECORD_SIZE = 1_048_576;
