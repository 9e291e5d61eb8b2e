/**
 * No column is dropped quietly: before the first request, the columns that feed no field are
 * checked. One dropped on purpose (--ignore-column) is dropped; one that looks like an optional
 * field (lookalike.ts) stops an import — a later run that maps it would send other values, under
 * other keys, and create each client again — and is a warning in validate. Any other is listed
 * in the plan as an ignored column.
 */
import { shellQuote } from '../../cli/resume-command.js';
import { InputError, UsageError } from '../../errors.js';
import { shownPath } from '../../infra/printable.js';
import { foldHeader } from '../fields.js';
import { peekRows, type RowSource } from '../read/index.js';
import type { ColumnPlan } from './columns.js';
import { describeLookalike, findLookalikes, type LookalikeColumn, OPTIONAL_FIELDS, SAMPLE_ROWS } from './lookalike.js';

export type { LookalikeColumn } from './lookalike.js';
export { describeLookalike } from './lookalike.js';

export interface UnmappedSettings {
  /** --ignore-column: headers dropped on purpose (exact, else folded as --map's are). */
  ignoreColumns: readonly string[];
  /** An import stops at a lookalike; validate only reports it. */
  refuse: boolean;
}

export interface UnmappedCheck {
  /** The source to read the rows from: the one given, or its replay when rows were read ahead. */
  source: RowSource;
  lookalikes: LookalikeColumn[];
}

/**
 * Checks the unmapped columns of a planned run. Rows are read ahead (SAMPLE_ROWS) only when a
 * column could be a lookalike; the source returned replays them. Throws a UsageError for an
 * --ignore-column that names no column or a mapped one, an InputError for lookalikes when `refuse`.
 */
export async function checkUnmapped(file: string, source: RowSource, plan: ColumnPlan, settings: UnmappedSettings): Promise<UnmappedCheck> {
  const ignored = ignoredColumns(file, plan, settings.ignoreColumns);
  const open = OPTIONAL_FIELDS.some((field) => plan.columns[field] === undefined);
  const taken = new Set(Object.values(plan.columns));
  const unmapped = plan.headers.some((header, index) => !taken.has(index) && !ignored.has(index) && header.trim() !== '');
  if (!open || !unmapped) return { source, lookalikes: [] };
  const peeked = await peekRows(source, SAMPLE_ROWS);
  const lookalikes = findLookalikes(plan, ignored, peeked.rows, source.info.format);
  if (settings.refuse && lookalikes.length > 0) throw lookalikeError(file, lookalikes);
  return { source: peeked.source, lookalikes };
}

/** The columns --ignore-column names, by index: each must exist and feed no field. */
export function ignoredColumns(file: string, plan: ColumnPlan, ignore: readonly string[]): Set<number> {
  const { headers } = plan;
  const folded = headers.map(foldHeader);
  const fieldOf = new Map(Object.entries(plan.columns).map(([field, index]) => [index, field]));
  const ignored = new Set<number>();
  for (const wanted of ignore) {
    let index = headers.indexOf(wanted);
    if (index < 0) index = folded.indexOf(foldHeader(wanted));
    if (index < 0) {
      const found = headers.length === 0 ? '(none)' : headers.map((header) => JSON.stringify(header)).join(', ');
      throw new UsageError(`--ignore-column ${wanted}: ${shownPath(file)} has no such column; headers found: ${found}`, 'bad_option');
    }
    const field = fieldOf.get(index);
    if (field !== undefined) {
      throw new UsageError(
        `--ignore-column ${wanted}: that column feeds ${field}; drop it from --ignore-column, or --map ${field}=… to another column`,
        'bad_option',
      );
    }
    ignored.add(index);
  }
  return ignored;
}

/** Every lookalike in one message, with both ways on: send it, or drop it on purpose. */
export function lookalikeError(file: string, lookalikes: readonly LookalikeColumn[]): InputError {
  const one = lookalikes.length === 1;
  const { send, drop } = lookalikeFixes(lookalikes);
  return new InputError(
    `${shownPath(file)}: ${one ? 'a column is' : `${lookalikes.length} columns are`} not mapped to any field but ` +
      `look${one ? 's' : ''} like one; nothing was sent (the import would drop ${one ? 'it' : 'them'}): ` +
      `${lookalikes.map(describeLookalike).join('; ')}. To send ${one ? 'it' : 'them'}: ${send}; to drop ${one ? 'it' : 'them'} on purpose: ${drop}`,
    'unmapped_field_column',
    { file },
  );
}

/** The flags that settle lookalikes, as they would be typed: `--map currency=Währung`, `--ignore-column Währung`. */
export function lookalikeFixes(lookalikes: readonly LookalikeColumn[]): { send: string; drop: string } {
  return {
    send: lookalikes.map((column) => `--map ${shellQuote(`${column.field}=${column.header}`)}`).join(' '),
    drop: lookalikes.map((column) => `--ignore-column ${shellQuote(column.header)}`).join(' '),
  };
}
