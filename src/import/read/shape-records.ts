import { InputError } from '../../errors.js';
import { shownPath } from '../../infra/printable.js';
import { foldHeader } from '../fields.js';
import { HEADER_SEARCH_ROWS, type HeaderPlace, type HeaderTest, type LineRecord, type RawRecord } from './types.js';

/** Every cell empty or whitespace (NBSP included): a blank line or an Excel empty row. */
export function isBlank(values: readonly string[]): boolean {
  return values.every((value) => value.trim() === '');
}

/** Header cells as read, minus a stray BOM on the first and Excel's trailing empty cells. */
export function shapeHeaders(values: readonly string[]): string[] {
  const headers = values.slice(0, lastNonBlank(values, 0) + 1);
  if (headers[0]?.startsWith('\uFEFF')) headers[0] = headers[0].slice(1);
  return headers;
}

/**
 * Drops empty cells beyond the header width (Excel keeps a used range wider than the data),
 * so they do not count as extra fields; a non-empty extra cell keeps the row ragged.
 */
export function trimToWidth(values: string[], width: number): string[] {
  if (values.length <= width) return values;
  const keep = Math.max(width, lastNonBlank(values, width) + 1);
  return keep === values.length ? values : values.slice(0, keep);
}

function lastNonBlank(values: readonly string[], from: number): number {
  for (let i = values.length - 1; i >= from; i--) {
    if (values[i]!.trim() !== '') return i;
  }
  return from - 1;
}

export interface HeaderAndRecords {
  headers: string[];
  header: HeaderPlace;
  batches: AsyncGenerator<RawRecord[]>;
}

export interface SplitOptions {
  headerRow?: number | undefined;
  headerTest?: HeaderTest | undefined;
  /** For messages. */
  file?: string;
  /** Spreadsheets: a row shorter than the header is padded with empty cells (omitted cells are empty). */
  pad?: boolean;
}

/**
 * Finds the header and numbers the data records after it. The header is the row `headerRow`
 * names, else the first non-blank record, unless it fails `headerTest` and one of the first
 * HEADER_SEARCH_ROWS records passes it (a report's title block above the header). Undefined
 * when there is no non-blank record at all (an empty file or sheet).
 */
export async function splitHeader(
  source: AsyncGenerator<LineRecord[]>,
  options: SplitOptions = {},
): Promise<HeaderAndRecords | undefined> {
  const head: LineRecord[] = [];
  let ended = false;
  // A fault in the first rows is thrown after the good records before it, as further down.
  let failure: { error: unknown } | undefined;
  const pull = async () => {
    try {
      const next = await source.next();
      if (next.done) ended = true;
      else head.push(...next.value);
    } catch (error) {
      failure = { error };
      ended = true;
    }
  };
  const fail = () => {
    if (failure !== undefined) throw failure.error;
  };
  let at: number;
  let place: HeaderPlace['source'] = 'first';
  if (options.headerRow !== undefined) {
    const wanted = options.headerRow;
    while (!ended && !head.some((record) => record.line >= wanted)) await pull();
    at = head.findIndex((record) => record.line === wanted);
    if (at === -1 || isBlank(head[at]!.values)) {
      fail();
      const file = options.file ?? 'the input';
      // A CSV reader skips blank lines: a record after the wanted line shows it is one.
      const blank = at !== -1 || head.some((record) => record.line > wanted);
      const what = blank ? `row ${wanted} is blank` : `there is no row ${wanted}`;
      throw new InputError(`${shownPath(file)}: --header-row ${wanted}: ${what}`, 'header_row', { file, line: wanted });
    }
    place = 'option';
  } else {
    while (!ended && head.length < HEADER_SEARCH_ROWS) await pull();
    at = head.findIndex((record) => !isBlank(record.values));
    while (at === -1 && !ended) {
      await pull();
      at = head.findIndex((record) => !isBlank(record.values));
    }
    if (at === -1) {
      fail();
      return undefined;
    }
    const test = options.headerTest;
    if (test !== undefined) {
      const found = headerBelow(test, head, at);
      if (found !== -1) {
        at = found;
        place = 'found';
      }
    }
  }
  const header = head[at]!;
  const headers = shapeHeaders(header.values);
  const skipped = head.slice(0, at).flatMap((record) => (isBlank(record.values) ? [] : [record.line]));
  const rest = head.slice(at + 1);
  return {
    headers,
    header: { line: header.line, skipped, source: place },
    batches: numberRecords(rest, source, { width: headers.length, pad: options.pad === true, failure }),
  };
}

/**
 * The header below the first non-blank row (`first`), when that row is not it: the first of
 * the next rows within HEADER_SEARCH_ROWS that holds every required column, else the one that
 * holds the most of them (at least two, and more than `first`), so that a title above
 * headers in another language still names the real header row in the missing-columns error.
 * -1: `first` it is.
 */
function headerBelow(test: HeaderTest, head: readonly LineRecord[], first: number): number {
  const required = test.required.length;
  let best = first;
  let most = Math.max(1, matched(test, head[first]!.values));
  if (most === required) return -1;
  for (let i = first + 1; i < Math.min(head.length, HEADER_SEARCH_ROWS); i++) {
    const count = matched(test, head[i]!.values);
    if (count === required) return i;
    if (count > most) [best, most] = [i, count];
  }
  return best === first ? -1 : best;
}

/** How many of the required columns a row's values name. */
function matched(test: HeaderTest, values: readonly string[]): number {
  const names = new Set(values.map(foldHeader));
  return test.required.filter((group) => group.some((name) => names.has(name))).length;
}

async function* numberRecords(
  first: LineRecord[],
  source: AsyncGenerator<LineRecord[]>,
  { width, pad, failure }: { width: number; pad: boolean; failure: { error: unknown } | undefined },
): AsyncGenerator<RawRecord[]> {
  let row = 0;
  const number = (records: LineRecord[]) => {
    const numbered: RawRecord[] = [];
    for (const { values, line, invalidBytes } of records) {
      if (isBlank(values)) continue;
      if (pad) while (values.length < width) values.push('');
      const record: RawRecord = { row: ++row, line, values: trimToWidth(values, width) };
      if (invalidBytes !== undefined) record.invalidBytes = invalidBytes;
      numbered.push(record);
    }
    return numbered;
  };
  try {
    const head = number(first);
    if (head.length > 0) yield head;
    if (failure !== undefined) throw failure.error;
    for (;;) {
      const next = await source.next();
      if (next.done) return;
      const batch = number(next.value);
      if (batch.length > 0) yield batch;
    }
  } finally {
    // The consumer stopped early (break, error): let the source release the file.
    await source.return(undefined);
  }
}
