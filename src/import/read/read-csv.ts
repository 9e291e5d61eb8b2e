import { createReadStream } from 'node:fs';
import { InputError } from '../../errors.js';
import { shownPath } from '../../infra/printable.js';
import { LineCounter, utf8Chunks } from './decode-chunks.js';
import { decodeWindows1252 } from './decode-text.js';
import { detectEncoding, settleEncoding } from './detect-encoding.js';
import type { InspectedFile } from './inspect-file.js';
import { InvalidByteQueue } from './invalid-bytes.js';
import { parseRecords } from './parse-records.js';
import { splitHeader } from './shape-records.js';
import { chooseDelimiter } from './sniff-delimiter.js';
import type { ReadOptions, RowSource, SourceInfo } from './types.js';
import { DEFAULT_MAX_RECORD_SIZE } from './types.js';

/** Reads a CSV (or tab-separated "Unicode Text") file as a stream of records. */
export async function openCsv(inspected: InspectedFile, options: ReadOptions): Promise<RowSource> {
  const { file, sample, complete } = inspected;
  const maxRecordSize = options.maxRecordSize ?? DEFAULT_MAX_RECORD_SIZE;
  const detected = detectEncoding(sample, options.encoding, complete);
  let sampleText = decodeSample(sample.subarray(detected.bomLength), detected.encoding, complete);
  if (complete && sampleText.trim() === '') throw new InputError(`${shownPath(file)} is empty`, 'input_empty', { file });
  refuseBinary(file, sampleText, detected.source === 'option');
  // After the binary check: a file that is not text is not read through.
  const encoding = await settleEncoding(file, detected, sample.length);
  if (encoding.encoding !== detected.encoding) sampleText = decodeSample(sample, encoding.encoding, complete);
  const delimiter = chooseDelimiter(sampleText, options.delimiter, complete);

  const info: Omit<SourceInfo, 'header'> = {
    file,
    format: 'csv',
    encoding: encoding.encoding,
    encodingSource: encoding.source,
    ...(encoding.reason !== undefined && { encodingReason: encoding.reason }),
    delimiter: delimiter.delimiter,
    delimiterSource: delimiter.source,
    sizeBytes: inspected.sizeBytes,
  };
  const stream = createReadStream(file, { start: encoding.bomLength, highWaterMark: 64 * 1024 });
  let closed = false;
  const invalid = new InvalidByteQueue();
  const records = parseRecords(utf8Chunks(stream, encoding.encoding, file, invalid), {
    file,
    invalid,
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
      throw new InputError(`${shownPath(file)} has no header row: it holds only blank lines`, 'input_empty', { file });
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
  throw new InputError(`${shownPath(file)}: ${what} (line ${line}): is this really a CSV file?${hint}`, 'input_binary', {
    file,
    line,
  });
}
