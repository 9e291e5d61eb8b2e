/**
 * .ods through the streaming reader: cell values as SheetJS read them before (the text a user
 * sees: paragraphs, spaces, number formats, dates), repeated rows and cells, sheets, and the
 * bounds on what repeats may declare. The producers' files are in input.sheets.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { openRows } from '../src/import/read/index.js';
import { MAX_EXPANDED_CHARS, MAX_REPEATED_CELLS } from '../src/import/read/ods-sheet.js';
import { readAll, readUntilError, useInputFiles } from './input.helpers.js';
import { odsContent, odsRow, odsText, writeOds } from './workbook-bombs.js';
import { writeZip } from './zip.helpers.js';

const files = useInputFiles();
let made = 0;

/** An .ods whose sheet "Clients" holds the header row, then `rows`. */
function ods(rows: string, styles = ''): string {
  const path = files.path(`sheet-${++made}.ods`);
  writeOds(path, () => [odsContent(rows, styles)]);
  return path;
}

/** What stops reading `path`: at the header (the first rows are read to find it) or after. */
async function readOrError(path: string): Promise<unknown> {
  try {
    return (await readUntilError(await openRows(path))).error;
  } catch (error) {
    return error;
  }
}

const cell = (attributes: string, text = '') => `<table:table-cell ${attributes}>${text === '' ? '' : `<text:p>${text}</text:p>`}</table:table-cell>`;

// LibreOffice's styles: a currency with its negative form in red (a map to the positive one),
// six-digit zero-padded IDs, and three decimals.
const STYLES =
  '<number:currency-style style:name="N104P0"><number:number number:decimal-places="2" number:min-decimal-places="2" number:min-integer-digits="1"/><number:text> </number:text><number:currency-symbol>€</number:currency-symbol></number:currency-style>' +
  '<number:currency-style style:name="N104"><number:text>-</number:text><number:number number:decimal-places="2" number:min-decimal-places="2" number:min-integer-digits="1"/><style:map style:condition="value()&gt;=0" style:apply-style-name="N104P0"/></number:currency-style>' +
  '<number:number-style style:name="N2"><number:number number:decimal-places="0" number:min-integer-digits="6"/></number:number-style>' +
  '<number:number-style style:name="N3"><number:number number:decimal-places="3" number:min-integer-digits="1" number:grouping="true"/></number:number-style>' +
  '<number:number-style style:name="N4"><number:number number:decimal-places="1000000000" number:min-integer-digits="1000000000"/></number:number-style>' +
  '<style:style style:name="ce1" style:family="table-cell" style:data-style-name="N104"/>' +
  '<style:style style:name="ce2" style:family="table-cell" style:data-style-name="N2"/>' +
  '<style:style style:name="ce3" style:family="table-cell" style:data-style-name="N3"/>' +
  '<style:style style:name="ce4" style:family="table-cell" style:data-style-name="N4"/>';

describe('cells as a spreadsheet shows them', () => {
  it('text: spans joined, white space collapsed, text:s spaces, tabs, line breaks, paragraphs; comments left out', async () => {
    const paragraphs =
      '<table:table-cell office:value-type="string"><text:p>a<text:s text:c="3"/>b<text:tab/>c<text:line-break/>d</text:p><text:p>second</text:p>' +
      '<office:annotation><text:p>a note</text:p></office:annotation></table:table-cell>';
    const source = await openRows(ods(`<table:table-row>${odsText('Ann <text:span>B</text:span>  x')}${paragraphs}</table:table-row>`));
    const [record] = await readAll(source);
    expect(record?.values.slice(0, 2)).toEqual(['Ann B x', 'a   b\tc\nd\nsecond']);
  });

  it('numbers through their style (padding and fixed decimals apply, grouping and currency do not), dates, times, booleans', async () => {
    const source = await openRows(
      ods(
        '<table:table-row>' +
          cell('table:style-name="ce1" office:value-type="currency" office:value="1234.5"', '1.234,50 €') +
          cell('table:style-name="ce2" office:value-type="float" office:value="42"', '000042') +
          cell('table:style-name="ce3" office:value-type="float" office:value="1234.5"', '1,234.500') +
          cell('office:value-type="percentage" office:value="0.255"', '25.5%') +
          cell('office:value-type="date" office:date-value="2023-01-02"', '01/02/23') +
          cell('office:value-type="date" office:date-value="2023-01-02T10:30:00"', '01/02/23 10:30') +
          cell('office:value-type="time" office:time-value="PT12H30M00S"', '12:30') +
          cell('office:value-type="boolean" office:boolean-value="true"', 'TRUE') +
          cell('table:style-name="ce4" office:value-type="float" office:value="7"', '7') +
          '</table:table-row>',
        STYLES,
      ),
    );
    const [record] = await readAll(source);
    // An absurd style (a billion digits) is held to Excel's 30.
    expect(record?.values).toEqual(['1234.50', '000042', '1234.5', '0.255', '2023-01-02', '2023-01-02T10:30:00', '1899-12-30T12:30:00', 'TRUE', `${'0'.repeat(29)}7.${'0'.repeat(30)}`]);
  });

  it('an error cell reads as its error text; a stated string wins over the paragraph', async () => {
    const source = await openRows(
      ods(
        `<table:table-row>${cell('office:value-type="string" office:string-value="" calcext:value-type="error"', '#DIV/0!')}${cell('office:value-type="string" office:string-value="stated"', 'shown')}</table:table-row>`,
      ),
    );
    expect((await readAll(source))[0]?.values).toEqual(['#DIV/0!', 'stated', '', '']);
  });
});

describe('repeated rows and cells', () => {
  it('are read as that many, on their own lines; empty repeats and covered cells only move on', async () => {
    const source = await openRows(
      ods(
        '<table:table-row table:number-rows-repeated="3">' +
          `${odsText('Rep')}<table:table-cell table:number-columns-repeated="2" office:value-type="string"><text:p>DE</text:p></table:table-cell><table:table-cell/>${odsText('x')}` +
          '</table:table-row>' +
          '<table:table-row table:number-rows-repeated="2"><table:table-cell table:number-columns-repeated="1024"/></table:table-row>' +
          `<table:table-row><table:covered-table-cell table:number-columns-repeated="2"/>${odsText('after covered')}</table:table-row>`,
      ),
    );
    const records = await readAll(source);
    expect(records.map((record) => [record.line, record.values])).toEqual([
      [2, ['Rep', 'DE', 'DE', '', 'x']],
      [3, ['Rep', 'DE', 'DE', '', 'x']],
      [4, ['Rep', 'DE', 'DE', '', 'x']],
      [7, ['', '', 'after covered', '']],
    ]);
  });

  it("LibreOffice's million trailing empty rows of 1,024 empty cells cost nothing", async () => {
    const trailing = '<table:table-row table:number-rows-repeated="1048573"><table:table-cell table:number-columns-repeated="1024"/></table:table-row>';
    const started = performance.now();
    const records = await readAll(await openRows(ods(`${odsRow(['Ann', 'a@example.com', 'DE', 'x'])}${trailing}`)));
    expect(records.map((record) => record.line)).toEqual([2]);
    // Not a timing test: a reader that walked the empty rows would take minutes, not this.
    expect(performance.now() - started).toBeLessThan(30_000);
  });

  it(`a repeat that would add more than ${MAX_REPEATED_CELLS.toLocaleString('en-US')} cells is refused at its row, before any is made`, async () => {
    const path = ods(
      `${odsRow(['Ann', 'a@example.com', 'DE', 'x'])}<table:table-row table:number-rows-repeated="10000"><table:table-cell table:number-columns-repeated="1000" office:value-type="string"><text:p>x</text:p></table:table-cell></table:table-row>`,
    );
    const error = await readOrError(path);
    expect(error).toMatchObject({ code: 'input_too_large', exitCode: 2 });
    expect((error as Error).message).toBe(
      `${path}: sheet "Clients", rows 3–10,002: what it writes once and repeats (rows, cells, spaces) would make more than 1,000,000 more cells; ` +
        'no spreadsheet repeats that much: the file is damaged or made to exhaust memory',
    );
  });

  it(`repeats and text:s spaces that would make more than ${MAX_EXPANDED_CHARS / 1024 / 1024} Mi characters are refused`, async () => {
    const spaces = '<table:table-cell office:value-type="string"><text:p><text:s text:c="1000000"/></text:p></table:table-cell>';
    const error = await readOrError(ods(`<table:table-row>${spaces.repeat(4)}</table:table-row>`.repeat(20)));
    expect(error).toMatchObject({ code: 'input_too_large', message: expect.stringContaining('more than 64 Mi characters of text') });
  });

  it('a cell past the grid, or a cell over 1 Mi characters, is refused', async () => {
    const wide = await readOrError(ods('<table:table-row><table:table-cell table:number-columns-repeated="1000000000"/><table:table-cell office:value-type="string"><text:p>x</text:p></table:table-cell></table:table-row>'));
    expect(wide).toMatchObject({ code: 'input_xlsx', message: expect.stringContaining('has more than 16,384 columns in row 2, past the grid') });
    const deep = await readOrError(ods(`<table:table-row table:number-rows-repeated="2000000"><table:table-cell/></table:table-row><table:table-row>${odsText('x')}</table:table-row>`));
    expect(deep).toMatchObject({ code: 'input_xlsx', message: expect.stringContaining('has more than 1,048,576 rows') });
    const long = await readOrError(ods(`<table:table-row>${odsText('<text:s text:c="2000000"/>')}</table:table-row>`));
    expect(long).toMatchObject({ code: 'input_too_large', message: expect.stringContaining('row 2, column 1 is over 1,048,576 characters') });
  });
});

describe('sheets', () => {
  const twoSheets = () => {
    const path = files.path(`two-${++made}.ods`);
    const second = '<table:table table:name="Second"><table:table-row><table:table-cell office:value-type="string"><text:p>other</text:p></table:table-cell></table:table-row></table:table>';
    writeOds(path, () => [odsContent(odsRow(['Ann', 'a@example.com', 'DE', 'x'])).replace('</office:spreadsheet>', `${second}</office:spreadsheet>`)]);
    return path;
  };

  it('the first by default, another by name or number; the rest of the file is not read', async () => {
    const path = twoSheets();
    expect((await openRows(path)).info.sheet).toBe('Clients');
    for (const sheet of ['Second', 'second ', '2']) {
      const source = await openRows(path, { sheet });
      expect(source.info).toMatchObject({ format: 'ods', sheet: 'Second' });
      expect(source.headers).toEqual(['other']);
    }
  });

  it('a sheet that is not there is named with those that are', async () => {
    const path = twoSheets();
    await expect(openRows(path, { sheet: 'Kunden' })).rejects.toMatchObject({
      code: 'input_sheet',
      message: `${path}: no sheet "Kunden"; the workbook has "Clients", "Second" (give a name or a 1-based number)`,
    });
  });

  it('a zip that is not an .ods, and one without content.xml, are named as damaged', async () => {
    const notZip = await files.file('not-a-zip.ods', Buffer.from('504b0304deadbeef', 'hex'));
    await expect(openRows(notZip)).rejects.toMatchObject({ code: 'input_xlsx', message: expect.stringMatching(/cannot read the workbook \(.*\): is it a valid \.ods file\?/) });
    const empty = files.path('no-content.ods');
    writeZip(empty, [{ name: 'mimetype', chunks: () => ['application/vnd.oasis.opendocument.spreadsheet'] }]);
    await expect(openRows(empty)).rejects.toMatchObject({ message: `${empty}: cannot read the workbook (no content.xml): is it a valid .ods file?` });
  });
});
