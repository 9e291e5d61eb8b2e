import { createReadStream } from 'node:fs';
import { parse } from 'csv-parse';
import { InputError } from '../../errors.js';
import { LineCounter, lineBreaks, utf8Chunks } from './decode-chunks.js';
import { decodeWindows1252 } from './decode-text.js';
import { detectEncoding } from './detect-encoding.js';
import { explainCsvError } from './explain-csv-error.js';
import type { InspectedFile } from './inspect-file.js';
import { splitHeader } from './shape-records.js';
import { chooseDelimiter } from './sniff-delimiter.js';
import type { LineRecord, ReadOptions, RowSource, SourceInfo } from './types.js';
import { DEFAULT_MAX_RECORD_SIZE } from './types.js';

/** Reads a CSV (or tab-separated "Unicode Text") file as a stream of records. */
export async function openCsv(inspected: InspectedFile, options: ReadOptions): Promise<RowSource> {
  const { file, sample, complete } = inspected;
  const maxRecordSize = options.maxRecordSize ?? DEFAULT_MAX_RECORD_SIZE;
  const encoding = detectEncoding(sample, options.encoding, complete);
  const sampleText = decodeSample(sample.subarray(encoding.bomLength), encoding.encoding, complete);
  if (complete && sampleText.trim() === '') throw new InputError(`${file} is empty`, 'input_empty', { file });
  refuseBinary(file, sampleText, encoding.source === 'option');
  const delimiter = chooseDelimiter(sampleText, options.delimiter, complete);

  const info: Omit<SourceInfo, 'header'> = {
    file,
    format: 'csv',
    encoding: encoding.encoding,
    encodingSource: encoding.source,
    delimiter: delimiter.delimiter,
    delimiterSource: delimiter.source,
    sizeBytes: inspected.sizeBytes,
  };
  const stream = createReadStream(file, { start: encoding.bomLength, highWaterMark: 64 * 1024 });
  let closed = false;
  const records = parseRecords(utf8Chunks(stream, encoding.encoding, file), {
    file,
    delimiter: delimiter.delimiter,
    fromLine: delimiter.sepLine ? 2 : 1,
    maxRecordSize,
    isClosed: () => closed,
  });
  const close = async () => {
    if (closed) return;
    closed = true;
    stream.destroy();
    await records.return(undefined);
  };
  try {
    const split = await splitHeader(records, { file, headerRow: options.headerRow, headerTest: options.headerTest });
    if (split === undefined) {
      throw new InputError(`${file} has no header row: it holds only blank lines`, 'input_empty', { file });
    }
    return {
      info: { ...info, header: split.header },
      headers: split.headers,
      batches: split.batches,
      bytesRead: () => encoding.bomLength + stream.bytesRead,
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

function decodeSample(bytes: Uint8Array, encoding: string, complete: boolean): string {
  if (encoding === 'windows-1252') return decodeWindows1252(bytes);
  // Lenient on purpose: the sample only guides sniffing; the stream decodes strictly.
  return new TextDecoder(encoding, { ignoreBOM: true }).decode(bytes, { stream: !complete });
}

// C0 controls never occur in text a spreadsheet writes, except tab, LF, CR, FF, ESC and VT
// (FileMaker's in-cell line break).
const CONTROL = /[\u0001-\u0008\u000e-\u001a\u001c-\u001f]/g;

/** Refuses, before any row is read, a file whose start is not text. */
function refuseBinary(file: string, text: string, encodingGiven: boolean): void {
  const nul = text.indexOf('\0');
  const controls = text.match(CONTROL)?.length ?? 0;
  if (nul === -1 && controls <= Math.max(8, text.length / 100)) return;
  const index = nul !== -1 ? nul : text.search(CONTROL);
  const lines = new LineCounter();
  const before = Buffer.from(text.slice(0, index));
  const line = lines.lineAt(before, before.length);
  const what = nul !== -1 ? 'contains NUL bytes' : 'contains binary control characters';
  // A UTF-16 file read with a forced 8-bit --encoding shows NULs too.
  const hint = encodingGiven ? ' (or is --encoding wrong for it?)' : '';
  throw new InputError(`${file}: ${what} (line ${line}): is this really a CSV file?${hint}`, 'input_binary', {
    file,
    line,
  });
}

interface ParseOptions {
  file: string;
  delimiter: string;
  fromLine: number;
  maxRecordSize: number;
  isClosed: () => boolean;
}

/**
 * csv-parse's parsing core, which its stream class wraps (`parser.api`, csv-parse 5 to 7):
 * bytes in, records out through a callback, errors returned. Driving it directly skips a
 * stream push and an info object per record (which `on_record` builds), a third of the
 * parsing cost. Pinned by the lockfile; `coreOf` fails loudly if a release moves it.
 */
interface ParserCore {
  parse(
    bytes: Buffer | undefined,
    end: boolean,
    push: (values: string[]) => void,
    close: () => void,
  ): Error | undefined;
  /**
   * `lines`: the line the parser is on; a CRLF inside quotes counts as two. `empty_lines`:
   * blank lines skipped so far.
   */
  info: { lines: number; empty_lines: number };
}

function coreOf(parser: object): ParserCore {
  const core = (parser as { api?: Partial<ParserCore> }).api;
  if (typeof core?.parse !== 'function' || typeof core.info?.lines !== 'number' || typeof core.info.empty_lines !== 'number') {
    throw new Error('this csv-parse release has no parser core at .api; reinstall with npm ci');
  }
  return core as ParserCore;
}

/**
 * Streams records, a chunk's worth at a time, each with the line it starts on. On a parse
 * error the good records before it are yielded first. One chunk is in flight at a time, so
 * reading advances at the consumer's pace.
 */
async function* parseRecords(
  chunks: AsyncGenerator<Buffer>,
  options: ParseOptions,
): AsyncGenerator<LineRecord[]> {
  const { file, maxRecordSize } = options;
  const core = coreOf(
    parse({
      delimiter: options.delimiter,
      quote: '"',
      escape: '"',
      // Ragged rows are the importer's to report, row by row.
      relax_column_count: true,
      // Strict quotes catch an unbalanced quote near where it opened instead of silently
      // merging the following lines into one field.
      relax_quotes: false,
      // Skipped before the column-count check, which builds an error per ragged record (a
      // million blank lines took a minute); `info.empty_lines` keeps the line count right.
      skip_empty_lines: true,
      // Mixed endings happen (a CRLF file edited on a Mac); CRLF must be tried before CR.
      record_delimiter: ['\r\n', '\n', '\r'],
      from_line: options.fromLine,
      max_record_size: maxRecordSize,
    }),
  );
  // Lines are counted here: csv-parse counts a CRLF inside quotes as two lines. Its count
  // says when a record spans lines (then its values are counted) and, through `drift`,
  // places its own errors. Blank lines it skipped since the last record come first.
  let nextLine = options.fromLine;
  let parserLine = options.fromLine - 1;
  let blankLines = 0;
  let drift = 0;
  let batch: LineRecord[] = [];
  const skipBlankLines = () => {
    const skipped = core.info.empty_lines - blankLines;
    blankLines += skipped;
    nextLine += skipped;
    parserLine += skipped;
  };
  const push = (values: string[]) => {
    skipBlankLines();
    const line = nextLine;
    const spans = core.info.lines - parserLine > 1;
    parserLine = core.info.lines;
    let lastLine = line;
    if (spans) for (const value of values) lastLine += lineBreaks(value);
    nextLine = lastLine + 1;
    drift = parserLine - lastLine;
    batch.push({ values, line });
  };
  const take = () => {
    const taken = batch;
    batch = [];
    return taken;
  };
  const explain = (error: unknown) => {
    skipBlankLines();
    return explainCsvError(error, { file, recordLine: nextLine, drift, maxRecordSize });
  };
  const noop = () => {};
  let parseFailed = false;
  let endsWithBreak = true;
  try {
    for await (const chunk of chunks) {
      const error = core.parse(chunk, false, push, noop);
      const lastByte = chunk[chunk.length - 1];
      endsWithBreak = lastByte === 10 || lastByte === 13;
      if (batch.length > 0) yield take();
      if (error) {
        parseFailed = true;
        throw explain(error);
      }
    }
    const error = core.parse(undefined, true, push, noop);
    if (batch.length > 0) yield take();
    if (error) {
      parseFailed = true;
      throw explain(error);
    }
  } catch (error) {
    // Closing the file mid-read surfaces as a premature-close error: not the user's problem.
    if (options.isClosed()) return;
    if (error instanceof InputError && !parseFailed) {
      // The bytes stopped being text (NUL, a bad byte). csv-parse still holds the end of the
      // input so far, waiting for more, and with it the last good records: ending the parse
      // releases them. When the input so far stops inside the broken line (it began in an
      // earlier chunk), a line end is added to release them too, and the broken line's partial
      // record is dropped again. An unclosed quote there is the broken record's: nothing more.
      const closing = endsWithBreak ? undefined : core.parse(Buffer.from('\n'), false, push, noop);
      const ended = closing ?? core.parse(undefined, true, push, noop);
      if (!endsWithBreak && ended === undefined) batch.pop();
      if (batch.length > 0) yield take();
    }
    throw explain(error);
  } finally {
    await chunks.return(undefined);
  }
}
