/** Shared by the reader-thread tests: large workbooks written as a spreadsheet program would. */
import { workbook } from './hostile.generate.js';
import { writeZip } from './zip.helpers.js';

/**
 * An .xlsx of inline-string rows (a cell per value; `_x0000_` is a NUL), written as a
 * spreadsheet program would, with a shared-string table holding the header.
 */
export function sheetFile(path: string, header: string[], rows: string[][]): string {
  const escape = (text: string) => text.replaceAll('&', '&amp;').replaceAll('<', '&lt;');
  const cell = (value: string) => `<c t="inlineStr"><is><t>${escape(value)}</t></is></c>`;
  const NS = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';
  writeZip(
    path,
    workbook(
      function* () {
        yield `<?xml version="1.0" encoding="UTF-8"?>\n<worksheet xmlns="${NS}"><sheetData><row>`;
        yield header.map((_, i) => `<c t="s"><v>${i}</v></c>`).join('');
        yield '</row>';
        for (const row of rows) yield `<row>${row.map(cell).join('')}</row>`;
        yield '</sheetData></worksheet>';
      },
      function* () {
        yield `<?xml version="1.0" encoding="UTF-8"?>\n<sst xmlns="${NS}">`;
        yield header.map((text) => `<si><t>${escape(text)}</t></si>`).join('');
        yield '</sst>';
      },
    ),
  );
  return path;
}

/** Hex that deflate cannot shrink much: a large .xlsx from few rows. */
export function noise(i: number): string {
  let x = (i + 1) * 2654435761;
  let text = '';
  for (let k = 0; k < 7; k++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    text += x.toString(16).padStart(8, '0');
  }
  return text;
}
