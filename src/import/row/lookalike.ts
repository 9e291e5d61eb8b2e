/**
 * Columns that feed no field but look like an optional one: a currency or date column under a
 * header no alias knows (`Währung`, `Antragsdatum`), or a header one typo away from a field's
 * name (`Curency`). Dropping such a column changes what is sent, and sending it later changes
 * every row's key: the run must not drop it without being told to. Pure: the plan, a sample of
 * rows and the columns dropped on purpose in, the lookalikes out.
 */
import { createRequire } from 'node:module';
import { EXPORT_COLUMNS } from '../../export/columns.js';
import { closest } from '../../infra/did-you-mean.js';
import { FIELDS, type Field, foldHeader, headerWords, REQUIRED_FIELDS } from '../fields.js';
import type { RawRecord, SourceInfo } from '../read/index.js';
import { type ColumnPlan, usedColumns } from './columns.js';
import { SIGNS } from './currency-names.js';
import { toCurrencyCode, toIsoDate } from './normalize.js';

const require = createRequire(import.meta.url);
const currencyCodes: typeof import('currency-codes') = require('currency-codes');

/** Rows read ahead for the sample; each column's non-empty cells among them are judged. */
export const SAMPLE_ROWS = 200;
/** The share of a column's sampled cells that must look like a field's values. */
export const LOOKALIKE_SHARE = 0.6;
/** Shorter folded headers are too near everything (`cy`, `ccy`'s neighbours) to be called a typo. */
const MIN_HEADER_LENGTH = 4;

/** The fields a dropped column could have fed: the optional ones (required ones stop the run already). */
export const OPTIONAL_FIELDS: readonly Field[] = FIELDS.filter((field) => !REQUIRED_FIELDS.includes(field));

/**
 * The columns ccs-bulk's own export writes besides the fields (`created_at`, `status`…): the
 * service's, known to be no field, so an export imported elsewhere is not stopped at them.
 */
const EXPORT_ONLY = new Set(EXPORT_COLUMNS.filter((column) => !(FIELDS as readonly string[]).includes(column)).map(foldHeader));

/**
 * Currency signs as spreadsheets hold them (a cell that is only the sign). ISO codes and the
 * ISO 4217 names come from the currency-codes dataset; this is what it lacks.
 */
export const CURRENCY_SIGNS: readonly string[] = [
  '€', '$', '£', '¥', '₹', '₽', '₩', '₺', '₪', '₫', '₴', '₦', '₱', '฿', '₲', '₡', '₵', '₸', '₼', '₾', '₭', '₮', '৳', '¢',
  'US$', 'A$', 'AU$', 'C$', 'CA$', 'NZ$', 'HK$', 'S$', 'R$', 'Mex$', 'kr', 'kr.', 'zł', 'Kč', 'Fr.', 'Ft',
];

let signs: Set<string> | undefined;
let names: Set<string> | undefined;

/**
 * An ISO 4217 code in capitals (`EUR`; lower case is left out: `all`, `top`, `try` are words
 * first), a sign (`€`, `US$`), or a currency's name (`Euro`, `US Dollar`), any case.
 */
export function looksLikeCurrency(value: string): boolean {
  if (/^[A-Z]{3}$/.test(value) && toCurrencyCode(value) !== undefined) return true;
  signs ??= new Set([...CURRENCY_SIGNS, ...Object.keys(SIGNS)].map((sign) => sign.toLowerCase()));
  names ??= new Set(currencyCodes.data.map(({ currency }) => currency.toLowerCase()));
  const folded = value.toLowerCase().replace(/\s+/g, ' ');
  return signs.has(folded) || names.has(folded);
}

/**
 * Any date a run reads (ISO, which is also how the readers give spreadsheet date cells, or
 * day-first / month-first with / . -), whichever order this run settled on.
 */
export function looksLikeDate(value: string): boolean {
  return toIsoDate(value, 'day') !== undefined || toIsoDate(value, 'month') !== undefined;
}

/** The fields a column's values can give away, with the word a message counts them in. */
const VALUE_TESTS: Partial<Record<Field, { test: (value: string) => boolean; plural: string }>> = {
  currency: { test: looksLikeCurrency, plural: 'currencies' },
  application_date: { test: looksLikeDate, plural: 'dates' },
};

/** An unmapped column that looks like an optional field no other column feeds. */
export interface LookalikeColumn {
  /** The column's header, as the file has it. */
  header: string;
  /** 1-based position among the columns. */
  column: number;
  /** The column as its program shows it: `E` in a spreadsheet, `5` in a CSV. */
  label: string;
  /** The optional field it looks like (`currency`, `application_date`…): map it there, or list it in `ignoreColumns`. */
  field: Field;
  /** What gave it away: most sampled values look like the field's, or the header is close to its name. */
  by: 'values' | 'header';
  /** Non-empty cells sampled (of the first 200 rows), and how many look like the field's values. */
  sampled: number;
  /** Of the cells sampled, how many look like the field's values. */
  matching: number;
  /** A value of the column: for `values`, one that looks like the field's. */
  sample: string | undefined;
  /** For `header`: the field's name or alias the header is close to. */
  near: string | undefined;
}

/**
 * The unmapped columns (not dropped on purpose: `ignored` indexes) that look like an optional
 * field no column feeds, judged on `rows`, the first rows of the file.
 */
export function findLookalikes(
  plan: ColumnPlan,
  ignored: ReadonlySet<number>,
  rows: readonly RawRecord[],
  format: SourceInfo['format'],
): LookalikeColumn[] {
  const open = OPTIONAL_FIELDS.filter((field) => plan.columns[field] === undefined);
  const taken = usedColumns(plan);
  const found: LookalikeColumn[] = [];
  plan.headers.forEach((header, index) => {
    if (open.length === 0 || taken.has(index) || ignored.has(index) || header.trim() === '' || EXPORT_ONLY.has(foldHeader(header))) return;
    const cells = sampleCells(rows, index);
    const column = { header, column: index + 1, label: format === 'csv' ? String(index + 1) : columnLetter(index) };
    const byValues = fieldOfValues(cells, open);
    if (byValues !== undefined) {
      found.push({ ...column, by: 'values', sampled: cells.length, ...byValues, near: undefined });
      return;
    }
    const byHeader = fieldOfHeader(header, open);
    if (byHeader === undefined) return;
    const { test } = VALUE_TESTS[byHeader.field] ?? {};
    const matching = test === undefined ? 0 : cells.filter(test).length;
    found.push({ ...column, by: 'header', field: byHeader.field, sampled: cells.length, matching, sample: cells[0], near: byHeader.near });
  });
  return found;
}

/** The column's first non-empty cells (trimmed), up to SAMPLE_ROWS. */
function sampleCells(rows: readonly RawRecord[], index: number): string[] {
  const cells: string[] = [];
  for (const row of rows) {
    const value = row.values[index]?.trim() ?? '';
    if (value !== '') cells.push(value);
    if (cells.length === SAMPLE_ROWS) break;
  }
  return cells;
}

/** The open field whose values most cells look like, when they are at least LOOKALIKE_SHARE of them. */
function fieldOfValues(cells: readonly string[], open: readonly Field[]): { field: Field; matching: number; sample: string } | undefined {
  if (cells.length === 0) return undefined;
  let best: { field: Field; matching: number; sample: string } | undefined;
  for (const field of open) {
    const test = VALUE_TESTS[field]?.test;
    if (test === undefined) continue;
    const matches = cells.filter(test);
    if (matches.length >= LOOKALIKE_SHARE * cells.length && matches.length > (best?.matching ?? 0)) {
      best = { field, matching: matches.length, sample: matches[0]! };
    }
  }
  return best;
}

/** The open field whose name or a header word (any language) the header is a typo of (did-you-mean's distance, folded). */
function fieldOfHeader(header: string, open: readonly Field[]): { field: Field; near: string } | undefined {
  const folded = foldHeader(header);
  if (folded.length < MIN_HEADER_LENGTH) return undefined;
  const names = open.flatMap((field) => [field, ...headerWords(field)].map((near) => ({ field, near, key: foldHeader(near) })));
  const match = closest(folded, names.map((name) => name.key));
  const name = names.find((candidate) => candidate.key === match);
  return name && { field: name.field, near: name.near };
}

/** The spreadsheet's column letters: 0 → A, 25 → Z, 26 → AA. */
function columnLetter(index: number): string {
  let letters = '';
  for (let n = index + 1; n > 0; n = Math.floor((n - 1) / 26)) letters = String.fromCharCode(65 + ((n - 1) % 26)) + letters;
  return letters;
}

/** `column E "Währung" looks like currency: 3 of 3 values are currencies (e.g. "EUR")`. */
export function describeLookalike(lookalike: LookalikeColumn): string {
  const where = `column ${lookalike.label} ${JSON.stringify(lookalike.header)} looks like ${lookalike.field}`;
  const sample = lookalike.sample === undefined ? '' : ` (e.g. ${JSON.stringify(lookalike.sample)})`;
  if (lookalike.by === 'header') return `${where}: its header is close to "${lookalike.near ?? lookalike.field}"${sample}`;
  const plural = VALUE_TESTS[lookalike.field]?.plural ?? 'values of it';
  return `${where}: ${lookalike.matching} of ${lookalike.sampled} values are ${plural}${sample}`;
}
