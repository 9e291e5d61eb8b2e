import { parse } from 'csv-parse';
import { InputError } from '../../errors.js';
import { lineBreaks } from './decode-chunks.js';
import { explainCsvError } from './explain-csv-error.js';
import type { InvalidByteQueue } from './invalid-bytes.js';
import type { LineRecord } from './types.js';

export interface ParseOptions {
  file: string;
  delimiter: string;
  fromLine: number;
  maxRecordSize: number;
  isClosed: () => boolean;
  /** Invalid UTF-8 the decoder replaced, by line: each lands on the record holding it. */
  invalid: InvalidByteQueue;
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

function parserCore(options: ParseOptions): ParserCore {
  return coreOf(
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
      max_record_size: options.maxRecordSize,
    }),
  );
}

/**
 * Collects the parser's records into a batch, each with the line it starts on. Lines are
 * counted here: csv-parse counts a CRLF inside quotes as two lines. Its count says when a
 * record spans lines (then its values are counted) and, through `drift`, places its own
 * errors. Blank lines it skipped since the last record come first.
 */
class RecordBatch {
  records: LineRecord[] = [];
  #nextLine: number;
  #parserLine: number;
  #blankLines = 0;
  #drift = 0;

  constructor(
    private readonly core: ParserCore,
    private readonly options: ParseOptions,
  ) {
    this.#nextLine = options.fromLine;
    this.#parserLine = options.fromLine - 1;
  }

  readonly push = (values: string[]): void => {
    this.#skipBlankLines();
    const line = this.#nextLine;
    const spans = this.core.info.lines - this.#parserLine > 1;
    this.#parserLine = this.core.info.lines;
    let lastLine = line;
    if (spans) for (const value of values) lastLine += lineBreaks(value);
    this.#nextLine = lastLine + 1;
    this.#drift = this.#parserLine - lastLine;
    const { invalid } = this.options;
    const invalidBytes = invalid.size === 0 ? undefined : invalid.take(line, lastLine, values);
    this.records.push(invalidBytes === undefined ? { values, line } : { values, line, invalidBytes });
  };

  take(): LineRecord[] {
    const taken = this.records;
    this.records = [];
    return taken;
  }

  explain(error: unknown): Error {
    this.#skipBlankLines();
    const { file, maxRecordSize } = this.options;
    return explainCsvError(error, { file, recordLine: this.#nextLine, drift: this.#drift, maxRecordSize });
  }

  #skipBlankLines(): void {
    const skipped = this.core.info.empty_lines - this.#blankLines;
    this.#blankLines += skipped;
    this.#nextLine += skipped;
    this.#parserLine += skipped;
  }
}

const noop = () => {};

/**
 * Streams records, a chunk's worth at a time, each with the line it starts on. On a parse
 * error the good records before it are yielded first. One chunk is in flight at a time, so
 * reading advances at the consumer's pace.
 */
export async function* parseRecords(chunks: AsyncGenerator<Buffer>, options: ParseOptions): AsyncGenerator<LineRecord[]> {
  const core = parserCore(options);
  const batch = new RecordBatch(core, options);
  let parseFailed = false;
  let endsWithBreak = true;
  try {
    for await (const chunk of chunks) {
      const error = core.parse(chunk, false, batch.push, noop);
      const lastByte = chunk[chunk.length - 1];
      endsWithBreak = lastByte === 10 || lastByte === 13;
      if (batch.records.length > 0) yield batch.take();
      if (error) {
        parseFailed = true;
        throw batch.explain(error);
      }
    }
    const error = core.parse(undefined, true, batch.push, noop);
    if (batch.records.length > 0) yield batch.take();
    if (error) {
      parseFailed = true;
      throw batch.explain(error);
    }
  } catch (error) {
    // Closing the file mid-read surfaces as a premature-close error: not the user's problem.
    if (options.isClosed()) return;
    if (error instanceof InputError && !parseFailed) {
      const released = releaseBeforeFault(core, batch, endsWithBreak);
      if (released.length > 0) yield released;
    }
    throw batch.explain(error);
  } finally {
    await chunks.return(undefined);
  }
}

/**
 * The bytes stopped being text (NUL, a bad byte). csv-parse still holds the end of the input
 * so far, waiting for more, and with it the last good records: ending the parse releases
 * them. When the input so far stops inside the broken line (it began in an earlier chunk), a
 * line end is added to release them too, and the broken line's partial record is dropped
 * again. An unclosed quote there is the broken record's: nothing more.
 */
function releaseBeforeFault(core: ParserCore, batch: RecordBatch, endsWithBreak: boolean): LineRecord[] {
  const closing = endsWithBreak ? undefined : core.parse(Buffer.from('\n'), false, batch.push, noop);
  const ended = closing ?? core.parse(undefined, true, batch.push, noop);
  if (!endsWithBreak && ended === undefined) batch.records.pop();
  return batch.take();
}
