/**
 * The parts of an .xlsx that come before its rows: where each sheet is (tab order, through
 * the relationships, as every producer names its parts differently), the date system, the
 * number format of each cell style, and the shared strings.
 */
import { posix } from 'node:path';
import type { Entry } from 'yauzl';
import { InputError } from '../../errors.js';
import { shownPath } from '../../infra/printable.js';
import { formatBytes } from './explain-csv-error.js';
import { MAX_CELL_CHARS, MAX_SHARED_STRINGS_BYTES, SharedStrings } from './shared-strings.js';
import { type Attributes, unescapeOoxml, type XmlHandler, xmlEvents } from './xml-events.js';
import { checkPartSize, readText, type ZipArchive } from './zip-archive.js';

export interface SheetRef {
  name: string;
  /** The sheet's part; undefined when the workbook points nowhere (then it reads as empty). */
  entry: Entry | undefined;
}

export interface XlsxWorkbook {
  /** In tab order, hidden sheets included. */
  sheets: SheetRef[];
  date1904: boolean;
  /** The parts to read once a sheet is chosen. */
  styles: Entry | undefined;
  sharedStrings: Entry | undefined;
}

const REL = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships/';
const STRICT_REL = 'http://purl.oclc.org/ooxml/officeDocument/relationships/';

/** The workbook's sheets and parts, or undefined when `zip` holds no workbook at all. */
export async function readWorkbook(zip: ZipArchive, file: string): Promise<XlsxWorkbook | undefined> {
  const root = await relationships(zip, '_rels/.rels', '', file);
  const workbookPath = root.get('officeDocument') ?? 'xl/workbook.xml';
  const workbookEntry = zip.entry(workbookPath);
  if (workbookEntry === undefined) return undefined;
  const dir = posix.dirname(workbookPath);
  const rels = await relationships(zip, posix.join(dir, '_rels', `${posix.basename(workbookPath)}.rels`), dir, file);
  const byId = new Map<string, string>();
  for (const [key, target] of rels) if (key.startsWith('#')) byId.set(key.slice(1), target);

  const sheets: SheetRef[] = [];
  let date1904 = false;
  parseXml(await readText(zip, workbookEntry, file), (name, attributes) => {
    if (name === 'sheet') {
      const target = byId.get(attributes.id ?? '');
      sheets.push({ name: attributes.name ?? '', entry: target === undefined ? undefined : zip.entry(target) });
    } else if (name === 'workbookPr') {
      date1904 = isTrue(attributes.date1904);
    }
  });
  const part = (type: string, fallback: string) => zip.entry(rels.get(type) ?? posix.join(dir, fallback));
  return { sheets, date1904, styles: part('styles', 'styles.xml'), sharedStrings: part('sharedStrings', 'sharedStrings.xml') };
}

const isTrue = (value: string | undefined) => value === '1' || value === 'true';

/**
 * A part's relationships: type (last path segment) → target, and `#Id` → target, targets
 * resolved against `base` (the folder of the part they belong to).
 */
async function relationships(zip: ZipArchive, path: string, base: string, file: string): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  const entry = zip.entry(path);
  if (entry === undefined) return found;
  parseXml(await readText(zip, entry, file), (name, attributes) => {
    const { Id, Type, Target, TargetMode } = attributes;
    if (name !== 'Relationship' || Target === undefined || TargetMode === 'External') return;
    const target = Target.startsWith('/') ? Target.slice(1) : posix.normalize(posix.join(base, Target));
    if (Id !== undefined) found.set(`#${Id}`, target);
    const type = Type?.startsWith(REL) ? Type.slice(REL.length) : Type?.startsWith(STRICT_REL) ? Type.slice(STRICT_REL.length) : undefined;
    if (type !== undefined && !found.has(type)) found.set(type, target);
  });
  return found;
}

function parseXml(text: string, open: (name: string, attributes: Attributes) => void): void {
  const events = xmlEvents({ open, close() {}, text() {}, wantText: false });
  events.write(text);
  events.end();
}

/**
 * Built-in number formats by id (ECMA-376 18.8.30), enough to tell dates, padded and fixed
 * numbers apart; the East Asian date ids read as a date.
 */
const BUILT_IN: Record<number, string> = {
  1: '0',
  2: '0.00',
  3: '#,##0',
  4: '#,##0.00',
  9: '0%',
  10: '0.00%',
  11: '0.00E+00',
  12: '# ?/?',
  13: '# ??/??',
  14: 'mm-dd-yy',
  15: 'd-mmm-yy',
  16: 'd-mmm',
  17: 'mmm-yy',
  18: 'h:mm AM/PM',
  19: 'h:mm:ss AM/PM',
  20: 'h:mm',
  21: 'h:mm:ss',
  22: 'm/d/yy h:mm',
  37: '#,##0 ;(#,##0)',
  38: '#,##0 ;[Red](#,##0)',
  39: '#,##0.00;(#,##0.00)',
  40: '#,##0.00;[Red](#,##0.00)',
  45: 'mm:ss',
  46: '[h]:mm:ss',
  47: 'mmss.0',
  48: '##0.0E+0',
  49: '@',
};
for (const id of [27, 28, 29, 30, 31, 34, 35, 36, 50, 51, 52, 53, 54, 57, 58]) BUILT_IN[id] = 'yyyy-mm-dd';
for (const id of [32, 33, 55, 56]) BUILT_IN[id] = 'h:mm:ss';

/**
 * The most styles.xml may inflate to. Excel allows 64,000 cell formats; a workbook bloated to
 * that limit holds ~15 MB of styles. Streamed, so what is held is one entry per `<xf>`.
 */
export const MAX_STYLES_BYTES = 64 * 1024 * 1024;

/** The number format of each cell style (`s` attribute), by style index. */
export async function readStyles(zip: ZipArchive, entry: Entry | undefined, file: string): Promise<(string | undefined)[]> {
  if (entry === undefined) return [];
  checkPartSize(entry, file, MAX_STYLES_BYTES);
  const custom = new Map<string, string>();
  const formats: (string | undefined)[] = [];
  let inCellXfs = false;
  const events = xmlEvents({
    open(name, attributes) {
      if (name === 'numFmt' && attributes.numFmtId !== undefined) {
        custom.set(attributes.numFmtId, attributes.formatCode ?? '');
      } else if (name === 'cellXfs') {
        inCellXfs = true;
      } else if (name === 'xf' && inCellXfs) {
        const id = attributes.numFmtId ?? '0';
        formats.push(custom.get(id) ?? BUILT_IN[Number(id)]);
      }
    },
    close(name) {
      if (name === 'cellXfs') inCellXfs = false;
    },
    text() {},
    wantText: false,
  });
  const decoder = new TextDecoder();
  for await (const chunk of await zip.open(entry)) events.write(decoder.decode(chunk as Buffer, { stream: true }));
  events.write(decoder.decode());
  events.end();
  return formats;
}

/**
 * Streams the shared strings into a compact table: rich-text runs joined, phonetic runs left
 * out. Stops, refusing the file, at the table's bound or at one string over its own.
 */
export async function readSharedStrings(zip: ZipArchive, entry: Entry | undefined, file: string): Promise<SharedStrings> {
  if (entry === undefined) return new SharedStrings();
  let table: SharedStrings | undefined;
  let text = '';
  let phonetic = 0;
  const tooLarge = (what: string) =>
    new InputError(`${shownPath(file)}: ${what}: too much to read from a workbook safely; save it as .csv`, 'input_too_large', {
      file,
    });
  const handler: XmlHandler = {
    wantText: false,
    open(name, attributes: Attributes) {
      if (name === 't') handler.wantText = phonetic === 0;
      else if (name === 'si') text = '';
      else if (name === 'rPh') phonetic++;
      else if (name === 'sst') table = new SharedStrings(Number(attributes.uniqueCount ?? attributes.count) || 0);
    },
    close(name) {
      if (name === 't') handler.wantText = false;
      else if (name === 'rPh') phonetic--;
      else if (name === 'si') {
        table ??= new SharedStrings();
        if (!table.add(unescapeOoxml(text))) {
          throw tooLarge(`its shared strings (the text of its cells) exceed ${formatBytes(MAX_SHARED_STRINGS_BYTES)}`);
        }
      }
    },
    text(value) {
      if (text.length + value.length > MAX_CELL_CHARS) {
        const index = table?.size ?? 0;
        throw tooLarge(`shared string ${index} is over ${MAX_CELL_CHARS.toLocaleString('en-US')} characters`);
      }
      text += value;
    },
  };
  const events = xmlEvents(handler);
  const decoder = new TextDecoder();
  for await (const chunk of await zip.open(entry)) events.write(decoder.decode(chunk as Buffer, { stream: true }));
  events.write(decoder.decode());
  events.end();
  return table ?? new SharedStrings();
}
