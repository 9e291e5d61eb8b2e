/**
 * Small hostile workbooks, made byte by byte: .xls records (BIFF8) and the OLE container they
 * live in, .ods and .xlsx parts. Each "bomb" is a kilobyte or so on disk that declares what
 * would take gigabytes to hold once read as it says (see the hostile manifest and
 * input.workbook-bombs.test.ts); the plain builders make the valid workbooks around them.
 */
import { repeated, writeZip, type ZipEntry } from './zip.helpers.js';

const HEADER = ['name', 'email', 'country', 'address'];

// ---- BIFF8 (.xls) -----------------------------------------------------------------------

export function record(type: number, body: Buffer | number[] = []): Buffer {
  const data = Buffer.from(body);
  const head = Buffer.alloc(4);
  head.writeUInt16LE(type, 0);
  head.writeUInt16LE(data.length, 2);
  return Buffer.concat([head, data]);
}

const u16 = (...values: number[]) => {
  const buffer = Buffer.alloc(values.length * 2);
  values.forEach((value, i) => buffer.writeUInt16LE(value, i * 2));
  return buffer;
};

/** A text cell (Label): row, column, then the text as BIFF8 writes it (8-bit characters). */
export function label(row: number, column: number, text: string): Buffer {
  return record(0x0204, Buffer.concat([u16(row, column, 15, text.length), Buffer.from([0]), Buffer.from(text, 'latin1')]));
}

/** A number cell. */
export function number(row: number, column: number, value: number): Buffer {
  const body = Buffer.alloc(14);
  body.writeUInt16LE(row, 0);
  body.writeUInt16LE(column, 2);
  body.writeUInt16LE(15, 4);
  body.writeDoubleLE(value, 6);
  return record(0x0203, body);
}

/**
 * A formula cell whose cached result is `value` (a number, or a string that follows in a
 * STRING record), with `tokens` as its parsed formula and `extra` after them.
 */
export function formula(row: number, column: number, value: number | string, tokens: Buffer, extra: Buffer = Buffer.alloc(0)): Buffer {
  const cached = Buffer.alloc(8);
  if (typeof value === 'number') cached.writeDoubleLE(value, 0);
  else cached.writeUInt16LE(0xffff, 6);
  const body = Buffer.concat([u16(row, column, 15), cached, u16(0), Buffer.alloc(4), u16(tokens.length), tokens, extra]);
  const cell = record(0x0006, body);
  if (typeof value === 'number') return cell;
  return Buffer.concat([cell, record(0x0207, Buffer.concat([u16(value.length), Buffer.from([0]), Buffer.from(value, 'latin1')]))]);
}

/**
 * A BIFF8 workbook stream of one sheet, "Clients": the header row, then `cells` (records of
 * row 1 on). Padded with zeros to 4 KiB, so that its container keeps it out of the mini stream.
 */
export function biffWorkbook(cells: Buffer[]): Buffer {
  const bof = (kind: number) => record(0x0809, Buffer.concat([u16(0x0600, kind, 0, 0), Buffer.alloc(8)]));
  const name = Buffer.from('Clients', 'latin1');
  const boundSheet = (at: number) => record(0x0085, Buffer.concat([Buffer.from([at & 0xff, (at >> 8) & 0xff, (at >> 16) & 0xff, at >>> 24, 0, 0, name.length, 0]), name]));
  const globals = [bof(0x0005), record(0x0042, u16(1200))];
  const globalsLength = Buffer.concat(globals).length + boundSheet(0).length + 4;
  const sheet = Buffer.concat([bof(0x0010), ...HEADER.map((text, i) => label(0, i, text)), ...cells, record(0x000a)]);
  const stream = Buffer.concat([...globals, boundSheet(globalsLength), record(0x000a), sheet]);
  return stream.length >= 4096 ? stream : Buffer.concat([stream, Buffer.alloc(4096 - stream.length)]);
}

const END_OF_CHAIN = 0xfffffffe;
const FREE = 0xffffffff;

/**
 * An OLE compound file (version 3, 512-byte sectors) holding `stream` as "Workbook": sector 0
 * the FAT, 1 the directory, the stream from 2. `cycle` links the stream's two first sectors to
 * each other and points the stream at the second, declaring 1 MB: the loop SheetJS's reader
 * followed until memory ran out.
 */
export function compoundFile(stream: Buffer, cycle = false): Buffer {
  const sectors = Math.ceil(stream.length / 512);
  const header = Buffer.alloc(512);
  Buffer.from('d0cf11e0a1b11ae1', 'hex').copy(header);
  header.writeUInt16LE(0x3e, 0x18);
  header.writeUInt16LE(3, 0x1a);
  header.writeUInt16LE(0xfffe, 0x1c);
  header.writeUInt16LE(9, 0x1e);
  header.writeUInt16LE(6, 0x20);
  header.writeUInt32LE(1, 0x2c);
  header.writeUInt32LE(1, 0x30);
  header.writeUInt32LE(4096, 0x38);
  header.writeUInt32LE(END_OF_CHAIN, 0x3c);
  header.writeUInt32LE(END_OF_CHAIN, 0x44);
  for (let i = 0; i < 109; i++) header.writeUInt32LE(i === 0 ? 0 : FREE, 0x4c + i * 4);
  const fat = Buffer.alloc(512, 0xff);
  fat.writeUInt32LE(0xfffffffd, 0);
  fat.writeUInt32LE(END_OF_CHAIN, 4);
  for (let i = 0; i < sectors; i++) fat.writeUInt32LE(i === sectors - 1 ? END_OF_CHAIN : 3 + i, (2 + i) * 4);
  if (cycle) {
    fat.writeUInt32LE(3, 8);
    fat.writeUInt32LE(2, 12);
  }
  const directory = Buffer.alloc(512);
  const entry = (index: number, name: string, type: number, child: number, start: number, size: number) => {
    const at = index * 128;
    directory.write(name, at, 'utf16le');
    directory.writeUInt16LE((name.length + 1) * 2, at + 0x40);
    directory[at + 0x42] = type;
    directory[at + 0x43] = 1;
    directory.writeUInt32LE(FREE, at + 0x44);
    directory.writeUInt32LE(FREE, at + 0x48);
    directory.writeUInt32LE(child, at + 0x4c);
    directory.writeUInt32LE(start, at + 0x74);
    directory.writeUInt32LE(size, at + 0x78);
  };
  entry(0, 'Root Entry', 5, 1, END_OF_CHAIN, 0);
  entry(1, 'Workbook', 2, FREE, cycle ? 3 : 2, cycle ? 1_000_000 : stream.length);
  const data = Buffer.alloc(sectors * 512);
  stream.copy(data);
  return Buffer.concat([header, fat, directory, data]);
}

/** The .xls bombs: each ~6 KB, each a different way SheetJS believed what a record says. */
export const xlsBombs = {
  /** 600 MergeCells records of 2 bytes, each "65,535 merged ranges". */
  merges: () => compoundFile(biffWorkbook(Array.from({ length: 600 }, () => record(0x00e5, u16(0xffff))))),
  /** 400 text cells of 9 bytes, each "65,535 characters long". */
  labels: () => compoundFile(biffWorkbook(Array.from({ length: 400 }, (_, i) => record(0x0204, Buffer.concat([u16(1 + i, 0, 15, 0xffff), Buffer.from([1])]))))),
  /** A formula record too short to hold its tokens' length: SheetJS's token parser never returns. */
  shortFormula: () => compoundFile(biffWorkbook([record(0x0006, Buffer.from('0500303036363603020e001300070010', 'hex'))])),
  /** A 4-byte STRING record: SheetJS reads its missing length as `undefined` and counts to it for ever. */
  emptyString: () => compoundFile(biffWorkbook([record(0x0007)])),
  /** A container whose Workbook stream's sectors point at each other. */
  cycle: () => compoundFile(biffWorkbook([label(1, 0, 'x')]), true),
};

// ---- Text workbooks saved as .xls ----------------------------------------------------------

const XML_HEAD = '<?xml version="1.0"?><Workbook xmlns="urn:schemas-microsoft-com:office:spreadsheet" xmlns:ss="urn:schemas-microsoft-com:office:spreadsheet">';
const xmlRow = (cells: string[]) => `<Row>${cells.map((text) => `<Cell><Data ss:Type="String">${text}</Data></Cell>`).join('')}</Row>`;

export const textBombs = {
  /** Excel 2003 XML: one column "spanning" a hundred million columns (SheetJS copies it for each). */
  xmlSpan: () => `${XML_HEAD}<Worksheet ss:Name="Clients"><Table><Column ss:Span="100000000"/>${xmlRow(HEADER)}</Table></Worksheet></Workbook>`,
  /** Excel 2003 XML: a cell at column 1,000,000,000 (a sparse row a reader would walk). */
  xmlIndex: () => `${XML_HEAD}<Worksheet ss:Name="Clients"><Table>${xmlRow(HEADER)}<Row><Cell ss:Index="1000000000"><Data ss:Type="String">x</Data></Cell></Row></Table></Worksheet></Workbook>`,
  /** HTML: a cell a billion columns wide, then one after it. */
  htmlWide: () => `<html><body><table><tr>${HEADER.map((text) => `<td>${text}</td>`).join('')}</tr><tr><td colspan="1000000000">x</td><td>y</td></tr></table></body></html>`,
};

// ---- .ods -----------------------------------------------------------------------------------

const ODS_NS =
  'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0" xmlns:number="urn:oasis:names:tc:opendocument:xmlns:datastyle:1.0"';
export const odsText = (text: string) => `<table:table-cell office:value-type="string"><text:p>${text}</text:p></table:table-cell>`;
export const odsRow = (cells: string[]) => `<table:table-row>${cells.map(odsText).join('')}</table:table-row>`;

/** content.xml of one sheet, "Clients": the header row, then `rows` (XML), after `styles` (automatic styles). */
export function odsContent(rows: string, styles = ''): string {
  return `<?xml version="1.0" encoding="UTF-8"?><office:document-content ${ODS_NS}><office:automatic-styles>${styles}</office:automatic-styles><office:body><office:spreadsheet><table:table table:name="Clients">${odsRow(HEADER)}${rows}</table:table></office:spreadsheet></office:body></office:document-content>`;
}

/** An .ods of `content` (chunks, so a large one is never held), stored the way LibreOffice stores it. */
export function writeOds(path: string, content: () => Iterable<Buffer | string>): void {
  const entries: ZipEntry[] = [
    { name: 'mimetype', chunks: () => ['application/vnd.oasis.opendocument.spreadsheet'] },
    { name: 'content.xml', chunks: content },
  ];
  writeZip(path, entries);
}

export const odsBombs = {
  /** The finding: one row of 1,000 cells, repeated 10,000 times. */
  repeats: () => odsContent('<table:table-row table:number-rows-repeated="10000"><table:table-cell table:number-columns-repeated="1000" office:value-type="string"><text:p>x</text:p></table:table-cell></table:table-row>'),
  /** A cell repeated across a billion columns. */
  columns: () => odsContent(`<table:table-row>${'<table:table-cell table:number-columns-repeated="1000000000" office:value-type="string"><text:p>x</text:p></table:table-cell>'}</table:table-row>`),
  /** 100 cells of a million spaces each (`<text:s text:c="…"/>`): 100 Mi characters from 5 KB. */
  spaces: () => odsContent(Array.from({ length: 25 }, () => `<table:table-row>${'<table:table-cell office:value-type="string"><text:p><text:s text:c="1000000"/></text:p></table:table-cell>'.repeat(4)}</table:table-row>`).join('')),
};

/** A content.xml whose cell has an attribute 16 Mi characters long: a tag a reader would hold whole. */
export function* odsEndlessTag(): Iterable<Buffer | string> {
  const [head] = odsContent('<table:table-row><table:table-cell office:value-type="string" office:string-value="').split('</table:table></office:spreadsheet>');
  yield head!;
  yield* repeated('a', 16 * 1024 * 1024);
  yield '"><text:p>x</text:p></table:table-cell></table:table-row></table:table></office:spreadsheet></office:body></office:document-content>';
}

// ---- .xlsx ----------------------------------------------------------------------------------

const NS = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';
const REL = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
const PKG = 'http://schemas.openxmlformats.org/package/2006/relationships';
const xmlPart = (text: string) => `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n${text}`;

/** A sheet's XML: `before` (e.g. a dimension), the header row in inline strings, then `rows`. */
export function* xlsxSheet(rows: Iterable<Buffer | string> = [], before = ''): Iterable<Buffer | string> {
  const cells = HEADER.map((text, i) => `<c r="${'ABCD'[i]}1" t="inlineStr"><is><t>${text}</t></is></c>`).join('');
  yield xmlPart(`<worksheet xmlns="${NS}">${before}<sheetData><row r="1">${cells}</row>`);
  yield* rows;
  yield '</sheetData></worksheet>';
}

/** An .xlsx of one sheet, "Clients"; `workbook` and `styles` replace those parts when given. */
export function writeXlsx(path: string, parts: { sheet: () => Iterable<Buffer | string>; workbook?: () => Iterable<Buffer | string>; styles?: () => Iterable<Buffer | string> }): void {
  const entries: ZipEntry[] = [
    { name: '_rels/.rels', chunks: () => [xmlPart(`<Relationships xmlns="${PKG}"><Relationship Id="rId1" Type="${REL}/officeDocument" Target="xl/workbook.xml"/></Relationships>`)] },
    {
      name: 'xl/workbook.xml',
      chunks: parts.workbook ?? (() => [xmlPart(`<workbook xmlns="${NS}" xmlns:r="${REL}"><sheets><sheet name="Clients" sheetId="1" r:id="rId1"/></sheets></workbook>`)]),
    },
    {
      name: 'xl/_rels/workbook.xml.rels',
      chunks: () => [xmlPart(`<Relationships xmlns="${PKG}"><Relationship Id="rId1" Type="${REL}/worksheet" Target="worksheets/sheet1.xml"/></Relationships>`)],
    },
    { name: 'xl/worksheets/sheet1.xml', chunks: parts.sheet },
  ];
  if (parts.styles) entries.push({ name: 'xl/styles.xml', chunks: parts.styles });
  writeZip(path, entries);
}

export const xlsxBombs = {
  /** styles.xml of 65 MiB of cell formats (65 KB of zip): held whole, a gigabyte was an OOM. */
  styles: (path: string) => writeXlsx(path, { sheet: () => xlsxSheet(), styles: () => repeated('<xf numFmtId="0"/>', 65 * 1024 * 1024) }),
  /** workbook.xml of 17 MiB of sheets. */
  workbook: (path: string) =>
    writeXlsx(path, {
      sheet: () => xlsxSheet(),
      workbook: function* () {
        yield xmlPart(`<workbook xmlns="${NS}" xmlns:r="${REL}"><sheets>`);
        yield* repeated('<sheet name="Clients" sheetId="1" r:id="rId1"/>', 17 * 1024 * 1024);
        yield '</sheets></workbook>';
      },
    }),
  /** A cell whose attribute runs on for 16 Mi characters. */
  endlessTag: (path: string) =>
    writeXlsx(path, {
      sheet: () =>
        xlsxSheet(
          (function* () {
            yield '<row r="2"><c r="A2" t="inlineStr" x="';
            yield* repeated('a', 16 * 1024 * 1024);
            yield '"><is><t>x</t></is></c></row>';
          })(),
        ),
    }),
  /** Not a bomb: a sheet that declares Excel's whole grid as its dimension, and holds one client. */
  dimension: (path: string) =>
    writeXlsx(path, {
      sheet: () =>
        xlsxSheet(
          [
            `<row r="2">${['Client 1', 'client1@example.com', 'DE', 'Street 1'].map((text, i) => `<c r="${'ABCD'[i]}2" t="inlineStr"><is><t>${text}</t></is></c>`).join('')}</row>`,
          ],
          '<dimension ref="A1:XFD1048576"/>',
        ),
    }),
};
