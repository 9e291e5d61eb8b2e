/**
 * Rows in, report out: encodes each page into the output (or into the part its client belongs
 * to, with --split), adds the clients up for the summary as they pass, and at the end writes
 * the summary sheet (xlsx) or the summary file (`--summary-file`) and puts everything in place.
 * Memory: one page, the counts, and one open part per status at most.
 */
import { stat } from 'node:fs/promises';
import { StoppedError, UsageError } from '../errors.js';
import { injected } from '../infra/inject.js';
import { shownPath } from '../infra/printable.js';
import type { FlatClient } from './columns.js';
import { createEncoder, type Encoder } from './encode.js';
import type { ExportOptions } from './options.js';
import { openOutput, type Output } from './output.js';
import { partFile, partKeys, partsInOrder, refuseExistingParts, sheetNameOf, summaryFileOf } from './report-parts.js';
import { type SummaryFacts, summaryCsv, summaryRows, summarySheetXml } from './summary-sheet.js';
import { ExportTally, type TallyFigures } from './tally.js';
import type { WorkbookOutput } from './xlsx-package.js';
import type { SheetSpool } from './sheet-spool.js';
import { RowSorter } from './sort.js';
import type { GrowingWorkbook } from './sheet-overflow.js';
import { MAX_SHEET_ROWS } from './xlsx-sheet.js';

/** The workbook's zip, spool and overflow modules: loaded only for xlsx (a CSV or JSONL export never needs their zip libraries). */
async function loadWorkbookModules() {
  const [{ zipWorkbook }, { openSheetSpool }, { GrowingWorkbook }] = await Promise.all([
    import('./xlsx-package.js'),
    import('./sheet-spool.js'),
    import('./sheet-overflow.js'),
  ]);
  return { zipWorkbook, openSheetSpool, GrowingWorkbook };
}

type WorkbookModules = Awaited<ReturnType<typeof loadWorkbookModules>>;

/** Where a report goes: the plan's output and how its files are written. */
export interface ReportTarget {
  out: string | NodeJS.WritableStream;
  gzip: boolean;
  overwrite: boolean | undefined;
  fileMode: number | undefined;
}

/** One file or sheet of a split report, and the clients in it. */
export interface ReportPart {
  /** The file, or the sheet's name. */
  name: string;
  /** Clients written to it. */
  rows: number;
}

export interface ReportResult {
  target: string;
  bytes: number;
  tally: TallyFigures;
  parts: ReportPart[] | undefined;
  summaryFile: string | undefined;
  /** What the reader should know: the sheets a workbook grew past Excel's row limit. */
  warnings: string[];
}

type Settings = Omit<ExportOptions, 'out'>;

interface OpenPart {
  key: string;
  name: string;
  encoder: Encoder;
  output: Output;
  rows: number;
  closed: boolean;
}

export class ReportWriter {
  readonly #settings: Settings;
  readonly #target: ReportTarget;
  readonly #tally: ExportTally;
  #main: Output | undefined;
  #workbook: WorkbookOutput | undefined;
  #encoder: Encoder | undefined;
  readonly #parts = new Map<string, OpenPart>();
  #current: OpenPart | undefined;
  #spool: SheetSpool | undefined;
  /** A split workbook's file, zipped into at commit. */
  #file: Output | undefined;
  #sealedBytes = 0;
  #sorter: RowSorter | undefined;
  /** An unsplit xlsx file: goes on in a next sheet past the row limit. */
  #growing: GrowingWorkbook | undefined;
  /** An unsplit xlsx stream: its clients, refused past the row limit (its sheets are named at its start). */
  #streamRows = 0;
  readonly #sheetRows = injected.sheetRows ?? MAX_SHEET_ROWS - 1;
  /** Clients handed in, and clients an encoder turned into text: equal at commit, or no file. */
  #handed = 0;
  #encoded = 0;
  readonly #keyOf: ((client: FlatClient) => string) | undefined;
  /** Set at open for an xlsx export. */
  #xlsx: WorkbookModules | undefined;

  private constructor(settings: Settings, target: ReportTarget, timeZone: string | undefined) {
    this.#settings = settings;
    this.#target = target;
    this.#tally = new ExportTally(settings.status, settings.creditStatus, timeZone);
    this.#keyOf = settings.split && partKeys(settings.split, timeZone);
  }

  /** Checks what can be checked before any request (files in the way), then opens the output. */
  static async open(settings: Settings, target: ReportTarget, timeZone: string | undefined): Promise<ReportWriter> {
    const writer = new ReportWriter(settings, target, timeZone);
    await writer.#open();
    return writer;
  }

  get readerGone(): boolean {
    return this.#main?.readerGone === true;
  }

  async #open(): Promise<void> {
    const { out } = this.#target;
    const settings = this.#settings;
    if (settings.sort !== undefined) this.#sorter = new RowSorter(settings.sort, typeof out === 'string' ? out : undefined);
    const splitFiles = settings.split !== undefined && settings.format !== 'xlsx';
    if (settings.format === 'xlsx') this.#xlsx = await loadWorkbookModules();
    if (settings.summaryFile) {
      if (typeof out !== 'string') throw new UsageError('the summary file is written beside a file output, not a stream: name one with --out', 'bad_option');
      const file = summaryFileOf(out);
      if (!this.#target.overwrite && (await stat(file).catch(() => undefined)) !== undefined) {
        throw new UsageError(`${shownPath(file)} exists (the summary file): pass --overwrite, or name another file`, 'output_exists');
      }
    }
    if (splitFiles) {
      if (typeof out !== 'string') throw new UsageError('a split CSV or JSONL export writes files: name one with --out', 'bad_option');
      refuseExistingParts(out, this.#target.overwrite === true);
      return;
    }
    const file = await openOutput(out, 'stream', { gzip: this.#target.gzip, overwrite: this.#target.overwrite, mode: this.#target.fileMode });
    this.#main = file;
    if (settings.format !== 'xlsx') {
      this.#encoder = createEncoder(settings);
      await this.#write(file, this.#encoder.start());
      return;
    }
    // A split workbook is zipped at the end, when its sheets are known: they are spooled till then.
    if (settings.split !== undefined) {
      this.#file = file;
      this.#spool = this.#xlsx!.openSheetSpool(typeof out === 'string' ? out : undefined);
      return;
    }
    if (typeof out === 'string') {
      this.#main = undefined;
      this.#growing = new this.#xlsx!.GrowingWorkbook(file, out, settings, this.#sheetRows);
      await this.#growing.start();
      return;
    }
    this.#workbook = this.#xlsx!.zipWorkbook(file, settings.summarySheet, [settings.sheetName]);
    this.#main = this.#workbook;
    this.#encoder = createEncoder({ ...settings, selected: settings.summarySheet === 'none' });
    await this.#write(this.#workbook, this.#encoder.start());
  }

  async #write(output: Output, text: string | Uint8Array): Promise<void> {
    if (text.length !== 0) await output.write(text);
  }

  /** A page's text or, where the encoder makes them, its bytes. */
  #pageOf(encoder: Encoder, clients: readonly FlatClient[]): string | Uint8Array {
    return encoder.encodeBytes !== undefined ? encoder.encodeBytes(clients) : encoder.encode(clients);
  }

  /** A page's clients, in order (with --sort, held until commit). */
  async write(clients: readonly FlatClient[]): Promise<void> {
    for (const client of clients) this.#tally.add(client);
    this.#handed += clients.length;
    if (this.#sorter !== undefined) this.#sorter.add(clients);
    else await this.#encode(clients);
  }

  async #encode(clients: readonly FlatClient[]): Promise<void> {
    if (this.#growing !== undefined) {
      await this.#growing.write(clients);
      this.#encoded += clients.length;
      return;
    }
    if (this.#keyOf === undefined) {
      if (this.#workbook !== undefined && (this.#streamRows += clients.length) > this.#sheetRows) throw this.#tooManyForStream();
      await this.#write(this.#main!, this.#pageOf(this.#encoder!, clients));
      this.#encoded += clients.length;
      return;
    }
    // Runs of clients of one part, written together.
    let run: FlatClient[] = [];
    let key: string | undefined;
    for (const client of clients) {
      const next = this.#keyOf(client);
      if (key !== undefined && next !== key) {
        await this.#writePart(key, run);
        run = [];
      }
      key = next;
      run.push(client);
    }
    if (key !== undefined) await this.#writePart(key, run);
  }

  #tooManyForStream(): UsageError {
    return new UsageError(
      `an xlsx sheet holds ${this.#sheetRows} clients below its header and this export has more; a workbook written to a stream ` +
        'cannot add sheets once started: --out FILE.xlsx (goes on in a next sheet), --split rows:1000000 or --split month, or --format csv',
      'xlsx_too_many_rows',
    );
  }

  async #writePart(key: string, clients: FlatClient[]): Promise<void> {
    const part = await this.#partFor(key);
    part.rows += clients.length;
    await this.#write(part.output, this.#pageOf(part.encoder, clients));
    this.#encoded += clients.length;
  }

  async #partFor(key: string): Promise<OpenPart> {
    const known = this.#parts.get(key);
    if (known !== undefined) return known;
    const settings = this.#settings;
    const rule = settings.split!;
    // Sorted by another column, months and rows no longer come one part after the other.
    const inOrder = partsInOrder(rule) && this.#sorter === undefined;
    if (inOrder && this.#current !== undefined) await this.#close(this.#current);
    let part: OpenPart;
    if (settings.format === 'xlsx') {
      const name = sheetNameOf(rule, settings.sheetName, key);
      const encoder = createEncoder({ ...settings, selected: settings.summarySheet === 'none' && this.#parts.size === 0 });
      part = { key, name, encoder, output: this.#spool!.sheet(key), rows: 0, closed: false };
    } else {
      const name = partFile(this.#target.out as string, key);
      const output = await openOutput(name, name, { gzip: this.#target.gzip, overwrite: this.#target.overwrite, mode: this.#target.fileMode });
      part = { key, name, encoder: createEncoder(settings), output, rows: 0, closed: false };
    }
    this.#parts.set(key, part);
    this.#current = part;
    await this.#write(part.output, part.encoder.start());
    return part;
  }

  /** A part that will get no more rows: its tail written, its file closed (renamed only at commit). */
  async #close(part: OpenPart): Promise<void> {
    if (part.closed) return;
    part.closed = true;
    await this.#write(part.output, part.encoder.end());
    await part.output.seal?.();
  }

  /** Ends every part, adds the summary, and puts the files in place. */
  async commit(facts: Omit<SummaryFacts, 'out' | 'madeAt'>): Promise<ReportResult> {
    const tally = this.#tally.figures();
    const out = typeof this.#target.out === 'string' ? this.#target.out : 'stdout';
    await this.#sorter?.drain((clients) => this.#encode(clients));
    // The file's own account: a client the pipeline counted but no encoder wrote is a gap, never a file.
    if (this.#encoded !== this.#handed) {
      throw new StoppedError(
        `the export could not account for every client: ${this.#handed} clients to write, ${this.#encoded} written into the file; ` +
          'nothing was written (no file, the state unchanged): run it again',
        'incomplete_run',
      );
    }
    const overflow = this.#growing?.warning();
    const warnings = overflow === undefined ? [] : [overflow];
    const rows = summaryRows({ ...facts, out, madeAt: new Date(), warnings }, tally);
    if (this.#growing !== undefined) await this.#growing.commit(this.#settings.summarySheet === 'none' ? '' : summarySheetXml(rows, true));
    if (this.#encoder !== undefined) await this.#write(this.#main!, this.#encoder.end());
    for (const part of this.#parts.values()) await this.#close(part);
    if (this.#file !== undefined) await this.#zipSpooled(this.#file);
    if (this.#workbook !== undefined && this.#settings.summarySheet !== 'none') this.#workbook.setSummary(summarySheetXml(rows, true));
    await this.#main?.commit();
    for (const part of this.#parts.values()) {
      if (this.#spool?.owns(part.output)) continue;
      this.#sealedBytes += part.output.bytes;
      await part.output.commit();
    }
    let summaryFile: string | undefined;
    if (this.#settings.summaryFile) {
      summaryFile = summaryFileOf(out);
      const file = await openOutput(summaryFile, summaryFile, { overwrite: true, mode: this.#target.fileMode });
      const { format, delimiter } = this.#settings;
      await file.write(summaryCsv(rows, format === 'csv-semicolon' ? ';' : format === 'csv' ? (delimiter ?? ',') : ','));
      await file.commit();
    }
    const split = this.#settings.split === undefined ? undefined : [...this.#parts.values()].map(({ name, rows: n }) => ({ name, rows: n }));
    const parts = overflow === undefined ? split : this.#growing!.parts();
    const bytes = (this.#main?.bytes ?? this.#growing?.bytes ?? 0) + this.#sealedBytes;
    return { target: this.#main?.target ?? out, bytes, tally, parts, summaryFile, warnings };
  }

  /** The spooled sheets, in the order they were met, into a workbook made for them (a header-only sheet when none). */
  async #zipSpooled(file: Output): Promise<void> {
    const settings = this.#settings;
    const parts = [...this.#parts.values()];
    const names = parts.length === 0 ? [settings.sheetName] : parts.map((part) => part.name);
    this.#workbook = this.#xlsx!.zipWorkbook(file, settings.summarySheet, names);
    this.#main = this.#workbook;
    if (parts.length === 0) {
      const empty = createEncoder({ ...settings, selected: settings.summarySheet === 'none' });
      await this.#write(this.#workbook, empty.start() + empty.end());
    }
    await this.#spool!.copyInto(this.#workbook, parts.map((part) => part.key));
  }

  /** Drops every temp file; never throws. */
  async abort(): Promise<void> {
    await this.#main?.abort();
    await this.#growing?.abort();
    for (const part of this.#parts.values()) await part.output.abort();
    await this.#spool?.abort();
    this.#sorter?.cleanup();
  }
}
