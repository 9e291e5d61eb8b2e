/**
 * One worksheet's XML → records, as events arrive. A cell's place comes from its reference
 * (`r="C7"`) when it has one, otherwise it follows the previous cell; cells and rows a
 * producer leaves out are empty, so a record is as long as its last non-empty cell.
 */
import { InputError } from '../../errors.js';
import { cellText, isoDate } from './cell-text.js';
import { MAX_CELL_CHARS, type SharedStrings } from './shared-strings.js';
import type { LineRecord } from './types.js';
import { type Attributes, unescapeOoxml, type XmlHandler } from './xml-events.js';

export interface SheetContext {
  file: string;
  sheet: string;
  shared: SharedStrings;
  /** Number format by style index. */
  formats: readonly (string | undefined)[];
  date1904: boolean;
}

/** Excel's grid: a sheet past it was not written by a spreadsheet (a bomb of empty rows or cells). */
export const MAX_ROWS = 1_048_576;
export const MAX_COLUMNS = 16_384;

/** A row's and a cell's reference, a cell's type and style: what a record is built from. */
const SHEET_ATTRIBUTES: ReadonlySet<string> = new Set(['r', 't', 's']);

export interface SheetHandler extends XmlHandler {
  /** Records completed since the last call. */
  take(): LineRecord[];
}

/** The cell being read, reset at each `<c>`: one object per sheet, reused for every cell. */
interface CellState {
  /** Its `r` attribute, '' when it has none. */
  reference: string;
  type: string;
  style: number;
  /** Its `<v>` or inline text as written. */
  raw: string;
}

export function sheetHandler(context: SheetContext): SheetHandler {
  let records: LineRecord[] = [];
  let values: string[] | undefined;
  let line = 0;
  let rows = 0;
  let column = -1;
  let cells = 0;
  const cell: CellState = { reference: '', type: 'n', style: 0, raw: '' };
  let inline = false;
  let phonetic = 0;

  const handler: SheetHandler = {
    wantText: false,
    attributes: SHEET_ATTRIBUTES,
    open(name: string, attributes: Attributes) {
      switch (name) {
        case 'row':
          line = attributes.r === undefined ? line + 1 : Number(attributes.r);
          if (++rows > MAX_ROWS || line > MAX_ROWS) beyondGrid(context, `more than ${MAX_ROWS.toLocaleString('en-US')} rows`);
          values = [];
          column = -1;
          cells = 0;
          break;
        case 'c':
          cell.reference = attributes.r ?? '';
          column = cell.reference === '' ? column + 1 : columnIndex(cell.reference);
          if (++cells > MAX_COLUMNS || column >= MAX_COLUMNS) {
            beyondGrid(context, `more than ${MAX_COLUMNS.toLocaleString('en-US')} columns in row ${line}`);
          }
          cell.type = attributes.t ?? 'n';
          cell.style = attributes.s === undefined ? 0 : Number(attributes.s);
          cell.raw = '';
          break;
        case 'v':
          handler.wantText = !inline;
          break;
        case 'is':
          inline = true;
          break;
        case 't':
          handler.wantText = inline && phonetic === 0;
          break;
        case 'rPh':
          phonetic++;
          break;
      }
    },
    close(name: string) {
      switch (name) {
        case 'v':
        case 't':
          handler.wantText = false;
          break;
        case 'is':
          inline = false;
          break;
        case 'rPh':
          phonetic--;
          break;
        case 'c': {
          if (values === undefined) break;
          // An empty cell is left out like an omitted one: rows are padded to the header later.
          const value = cellValue(cell, context, line);
          if (value === '') break;
          while (values.length < column) values.push('');
          values[column] = value;
          break;
        }
        case 'row':
          if (values !== undefined) records.push({ values, line });
          values = undefined;
          break;
      }
    },
    text(value: string) {
      if (cell.raw.length + value.length > MAX_CELL_CHARS) cellTooLong(context, cell, line);
      cell.raw += value;
    },
    take() {
      const taken = records;
      records = [];
      return taken;
    },
  };
  return handler;
}

/** A cell's text as a spreadsheet shows it, from its type, style and raw text. */
function cellValue(cell: CellState, context: SheetContext, line: number): string {
  const { raw } = cell;
  switch (cell.type) {
    case 's': {
      if (raw === '') return '';
      const text = context.shared.get(Number(raw));
      if (text === undefined) {
        throw new InputError(
          `${context.file}: sheet "${context.sheet}", cell ${cell.reference || `row ${line}`}: shared string ${raw} does not exist: the workbook is damaged`,
          'input_xlsx',
          { file: context.file, line },
        );
      }
      return text;
    }
    case 'inlineStr':
    case 'str':
      return unescapeOoxml(raw);
    case 'b':
      return raw === '' ? '' : raw === '1' || raw === 'true' ? 'TRUE' : 'FALSE';
    case 'e':
      return raw;
    case 'd':
      return isoDateText(raw);
    default:
      return raw === '' ? '' : cellText(Number(raw), context.formats[cell.style], context.date1904);
  }
}

function beyondGrid(context: SheetContext, what: string): never {
  throw new InputError(
    `${context.file}: sheet "${context.sheet}" has ${what}, past Excel's grid: the workbook is damaged or not from a spreadsheet`,
    'input_xlsx',
    { file: context.file },
  );
}

function cellTooLong(context: SheetContext, cell: CellState, line: number): never {
  throw new InputError(
    `${context.file}: sheet "${context.sheet}", cell ${cell.reference || `row ${line}`} is over ${MAX_CELL_CHARS.toLocaleString('en-US')} characters: too much to read from a workbook safely; save it as .csv`,
    'input_too_large',
    { file: context.file, line },
  );
}

/** `C7` → 2. */
export function columnIndex(reference: string): number {
  let index = 0;
  for (let i = 0; i < reference.length; i++) {
    const code = reference.charCodeAt(i) | 0x20;
    if (code < 0x61 || code > 0x7a) break;
    index = index * 26 + (code - 0x60);
  }
  return index - 1;
}

/** A `t="d"` cell holds ISO 8601 already: the date alone when there is no time of day. */
export function isoDateText(raw: string): string {
  if (/^\d{4}-\d{2}-\d{2}$/.test(raw)) return raw;
  const date = new Date(/[zZ]|[+-]\d\d:?\d\d$/.test(raw) ? raw : `${raw}Z`);
  return Number.isNaN(date.getTime()) ? raw : isoDate(date);
}
