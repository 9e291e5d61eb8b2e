/**
 * The zip around the report's one worksheet: the fixed parts of an xlsx package (content
 * types, relationships, workbook, styles) and the sheet XML streamed through deflate into the
 * output as it is written. Waits on every stage, so memory stays one page deep at any size.
 */
import { PassThrough } from 'node:stream';
import { ZipFile } from 'yazl';
import type { Output } from './output.js';

/** Indices into the cellXfs of STYLES. */
export const STYLE = { header: 1, dateTime: 2, text: 3 } as const;

const XML = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n';
const MAIN = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';
const RELS = 'http://schemas.openxmlformats.org/package/2006/relationships';
const DOC_RELS = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
const TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml';
export const SHEET_PATH = 'xl/worksheets/sheet1.xml';

const CONTENT_TYPES =
  `${XML}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
  '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>' +
  '<Default Extension="xml" ContentType="application/xml"/>' +
  `<Override PartName="/xl/workbook.xml" ContentType="${TYPE}.sheet.main+xml"/>` +
  `<Override PartName="/${SHEET_PATH}" ContentType="${TYPE}.worksheet+xml"/>` +
  `<Override PartName="/xl/styles.xml" ContentType="${TYPE}.styles+xml"/></Types>`;

const ROOT_RELS =
  `${XML}<Relationships xmlns="${RELS}">` +
  `<Relationship Id="rId1" Type="${DOC_RELS}/officeDocument" Target="xl/workbook.xml"/></Relationships>`;

const WORKBOOK =
  `${XML}<workbook xmlns="${MAIN}" xmlns:r="${DOC_RELS}"><bookViews><workbookView/></bookViews>` +
  '<sheets><sheet name="clients" sheetId="1" r:id="rId1"/></sheets></workbook>';

const WORKBOOK_RELS =
  `${XML}<Relationships xmlns="${RELS}">` +
  `<Relationship Id="rId1" Type="${DOC_RELS}/worksheet" Target="worksheets/sheet1.xml"/>` +
  `<Relationship Id="rId2" Type="${DOC_RELS}/styles" Target="styles.xml"/></Relationships>`;

const FONT = '<sz val="11"/><name val="Calibri"/><family val="2"/>';
/**
 * Cell formats in STYLE order: default, bold text header, date-time with ms, text (@). The
 * date-time's format shows ` UTC` after the time (quoted text: readers still take it for a date),
 * so a cell says it is not local time; the header stays `created_at`, as in CSV and on import.
 */
const STYLES =
  `${XML}<styleSheet xmlns="${MAIN}">` +
  '<numFmts count="1"><numFmt numFmtId="164" formatCode="yyyy-mm-dd hh:mm:ss.000 &quot;UTC&quot;"/></numFmts>' +
  `<fonts count="2"><font>${FONT}</font><font><b/>${FONT}</font></fonts>` +
  '<fills count="2"><fill><patternFill patternType="none"/></fill><fill><patternFill patternType="gray125"/></fill></fills>' +
  '<borders count="1"><border><left/><right/><top/><bottom/><diagonal/></border></borders>' +
  '<cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs>' +
  '<cellXfs count="4"><xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/>' +
  '<xf numFmtId="49" fontId="1" fillId="0" borderId="0" xfId="0" applyFont="1" applyNumberFormat="1"/>' +
  '<xf numFmtId="164" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/>' +
  '<xf numFmtId="49" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/></cellXfs>' +
  '<cellStyles count="1"><cellStyle name="Normal" xfId="0" builtinId="0"/></cellStyles></styleSheet>';

/** The workbook's parts before the sheet: a reader that takes entries in order meets these first. */
const PARTS: readonly (readonly [string, string])[] = [
  ['[Content_Types].xml', CONTENT_TYPES],
  ['_rels/.rels', ROOT_RELS],
  ['xl/workbook.xml', WORKBOOK],
  ['xl/_rels/workbook.xml.rels', WORKBOOK_RELS],
  ['xl/styles.xml', STYLES],
];

/**
 * An Output taking the sheet's XML text and writing the zipped workbook to `file`: commit
 * ends the sheet, waits for the zip's last byte, then commits `file`.
 */
export function zipWorkbook(file: Output): Output {
  const zip = new ZipFile();
  for (const [name, xml] of PARTS) zip.addBuffer(Buffer.from(xml, 'utf8'), name);
  const sheet = new PassThrough({ highWaterMark: 1 << 16 });
  zip.addReadStream(sheet, SHEET_PATH);
  zip.end();
  const zipped = zip.outputStream as PassThrough;
  let failure: unknown;
  // The first failure (a write downstream, the zip itself) stops every stage, so no write
  // waits for a 'drain' that will never come.
  const fail = (error: unknown) => {
    failure ??= error;
    sheet.destroy();
    zipped.destroy();
  };
  zip.on('error', fail);
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
    async write(text) {
      check();
      if (!sheet.write(text)) await drainedOrClosed(sheet);
      check();
    },
    async commit() {
      check();
      sheet.end();
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
