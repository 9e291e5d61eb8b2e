/**
 * The zip around the report's worksheets: the fixed parts of an xlsx package (content types,
 * relationships, workbook, styles) first, as readers that take entries in order need them
 * (exceljs does), then each data sheet's XML streamed through deflate into the output as it is
 * written, then the summary sheet, made at the end from the counts. Waits on every stage, so
 * memory stays one page deep at any size.
 */
import { PassThrough } from 'node:stream';
import { ZipFile } from 'yazl';
import { xmlText } from './xlsx-sheet.js';
import type { Output } from './output.js';
import { STYLES } from './xlsx-styles.js';

const XML = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n';
const MAIN = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';
const RELS = 'http://schemas.openxmlformats.org/package/2006/relationships';
const DOC_RELS = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
const TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml';
export const SHEET_PATH = 'xl/worksheets/sheet1.xml';

/** One sheet of the workbook: its tab name and its part. */
export interface SheetEntry {
  name: string;
  path: string;
}

const contentTypes = (sheets: readonly SheetEntry[]) =>
  `${XML}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
  '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>' +
  '<Default Extension="xml" ContentType="application/xml"/>' +
  `<Override PartName="/xl/workbook.xml" ContentType="${TYPE}.sheet.main+xml"/>` +
  sheets.map((sheet) => `<Override PartName="/${sheet.path}" ContentType="${TYPE}.worksheet+xml"/>`).join('') +
  `<Override PartName="/xl/styles.xml" ContentType="${TYPE}.styles+xml"/></Types>`;

const ROOT_RELS =
  `${XML}<Relationships xmlns="${RELS}">` +
  `<Relationship Id="rId1" Type="${DOC_RELS}/officeDocument" Target="xl/workbook.xml"/></Relationships>`;

/** The tabs in order; the workbook opens on `active` (the summary when there is one). */
const workbook = (sheets: readonly SheetEntry[], active: number) =>
  `${XML}<workbook xmlns="${MAIN}" xmlns:r="${DOC_RELS}"><bookViews><workbookView${active === 0 ? '' : ` activeTab="${active}"`}/></bookViews>` +
  `<sheets>${sheets.map((sheet, i) => `<sheet name="${xmlAttribute(sheet.name)}" sheetId="${i + 1}" r:id="rId${relOf(sheets, sheet)}"/>`).join('')}</sheets></workbook>`;

/** Relationship ids follow the part's number (sheet3.xml is rId3), whatever its tab. */
const relOf = (_sheets: readonly SheetEntry[], sheet: SheetEntry) => Number(/sheet(\d+)\.xml$/.exec(sheet.path)![1]);

const workbookRels = (sheets: readonly SheetEntry[]) =>
  `${XML}<Relationships xmlns="${RELS}">` +
  sheets
    .map((sheet) => ({ id: relOf(sheets, sheet), target: sheet.path.slice('xl/'.length) }))
    .sort((a, b) => a.id - b.id)
    .map(({ id, target }) => `<Relationship Id="rId${id}" Type="${DOC_RELS}/worksheet" Target="${target}"/>`)
    .join('') +
  `<Relationship Id="rId${sheets.length + 1}" Type="${DOC_RELS}/styles" Target="styles.xml"/></Relationships>`;

const xmlAttribute = (text: string) => xmlText(text).replaceAll('"', '&quot;');

/** The package's fixed parts for these sheets: a reader that takes entries in order meets them first. */
function fixedParts(sheets: readonly SheetEntry[], active: number): (readonly [string, string])[] {
  return [
    ['[Content_Types].xml', contentTypes(sheets)],
    ['_rels/.rels', ROOT_RELS],
    ['xl/workbook.xml', workbook(sheets, active)],
    ['xl/_rels/workbook.xml.rels', workbookRels(sheets)],
  ];
}

/** Where the summary sheet goes among the tabs; the workbook opens on it. */
export type SummaryPlace = 'first' | 'last' | 'none';

/** An Output whose writes are the XML of the data sheet being written. */
export interface WorkbookOutput extends Output {
  /** Ends the data sheet being written and starts the next one named when the workbook was made. */
  nextSheet(): Promise<void>;
  /** The summary sheet's XML, given before commit when the summary place is not `none`. */
  setSummary(xml: string): void;
}

/**
 * The zipped workbook written to `file`, its data sheets named in `names` (tab order) and
 * written one after the other, the first at once. Commit ends the last sheet, adds the summary,
 * waits for the zip's last byte, then commits `file`.
 */
export function zipWorkbook(file: Output, summary: SummaryPlace, names: readonly string[]): WorkbookOutput {
  const zip = new ZipFile();
  const data: SheetEntry[] = names.map((name, i) => ({ name, path: `xl/worksheets/sheet${i + 1}.xml` }));
  const summaryEntry: SheetEntry = { name: 'Summary', path: `xl/worksheets/sheet${data.length + 1}.xml` };
  const sheets = summary === 'none' ? data : summary === 'first' ? [summaryEntry, ...data] : [...data, summaryEntry];
  const active = summary === 'last' ? data.length : 0;
  for (const [name, xml] of fixedParts(sheets, active)) zip.addBuffer(Buffer.from(xml, 'utf8'), name);
  zip.addBuffer(Buffer.from(STYLES, 'utf8'), 'xl/styles.xml');
  const zipped = zip.outputStream as PassThrough;
  let sheet: PassThrough | undefined;
  let index = -1;
  let summaryXml: string | undefined;
  let failure: unknown;
  // The first failure (a write downstream, the zip itself) stops every stage, so no write
  // waits for a 'drain' that will never come.
  const fail = (error: unknown) => {
    failure ??= error;
    sheet?.destroy();
    zipped.destroy();
  };
  zip.on('error', fail);
  const next = () => {
    sheet?.end();
    index++;
    if (index >= data.length) throw new Error(`zipWorkbook: ${data.length} sheets were named`);
    sheet = new PassThrough({ highWaterMark: 1 << 16 });
    zip.addReadStream(sheet, data[index]!.path);
  };
  next();
  const pumped = (async () => {
    for await (const chunk of zipped as AsyncIterable<Buffer>) await file.write(chunk);
  })();
  pumped.catch(fail);
  const check = () => {
    if (failure !== undefined) throw failure;
  };
  let done = false;
  return {
    target: file.target,
    get bytes() {
      return file.bytes;
    },
    get readerGone() {
      return file.readerGone;
    },
    async write(text) {
      check();
      if (!sheet!.write(text)) await drainedOrClosed(sheet!);
      check();
    },
    async nextSheet() {
      check();
      next();
    },
    setSummary(xml) {
      summaryXml = xml;
    },
    async commit() {
      check();
      sheet?.end();
      if (summary !== 'none') zip.addBuffer(Buffer.from(summaryXml ?? '', 'utf8'), summaryEntry.path);
      zip.end();
      await pumped.catch(() => {});
      check();
      await file.commit();
      done = true;
    },
    async abort() {
      if (done) return;
      done = true;
      fail(new Error('aborted'));
      await pumped.catch(() => {});
      await file.abort();
    },
  };
}

function drainedOrClosed(stream: PassThrough): Promise<void> {
  return new Promise((resolve) => {
    const settle = () => {
      stream.off('drain', settle);
      stream.off('close', settle);
      resolve();
    };
    stream.on('drain', settle);
    stream.on('close', settle);
  });
}
