import { open, stat } from 'node:fs/promises';
import { extname } from 'node:path';
import { InputError } from '../../errors.js';

/** Enough to sniff a delimiter and an encoding; sniffing never reads further. */
export const SAMPLE_BYTES = 64 * 1024;

export interface InspectedFile {
  file: string;
  format: 'csv' | 'xlsx';
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
// Workbook formats with no maintained streaming reader: refused with a way out.
const UNSUPPORTED: Record<string, string> = {
  '.xls': 'an Excel 97–2003 workbook (.xls)',
  '.xlsb': 'an Excel binary workbook (.xlsb)',
  '.ods': 'an OpenDocument spreadsheet (.ods)',
  '.numbers': 'an Apple Numbers document (.numbers)',
};
const XLSX_EXTENSIONS = new Set(['.xlsx', '.xlsm']);

const startsWith = (sample: Uint8Array, magic: readonly number[]) =>
  magic.every((byte, i) => sample[i] === byte);
const ZIP = [0x50, 0x4b, 0x03, 0x04];
const EMPTY_ZIP = [0x50, 0x4b, 0x05, 0x06];
const OLE = [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1];
const GZIP = [0x1f, 0x8b];

/** Checks the file can be read as CSV or xlsx, by extension and magic bytes, and samples it. */
export async function inspectFile(file: string): Promise<InspectedFile> {
  const stats = await stat(file).catch((error: unknown) => {
    throw fileError(file, error);
  });
  // Before the directory check: a .numbers document can be a macOS bundle (a directory).
  const extension = extname(file).toLowerCase();
  const unsupported = UNSUPPORTED[extension];
  if (unsupported) throw new InputError(`${file} is ${unsupported}: ${SAVE_AS}`, 'input_format', { file });
  if (stats.isDirectory())
    throw new InputError(`${file} is a directory, not a file`, 'input_not_file', { file });
  if (!stats.isFile()) throw new InputError(`${file} is not a regular file`, 'input_not_file', { file });
  if (stats.size === 0) throw new InputError(`${file} is empty`, 'input_empty', { file });

  const sample = await readSample(file, Math.min(stats.size, SAMPLE_BYTES));
  const isZip = startsWith(sample, ZIP) || startsWith(sample, EMPTY_ZIP);
  if (XLSX_EXTENSIONS.has(extension)) {
    if (!isZip) {
      throw new InputError(
        `${file} is not an .xlsx workbook (no zip signature): if it is a CSV file renamed, give it a .csv extension`,
        'input_format',
        { file },
      );
    }
    return { file, format: 'xlsx', sizeBytes: stats.size, sample, complete: sample.length === stats.size };
  }
  if (startsWith(sample, OLE)) {
    throw new InputError(
      `${file} is an Excel 97–2003 (.xls) or other legacy Office file: ${SAVE_AS}`,
      'input_format',
      {
        file,
      },
    );
  }
  if (isZip) {
    throw new InputError(
      `${file} is a zip archive, not a CSV file: if it is an Excel workbook give it the .xlsx extension, otherwise ${SAVE_AS}`,
      'input_format',
      { file },
    );
  }
  if (startsWith(sample, GZIP)) {
    throw new InputError(`${file} is gzip-compressed: decompress it first`, 'input_format', { file });
  }
  return { file, format: 'csv', sizeBytes: stats.size, sample, complete: sample.length === stats.size };
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
    return new InputError(`${file}: no such file`, 'input_missing', { file, cause: error });
  if (code === 'EACCES' || code === 'EPERM') {
    return new InputError(`${file}: permission denied`, 'input_unreadable', { file, cause: error });
  }
  if (code === 'EISDIR')
    return new InputError(`${file} is a directory, not a file`, 'input_not_file', { file });
  const reason = error instanceof Error ? error.message : String(error);
  return new InputError(`${file}: cannot read the file: ${reason}`, 'input_unreadable', {
    file,
    cause: error,
  });
}
