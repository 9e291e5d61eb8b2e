/**
 * The XML of the fix-it workbook, as text with no I/O: the fixed parts, the sheet's start,
 * cells and end, and per marked cell a comment and the VML note shape Excel needs to show it.
 */
import { xmlText } from '../../export/xlsx-sheet.js';

export const SHEET = 'xl/worksheets/sheet1.xml';
export const COMMENTS = 'xl/comments1.xml';
export const VML = 'xl/drawings/vmlDrawing1.vml';

const XML = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n';
const MAIN = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';
const RELS = 'http://schemas.openxmlformats.org/package/2006/relationships';
const DOC_RELS = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
const TYPE = 'application/vnd.openxmlformats-officedocument';

/** cellXfs indices: bold header, text, text on a light red fill. */
const STYLE = { header: 1, text: 2, marked: 3 } as const;
const FONT = '<sz val="11"/><name val="Calibri"/><family val="2"/>';
const STYLES =
  `${XML}<styleSheet xmlns="${MAIN}">` +
  `<fonts count="2"><font>${FONT}</font><font><b/>${FONT}</font></fonts>` +
  '<fills count="3"><fill><patternFill patternType="none"/></fill><fill><patternFill patternType="gray125"/></fill>' +
  '<fill><patternFill patternType="solid"><fgColor rgb="FFFFC7CE"/><bgColor indexed="64"/></patternFill></fill></fills>' +
  '<borders count="1"><border><left/><right/><top/><bottom/><diagonal/></border></borders>' +
  '<cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs>' +
  '<cellXfs count="4"><xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/>' +
  '<xf numFmtId="49" fontId="1" fillId="0" borderId="0" xfId="0" applyFont="1" applyNumberFormat="1"/>' +
  '<xf numFmtId="49" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/>' +
  '<xf numFmtId="49" fontId="0" fillId="2" borderId="0" xfId="0" applyFill="1" applyNumberFormat="1"/></cellXfs>' +
  '<cellStyles count="1"><cellStyle name="Normal" xfId="0" builtinId="0"/></cellStyles></styleSheet>';

export function fixedParts(): [string, string][] {
  return [
    [
      '[Content_Types].xml',
      `${XML}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
        `<Default Extension="rels" ContentType="${TYPE.replace('officedocument', 'package')}.relationships+xml"/>` +
        '<Default Extension="xml" ContentType="application/xml"/>' +
        `<Default Extension="vml" ContentType="${TYPE}.vmlDrawing"/>` +
        `<Override PartName="/xl/workbook.xml" ContentType="${TYPE}.spreadsheetml.sheet.main+xml"/>` +
        `<Override PartName="/${SHEET}" ContentType="${TYPE}.spreadsheetml.worksheet+xml"/>` +
        `<Override PartName="/${COMMENTS}" ContentType="${TYPE}.spreadsheetml.comments+xml"/>` +
        `<Override PartName="/xl/styles.xml" ContentType="${TYPE}.spreadsheetml.styles+xml"/></Types>`,
    ],
    [
      '_rels/.rels',
      `${XML}<Relationships xmlns="${RELS}">` +
        `<Relationship Id="rId1" Type="${DOC_RELS}/officeDocument" Target="xl/workbook.xml"/></Relationships>`,
    ],
    [
      'xl/workbook.xml',
      `${XML}<workbook xmlns="${MAIN}" xmlns:r="${DOC_RELS}"><bookViews><workbookView/></bookViews>` +
        '<sheets><sheet name="fix me" sheetId="1" r:id="rId1"/></sheets></workbook>',
    ],
    [
      'xl/_rels/workbook.xml.rels',
      `${XML}<Relationships xmlns="${RELS}">` +
        `<Relationship Id="rId1" Type="${DOC_RELS}/worksheet" Target="worksheets/sheet1.xml"/>` +
        `<Relationship Id="rId2" Type="${DOC_RELS}/styles" Target="styles.xml"/></Relationships>`,
    ],
    ['xl/styles.xml', STYLES],
    [
      'xl/worksheets/_rels/sheet1.xml.rels',
      `${XML}<Relationships xmlns="${RELS}">` +
        `<Relationship Id="rId1" Type="${DOC_RELS}/vmlDrawing" Target="../drawings/vmlDrawing1.vml"/>` +
        `<Relationship Id="rId2" Type="${DOC_RELS}/comments" Target="../comments1.xml"/></Relationships>`,
    ],
  ];
}

export function sheetStart(titles: readonly string[]): string {
  const header = titles.map((title, column) => textCell(column, 1, title, STYLE.header)).join('');
  return (
    `${XML}<worksheet xmlns="${MAIN}" xmlns:r="${DOC_RELS}">` +
    '<sheetViews><sheetView tabSelected="1" workbookViewId="0">' +
    '<pane ySplit="1" topLeftCell="A2" activePane="bottomLeft" state="frozen"/>' +
    '<selection pane="bottomLeft" activeCell="A2" sqref="A2"/></sheetView></sheetViews>' +
    `<sheetFormatPr defaultRowHeight="15"/><sheetData><row r="1">${header}</row>`
  );
}

export function sheetEnd(lastColumn: number, lastRow: number): string {
  const range = `A1:${columnLetter(lastColumn)}${lastRow}`;
  return (
    `</sheetData><autoFilter ref="${range}"/>` +
    `<ignoredErrors><ignoredError sqref="${range}" numberStoredAsText="1"/></ignoredErrors>` +
    '<legacyDrawing r:id="rId1"/></worksheet>'
  );
}

/** A cell as text whatever it holds; an empty unmarked cell is left out. */
export function cell(column: number, row: number, value: string, marked: boolean): string {
  if (value === '' && !marked) return '';
  return textCell(column, row, value, marked ? STYLE.marked : STYLE.text);
}

function textCell(column: number, row: number, value: string, style: number): string {
  const ref = `${columnLetter(column)}${row}`;
  if (value === '') return `<c r="${ref}" s="${style}"/>`;
  return `<c r="${ref}" s="${style}" t="inlineStr"><is><t xml:space="preserve">${xmlText(value)}</t></is></c>`;
}

export const COMMENTS_START = `${XML}<comments xmlns="${MAIN}"><authors><author>ccs-bulk</author></authors><commentList>`;
export const COMMENTS_END = '</commentList></comments>';

/** A comment: the reason, then how to fix it where the reason does not already say, then `after` (a line of context). */
export function comment(column: number, row: number, reason: string, after?: string): string {
  const fix = fixFor(reason);
  const text = (fix === undefined ? reason : `${reason}\nFix: ${fix}`) + (after === undefined ? '' : `\n${after}`);
  return `<comment ref="${columnLetter(column)}${row}" authorId="0"><text><r><t xml:space="preserve">${xmlText(text)}</t></r></text></comment>`;
}

const FIXES: readonly (readonly [RegExp, string | ((match: RegExpExecArray) => string)])[] = [
  [/did you mean (.+)\?\)$/s, (m) => typeSuggestion(m[1]!)],
  [/required, but empty$/, 'fill in this cell.'],
  [/^not an e-mail address/, 'a full address, such as name@example.com.'],
  [/^unknown country/, 'an ISO 3166 code (DE, DEU) or the English name (Germany).'],
  [/^not an ISO 4217 currency code/, 'a three-letter code such as EUR, USD, GBP.'],
  [/^not a real date in (\S+)/, (m) => `a real calendar date written ${m[1]!}.`],
];

/** `Germany (DE)` names a country two ways: either is what to type, not the label itself. */
function typeSuggestion(suggestion: string): string {
  const country = /^(.+) \(([A-Z]{2})\)$/.exec(suggestion);
  return country ? `type "${country[1]!}" or "${country[2]!}".` : `type "${suggestion}".`;
}

export function fixFor(reason: string): string | undefined {
  for (const [pattern, fix] of FIXES) {
    const match = pattern.exec(reason);
    if (match) return typeof fix === 'string' ? fix : fix(match);
  }
  return undefined;
}

export const VML_START =
  '<xml xmlns:v="urn:schemas-microsoft-com:vml" xmlns:o="urn:schemas-microsoft-com:office:office" ' +
  'xmlns:x="urn:schemas-microsoft-com:office:excel"><o:shapelayout v:ext="edit"><o:idmap v:ext="edit" data="1"/>' +
  '</o:shapelayout><v:shapetype id="_x0000_t202" coordsize="21600,21600" o:spt="202" ' +
  'path="m,l,21600r21600,l21600,xe"><v:stroke joinstyle="miter"/><v:path gradientshapeok="t" o:connecttype="rect"/>' +
  '</v:shapetype>';
export const VML_END = '</xml>';

/** The hidden note box Excel shows on hover; its anchor sits beside the cell. */
export function shape(column: number, row: number): string {
  return (
    '<v:shape type="#_x0000_t202" style="position:absolute;width:216pt;height:72pt;z-index:1;visibility:hidden" ' +
    'fillcolor="#ffffe1" o:insetmode="auto"><v:fill color2="#ffffe1"/><v:shadow on="t" color="black" obscured="t"/>' +
    '<v:path o:connecttype="none"/><v:textbox style="mso-direction-alt:auto"><div style="text-align:left"></div>' +
    `</v:textbox><x:ClientData ObjectType="Note"><x:MoveWithCells/><x:SizeWithCells/>` +
    `<x:Anchor>${column + 1}, 15, ${row - 1}, 2, ${column + 4}, 15, ${row + 4}, 16</x:Anchor>` +
    `<x:AutoFill>False</x:AutoFill><x:Row>${row - 1}</x:Row><x:Column>${column}</x:Column></x:ClientData></v:shape>`
  );
}

export function columnLetter(index: number): string {
  let letters = '';
  for (let n = index + 1; n > 0; n = Math.floor((n - 1) / 26)) {
    letters = String.fromCharCode(65 + ((n - 1) % 26)) + letters;
  }
  return letters;
}
