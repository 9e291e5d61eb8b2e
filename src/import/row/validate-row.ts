/**
 * Row checks (zod). Bad rows are data, not exceptions: the result lists every problem,
 * as `field: what is wrong`, and the run goes on.
 */
import { z } from 'zod';
import type { ColumnPlan } from './columns.js';
import type { Field } from '../fields.js';
import type { InvalidCell } from '../read/index.js';
import { type DateFormat, memoize, toCountryCode, toCurrencyCode, toIsoDate, unescapeFormula } from './normalize.js';
import { type DateOrder, orderOfFormat, readDate } from './dates.js';
import type { DateReading } from './date-order.js';
import { DAY_FIRST, LANGUAGE_NAMES } from '../fields.js';
import { namesOf, readCountryName } from './country-names.js';
import { readCurrencyName } from './currency-names.js';
import { emailTypo } from './email-typos.js';
import { asciiDomain } from './email.js';
import { suggestCountry, suggestCurrency } from './suggest.js';
import { composeValue } from './composite.js';

export interface ClientFields {
  name: string;
  email: string;
  country: string;
  address: string;
  currency?: string;
  application_date?: string;
  liquidity_type: string;
  /** the row's own key, when the file has an idempotency_key column */
  idempotency_key?: string;
}

export type RowCheck = { ok: true; value: ClientFields } | { ok: false; issues: string[] };

export interface RowRules {
  dateFormat: DateFormat;
  liquidityType: string;
  /** The run's day/month order as the plan settled it (date-order.ts); else from the format and the headers' language. */
  dates?: DateReading | undefined;
}

const MAX_LENGTH = 1000;

/** Control characters other than tab and line breaks: terminal escapes, bells, form feeds are never data. */
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;

/**
 * What a spreadsheet shows, and saves as the cell's value, when the formula behind a cell
 * failed: Excel's error values (also in a CSV that Excel saved) and LibreOffice's `Err:NNN`.
 * Never a client's name or address: sending it would create a client called "#VALUE!".
 */
const SPREADSHEET_ERROR =
  /^(?:#(?:NULL!|DIV\/0!|VALUE!|REF!|NAME\?|NUM!|N\/A|GETTING_DATA|SPILL!|CALC!|FIELD!|BLOCKED!|CONNECT!|BUSY!|UNKNOWN!)|Err:\d{3})$/;

/** No control character and no spreadsheet error (which starts with `#` or `E`): on every value. */
const isClean = (value: string) => {
  const first = value.charCodeAt(0);
  return !CONTROL.test(value) && !((first === 35 || first === 69) && SPREADSHEET_ERROR.test(value));
};
const clean = {
  error: (issue: { input: unknown }) => {
    const value = String(issue.input);
    const control = CONTROL.exec(value)?.[0];
    return control === undefined
      ? `holds a spreadsheet error (${value}): the formula behind the cell failed; fix it in the workbook`
      : `holds a control character (U+${control.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')})`;
  },
};

const required = z
  .string()
  .min(1, 'required, but empty')
  .max(MAX_LENGTH, `longer than ${MAX_LENGTH} characters`)
  .refine(isClean, clean);
const optional = z
  .string()
  .max(MAX_LENGTH, `longer than ${MAX_LENGTH} characters`)
  .refine(isClean, clean)
  .optional();

function converted(convert: (value: string) => string | undefined, describe: (value: string) => string) {
  return (value: string, ctx: z.RefinementCtx) => {
    const result = convert(value);
    if (result === undefined) {
      ctx.addIssue({ code: 'custom', message: describe(value) });
      return z.NEVER;
    }
    return result;
  };
}

/** What an idempotency key of the file's own may hold. */
const KEY_TEXT = /^[\x21-\x7e]+$/;

/** `did you mean X?` when there is one unambiguous suggestion; the row stays invalid either way. */
const didYouMean = (suggestion: string | undefined, prefix = '') =>
  suggestion === undefined ? undefined : `${prefix}did you mean ${suggestion}?`;

/** `"Congo" reads as CG (Congo) in English and Spanish, or CD (…) in English: write its ISO code`. */
function describeCountry(value: string): string {
  const readings = readCountryName(value);
  if (readings.length > 1) {
    const english = namesOf('en');
    const each = readings.map((r) => `${r.code} (${english[r.code]?.[0] ?? r.code}) in ${r.languages.map(languageName).join(' and ')}`);
    return `ambiguous country ${JSON.stringify(value)}: it reads as ${each.join(', or ')}; write its ISO code`;
  }
  return `unknown country ${JSON.stringify(value)} (${didYouMean(suggestCountry(value)) ?? 'use ISO 3166 alpha-2, alpha-3 or its name'})`;
}

const languageName = (language: keyof typeof LANGUAGE_NAMES) => LANGUAGE_NAMES[language];

/** `"$" means USD, CAD, … here: write the code`, else the suggestion, if any. */
function describeCurrency(value: string): string {
  const codes = readCurrencyName(value);
  if (codes.length > 1) {
    return `not an ISO 4217 currency code (${JSON.stringify(value)} could be ${codes.slice(0, -1).join(', ')} or ${codes.at(-1)!}; write the code)`;
  }
  return `not an ISO 4217 currency code (${JSON.stringify(value)}${didYouMean(suggestCurrency(value), '; ') ?? ''})`;
}

/** The order the rows are read in: the plan's, else the format's, else the headers' language's. */
export function dateOrderOf(rules: RowRules, plan: Pick<ColumnPlan, 'language'>): DateOrder {
  return rules.dates?.order ?? orderOfFormat(rules.dateFormat) ?? (DAY_FIRST.has(plan.language) ? 'day' : 'ask');
}

function rowSchema(rules: RowRules, order: DateOrder, toDate: (value: string) => string | undefined) {
  return z.object({
    name: required,
    // One schema with the format as a check (not a pipe into a second one): an empty value
    // stops at "required".
    email: z
      .string()
      .min(1, { error: 'required, but empty', abort: true })
      .max(MAX_LENGTH, { error: `longer than ${MAX_LENGTH} characters`, abort: true })
      // An internationalized domain is checked, and sent, in its ASCII form.
      .overwrite(asciiDomain)
      .check(z.email({ error: (issue) => `not an e-mail address (${JSON.stringify(issue.input)})`, abort: true }))
      .superRefine((value, ctx) => {
        const typo = emailTypo(value);
        if (typo !== undefined) ctx.addIssue({ code: 'custom', message: typo });
      }),
    country: required.transform(converted(toCountryCode, describeCountry)),
    address: required,
    currency: optional.transform((value, ctx) =>
      value === undefined
        ? undefined
        : converted(toCurrencyCode, describeCurrency)(value, ctx),
    ),
    application_date: optional.transform((value, ctx) =>
      value === undefined
        ? undefined
        : converted(toDate, (v) => {
            const read = readDate(v, order);
            return 'problem' in read ? read.problem : `not a real date (${JSON.stringify(v)})`;
          })(value, ctx),
    ),
    liquidity_type: z
      .string()
      .optional()
      .transform((value) => (value ?? rules.liquidityType).toLowerCase())
      .refine((value) => value === 'chain', {
        error: (issue) => `only "chain" is documented (got ${JSON.stringify(issue.input)})`,
      }),
    idempotency_key: z
      .string()
      .max(255, 'longer than 255 characters')
      .regex(KEY_TEXT, 'only printable ASCII without spaces')
      .refine(isClean, clean)
      .optional(),
  });
}

/** A value the `required` and `optional` schemas accept as it is. */
const acceptable = (value: string | undefined): value is string =>
  value !== undefined && value.length <= MAX_LENGTH && isClean(value);

/**
 * The schema's result for a row that passes every check, without zod: for a row it accepts,
 * the very value zod gives; at any doubt (a value missing, too long, unclean or unknown) it
 * returns undefined and the row goes through zod, which words the issues. Most rows are
 * valid, and zod's generic walk was the largest single cost of validate (bench/README.md).
 * test/validate-row.fast-path.test.ts holds the two to agreement.
 */
function fastCheck(rules: RowRules, toDate: (value: string) => string | undefined) {
  return (picked: Partial<Record<Field, string>>): ClientFields | undefined => {
    const { name, email, country, address, currency, application_date: date } = picked;
    if (!acceptable(name) || !acceptable(address) || !acceptable(country)) return undefined;
    if (email === undefined || email.length > MAX_LENGTH || !z.regexes.email.test(email)) return undefined;
    if (emailTypo(email) !== undefined) return undefined;
    const countryCode = toCountryCode(country);
    const liquidityType = (picked.liquidity_type ?? rules.liquidityType).toLowerCase();
    if (countryCode === undefined || liquidityType !== 'chain') return undefined;
    const value: ClientFields = { name, email, country: countryCode, address, liquidity_type: liquidityType };
    if (currency !== undefined) {
      const code = acceptable(currency) ? toCurrencyCode(currency) : undefined;
      if (code === undefined) return undefined;
      value.currency = code;
    }
    if (date !== undefined) {
      const iso = acceptable(date) ? toDate(date) : undefined;
      if (iso === undefined) return undefined;
      value.application_date = iso;
    }
    const key = picked.idempotency_key;
    if (key !== undefined) {
      if (key.length > 255 || !KEY_TEXT.test(key) || !isClean(key)) return undefined;
      value.idempotency_key = key;
    }
    return value;
  };
}

/**
 * The check for one run's rows: the plan's columns, read in order, then the schema. Each row
 * becomes its fields (trimmed, formula escape undone, empty = absent) or the list of what is
 * wrong with it.
 */
export function rowValidator(
  plan: ColumnPlan,
  rules: RowRules,
  notes?: NormalizationNotes,
  { fastPath = true }: { fastPath?: boolean } = {},
): RowValidator {
  // Files repeat their dates; the same bounded memo as countries and currencies.
  const order = dateOrderOf(rules, plan);
  const toDate = memoize((value) => toIsoDate(value, order));
  const schema = rowSchema(rules, order, toDate);
  const fast = fastPath ? fastCheck(rules, toDate) : () => undefined;
  const columns = Object.entries(plan.columns) as [Field, number][];
  const width = plan.headers.length;
  const name = columnNamer(plan);
  return (values, invalidBytes) => {
    const picked: Partial<Record<Field, string>> = {};
    let trimmed = 0;
    let unescaped = 0;
    for (const [field, index] of columns) {
      // A field built from several columns is their cells joined (composite.ts).
      const composite = plan.composites[field];
      const raw = composite === undefined ? (values[index] ?? '') : composeValue(composite, values);
      const unquoted = unescapeFormula(raw);
      const value = unquoted.trim();
      if (unquoted !== raw) unescaped++;
      if (value !== unquoted) trimmed++;
      if (value !== '') picked[field] = value;
    }
    const valid = values.length === width ? fast(picked) : undefined;
    const result: RowCheck = valid !== undefined ? { ok: true, value: valid } : check(values.length, width, picked, schema);
    if (invalidBytes === undefined) {
      if (notes && result.ok) noteChanges(notes, picked, result.value, order, trimmed, unescaped);
      return result;
    }
    // Any column, sent or not: a row that is not what the file says is never half-sent.
    const issues = invalidByteIssues(invalidBytes, name);
    return { ok: false, issues: result.ok ? issues : [...issues, ...result.issues] };
  };
}

export type RowValidator = (values: readonly string[], invalidBytes?: readonly InvalidCell[]) => RowCheck;

/** A column as messages name it: its field, else its header, else its position. */
function columnNamer(plan: ColumnPlan): (column: number) => string {
  const fields = new Map(Object.entries(plan.columns).map(([field, index]) => [index, field]));
  return (column) =>
    fields.get(column) ??
    (column < 0 ? 'row' : column < plan.headers.length ? JSON.stringify(plan.headers[column]) : `field ${column + 1}`);
}

/** `address: byte 0xE9 is not valid UTF-8 (…)`, one issue per column. */
function invalidByteIssues(cells: readonly InvalidCell[], name: (column: number) => string): string[] {
  const byColumn = new Map<number, string[]>();
  for (const { column, bytes } of cells) byColumn.set(column, [...(byColumn.get(column) ?? []), bytes]);
  return [...byColumn].map(([column, sequences]) => {
    const one = sequences.length === 1 && !sequences[0]!.includes(' ');
    const what = one ? `byte ${sequences[0]} is` : `bytes ${sequences.join(', ')} are`;
    return `${name(column)}: ${what} not valid UTF-8 (the file is UTF-8 elsewhere; fix the cell or save the file as UTF-8)`;
  });
}

/** Where validate and import report the values changed on their way out (run-notes.ts). */
export interface NormalizationNotes {
  changed(field: string, from: string, to: string): void;
}

function noteChanges(
  notes: NormalizationNotes,
  picked: Partial<Record<Field, string>>,
  value: ClientFields,
  order: DateOrder,
  trimmed: number,
  unescaped: number,
): void {
  if (picked.country !== value.country) notes.changed('country', picked.country!, value.country);
  if (picked.email !== value.email) notes.changed('email', 'a domain in Unicode', 'its ASCII form (punycode)');
  if (picked.currency !== value.currency) notes.changed('currency', picked.currency!, value.currency!);
  if (picked.liquidity_type !== undefined && picked.liquidity_type !== value.liquidity_type)
    notes.changed('liquidity_type', picked.liquidity_type, value.liquidity_type);
  const date = picked.application_date;
  if (date !== undefined && date !== value.application_date) {
    const read = readDate(date, order);
    notes.changed('application_date', 'form' in read ? read.form : 'YYYY-MM-DD', 'YYYY-MM-DD');
  }
  for (let i = 0; i < trimmed; i++) notes.changed('(any)', 'spaces around a value', 'trimmed');
  for (let i = 0; i < unescaped; i++) notes.changed('(any)', "a formula escape (')", 'removed');
}

function check(
  length: number,
  width: number,
  picked: Partial<Record<Field, string>>,
  schema: ReturnType<typeof rowSchema>,
): RowCheck {
  const issues: string[] = [];
  if (length !== width) {
    issues.push(`row has ${length} field${length === 1 ? '' : 's'} but the header has ${width}`);
  }
  const parsed = schema.safeParse(picked);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const field = String(issue.path[0] ?? 'row');
      const message =
        issue.code === 'invalid_type' && issue.input === undefined ? 'required, but empty' : issue.message;
      issues.push(`${field}: ${message}`);
    }
  }
  if (issues.length > 0 || !parsed.success) return { ok: false, issues };
  const value: ClientFields = {
    name: parsed.data.name,
    email: parsed.data.email,
    country: parsed.data.country,
    address: parsed.data.address,
    liquidity_type: parsed.data.liquidity_type,
  };
  if (parsed.data.currency !== undefined) value.currency = parsed.data.currency;
  if (parsed.data.application_date !== undefined) value.application_date = parsed.data.application_date;
  if (parsed.data.idempotency_key !== undefined) value.idempotency_key = parsed.data.idempotency_key;
  return { ok: true, value };
}
