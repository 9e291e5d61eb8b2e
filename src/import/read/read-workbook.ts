/**
 * Reads one sheet of an .ods or .xls (BIFF5/BIFF8, and the HTML or XML files older programs
 * save as .xls) with SheetJS. These formats are read whole, so the file's size is bounded.
 */
import { readFile } from 'node:fs/promises';
import { InputError } from '../../errors.js';
import { formatBytes } from './explain-csv-error.js';
import { cellText, isoDate } from './cell-text.js';
import type { InspectedFile } from './inspect-file.js';
import { noSheet } from './read-xlsx.js';
import { splitHeader } from './shape-records.js';
import { targetSheet } from './sheet-choice.js';
import type { LineRecord, ReadOptions, RowSource } from './types.js';
import { openZip, readText } from './zip-archive.js';

/**
 * Whole-file formats: SheetJS holds the workbook as objects, ~30× the file's size for an .xls
 * (BIFF8 has at most 65,536 rows a sheet) and more for a compressed .ods: this keeps the peak
 * under ~1 GB. Larger files are refused with the way out (.xlsx and .csv stream).
 */
export const WHOLE_FILE_LIMITS: Record<'ods' | 'xls', number> = {
  xls: 32 * 1024 * 1024,
  ods: 8 * 1024 * 1024,
};

const PROTECTED = 'the workbook is password-protected: save an unprotected copy';
const BATCH = 1000;

interface SheetjsCell {
  t: 'b' | 'n' | 'e' | 's' | 'd' | 'z';
  v?: unknown;
  w?: string;
  z?: unknown;
}

export async function openWorkbook(inspected: InspectedFile & { format: 'ods' | 'xls' }, options: ReadOptions): Promise<RowSource> {
  const { file, format, sizeBytes } = inspected;
  const limit = WHOLE_FILE_LIMITS[format];
  if (sizeBytes > limit) {
    throw new InputError(
      `${file} is ${formatBytes(sizeBytes)}: .${format} files are read whole, up to ${formatBytes(limit)}; ` +
        'save it as .xlsx or .csv (File › Save As), which are read as a stream, and import that',
      'input_too_large',
      { file },
    );
  }
  const XLSX = await import('@e965/xlsx');
  // BIFF5 (Excel 95) text is in the workbook's code page: SheetJS needs the tables to decode it.
  XLSX.set_cptable(await import('@e965/xlsx/dist/cpexcel.full.mjs'));
  const bytes = await readFile(file);
  if (isEncryptedOoxml(XLSX, bytes) || (format === 'ods' && (await isEncryptedOds(file)))) {
    throw new InputError(`${file}: ${PROTECTED}`, 'input_protected', { file });
  }
  let workbook: import('@e965/xlsx').WorkBook;
  try {
    workbook = quietly(() =>
      XLSX.read(bytes, { type: 'buffer', dense: true, cellNF: true, cellDates: false, cellFormula: false, cellHTML: false, cellText: false }),
    );
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    if (/password-protected/i.test(reason)) throw new InputError(`${file}: ${PROTECTED}`, 'input_protected', { file });
    throw new InputError(`${file}: cannot read the workbook (${reason}): is it a valid .${format} file?`, 'input_xlsx', {
      file,
      cause: error,
    });
  }
  const names = workbook.SheetNames;
  if (names.length === 0) throw new InputError(`${file}: the workbook has no sheets`, 'input_empty', { file });
  const name = targetSheet(options.sheet, names);
  if (name === undefined) throw noSheet(file, options.sheet ?? '', names);
  const sheet = workbook.Sheets[name]!;
  const date1904 = workbook.Workbook?.WBProps?.date1904 === true;
  const dense = (sheet as { '!data'?: (SheetjsCell | undefined)[][] })['!data'] ?? [];
  const records = sheetRecords(dense, date1904);
  const split = await splitHeader(records, { file, headerRow: options.headerRow, headerTest: options.headerTest, pad: true });
  if (split === undefined) throw new InputError(`${file}: sheet "${name}" is empty`, 'input_empty', { file });
  let read = 0;
  return {
    info: {
      file,
      format,
      encoding: 'utf-8',
      encodingSource: 'default',
      delimiter: ',',
      delimiterSource: 'default',
      sheet: name,
      sizeBytes,
      header: split.header,
    },
    headers: split.headers,
    batches: (async function* () {
      for await (const batch of split.batches) {
        read = batch[batch.length - 1]!.line;
        yield batch;
      }
      // The sheet's last row reached (blank rows after the data yield no batch).
      read = dense.length;
    })(),
    bytesRead: () => (dense.length === 0 ? sizeBytes : Math.round((read / dense.length) * sizeBytes)),
    close: async () => {
      await split.batches.return(undefined);
    },
  };
}

/**
 * Runs SheetJS with the console silenced. It prints its own diagnostics there (LibreOffice's
 * conditional number formats give one "ODS number format may be incorrect" line per style),
 * which would reach the user's terminal between ccs-bulk's lines; the values it reads are not
 * affected. The read is synchronous: nothing else of ours runs while the console is quiet.
 */
function quietly<T>(read: () => T): T {
  const { error, warn, log } = console;
  console.error = console.warn = console.log = () => {};
  try {
    return read();
  } finally {
    Object.assign(console, { error, warn, log });
  }
}

/** An OOXML workbook saved with a password is an OLE container holding the encrypted package. */
function isEncryptedOoxml(XLSX: typeof import('@e965/xlsx'), bytes: Buffer): boolean {
  if (bytes.readUInt32BE(0) !== 0xd0cf11e0) return false;
  try {
    const container = XLSX.CFB.read(bytes, { type: 'buffer' });
    return XLSX.CFB.find(container, 'EncryptedPackage') !== null || XLSX.CFB.find(container, 'EncryptionInfo') !== null;
  } catch {
    return false;
  }
}

/** An .ods saved with a password keeps its zip, and its manifest names how each part is encrypted. */
async function isEncryptedOds(file: string): Promise<boolean> {
  const zip = await openZip(file).catch(() => undefined);
  if (zip === undefined) return false;
  try {
    const manifest = zip.entry('META-INF/manifest.xml');
    return manifest !== undefined && /encryption-data/.test(await readText(zip, manifest));
  } finally {
    zip.close();
  }
}

async function* sheetRecords(rows: (SheetjsCell | undefined)[][], date1904: boolean): AsyncGenerator<LineRecord[]> {
  let batch: LineRecord[] = [];
  for (let r = 0; r < rows.length; r++) {
    const cells = rows[r];
    if (cells === undefined) continue;
    const values: string[] = [];
    for (let c = 0; c < cells.length; c++) values.push(text(cells[c], date1904));
    batch.push({ values, line: r + 1 });
    if (batch.length === BATCH) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}

function text(cell: SheetjsCell | undefined, date1904: boolean): string {
  if (cell === undefined) return '';
  const format = typeof cell.z === 'string' ? cell.z : undefined;
  switch (cell.t) {
    case 's':
      return typeof cell.v === 'string' ? cell.v : '';
    case 'n':
      return typeof cell.v === 'number' ? cellText(cell.v, format, date1904) : '';
    case 'b':
      return cell.v === true ? 'TRUE' : 'FALSE';
    case 'e':
      return cell.w ?? '';
    case 'd':
      return cell.v instanceof Date ? isoDate(cell.v) : String(cell.v ?? '');
    default:
      return '';
  }
}
