/** Reading an xlsx report back in tests: its zip parts as text (yauzl), its cells (exceljs). */
import { createRequire } from 'node:module';
import { type Entry, fromBuffer, type ZipFile } from 'yauzl';

const require = createRequire(import.meta.url);
const ExcelJS: typeof import('exceljs') = require('exceljs');

/** Every part of the package, by path, as UTF-8 text. */
export async function zipParts(data: Buffer): Promise<Map<string, string>> {
  const zip = await new Promise<ZipFile>((resolve, reject) =>
    fromBuffer(data, { lazyEntries: true }, (error, file) => (error ? reject(error) : resolve(file))),
  );
  const parts = new Map<string, string>();
  await new Promise<void>((resolve, reject) => {
    zip.on('error', reject);
    zip.on('end', resolve);
    zip.on('entry', (entry: Entry) => {
      zip.openReadStream(entry, (error, stream) => {
        if (error) return reject(error);
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('error', reject);
        stream.on('end', () => {
          parts.set(entry.fileName, Buffer.concat(chunks).toString('utf8'));
          zip.readEntry();
        });
      });
    });
    zip.readEntry();
  });
  return parts;
}

export type Cell = string | number | Date | null;

/** The first sheet's cells, row by row (1-based rows → 0-based arrays), as exceljs reads them. */
export async function sheetCells(file: string): Promise<Cell[][]> {
  const book = new ExcelJS.Workbook();
  await book.xlsx.readFile(file);
  return rowsOf(book.worksheets[0]!, 'row');
}

/** A sheet's cells, row by row; `where` starts the message of a cell that is not a string, number or date. */
function rowsOf(sheet: import('exceljs').Worksheet, where: string): Cell[][] {
  const rows: Cell[][] = [];
  sheet.eachRow({ includeEmpty: true }, (row, number) => {
    const values = row.values as unknown[];
    rows[number - 1] = Array.from({ length: sheet.columnCount }, (_, i) => {
      const value = values[i + 1];
      if (value === undefined || value === null) return null;
      if (typeof value === 'string' || typeof value === 'number' || value instanceof Date) return value;
      throw new Error(`${where} ${number} column ${i + 1}: unexpected cell value ${JSON.stringify(value)}`);
    });
  });
  return rows;
}

/**
 * The text a CSV export holds for a cell read back: dates as ISO instants, numbers in full,
 * `_xHHHH_` decoded as Excel does (exceljs leaves it as is).
 */
export function cellText(cell: Cell): string {
  if (cell === null) return '';
  if (cell instanceof Date) return cell.toISOString();
  if (typeof cell === 'number') return String(cell);
  return cell.replace(/_x([0-9A-Fa-f]{4})_/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

/** A value that already looks escaped (`'=x`) carries one more quote in a workbook. */
export function asInWorkbook(value: string): string {
  return /^'+[=+\-@\t\r]/.test(value) ? `'${value}` : value;
}

/** The workbook's sheet names in tab order, and the one it opens on (exceljs). */
export async function sheetTabs(file: string): Promise<{ names: string[]; active: string | undefined }> {
  const book = new ExcelJS.Workbook();
  await book.xlsx.readFile(file);
  const names = book.worksheets.map((sheet) => sheet.name);
  const view = (book.views as { activeTab?: number }[] | undefined)?.[0];
  return { names, active: names[view?.activeTab ?? 0] };
}

/** One sheet's cells by name, row by row, as sheetCells reads the first one. */
export async function namedSheetCells(file: string, name: string): Promise<Cell[][]> {
  const book = new ExcelJS.Workbook();
  await book.xlsx.readFile(file);
  const sheet = book.getWorksheet(name);
  if (sheet === undefined) throw new Error(`no sheet ${name} in ${file}`);
  return Array.from(rowsOf(sheet, `${name} row`), (row) => row ?? []);
}
