/**
 * One sheet of an .ods's content.xml → records, as events arrive. A cell's value comes from
 * its type (a number, a date, a boolean) or its paragraphs; repeated cells and rows
 * (`table:number-columns-repeated`, `table:number-rows-repeated`) are read as that many, and
 * empty ones cost nothing: LibreOffice ends every sheet with a million repeated empty rows.
 * What repeats may add is bounded, so a kilobyte cannot declare a billion cells.
 */
import { InputError } from '../../errors.js';
import { printable, shownPath } from '../../infra/printable.js';
import { cellText } from './cell-text.js';
import type { OdsLayout } from './ods-styles.js';
import { MAX_CELL_CHARS } from './shared-strings.js';
import type { LineRecord } from './types.js';
import type { Attributes, XmlHandler } from './xml-events.js';
import { isoDateText, MAX_COLUMNS, MAX_ROWS } from './xlsx-sheet.js';

/**
 * What repeats may add to a workbook: a million cells, and 64 Mi characters of text (repeated
 * cells and `<text:s text:c="…"/>` spaces). Real files repeat identical neighbours (a few
 * blank-looking cells, a block of equal rows); a file past this declares work no spreadsheet
 * wrote, for every row of which the import would do real work.
 */
export const MAX_REPEATED_CELLS = 1_000_000;
export const MAX_EXPANDED_CHARS = 64 * 1024 * 1024;

/** Rows handed over per take(): a repeated row is expanded a batch at a time. */
const BATCH_ROWS = 1000;

/** Elements whose paragraphs are not the cell's text: comments, drawings, notes. */
const NOT_CELL_TEXT: ReadonlySet<string> = new Set(['annotation', 'frame', 'custom-shape', 'rect', 'ellipse', 'line', 'g', 'shapes', 'note']);

export const ODS_ATTRIBUTES: ReadonlySet<string> = new Set([
  'name',
  'number-rows-repeated',
  'number-columns-repeated',
  'value-type',
  'value',
  'date-value',
  'time-value',
  'boolean-value',
  'string-value',
  'style-name',
  'c',
]);

export interface OdsSheetHandler extends XmlHandler {
  /** Up to BATCH_ROWS records completed since the last call. */
  take(): LineRecord[];
  /** The chosen sheet has ended: nothing more will come. */
  readonly done: boolean;
}

/** The cell being read. */
interface CellState {
  covered: boolean;
  repeat: number;
  type: string;
  attributes: Attributes;
  /** Paragraphs read (a string cell without one is empty). */
  paragraphs: number;
  text: string;
}

/** A row to hand over `count` times from `line` (repeats are expanded as they are taken). */
interface PendingRow {
  values: string[];
  line: number;
  count: number;
}

export function odsSheetHandler(file: string, layout: OdsLayout, sheetIndex: number): OdsSheetHandler {
  return new OdsSheetReader(file, layout, sheetIndex);
}

/** Thousands separated, as the messages show counts. */
const count = (n: number) => n.toLocaleString('en-US');

/**
 * The chosen sheet's rows as its content.xml streams past: the other sheets are skipped, and
 * inside a cell only its paragraphs' text is kept.
 */
class OdsSheetReader implements OdsSheetHandler {
  /** Read by the XML reader before each piece of text: true only inside a kept paragraph. */
  wantText = false;
  readonly attributes = ODS_ATTRIBUTES;
  readonly #file: string;
  readonly #layout: OdsLayout;
  readonly #sheetIndex: number;
  readonly #sheet: string;
  readonly #pending: PendingRow[] = [];
  #tables = 0;
  #inSheet = false;
  #done = false;
  /** Elements open inside the current cell (0: its own end tag comes next). */
  #cellDepth = 0;
  #line = 1;
  #rowRepeat = 1;
  #values: string[] | undefined;
  #column = 0;
  #cell: CellState | undefined;
  /** Elements open inside one whose paragraphs are not the cell's text. */
  #skipDepth = 0;
  #inParagraph = false;
  #paragraph = '';
  #spaceBefore = false;
  #repeatedCells = 0;
  #expandedChars = 0;

  constructor(file: string, layout: OdsLayout, sheetIndex: number) {
    this.#file = file;
    this.#layout = layout;
    this.#sheetIndex = sheetIndex;
    this.#sheet = layout.sheets[sheetIndex] ?? '';
  }

  get done(): boolean {
    return this.#done;
  }

  open(name: string, attributes: Attributes): void {
    if (this.#cell !== undefined) this.#openInCell(name, attributes);
    else this.#openInSheet(name, attributes);
  }

  close(name: string): void {
    if (this.#cell !== undefined) this.#closeInCell(name);
    else this.#closeInSheet(name);
  }

  text(value: string): void {
    this.#appendText(value, true);
  }

  take(): LineRecord[] {
    const records: LineRecord[] = [];
    while (this.#pending.length > 0 && records.length < BATCH_ROWS) {
      const row = this.#pending[0]!;
      const n = Math.min(row.count, BATCH_ROWS - records.length);
      for (let i = 0; i < n; i++) records.push({ values: i === 0 && n === row.count ? row.values : row.values.slice(), line: row.line + i });
      row.count -= n;
      row.line += n;
      if (row.count === 0) this.#pending.shift();
    }
    return records;
  }

  #openInSheet(name: string, attributes: Attributes): void {
    if (name === 'table') {
      // Sheets in tab order; a table inside a cell (an old subtable) is not one.
      this.#inSheet = this.#tables++ === this.#sheetIndex;
      this.#line = 1;
    } else if (!this.#inSheet) {
      return;
    } else if (name === 'table-row') {
      const repeat = Number(attributes['number-rows-repeated'] ?? '1');
      this.#rowRepeat = repeat >= 1 ? Math.floor(repeat) : 1;
      this.#values = [];
      this.#column = 0;
    } else if (name === 'table-cell' || name === 'covered-table-cell') {
      this.#startCell(name, attributes);
    }
  }

  #openInCell(name: string, attributes: Attributes): void {
    this.#cellDepth++;
    if (this.#skipDepth > 0 || NOT_CELL_TEXT.has(name)) this.#skipDepth++;
    else if (name === 'p') {
      this.#inParagraph = true;
      this.#paragraph = '';
      this.#spaceBefore = false;
    } else if (this.#inParagraph && name === 's') this.#appendSpaces(attributes);
    else if (this.#inParagraph && name === 'tab') this.#appendText('\t', false);
    else if (this.#inParagraph && name === 'line-break') this.#appendText('\n', false);
    this.wantText = this.#inParagraph && this.#skipDepth === 0;
  }

  #closeInSheet(name: string): void {
    if (!this.#inSheet) return;
    if (name === 'table-row') this.#endRow();
    else if (name === 'table') {
      this.#inSheet = false;
      this.#done = true;
    }
  }

  #closeInCell(name: string): void {
    if (this.#cellDepth === 0) {
      this.#endCell();
      return;
    }
    this.#cellDepth--;
    if (this.#skipDepth > 0) this.#skipDepth--;
    else if (name === 'p' && this.#inParagraph) this.#endParagraph(this.#cell!);
    this.wantText = this.#inParagraph && this.#skipDepth === 0;
  }

  #startCell(name: string, attributes: Attributes): void {
    const repeat = Number.parseInt(attributes['number-columns-repeated'] ?? '1', 10);
    this.#cell = {
      covered: name === 'covered-table-cell',
      repeat: repeat >= 1 ? repeat : 1,
      type: attributes['value-type'] ?? 'string',
      attributes,
      paragraphs: 0,
      text: '',
    };
    this.#cellDepth = 0;
  }

  #endParagraph(cell: CellState): void {
    this.#inParagraph = false;
    if (this.#spaceBefore) this.#paragraph = this.#paragraph.slice(0, -1);
    cell.paragraphs++;
    cell.text = cell.text.length > 0 ? `${cell.text}\n${this.#paragraph}` : this.#paragraph;
  }

  #endCell(): void {
    const cell = this.#cell!;
    const { repeat } = cell;
    const value = cell.covered ? '' : cellValue(cell, this.#layout);
    this.#cell = undefined;
    const values = this.#values;
    if (values === undefined || value === '') {
      this.#column += repeat;
      return;
    }
    if (this.#column + repeat > MAX_COLUMNS) this.#beyondGrid(`more than ${count(MAX_COLUMNS)} columns in row ${this.#line}`);
    if (repeat > 1) {
      this.#addRepeatedCells(repeat - 1);
      this.#expand((repeat - 1) * value.length);
    }
    while (values.length < this.#column) values.push('');
    for (let i = 0; i < repeat; i++) values[this.#column + i] = value;
    this.#column += repeat;
  }

  #endRow(): void {
    const row = this.#values;
    const rowRepeat = this.#rowRepeat;
    this.#values = undefined;
    if (row !== undefined && row.length > 0) {
      if (this.#line + rowRepeat - 1 > MAX_ROWS) this.#beyondGrid(`more than ${count(MAX_ROWS)} rows`);
      if (rowRepeat > 1) {
        this.#addRepeatedCells((rowRepeat - 1) * row.filter((value) => value !== '').length);
        this.#expand((rowRepeat - 1) * row.reduce((sum, value) => sum + value.length, 0));
      }
      this.#pending.push({ values: row, line: this.#line, count: rowRepeat });
    }
    this.#line += rowRepeat;
  }

  /** `<text:s text:c="…"/>`: that many spaces, which count against the repeat bound. */
  #appendSpaces(attributes: Attributes): void {
    const stated = Number.parseInt(attributes.c ?? '1', 10);
    const spaces = stated >= 1 ? stated : 1;
    if (this.#cell!.text.length + this.#paragraph.length + spaces > MAX_CELL_CHARS) this.#tooLong();
    this.#expand(spaces - 1);
    this.#appendText(' '.repeat(spaces), false);
  }

  #appendText(text: string, literal: boolean): void {
    let piece = text;
    if (literal) {
      // ODF collapses white space in a paragraph; a paragraph starts at its first character.
      piece = piece.replace(/[\t\r\n ]+/g, ' ');
      if (piece.startsWith(' ') && (this.#paragraph === '' || this.#spaceBefore)) piece = piece.slice(1);
      if (piece === '') return;
      this.#spaceBefore = piece.endsWith(' ');
    } else {
      this.#spaceBefore = false;
    }
    if (this.#cell!.text.length + this.#paragraph.length + piece.length > MAX_CELL_CHARS) this.#tooLong();
    this.#paragraph += piece;
  }

  #addRepeatedCells(cells: number): void {
    this.#repeatedCells += cells;
    if (this.#repeatedCells > MAX_REPEATED_CELLS) this.#repeatBound(`more than ${count(MAX_REPEATED_CELLS)} more cells`);
  }

  #expand(chars: number): void {
    this.#expandedChars += chars;
    if (this.#expandedChars > MAX_EXPANDED_CHARS) this.#repeatBound(`more than ${MAX_EXPANDED_CHARS / 1024 / 1024} Mi characters of text`);
  }

  #where(rows = 1): string {
    const line = this.#line;
    return `sheet "${printable(this.#sheet)}", ${rows > 1 ? `rows ${count(line)}–${count(line + rows - 1)}` : `row ${count(line)}`}`;
  }

  #repeatBound(what: string): never {
    throw new InputError(
      `${shownPath(this.#file)}: ${this.#where(this.#rowRepeat)}: what it writes once and repeats (rows, cells, spaces) would make ${what}; ` +
        'no spreadsheet repeats that much: the file is damaged or made to exhaust memory',
      'input_too_large',
      { file: this.#file },
    );
  }

  #beyondGrid(what: string): never {
    throw new InputError(
      `${shownPath(this.#file)}: sheet "${printable(this.#sheet)}" has ${what}, past the grid of a spreadsheet: the workbook is damaged or not from a spreadsheet`,
      'input_xlsx',
      { file: this.#file },
    );
  }

  #tooLong(): never {
    throw new InputError(
      `${shownPath(this.#file)}: ${this.#where()}, column ${this.#column + 1} is over ${count(MAX_CELL_CHARS)} characters: ` +
        'too much to read from a workbook safely; save it as .csv',
      'input_too_large',
      { file: this.#file, line: this.#line },
    );
  }
}

/** A cell's text as a spreadsheet shows it, from its type, attributes and paragraphs. */
function cellValue(cell: CellState, layout: OdsLayout): string {
  const { attributes } = cell;
  const format = () => layout.format(attributes['style-name']);
  switch (cell.type) {
    case 'float':
    case 'percentage':
    case 'currency': {
      const value = Number.parseFloat(attributes.value ?? '');
      return Number.isFinite(value) ? cellText(value, format(), layout.date1904) : '';
    }
    case 'date':
      return attributes['date-value'] === undefined ? '' : isoDateText(attributes['date-value']);
    case 'time': {
      const seconds = durationSeconds(attributes['time-value'] ?? '');
      if (seconds === undefined) return '';
      return cellText(seconds / 86_400, format() ?? 'HH:MM:SS', layout.date1904);
    }
    case 'boolean': {
      const value = attributes['boolean-value'];
      return value === undefined ? '' : value === 'true' || Number(value) >= 1 ? 'TRUE' : 'FALSE';
    }
    default: {
      // A string (or an error's text): the paragraphs, unless the cell states its string.
      if (cell.paragraphs === 0) return '';
      const stated = attributes['string-value'];
      return stated !== undefined && stated !== '' ? stated : cell.text;
    }
  }
}

/** `PT12H30M00S` → 45,000: the days, hours, minutes and seconds of an ISO 8601 duration. */
function durationSeconds(duration: string): number | undefined {
  const match = /^-?P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)(?:\.\d+)?S)?)?$/.exec(duration);
  if (match === null) return undefined;
  const [, days = '0', hours = '0', minutes = '0', seconds = '0'] = match;
  const total = ((Number(days) * 24 + Number(hours)) * 60 + Number(minutes)) * 60 + Number(seconds);
  return duration.startsWith('-') ? -total : total;
}
