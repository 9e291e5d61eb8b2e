/**
 * The row readers: a CSV, .xlsx, .ods or .xls file in, headers and raw records out, streamed. Decoding,
 * delimiter sniffing and every "this is not a usable file" decision live here, so the
 * importer only ever sees strings and InputErrors that name a file and a line.
 */
import { availableParallelism } from 'node:os';
import { inspectFile } from './inspect-file.js';
import { openCsv } from './read-csv.js';
import { openInThread } from './reader-thread.js';
import { type RawRecord, type ReadOptions, type RowSource, THREAD_MIN_BYTES, THREAD_MIN_XLSX_BYTES } from './types.js';

export type { HeaderTest, InvalidCell, RawRecord, ReadOptions, RowSource, SourceInfo } from './types.js';
export { DEFAULT_MAX_RECORD_SIZE, describeEncoding, positionWord } from './types.js';
export { createDecoder, type TextDecoderLike } from './decode-text.js';
export { openObjectRows, type RowsInput } from './object-rows.js';
export { type Peeked, peekRows } from './peek-rows.js';

/**
 * Opens `file` and reads its header row. Throws InputError (exit 2) before any row when the
 * file is missing, empty, not a spreadsheet we read, or starts with binary data; later
 * faults are thrown by `records` once the good records before them have been yielded.
 */
export async function openRows(file: string, options: ReadOptions = {}): Promise<RowSource> {
  const inspected = await inspectFile(file);
  if (inspected.format === 'csv' || inspected.format === 'xlsx') {
    const thread = options.thread ?? 'never';
    const least = inspected.format === 'csv' ? THREAD_MIN_BYTES : THREAD_MIN_XLSX_BYTES;
    const large = inspected.sizeBytes >= least && availableParallelism() > 1;
    if (thread === 'always' || (thread === 'large' && large)) {
      const source = await openInThread(inspected, options);
      return inspected.format === 'csv' ? countInvalidBytes(source) : source;
    }
  }
  if (inspected.format === 'csv') return countInvalidBytes(await openCsv(inspected, options));
  // The spreadsheet readers' libraries are loaded only for spreadsheets.
  if (inspected.format === 'xlsx') {
    const { openXlsx } = await import('./read-xlsx.js');
    return openXlsx(inspected, options);
  }
  if (inspected.format === 'ods') {
    const { openOds } = await import('./read-ods.js');
    return openOds(inspected, options);
  }
  const { openWorkbook } = await import('./read-workbook.js');
  return openWorkbook({ ...inspected, format: 'xls' }, options);
}

/** Keeps `info.rowsWithInvalidBytes` up to date as the rows are read, on whichever thread. */
function countInvalidBytes(source: RowSource): RowSource {
  const { info } = source;
  async function* counted(): AsyncGenerator<RawRecord[]> {
    for await (const batch of source.batches) {
      for (const record of batch) {
        if (record.invalidBytes !== undefined) info.rowsWithInvalidBytes = (info.rowsWithInvalidBytes ?? 0) + 1;
      }
      yield batch;
    }
  }
  return { ...source, batches: counted() };
}
