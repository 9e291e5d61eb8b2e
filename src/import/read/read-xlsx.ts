/**
 * Reads one sheet of an .xlsx: the zip through its central directory, the small parts whole,
 * the shared strings into a compact table, then the sheet's XML streamed a chunk at a time.
 * Memory beyond a chunk is the shared-string table alone.
 */
import type { Readable } from 'node:stream';
import { InputError } from '../../errors.js';
import { shownPath } from '../../infra/printable.js';
import type { InspectedFile } from './inspect-file.js';
import { splitHeader } from './shape-records.js';
import { targetSheet } from './sheet-choice.js';
import type { LineRecord, ReadOptions, RowSource } from './types.js';
import { readSharedStrings, readStyles, readWorkbook } from './xlsx-parts.js';
import { type SheetContext, sheetHandler } from './xlsx-sheet.js';
import { xmlEvents } from './xml-events.js';
import { openZip, SheetPart } from './zip-archive.js';

/** The sheet XML behind one batch of records: the 64 KiB a CSV batch is read from. */
const BATCH_BYTES = 64 * 1024;

export async function openXlsx(inspected: InspectedFile, options: ReadOptions): Promise<RowSource> {
  const { file } = inspected;
  const part = new SheetPart(
    await openZip(file).catch((error: unknown) => {
      throw unreadable(file, error);
    }),
  );
  const { zip } = part;
  const close = () => part.close();
  try {
    const workbook = await readWorkbook(zip, file);
    if (workbook === undefined) {
      throw new InputError(`${shownPath(file)}: the zip holds no workbook: is it a valid .xlsx file?`, 'input_xlsx', { file });
    }
    const names = workbook.sheets.map((sheet) => sheet.name);
    if (names.length === 0) throw new InputError(`${shownPath(file)}: the workbook has no sheets`, 'input_empty', { file });
    const name = targetSheet(options.sheet, names);
    const chosen = workbook.sheets.find((sheet) => sheet.name === name);
    if (chosen === undefined) throw noSheet(file, options.sheet ?? '', names);
    const context: SheetContext = {
      file,
      sheet: chosen.name,
      date1904: workbook.date1904,
      formats: await readStyles(zip, workbook.styles, file),
      shared: await readSharedStrings(zip, workbook.sharedStrings, file),
    };
    const stream = chosen.entry === undefined ? undefined : await part.open(chosen.entry);
    const records = sheetRecords(stream, context, (bytes) => (part.inflated += bytes), () => part.closed);
    const split = await splitHeader(records, {
      file,
      headerRow: options.headerRow,
      headerTest: options.headerTest,
      pad: true,
    });
    if (split === undefined) {
      throw new InputError(`${shownPath(file)}: sheet "${chosen.name}" is empty`, 'input_empty', { file });
    }
    return {
      info: {
        file,
        format: 'xlsx',
        encoding: 'utf-8',
        encodingSource: 'default',
        delimiter: ',',
        delimiterSource: 'default',
        sheet: chosen.name,
        sizeBytes: inspected.sizeBytes,
        header: split.header,
      },
      headers: split.headers,
      batches: split.batches,
      bytesRead: () => part.bytesRead(inspected.sizeBytes),
      close,
    };
  } catch (error) {
    await close();
    throw error instanceof InputError ? error : unreadable(file, error);
  }
}

async function* sheetRecords(
  stream: Readable | undefined,
  context: SheetContext,
  onBytes: (bytes: number) => void,
  isClosed: () => boolean,
): AsyncGenerator<LineRecord[]> {
  if (stream === undefined) return;
  const handler = sheetHandler(context);
  const events = xmlEvents(handler);
  const decoder = new TextDecoder();
  let pending = 0;
  try {
    for await (const chunk of stream) {
      onBytes((chunk as Buffer).length);
      events.write(decoder.decode(chunk as Buffer, { stream: true }));
      // Inflate hands over 16 KiB at a time, ~60 rows: a batch waits for BATCH_BYTES, as CSV's do.
      pending += (chunk as Buffer).length;
      if (pending < BATCH_BYTES) continue;
      pending = 0;
      const batch = handler.take();
      if (batch.length > 0) yield batch;
    }
    events.write(decoder.decode());
    events.end();
    const batch = handler.take();
    if (batch.length > 0) yield batch;
  } catch (error) {
    if (isClosed()) return;
    throw error instanceof InputError ? error : unreadable(context.file, error);
  } finally {
    stream.destroy();
  }
}

function unreadable(file: string, error: unknown): InputError {
  const reason = error instanceof Error ? error.message : String(error);
  return new InputError(`${shownPath(file)}: cannot read the workbook (${reason}): is it a valid .xlsx file?`, 'input_xlsx', {
    file,
    cause: error,
  });
}

export function noSheet(file: string, selector: string, names: readonly string[]): InputError {
  return new InputError(
    `${shownPath(file)}: no sheet "${selector}"; the workbook has ${names.map((name) => `"${name}"`).join(', ')} (give a name or a 1-based number)`,
    'input_sheet',
    { file },
  );
}
