/**
 * One sheet streamed out of a workbook's zip, .xlsx and .ods alike: the zip opened and closed
 * once, the sheet part's XML turned into batches of records as it inflates, the header split
 * off, and any other failure on the way reported as a workbook that cannot be read.
 */
import type { Readable } from 'node:stream';
import type { Entry } from 'yauzl';
import { InputError } from '../../errors.js';
import { shownPath } from '../../infra/printable.js';
import type { InspectedFile } from './inspect-file.js';
import { splitSheet } from './sheet-source.js';
import type { LineRecord, ReadOptions, RowSource } from './types.js';
import { type XmlHandler, xmlEvents } from './xml-events.js';
import { openZip, type ZipArchive } from './zip-archive.js';

/** The sheet XML behind one batch of records: the 64 KiB a CSV batch is read from. */
const BATCH_BYTES = 64 * 1024;

/**
 * A workbook's zip and the one sheet part streamed out of it: how far the part has inflated,
 * for progress, and one close for both, safe to call twice.
 */
export class SheetPart {
  stream: Readable | undefined;
  inflated = 0;
  #total = 0;
  closed = false;

  constructor(readonly zip: ZipArchive) {}

  async open(entry: Entry): Promise<Readable> {
    this.#total = entry.uncompressedSize;
    this.stream = await this.zip.open(entry);
    return this.stream;
  }

  /** Progress through the part's XML, scaled to the file's size for the ETA. */
  bytesRead(sizeBytes: number): number {
    const total = this.#total;
    return total === 0 ? sizeBytes : Math.round((Math.min(this.inflated, total) / total) * sizeBytes);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stream?.destroy();
    this.zip.close();
  }
}

/** A sheet's XML handler as the batches read it. */
export interface SheetRecordsHandler extends XmlHandler {
  /** Records completed since the last call (a batch of them, where one row can repeat into many). */
  take(): LineRecord[];
  /** The sheet has ended before its part: an .ods holds every sheet in one part. */
  readonly done?: boolean;
}

/** The sheet a reader chose, ready to stream. */
export interface ChosenSheet {
  name: string;
  /** The sheet's part, opened through the SheetPart; undefined for a sheet without one (empty). */
  stream: Readable | undefined;
  handler: SheetRecordsHandler;
}

/**
 * Opens the zip of `inspected` and reads the sheet `choose` picks from it. `choose` throws an
 * InputError for a workbook it refuses; any other error is this workbook being unreadable.
 */
export async function readZipSheet(
  inspected: InspectedFile,
  options: ReadOptions,
  format: 'xlsx' | 'ods',
  choose: (part: SheetPart) => Promise<ChosenSheet>,
): Promise<RowSource> {
  const { file } = inspected;
  const unreadable = (error: unknown) => unreadableWorkbook(file, format, error);
  const part = new SheetPart(
    await openZip(file).catch((error: unknown) => {
      throw unreadable(error);
    }),
  );
  const close = () => part.close();
  try {
    const { name, stream, handler } = await choose(part);
    const records = sheetRecords(stream, handler, part, unreadable);
    const sheet = await splitSheet(records, { file, format, sheet: name, sizeBytes: inspected.sizeBytes }, options);
    return { ...sheet, bytesRead: () => part.bytesRead(inspected.sizeBytes), close };
  } catch (error) {
    await close();
    throw error instanceof InputError ? error : unreadable(error);
  }
}

async function* sheetRecords(
  stream: Readable | undefined,
  handler: SheetRecordsHandler,
  part: SheetPart,
  unreadable: (error: unknown) => InputError,
): AsyncGenerator<LineRecord[]> {
  if (stream === undefined) return;
  const events = xmlEvents(handler);
  const decoder = new TextDecoder();
  let pending = 0;
  try {
    for await (const chunk of stream) {
      part.inflated += (chunk as Buffer).length;
      events.write(decoder.decode(chunk as Buffer, { stream: true }));
      // A batch waits for BATCH_BYTES of XML, as CSV's do (or for the sheet's end).
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
    if (part.closed) return;
    throw error instanceof InputError ? error : unreadable(error);
  } finally {
    stream.destroy();
  }
}

/** The records completed, a batch at a time. */
function* taken(handler: SheetRecordsHandler): Generator<LineRecord[]> {
  for (let batch = handler.take(); batch.length > 0; batch = handler.take()) yield batch;
}

function unreadableWorkbook(file: string, format: 'xlsx' | 'ods', error: unknown): InputError {
  const reason = error instanceof Error ? error.message : String(error);
  return new InputError(`${shownPath(file)}: cannot read the workbook (${reason}): is it a valid .${format} file?`, 'input_xlsx', {
    file,
    cause: error,
  });
}
