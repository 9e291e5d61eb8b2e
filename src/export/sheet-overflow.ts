/**
 * An xlsx report to a file with no split: past Excel's row limit it goes on in a next sheet
 * (`clients (2)`, `clients (3)`…) rather than failing after the whole export. List Clients
 * gives no total, so the count is known only when the limit is reached, and by then the
 * workbook's fixed parts, which name its sheets and come first in the zip, are written. So the
 * first sheet is zipped as it comes into a private draft beside the report; the sheets after it
 * are spooled (sheet-spool.ts). At the end, a workbook that stayed in one sheet is copied as it
 * is (raw bytes, no second compression); one that overflowed is zipped anew, naming every
 * sheet, with the first sheet read back out of the draft.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { unlink } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import yauzl, { type Entry, type ZipFile } from 'yauzl';
import { OutputError } from '../errors.js';
import { createPrivate } from '../infra/output-files.js';
import { tempBeside } from '../infra/temp-files.js';
import type { FlatClient } from './columns.js';
import { createEncoder, type Encoder, type EncoderOptions } from './encode.js';
import { drained, type Output } from './output.js';
import { openSheetSpool, type SheetSpool } from './sheet-spool.js';
import { type SummaryPlace, SHEET_PATH, type WorkbookOutput, zipWorkbook } from './xlsx-package.js';

/** What the sheets are made with: the encoder's options, the first sheet's name, the summary's place. */
export interface GrowingSettings extends EncoderOptions {
  sheetName: string;
  summarySheet: SummaryPlace;
}

interface Sheet {
  name: string;
  encoder: Encoder;
  output: Output;
  rows: number;
}

/** The n-th sheet's name (n ≥ 2): the first's and ` (n)`, cut to Excel's 31 characters. */
export function overflowSheetName(sheetName: string, n: number): string {
  const suffix = ` (${n})`;
  return `${sheetName.slice(0, 31 - suffix.length)}${suffix}`;
}

export class GrowingWorkbook {
  readonly #settings: GrowingSettings;
  readonly #file: Output;
  readonly #limit: number;
  readonly #draftPath: string;
  readonly #draft: WorkbookOutput;
  readonly #sheets: Sheet[] = [];
  #spool: SheetSpool | undefined;
  readonly #beside: string;

  /** `limit`: the clients a sheet holds below its header. */
  constructor(file: Output, beside: string, settings: GrowingSettings, limit: number) {
    this.#settings = settings;
    this.#file = file;
    this.#limit = limit;
    this.#beside = beside;
    this.#draftPath = tempBeside(beside);
    this.#draft = zipWorkbook(draftFile(this.#draftPath), settings.summarySheet, [settings.sheetName]);
    const encoder = createEncoder({ ...settings, selected: settings.summarySheet === 'none' });
    this.#sheets.push({ name: settings.sheetName, encoder, output: this.#draft, rows: 0 });
  }

  async start(): Promise<void> {
    await this.#draft.write(this.#sheets[0]!.encoder.start());
  }

  /** A page's clients, into the sheet being filled and, at its limit, the next. */
  async write(clients: readonly FlatClient[]): Promise<void> {
    let rest = clients;
    while (rest.length > 0) {
      let sheet = this.#sheets[this.#sheets.length - 1]!;
      if (sheet.rows === this.#limit) sheet = await this.#next(sheet);
      const take = rest.slice(0, this.#limit - sheet.rows);
      rest = rest.slice(take.length);
      sheet.rows += take.length;
      const xml = sheet.encoder.encode(take);
      if (xml !== '') await sheet.output.write(xml);
    }
  }

  async #next(full: Sheet): Promise<Sheet> {
    await full.output.write(full.encoder.end());
    if (full.output !== this.#draft) await full.output.seal?.();
    this.#spool ??= openSheetSpool(this.#beside);
    const n = this.#sheets.length + 1;
    const encoder = createEncoder({ ...this.#settings, selected: false });
    const sheet: Sheet = { name: overflowSheetName(this.#settings.sheetName, n), encoder, output: this.#spool.sheet(String(n)), rows: 0 };
    this.#sheets.push(sheet);
    await sheet.output.write(encoder.start());
    return sheet;
  }

  /** The sheets written and the clients in each. */
  parts(): { name: string; rows: number }[] {
    return this.#sheets.map(({ name, rows }) => ({ name, rows }));
  }

  /** Said when the clients did not fit in one sheet; undefined when they did. */
  warning(): string | undefined {
    if (this.#sheets.length === 1) return undefined;
    const names = this.#sheets.slice(1).map((sheet) => `"${sheet.name}"`).join(', ');
    return (
      `more clients than an xlsx sheet holds (${this.#limit} below its header): they go on in ${names}; ` +
      'every client is in exactly one sheet (--split rows:N, month or status chooses how instead)'
    );
  }

  get bytes(): number {
    return this.#file.bytes;
  }

  /** Ends the last sheet, adds the summary (its XML, unless the summary place is none), and puts the file in place. */
  async commit(summaryXml: string): Promise<void> {
    const last = this.#sheets[this.#sheets.length - 1]!;
    await last.output.write(last.encoder.end());
    if (this.#sheets.length === 1) {
      this.#draft.setSummary(summaryXml);
      await this.#draft.commit();
      for await (const chunk of createReadStream(this.#draftPath) as AsyncIterable<Buffer>) await this.#file.write(chunk);
      await this.#file.commit();
      await unlink(this.#draftPath).catch(() => {});
      return;
    }
    // The draft's summary is never read: the new workbook gets it.
    this.#draft.setSummary('');
    await this.#draft.commit();
    const workbook = zipWorkbook(this.#file, this.#settings.summarySheet, this.#sheets.map((sheet) => sheet.name));
    const zip = await openZipFile(this.#draftPath);
    try {
      for await (const chunk of (await entryStream(zip, SHEET_PATH)) as AsyncIterable<Buffer>) await workbook.write(chunk);
    } finally {
      zip.close();
    }
    await unlink(this.#draftPath).catch(() => {});
    await this.#spool!.copyInto(workbook, this.#sheets.slice(1).map((_, i) => String(i + 2)), true);
    workbook.setSummary(summaryXml);
    await workbook.commit();
  }

  /** Drops the draft, the spooled sheets and the file; never throws. */
  async abort(): Promise<void> {
    await this.#draft.abort();
    await unlink(this.#draftPath).catch(() => {});
    await this.#spool?.abort();
    await this.#file.abort();
  }
}

/** A private temp file, written as is; commit only closes it (the draft is read back, then removed). */
function draftFile(path: string): Output {
  const stream = createWriteStream(path, { fd: createPrivate(path), autoClose: true });
  let failure: Error | undefined;
  stream.on('error', (error) => {
    failure ??= error;
  });
  const fail = (error: unknown) => new OutputError(`cannot write a temp workbook at ${path}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`, { cause: error });
  return {
    target: path,
    bytes: 0,
    async write(data) {
      if (failure) throw fail(failure);
      if (!stream.write(data)) await drained(stream).catch((error: unknown) => Promise.reject(fail(failure ?? error)));
    },
    async commit() {
      if (!stream.writableEnded) stream.end();
      await finished(stream).catch((error: unknown) => Promise.reject(fail(error)));
    },
    async abort() {
      stream.destroy();
    },
  };
}

function openZipFile(path: string): Promise<ZipFile> {
  return new Promise((resolve, reject) => yauzl.open(path, { lazyEntries: true, autoClose: false }, (error, zip) => (error ? reject(error) : resolve(zip))));
}

/** The inflated bytes of the entry named so (our own draft: it is there). */
function entryStream(zip: ZipFile, name: string): Promise<Readable> {
  return new Promise((resolve, reject) => {
    zip.on('error', reject);
    zip.on('end', () => reject(new Error(`${name} is not in the draft workbook`)));
    zip.on('entry', (entry: Entry) => {
      if (entry.fileName !== name) return zip.readEntry();
      zip.openReadStream(entry, (error, stream) => (error ? reject(error) : resolve(stream)));
    });
    zip.readEntry();
  });
}
