import { createReadStream } from 'node:fs';
import ExcelJS from 'exceljs';
import { InputError } from '../../errors.js';
import { cellText } from './cell-text.js';
import type { InspectedFile } from './inspect-file.js';
import { splitHeader } from './shape-records.js';
import type { LineRecord, ReadOptions, RowSource } from './types.js';

// What the streaming reader exposes at run time, beyond its published typings.
interface SheetEntry {
  name: string;
}
interface WorkbookState {
  model?: { sheets?: SheetEntry[] };
  properties?: { model?: { date1904?: boolean } };
}
interface StreamedSheet extends AsyncIterable<ExcelJS.Row> {
  name: string;
}

/**
 * Reads one sheet of an .xlsx with exceljs' streaming reader: rows arrive as the zip is
 * inflated, never the whole workbook in memory (shared strings excepted: they are cached,
 * as every xlsx reader must). The header is the first non-empty row; `line` is the sheet row.
 */
export async function openXlsx(inspected: InspectedFile, options: ReadOptions): Promise<RowSource> {
  // exceljs's single streaming pass over the zip sometimes stops before the entries stored
  // after the worksheets (exceljs#3064; Excel stores the shared strings there): the same file
  // reads whole the next time. Seen before the header is returned, the read starts over.
  for (let attempt = 1; ; attempt++) {
    try {
      return await openXlsxOnce(inspected, options);
    } catch (error) {
      if (!(error instanceof InputError && error.code === 'xlsx_incomplete') || attempt === XLSX_ATTEMPTS) throw error;
    }
  }
}

const XLSX_ATTEMPTS = 3;

async function openXlsxOnce(inspected: InspectedFile, options: ReadOptions): Promise<RowSource> {
  const { file } = inspected;
  const stream = createReadStream(file, { highWaterMark: 64 * 1024 });
  const reader = new ExcelJS.stream.xlsx.WorkbookReader(stream, {
    worksheets: 'emit',
    sharedStrings: 'cache',
    hyperlinks: 'ignore',
    // Styles carry the number formats that tell a date from a number.
    styles: 'cache',
    entries: 'ignore',
  });
  let closed = false;
  let sheet: string | undefined;
  const records = readSheet(reader, options.sheet, file, (name) => {
    sheet = name;
  });
  const close = async () => {
    if (closed) return;
    closed = true;
    stream.destroy();
    await records.return(undefined).catch(() => undefined);
  };
  try {
    const split = await splitHeader(records);
    if (split === undefined) {
      throw new InputError(`${file}: sheet "${sheet ?? ''}" is empty`, 'input_empty', { file });
    }
    return {
      info: {
        file,
        format: 'xlsx',
        encoding: 'utf-8',
        encodingSource: 'default',
        delimiter: ',',
        delimiterSource: 'default',
        ...(sheet === undefined ? {} : { sheet }),
        sizeBytes: inspected.sizeBytes,
      },
      headers: split.headers,
      batches: split.batches,
      bytesRead: () => stream.bytesRead,
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

async function* readSheet(
  reader: ExcelJS.stream.xlsx.WorkbookReader,
  selector: string | undefined,
  file: string,
  onSheet: (name: string) => void,
): AsyncGenerator<LineRecord[]> {
  const state = reader as unknown as WorkbookState;
  const emitted: string[] = [];
  try {
    for await (const worksheet of reader) {
      const current = worksheet as unknown as StreamedSheet;
      emitted.push(current.name);
      const tabs = state.model?.sheets?.map((entry) => entry.name);
      if (current.name !== targetSheet(selector, tabs ?? emitted)) {
        void discard(current);
        continue;
      }
      onSheet(current.name);
      const date1904 = state.properties?.model?.date1904 === true;
      for await (const row of current) {
        // exceljs hands over one row at a time; a batch of one costs nothing next to it.
        yield [{ line: row.number, values: rowValues(row, date1904) }];
      }
      // The rest of the workbook is not needed.
      return;
    }
  } catch (error) {
    if (error instanceof InputError) throw error;
    if (error instanceof LostSharedStrings) {
      throw new InputError(
        `${file}: the workbook was read incompletely (its shared strings never arrived, exceljs#3064): run again`,
        'xlsx_incomplete',
        { file },
      );
    }
    const reason = error instanceof Error ? error.message : String(error);
    throw new InputError(
      `${file}: cannot read the workbook (${reason}): is it a valid .xlsx file?`,
      'input_xlsx',
      {
        file,
        cause: error,
      },
    );
  }
  const names = state.model?.sheets?.map((entry) => entry.name) ?? emitted;
  if (selector === undefined)
    throw new InputError(`${file}: the workbook has no sheets`, 'input_empty', { file });
  throw new InputError(
    `${file}: no sheet "${selector}"; the workbook has ${names.map((name) => `"${name}"`).join(', ')} (give a name or a 1-based number)`,
    'input_sheet',
    { file },
  );
}

/**
 * A sheet that is not wanted, read in the background: exceljs deletes the temp file of a sheet it
 * cached as soon as its loop moves on, and the file stream of a sheet nobody reads then fails to
 * open as an unhandled error. Read by nobody else, its errors are of no interest.
 */
async function discard(sheet: AsyncIterable<unknown>): Promise<void> {
  try {
    for await (const _row of sheet) {
      // not wanted
    }
  } catch {
    // the sheet's temp file was already gone: nothing was going to read it
  }
}

/**
 * The sheet to read among `names` (tab order when known): by exact name, then by name
 * ignoring case and spaces, then by 1-based number; the first sheet by default.
 */
export function targetSheet(selector: string | undefined, names: readonly string[]): string | undefined {
  if (selector === undefined) return names[0];
  if (names.includes(selector)) return selector;
  const loose = (name: string) => name.trim().toLowerCase();
  const byName = names.find((name) => loose(name) === loose(selector));
  if (byName !== undefined) return byName;
  return /^\d+$/.test(selector.trim()) ? names[Number(selector) - 1] : undefined;
}

/** A cell that still holds a shared-string index: exceljs never read the shared-strings table. */
class LostSharedStrings extends Error {}

function rowValues(row: ExcelJS.Row, date1904: boolean): string[] {
  const values: string[] = [];
  row.eachCell({ includeEmpty: false }, (cell, column) => {
    const value: unknown = cell.value;
    if (typeof value === 'object' && value !== null && 'sharedString' in value) throw new LostSharedStrings();
    while (values.length < column - 1) values.push('');
    values[column - 1] = cellText(value, cell.numFmt, date1904);
  });
  return values;
}
