/**
 * Reads one sheet of an .xlsx: the zip through its central directory, the small parts whole,
 * the shared strings into a compact table, then the sheet's XML streamed a chunk at a time.
 * Memory beyond a chunk is the shared-string table alone.
 */
import { InputError } from '../../errors.js';
import { shownPath } from '../../infra/printable.js';
import type { InspectedFile } from './inspect-file.js';
import { targetSheet } from './sheet-choice.js';
import type { ReadOptions, RowSource } from './types.js';
import { readSharedStrings, readStyles, readWorkbook } from './xlsx-parts.js';
import { sheetHandler } from './xlsx-sheet.js';
import { readZipSheet } from './zip-sheet.js';

export function openXlsx(inspected: InspectedFile, options: ReadOptions): Promise<RowSource> {
  const { file } = inspected;
  return readZipSheet(inspected, options, 'xlsx', async (part) => {
    const { zip } = part;
    const workbook = await readWorkbook(zip, file);
    if (workbook === undefined) {
      throw new InputError(`${shownPath(file)}: the zip holds no workbook: is it a valid .xlsx file?`, 'input_xlsx', { file });
    }
    const names = workbook.sheets.map((sheet) => sheet.name);
    if (names.length === 0) throw new InputError(`${shownPath(file)}: the workbook has no sheets`, 'input_empty', { file });
    const name = targetSheet(options.sheet, names);
    const chosen = workbook.sheets.find((sheet) => sheet.name === name);
    if (chosen === undefined) throw noSheet(file, options.sheet ?? '', names);
    const handler = sheetHandler({
      file,
      sheet: chosen.name,
      date1904: workbook.date1904,
      formats: await readStyles(zip, workbook.styles, file),
      shared: await readSharedStrings(zip, workbook.sharedStrings, file),
    });
    const stream = chosen.entry === undefined ? undefined : await part.open(chosen.entry);
    return { name: chosen.name, stream, handler };
  });
}

export function noSheet(file: string, selector: string, names: readonly string[]): InputError {
  return new InputError(
    `${shownPath(file)}: no sheet "${selector}"; the workbook has ${names.map((name) => `"${name}"`).join(', ')} (give a name or a 1-based number)`,
    'input_sheet',
    { file },
  );
}
