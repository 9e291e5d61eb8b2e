/**
 * Reads one sheet of an .ods: the zip through its central directory, the number formats and
 * sheet names first, then the sheet's rows from content.xml as it inflates (ods-sheet.ts).
 * Memory beyond a chunk is a row and the styles, whatever the file declares: repeated rows
 * and cells are expanded as they are taken, within the bounds ods-sheet.ts sets.
 */
import type { Readable } from 'node:stream';
import { InputError } from '../../errors.js';
import { shownPath } from '../../infra/printable.js';
import type { InspectedFile } from './inspect-file.js';
import { odsSheetHandler, type OdsSheetHandler } from './ods-sheet.js';
import { readOdsLayout } from './ods-styles.js';
import { noSheet } from './read-xlsx.js';
import { splitHeader } from './shape-records.js';
import { targetSheet } from './sheet-choice.js';
import type { LineRecord, ReadOptions, RowSource } from './types.js';
import { PROTECTED } from './xls-source.js';
import { xmlEvents } from './xml-events.js';
import { openZip, readText, SheetPart, type ZipArchive } from './zip-archive.js';

/** The sheet XML behind one batch of records, as for an .xlsx. */
const BATCH_BYTES = 64 * 1024;

export async function openOds(inspected: InspectedFile, options: ReadOptions): Promise<RowSource> {
  const { file } = inspected;
  const part = new SheetPart(
    await openZip(file).catch((error: unknown) => {
      throw unreadable(file, error);
    }),
  );
  const { zip } = part;
  const close = () => part.close();
  try {
    if (await isEncrypted(zip, file)) throw new InputError(`${shownPath(file)}: ${PROTECTED}`, 'input_protected', { file });
    const content = zip.entry('content.xml');
    if (content === undefined) throw unreadable(file, new Error('no content.xml'));
    // Every sheet's name is needed only to find one by name or number.
    const layout = await readOdsLayout(zip, content, file, options.sheet !== undefined);
    if (layout.sheets.length === 0) throw new InputError(`${shownPath(file)}: the workbook has no sheets`, 'input_empty', { file });
    const name = targetSheet(options.sheet, layout.sheets);
    if (name === undefined) throw noSheet(file, options.sheet ?? '', layout.sheets);
    const stream = await part.open(content);
    const handler = odsSheetHandler(file, layout, layout.sheets.indexOf(name));
    const records = sheetRecords(stream, handler, file, (bytes) => (part.inflated += bytes), () => part.closed);
    const split = await splitHeader(records, { file, headerRow: options.headerRow, headerTest: options.headerTest, pad: true });
    if (split === undefined) throw new InputError(`${shownPath(file)}: sheet "${name}" is empty`, 'input_empty', { file });
    return {
      info: {
        file,
        format: 'ods',
        encoding: 'utf-8',
        encodingSource: 'default',
        delimiter: ',',
        delimiterSource: 'default',
        sheet: name,
        sizeBytes: inspected.sizeBytes,
        header: split.header,
      },
      headers: split.headers,
      batches: split.batches,
      // Progress through content.xml, scaled to the file's size for the ETA.
      bytesRead: () => part.bytesRead(inspected.sizeBytes),
      close,
    };
  } catch (error) {
    await close();
    throw error instanceof InputError ? error : unreadable(file, error);
  }
}

async function* sheetRecords(
  stream: Readable,
  handler: OdsSheetHandler,
  file: string,
  onBytes: (bytes: number) => void,
  isClosed: () => boolean,
): AsyncGenerator<LineRecord[]> {
  const events = xmlEvents(handler);
  const decoder = new TextDecoder();
  let pending = 0;
  try {
    for await (const chunk of stream) {
      onBytes((chunk as Buffer).length);
      events.write(decoder.decode(chunk as Buffer, { stream: true }));
      pending += (chunk as Buffer).length;
      if (pending < BATCH_BYTES && !handler.done) continue;
      pending = 0;
      yield* taken(handler);
      // The sheet is read: the rest of the workbook is not.
      if (handler.done) return;
    }
    events.write(decoder.decode());
    events.end();
    yield* taken(handler);
  } catch (error) {
    if (isClosed()) return;
    throw error instanceof InputError ? error : unreadable(file, error);
  } finally {
    stream.destroy();
  }
}

/** The records completed, a batch at a time (a repeated row can be many). */
function* taken(handler: OdsSheetHandler): Generator<LineRecord[]> {
  for (let batch = handler.take(); batch.length > 0; batch = handler.take()) yield batch;
}

/** An .ods saved with a password keeps its zip, and its manifest names how each part is encrypted. */
async function isEncrypted(zip: ZipArchive, file: string): Promise<boolean> {
  const manifest = zip.entry('META-INF/manifest.xml');
  return manifest !== undefined && /encryption-data/.test(await readText(zip, manifest, file));
}

function unreadable(file: string, error: unknown): InputError {
  const reason = error instanceof Error ? error.message : String(error);
  return new InputError(`${shownPath(file)}: cannot read the workbook (${reason}): is it a valid .ods file?`, 'input_xlsx', { file, cause: error });
}
