/**
 * Reads one sheet of an .ods: the zip through its central directory, the number formats and
 * sheet names first, then the sheet's rows from content.xml as it inflates (ods-sheet.ts).
 * Memory beyond a chunk is a row and the styles, whatever the file declares: repeated rows
 * and cells are expanded as they are taken, within the bounds ods-sheet.ts sets.
 */
import { InputError } from '../../errors.js';
import { shownPath } from '../../infra/printable.js';
import type { InspectedFile } from './inspect-file.js';
import { odsSheetHandler } from './ods-sheet.js';
import { readOdsLayout } from './ods-styles.js';
import { noSheet } from './read-xlsx.js';
import { targetSheet } from './sheet-choice.js';
import type { ReadOptions, RowSource } from './types.js';
import { PROTECTED } from './xls-source.js';
import { readText, type ZipArchive } from './zip-archive.js';
import { readZipSheet } from './zip-sheet.js';

export function openOds(inspected: InspectedFile, options: ReadOptions): Promise<RowSource> {
  const { file } = inspected;
  return readZipSheet(inspected, options, 'ods', async (part) => {
    const { zip } = part;
    if (await isEncrypted(zip, file)) throw new InputError(`${shownPath(file)}: ${PROTECTED}`, 'input_protected', { file });
    const content = zip.entry('content.xml');
    if (content === undefined) throw new Error('no content.xml');
    // Every sheet's name is needed only to find one by name or number.
    const layout = await readOdsLayout(zip, content, file, options.sheet !== undefined);
    if (layout.sheets.length === 0) throw new InputError(`${shownPath(file)}: the workbook has no sheets`, 'input_empty', { file });
    const name = targetSheet(options.sheet, layout.sheets);
    if (name === undefined) throw noSheet(file, options.sheet ?? '', layout.sheets);
    const stream = await part.open(content);
    return { name, stream, handler: odsSheetHandler(file, layout, layout.sheets.indexOf(name)) };
  });
}

/** An .ods saved with a password keeps its zip, and its manifest names how each part is encrypted. */
async function isEncrypted(zip: ZipArchive, file: string): Promise<boolean> {
  const manifest = zip.entry('META-INF/manifest.xml');
  return manifest !== undefined && /encryption-data/.test(await readText(zip, manifest, file));
}
