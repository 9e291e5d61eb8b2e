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
import { type Field, foldHeader } from '../fields.js';
import { peekRows, type RawRecord, type RowSource } from '../read/index.js';
import { findPartialAddress, type PartialAddress, partialAddressError } from './address-parts.js';
import { type ColumnPlan, usedColumns } from './columns.js';
import { composeValue, type CompositeField, type CompositeSample, describeParts } from './composite.js';
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
  /** City or postal-code columns the address leaves out: only a dry run gets this far with any. */
  partialAddress: PartialAddress | undefined;
  /** Each field built from several columns: its parts and first results (COMPOSITE_SAMPLES), from the first rows. */
  composites: Partial<Record<Field, CompositeField>>;
}

/** Sample results shown for each composite field. */
export const COMPOSITE_SAMPLES = 3;

/**
 * Checks the unmapped columns of a planned run. Rows are read ahead (SAMPLE_ROWS) only when a
 * column could be a lookalike; the source returned replays them. Throws a UsageError for an
 * --ignore-column that names no column or a mapped one, an InputError for lookalikes when `refuse`.
 */
export async function checkUnmapped(file: string, source: RowSource, plan: ColumnPlan, settings: UnmappedSettings): Promise<UnmappedCheck> {
  const ignored = ignoredColumns(file, plan, settings.ignoreColumns);
  // A recognized export's record dates and checksums are no client's: never a lookalike.
  const bookkeeping = (plan.recognized?.bookkeeping ?? []).map(foldHeader);
  plan.headers.forEach((header, index) => {
    if (bookkeeping.some((prefix) => foldHeader(header).startsWith(prefix))) ignored.add(index);
  });
  const partialAddress = findPartialAddress(plan, ignored);
  if (settings.refuse && partialAddress !== undefined) throw partialAddressError(file, partialAddress);
  const open = OPTIONAL_FIELDS.some((field) => plan.columns[field] === undefined);
  const taken = usedColumns(plan);
  const unmapped = plan.headers.some((header, index) => !taken.has(index) && !ignored.has(index) && header.trim() !== '');
  const composed = Object.keys(plan.composites).length > 0;
  if (!composed && (!open || !unmapped)) return { source, lookalikes: [], partialAddress, composites: {} };
  const peeked = await peekRows(source, SAMPLE_ROWS);
  const lookalikes = open && unmapped ? findLookalikes(plan, ignored, peeked.rows, source.info.format) : [];
  if (settings.refuse && lookalikes.length > 0) throw lookalikeError(file, lookalikes);
  return { source: peeked.source, lookalikes, partialAddress, composites: sampleComposites(plan, peeked.rows) };
}

/** Each composite field with its first results: from rows where any part has a value. */
export function sampleComposites(plan: ColumnPlan, rows: readonly RawRecord[]): Partial<Record<Field, CompositeField>> {
  const samples: Partial<Record<Field, CompositeField>> = {};
  for (const [field, composite] of Object.entries(plan.composites) as [Field, NonNullable<ColumnPlan['composites'][Field]>][]) {
    const found: CompositeSample[] = [];
    for (const row of rows) {
      const parts = composite.parts.map((part) => (row.values[part.column] ?? '').trim());
      if (parts.every((part) => part === '')) continue;
      found.push({ value: composeValue(composite, row.values), parts });
      if (found.length === COMPOSITE_SAMPLES) break;
    }
    samples[field] = { template: composite.template, parts: composite.parts.map((part) => part.header), described: describeParts(composite), samples: found };
  }
  return samples;
}

/** The columns --ignore-column names, by index: each must exist and feed no field. */
export function ignoredColumns(file: string, plan: ColumnPlan, ignore: readonly string[]): Set<number> {
  const { headers } = plan;
  const folded = headers.map(foldHeader);
  const fieldOf = new Map(Object.entries(plan.columns).map(([field, index]) => [index, field]));
  for (const [field, composite] of Object.entries(plan.composites)) for (const part of composite.parts) fieldOf.set(part.column, field);
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
