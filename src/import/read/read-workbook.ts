/**
 * Reads one sheet of an .xls (BIFF2–BIFF8, and the HTML, XML or text files older programs save
 * as .xls) with SheetJS. It reads the file whole, so the file's size is bounded, and it is
 * handed only what xls-source.ts has made safe: counted, checked records.
 */
import { readFile } from 'node:fs/promises';
import { InputError } from '../../errors.js';
import { printable, shownPath } from '../../infra/printable.js';
import { formatBytes } from './explain-csv-error.js';
import { cellText, isoDate } from './cell-text.js';
import type { InspectedFile } from './inspect-file.js';
import { noSheet } from './read-xlsx.js';
import { splitHeader } from './shape-records.js';
import { targetSheet } from './sheet-choice.js';
import type { LineRecord, ReadOptions, RowSource } from './types.js';
import { PROTECTED, xlsSource } from './xls-source.js';
import { MAX_COLUMNS, MAX_ROWS } from './xlsx-sheet.js';

/**
 * Whole-file formats: SheetJS holds the workbook as objects, ~30× the file's size for an .xls
 * (BIFF8 has at most 65,536 rows a sheet): this keeps the peak under ~1 GB, with the cells
 * counted before (xls-source.ts). Larger files are refused with the way out (.xlsx, .ods and
 * .csv stream).
 */
export const WHOLE_FILE_LIMITS: Record<'xls', number> = {
  xls: 32 * 1024 * 1024,
};

const BATCH = 1000;

interface SheetjsCell {
  t: 'b' | 'n' | 'e' | 's' | 'd' | 'z';
  v?: unknown;
  w?: string;
  z?: unknown;
}

export async function openWorkbook(inspected: InspectedFile & { format: 'xls' }, options: ReadOptions): Promise<RowSource> {
  const { file, format, sizeBytes } = inspected;
  const limit = WHOLE_FILE_LIMITS[format];
  if (sizeBytes > limit) {
    throw new InputError(
      `${shownPath(file)} is ${formatBytes(sizeBytes)}: .${format} files are read whole, up to ${formatBytes(limit)}; ` +
        'save it as .xlsx or .csv (File › Save As), which are read as a stream, and import that',
      'input_too_large',
      { file },
    );
  }
  // Checked before SheetJS is loaded: a file refused costs no more than its reading.
  const bytes = xlsSource(await readFile(file), file);
  const XLSX = await import('@e965/xlsx');
  // BIFF5 (Excel 95) text is in the workbook's code page: SheetJS needs the tables to decode it.
  XLSX.set_cptable(await import('@e965/xlsx/dist/cpexcel.full.mjs'));
  let workbook: import('@e965/xlsx').WorkBook;
  try {
    workbook = quietly(() =>
      XLSX.read(bytes, { type: 'buffer', dense: true, cellNF: true, cellDates: false, cellFormula: false, cellHTML: false, cellText: false }),
    );
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    if (/password-protected/i.test(reason)) throw new InputError(`${shownPath(file)}: ${PROTECTED}`, 'input_protected', { file });
    throw new InputError(`${shownPath(file)}: cannot read the workbook (${reason}): is it a valid .${format} file?`, 'input_xlsx', {
      file,
      cause: error,
    });
  }
  const names = workbook.SheetNames;
  if (names.length === 0) throw new InputError(`${shownPath(file)}: the workbook has no sheets`, 'input_empty', { file });
  const name = targetSheet(options.sheet, names);
  if (name === undefined) throw noSheet(file, options.sheet ?? '', names);
  // A damaged workbook can name a sheet SheetJS found no records for: an empty one.
  const sheet = workbook.Sheets[name] ?? {};
  const date1904 = workbook.Workbook?.WBProps?.date1904 === true;
  const dense = (sheet as { '!data'?: (SheetjsCell | undefined)[][] })['!data'] ?? [];
  checkGrid(dense, file, name);
  const records = sheetRecords(dense, date1904);
  const split = await splitHeader(records, { file, headerRow: options.headerRow, headerTest: options.headerTest, pad: true });
  if (split === undefined) throw new InputError(`${shownPath(file)}: sheet "${name}" is empty`, 'input_empty', { file });
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
 * Runs SheetJS with the console silenced. It prints its own diagnostics there (a line per
 * record type it does not know, per number format it cannot map), which would reach the
 * user's terminal between ccs-bulk's lines; the values it reads are not affected. The read is
 * synchronous: nothing else of ours runs while the console is quiet.
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

/**
 * Cells SheetJS placed past a sheet's grid (an HTML colspan, an XML ss:Index, a BIFF column of
 * 60,000) leave the rows sparse: walked cell by cell, one would be billions of empty strings.
 */
function checkGrid(rows: (SheetjsCell | undefined)[][], file: string, sheet: string): void {
  const beyond = (what: string): never => {
    throw new InputError(
      `${shownPath(file)}: sheet "${printable(sheet)}" has ${what}, past the grid of a spreadsheet: the workbook is damaged or not from a spreadsheet`,
      'input_xlsx',
      { file },
    );
  };
  if (rows.length > MAX_ROWS) beyond(`more than ${MAX_ROWS.toLocaleString('en-US')} rows`);
  for (let r = 0; r < rows.length; r++) {
    const cells = rows[r];
    if (cells !== undefined && cells.length > MAX_COLUMNS) beyond(`more than ${MAX_COLUMNS.toLocaleString('en-US')} columns in row ${r + 1}`);
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
