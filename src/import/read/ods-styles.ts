/**
 * What an .ods says before its rows: the number format behind each cell style (enough to tell
 * dates, zero-padded and fixed-decimal numbers apart, as the .xlsx reader does), the date
 * system, and the sheets' names. Read from styles.xml and content.xml as the XML streams past.
 */
import type { Entry } from 'yauzl';
import { InputError } from '../../errors.js';
import { shownPath } from '../../infra/printable.js';
import { type Attributes, type XmlHandler, xmlEvents } from './xml-events.js';
import type { ZipArchive } from './zip-archive.js';

export interface OdsLayout {
  /** Sheet names in tab order. */
  sheets: string[];
  date1904: boolean;
  /** A cell style's number format, as an Excel format code (see numberFormat). */
  format(cellStyle: string | undefined): string | undefined;
}

/** Styles and sheets a workbook may define: far past any spreadsheet's, short of filling memory. */
const MAX_NAMES = 65_536;

/** The parts of a data style that change what a number reads as. */
interface DataStyle {
  kind: 'number' | 'date' | 'text' | 'other';
  integerDigits: number;
  decimals: number;
  grouping: boolean;
  percent: boolean;
  /** The style shown for values ≥ 0 (`<style:map style:condition="value()>=0">`). */
  positive: string | undefined;
}

const DATA_STYLES: Record<string, DataStyle['kind']> = {
  'number-style': 'number',
  'currency-style': 'number',
  'percentage-style': 'number',
  'date-style': 'date',
  'time-style': 'date',
  'boolean-style': 'other',
  'text-style': 'text',
};

/** Excel allows 30 decimals; toFixed takes at most 100: a larger figure is a hostile file's. */
const MAX_DIGITS = 30;
const digits = (value: string | undefined, fallback: number) => {
  const n = Number.parseInt(value ?? '', 10);
  return Number.isFinite(n) && n > 0 ? Math.min(n, MAX_DIGITS) : fallback;
};

/**
 * Reads the number formats of styles.xml, then content.xml's automatic styles and sheet names.
 * With `allSheets` false the content is read only up to its first sheet (its styles come
 * before it): enough when the first sheet is the one wanted.
 */
export async function readOdsLayout(zip: ZipArchive, content: Entry, file: string, allSheets: boolean): Promise<OdsLayout> {
  const dataStyles = new Map<string, DataStyle>();
  const cellStyles = new Map<string, string>();
  const sheets: string[] = [];
  let date1904 = false;
  const tooMany = (what: string): never => {
    const limit = MAX_NAMES.toLocaleString('en-US');
    throw new InputError(`${shownPath(file)}: more than ${limit} ${what}: the workbook is damaged or not from a spreadsheet`, 'input_xlsx', { file });
  };
  const styles = zip.entry('styles.xml');
  if (styles !== undefined) await scan(zip, styles, dataStyleHandler(dataStyles, tooMany));

  let cellDepth = 0;
  const inner = dataStyleHandler(dataStyles, tooMany);
  const handler: XmlHandler & { done: boolean } = {
    wantText: false,
    done: false,
    open(name, attributes) {
      inner.open(name, attributes);
      handler.wantText = inner.wantText;
      if (name === 'table-cell' || name === 'covered-table-cell') cellDepth++;
      else if (name === 'style' && attributes.family === 'table-cell') {
        const { name: style, 'data-style-name': data } = attributes;
        if (style === undefined || data === undefined) return;
        if (cellStyles.size >= MAX_NAMES) tooMany('cell styles');
        cellStyles.set(style, data);
      } else if (name === 'null-date') {
        date1904 = attributes['date-value'] === '1904-01-01';
      } else if (name === 'table' && cellDepth === 0) {
        if (sheets.length >= MAX_NAMES) tooMany('sheets');
        sheets.push(attributes.name ?? `Sheet${sheets.length + 1}`);
        if (!allSheets) handler.done = true;
      }
    },
    close(name) {
      inner.close(name);
      handler.wantText = inner.wantText;
      if (name === 'table-cell' || name === 'covered-table-cell') cellDepth--;
    },
    text: (value) => inner.text(value),
  };
  await scan(zip, content, handler);

  const resolve = (name: string | undefined, depth: number): string | undefined => {
    const style = name === undefined ? undefined : dataStyles.get(name);
    if (style === undefined) return undefined;
    // A map to a style of its own, or a cycle of them: the style's own format.
    if (style.positive !== undefined && depth < 8 && dataStyles.has(style.positive)) return resolve(style.positive, depth + 1);
    return numberFormat(style);
  };
  return { sheets, date1904, format: (cellStyle) => resolve(cellStyle === undefined ? undefined : cellStyles.get(cellStyle), 0) };
}

/** Streams `entry` through `handler`, stopping early once it sets `done`. */
async function scan(zip: ZipArchive, entry: Entry, handler: XmlHandler & { done?: boolean }): Promise<void> {
  const events = xmlEvents(handler);
  const decoder = new TextDecoder();
  const stream = await zip.open(entry);
  try {
    for await (const chunk of stream) {
      events.write(decoder.decode(chunk as Buffer, { stream: true }));
      if (handler.done === true) return;
    }
    events.write(decoder.decode());
    events.end();
  } finally {
    stream.destroy();
  }
}

/** Collects the data styles (`<number:*-style>`) it sees into `styles`. */
function dataStyleHandler(styles: Map<string, DataStyle>, tooMany: (what: string) => never): XmlHandler {
  let style: DataStyle | undefined;
  let name: string | undefined;
  let literal = '';
  const handler: XmlHandler = {
    wantText: false,
    open(tag: string, attributes: Attributes) {
      const kind = DATA_STYLES[tag];
      if (kind !== undefined) {
        name = attributes.name;
        style = { kind, integerDigits: 1, decimals: 0, grouping: false, percent: false, positive: undefined };
        return;
      }
      if (style === undefined) return;
      if (tag === 'number') {
        style.integerDigits = digits(attributes['min-integer-digits'], 1);
        style.decimals = digits(attributes['decimal-places'], 0);
        style.grouping = attributes.grouping === 'true';
      } else if (tag === 'scientific-number' || tag === 'fraction') {
        style.kind = 'other';
      } else if (tag === 'text-content') {
        style.kind = 'text';
      } else if (tag === 'text') {
        literal = '';
        handler.wantText = true;
      } else if (tag === 'map' && attributes.condition === 'value()>=0') {
        style.positive = attributes['apply-style-name'];
      }
    },
    close(tag: string) {
      if (tag === 'text' && style !== undefined) {
        handler.wantText = false;
        if (literal === '%') style.percent = true;
      } else if (DATA_STYLES[tag] !== undefined && style !== undefined) {
        if (name !== undefined) {
          if (!styles.has(name) && styles.size >= MAX_NAMES) tooMany('number formats');
          styles.set(name, style);
        }
        style = undefined;
      }
    },
    text(value: string) {
      // Only whether the literal is `%`: anything longer is not kept.
      if (literal.length < 2) literal += value.slice(0, 2);
    },
  };
  return handler;
}

/**
 * A data style as the Excel format code cellText reads: a date, or digits with their padding
 * and decimals (grouping and a percent sign make a number read in full, as in an .xlsx).
 */
export function numberFormat(style: DataStyle): string {
  switch (style.kind) {
    case 'date':
      return 'yyyy-mm-dd';
    case 'text':
      return '@';
    case 'other':
      return 'General';
  }
  const integer = style.grouping ? '#,##0' : '0'.repeat(style.integerDigits);
  const decimals = style.decimals > 0 ? `.${'0'.repeat(style.decimals)}` : '';
  return `${integer}${decimals}${style.percent ? '%' : ''}`;
}
