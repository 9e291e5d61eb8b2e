/**
 * `--failed fix-me.xlsx`: the failed file as a workbook to fix in place. The input's columns
 * (order and header text), then `idempotency_key` where the CSV has it, then `error`; every
 * cell is an inline string (leading zeros kept, never a formula). Each cell that made its row
 * fail is filled light red and carries a comment with the reason; a row the service refused
 * is marked on the column its error's `param` names, else on `error`. Rows go straight into
 * the zip; comments and their VML shapes go to temp files copied in at the end: flat memory.
 */
import { closeSync, openSync, unlinkSync } from 'node:fs';
import { OutputError } from '../../errors.js';
import { tempBeside } from '../../infra/temp-files.js';
import { FIELDS, type Field } from '../fields.js';
import { replacePrivate, writeFully } from '../../infra/output-files.js';
import { syncZip } from './zip-sync.js';
import * as parts from './fix-it-parts.js';

export interface FixItOptions {
  addKeyColumn: boolean;
  /** field → input column, to put a field's problem on its cell */
  columns?: Partial<Record<Field, number>> | undefined;
  /** Fields built from several columns: a problem with one is marked on every column it is built from. */
  composites?: Partial<Record<Field, { parts: readonly { column: number }[] }>> | undefined;
}

export interface FixItWorkbook {
  /** `origin`: where the row came from (`clients.csv line 14 (data row 12): `), written before the error. */
  write(values: readonly string[], error: string, key?: string, param?: string, origin?: string): void;
  /** Writes the closing parts; the file is complete when it returns. */
  close(): void;
}

/** `field: …` (or `"Header": …` for an unmapped column) at the start of each issue. */
const ISSUE_START = new RegExp(`(?:^|; )(${FIELDS.join('|')}|"(?:[^"\\\\]|\\\\.)*"): `, 'g');

export function writeFixItWorkbook(path: string, headers: readonly string[], options: FixItOptions): FixItWorkbook {
  const fd = replacePrivate(path);
  const notes = new TempText(path);
  const shapes = new TempText(path);
  const zip = syncZip(fd, path);
  const width = headers.length;
  const titles = [...headers, ...(options.addKeyColumn ? ['idempotency_key'] : []), 'error'];
  const errorColumn = titles.length - 1;
  const columnOf = columnFinder(headers, options.columns ?? {}, options.composites ?? {});
  const builtFrom = partNotes(options.composites ?? {});
  let row = 1;
  let lastColumn = errorColumn;
  zip.begin(parts.SHEET);
  zip.write(parts.sheetStart(titles));
  notes.write(parts.COMMENTS_START);
  shapes.write(parts.VML_START);
  return {
    write(values, error, key, param, origin = '') {
      if (++row > MAX_SHEET_ROWS) throw tooMany(path);
      const cells = [...values.slice(0, width)];
      while (cells.length < width) cells.push('');
      if (options.addKeyColumn) cells.push(key ?? '');
      cells.push(origin + error, ...values.slice(width));
      // Checked before any part of the row is written: a refused row leaves no stray comment.
      const long = cells.findIndex((cell) => cell.length > MAX_CELL_CHARS);
      if (long >= 0) throw tooLong(path, row, titles[long]);
      lastColumn = Math.max(lastColumn, cells.length - 1);
      const marks = markCells(error, param, columnOf, errorColumn);
      let xml = `<row r="${row}">`;
      for (let column = 0; column < cells.length; column++) {
        const reason = marks.get(column);
        xml += parts.cell(column, row, cells[column]!, reason !== undefined);
        if (reason === undefined) continue;
        notes.write(parts.comment(column, row, reason, builtFrom.get(column)));
        shapes.write(parts.shape(column, row));
      }
      zip.write(`${xml}</row>`);
    },
    close() {
      try {
        zip.write(parts.sheetEnd(lastColumn, row));
        notes.write(parts.COMMENTS_END);
        shapes.write(parts.VML_END);
        notes.close();
        shapes.close();
        for (const [name, text] of parts.fixedParts()) {
          zip.begin(name);
          zip.write(text);
        }
        zip.copyFile(parts.COMMENTS, notes.path);
        zip.copyFile(parts.VML, shapes.path);
        zip.finish();
      } finally {
        closeSync(fd);
        notes.remove();
        shapes.remove();
      }
    },
  };
}

/** Excel's limits: rows in a sheet (the header is one) and characters in a cell. */
const MAX_SHEET_ROWS = 1_048_576;
const MAX_CELL_CHARS = 32_767;

function tooMany(path: string): OutputError {
  return new OutputError(
    `cannot write ${path}: over ${MAX_SHEET_ROWS - 1} rows to fix, more than a sheet holds; use --failed with a .csv name`,
  );
}

function tooLong(path: string, row: number, column: string | undefined): OutputError {
  return new OutputError(
    `cannot write ${path}: its row ${row} holds over ${MAX_CELL_CHARS} characters in ${column === undefined ? 'an extra field' : JSON.stringify(column)}, ` +
      'more than an xlsx cell holds; use --failed with a .csv name',
  );
}

/**
 * An issue's subject → its columns: a field through the column plan (every part of a field
 * built from several columns: its value is theirs together), a quoted header by its text.
 */
function columnFinder(headers: readonly string[], columns: Partial<Record<Field, number>>, composites: NonNullable<FixItOptions['composites']>) {
  return (subject: string): number | readonly number[] | undefined => {
    if (subject.startsWith('"')) {
      const index = headers.indexOf(JSON.parse(subject) as string);
      return index < 0 ? undefined : index;
    }
    return composites[subject as Field]?.parts.map((part) => part.column) ?? columns[subject as Field];
  };
}

/** Each part column of a field built from several: the line its note ends with, so one red cell of four reads right. */
function partNotes(composites: NonNullable<FixItOptions['composites']>): Map<number, string> {
  const notes = new Map<number, string>();
  for (const [field, composite] of Object.entries(composites)) {
    const count = new Set(composite.parts.map((part) => part.column)).size;
    if (count < 2) continue;
    for (const part of composite.parts) notes.set(part.column, `(${field} is built from ${count} columns, each marked: this is one)`);
  }
  return notes;
}

/**
 * Column → the reasons that mark it; a field built from several columns marks each of them;
 * problems about no one column (or none found) mark `error`.
 */
export function markCells(
  error: string,
  param: string | undefined,
  columnOf: (subject: string) => number | readonly number[] | undefined,
  errorColumn: number,
): Map<number, string> {
  const marks = new Map<number, string>();
  const add = (column: number, reason: string) => {
    const before = marks.get(column);
    marks.set(column, before === undefined ? reason : `${before}\n${reason}`);
  };
  const columnsOf = (subject: string): readonly number[] => {
    const found = columnOf(subject);
    return found === undefined ? [] : typeof found === 'number' ? [found] : found;
  };
  if (param !== undefined) {
    const columns = columnsOf(param);
    for (const column of columns.length === 0 ? [errorColumn] : columns) add(column, error);
    return marks;
  }
  const starts = [...error.matchAll(ISSUE_START)];
  // What comes before the first field's issue (`row has 2 fields…`) is about the whole row.
  const head = error.slice(0, starts[0]?.index ?? error.length);
  if (head !== '') add(errorColumn, head);
  starts.forEach((match, i) => {
    const from = match.index + match[0].length;
    const to = starts[i + 1]?.index ?? error.length;
    const columns = columnsOf(match[1]!);
    const reason = error.slice(from, to);
    if (columns.length === 0) add(errorColumn, `${match[1]}: ${reason}`);
    for (const column of columns) add(column, reason);
  });
  return marks;
}

/** Text appended to a temp file beside the output, through a small buffer. */
class TempText {
  readonly path: string;
  #fd: number;
  #buffer = '';
  #output: string;

  constructor(beside: string) {
    this.#output = beside;
    this.path = tempBeside(beside);
    this.#fd = openSync(this.path, 'wx', 0o600);
  }

  write(text: string): void {
    this.#buffer += text;
    if (this.#buffer.length >= 1 << 16) this.#flush();
  }

  close(): void {
    this.#flush();
  }

  remove(): void {
    try {
      closeSync(this.#fd);
    } catch {
      // already closed
    }
    unlinkSync(this.path);
  }

  #flush(): void {
    writeFully(this.#fd, this.#buffer, this.#output);
    this.#buffer = '';
  }
}

