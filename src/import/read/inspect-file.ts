import { open, stat } from 'node:fs/promises';
import { extname } from 'node:path';
import { InputError } from '../../errors.js';
import { shownPath } from '../../infra/printable.js';
import type { SourceFormat } from './types.js';

/** Enough to sniff a delimiter and an encoding; sniffing never reads further. */
export const SAMPLE_BYTES = 64 * 1024;

export interface InspectedFile {
  file: string;
  format: SourceFormat;
  sizeBytes: number;
  /**
   * The first SAMPLE_BYTES of the file (fewer when the file is smaller). A Uint8Array: that
   * is what it is again after crossing to the reader thread.
   */
  sample: Uint8Array;
  /** The sample is the whole file. */
  complete: boolean;
}

const SAVE_AS = 'save it as .xlsx or .csv (File › Save As) and import that';
// Workbook formats not read: refused with a way out.
const UNSUPPORTED: Record<string, string> = {
  '.xlsb': 'an Excel binary workbook (.xlsb)',
  '.numbers': 'an Apple Numbers document (.numbers)',
};
const XLSX_EXTENSIONS = new Set(['.xlsx', '.xlsm']);

const startsWith = (sample: Uint8Array, magic: readonly number[]) =>
  magic.every((byte, i) => sample[i] === byte);
const ZIP = [0x50, 0x4b, 0x03, 0x04];
const EMPTY_ZIP = [0x50, 0x4b, 0x05, 0x06];
const OLE = [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1];
const GZIP = [0x1f, 0x8b];
const ODS_MIMETYPE = /^mimetype[^]{0,40}?application\/vnd\.oasis\.opendocument\.spreadsheet/;

/** Tells CSV from the spreadsheet formats, by magic bytes and extension, and samples the file. */
export async function inspectFile(file: string): Promise<InspectedFile> {
  const stats = await stat(file).catch((error: unknown) => {
    throw fileError(file, error);
  });
  // Before the directory check: a .numbers document can be a macOS bundle (a directory).
  const extension = extname(file).toLowerCase();
  const unsupported = UNSUPPORTED[extension];
  if (unsupported) throw new InputError(`${shownPath(file)} is ${unsupported}: ${SAVE_AS}`, 'input_format', { file });
  if (stats.isDirectory())
    throw new InputError(`${shownPath(file)} is a directory, not a file`, 'input_not_file', { file });
  if (!stats.isFile()) throw new InputError(`${shownPath(file)} is not a regular file`, 'input_not_file', { file });
  if (stats.size === 0) throw new InputError(`${shownPath(file)} is empty`, 'input_empty', { file });

  const sample = await readSample(file, Math.min(stats.size, SAMPLE_BYTES));
  const isZip = startsWith(sample, ZIP) || startsWith(sample, EMPTY_ZIP);
  const found = (format: SourceFormat): InspectedFile => ({
    file,
    format,
    sizeBytes: stats.size,
    sample,
    complete: sample.length === stats.size,
  });
  // OpenDocument stores its type first, uncompressed: the content says .ods whatever the name.
  const odsType = ODS_MIMETYPE.test(Buffer.from(sample.subarray(30, 140)).toString('latin1'));
  if (isZip && (odsType || extension === '.ods')) return found('ods');
  if (extension === '.ods') {
    throw new InputError(`${shownPath(file)} is not an OpenDocument spreadsheet (no .ods signature)`, 'input_format', { file });
  }
  // An .xlsx saved under an .xls name (as some web exports do) is read as what it is.
  if (isZip && extension === '.xls') return found('xlsx');
  // An .xls, or an .xlsx saved with a password (an OLE container holding the encrypted workbook).
  if (startsWith(sample, OLE) || extension === '.xls') return found('xls');
  if (XLSX_EXTENSIONS.has(extension)) {
    if (!isZip) {
      throw new InputError(
        `${shownPath(file)} is not an .xlsx workbook (no zip signature): if it is a CSV file renamed, give it a .csv extension`,
        'input_format',
        { file },
      );
    }
    return found('xlsx');
  }
  if (isZip) {
    throw new InputError(
      `${shownPath(file)} is a zip archive, not a CSV file: if it is an Excel workbook give it the .xlsx extension, otherwise ${SAVE_AS}`,
      'input_format',
      { file },
    );
  }
  if (startsWith(sample, GZIP)) {
    throw new InputError(`${shownPath(file)} is gzip-compressed: decompress it first`, 'input_format', { file });
  }
  return found('csv');
}

async function readSample(file: string, length: number): Promise<Buffer> {
  const handle = await open(file, 'r').catch((error: unknown) => {
    throw fileError(file, error);
  });
  try {
    const buffer = Buffer.alloc(length);
    let filled = 0;
    while (filled < length) {
      const { bytesRead } = await handle.read(buffer, filled, length - filled, filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    return buffer.subarray(0, filled);
  } finally {
    await handle.close();
  }
}

export function fileError(file: string, error: unknown): InputError {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENOENT')
    return new InputError(`${shownPath(file)}: no such file`, 'input_missing', { file, cause: error });
  if (code === 'EACCES' || code === 'EPERM') {
    return new InputError(`${shownPath(file)}: permission denied`, 'input_unreadable', { file, cause: error });
  }
  if (code === 'EISDIR')
    return new InputError(`${shownPath(file)} is a directory, not a file`, 'input_not_file', { file });
  const reason = error instanceof Error ? error.message : String(error);
  return new InputError(`${shownPath(file)}: cannot read the file: ${reason}`, 'input_unreadable', {
    file,
    cause: error,
  });
}
