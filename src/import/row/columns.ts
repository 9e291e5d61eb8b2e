import { InputError } from '../../errors.js';
import { shownPath } from '../../infra/printable.js';
import { FIELDS, type Field, foldHeader, headerWords, REQUIRED_FIELDS } from '../fields.js';
import {
  HEADER_WORDS,
  type HeaderReading,
  type HeaderTable,
  indexHeaders,
  LANGUAGE_NAMES,
  LANGUAGES,
  type Language,
} from '../fields.js';
import type { HeaderTest } from '../read/index.js';
import { type Composite, isTemplate, parseTemplate } from './composite.js';
import { exportTemplates, findColumn, recognizedOf, recognizeExport, type RecognizedExport, resolveTemplate } from './recognize.js';

/** Which input column feeds which field: plain data, decided before the first request. */
export interface ColumnPlan {
  headers: string[];
  /** field → column index */
  columns: Partial<Record<Field, number>>;
  /** headers that feed no field (reported once, ignored) */
  unknown: string[];
  /** The language most headers are in (English when none is known): it settles day/month order. */
  language: Language;
  /** Fields whose header only another language than English reads: `country` ← "Land" (de). */
  languages: Partial<Record<Field, Language>>;
  /**
   * Fields built from several columns (a --map template, or a recognized export's parts); such a
   * field's `columns` entry is its first part's column.
   */
  composites: Partial<Record<Field, Composite>>;
  /** The export the header row was recognized as (crm-exports.ts), when it was. */
  recognized?: RecognizedExport | undefined;
}

/** Every column a field reads: single columns and each composite's parts. */
export function usedColumns(plan: Pick<ColumnPlan, 'columns' | 'composites'>): Set<number> {
  const used = new Set(Object.values(plan.columns));
  for (const composite of Object.values(plan.composites)) for (const part of composite.parts) used.add(part.column);
  return used;
}

/**
 * Maps headers to fields: --map first (exact header, then folded; a template's every part),
 * then a recognized export's columns (crm-exports.ts), then the header words of every language
 * (fields.ts), folded. Missing required columns, and a header that reads as two fields, stop
 * the run before anything is sent.
 */
export function mapColumns(
  file: string,
  headers: string[],
  map: Partial<Record<Field, string>>,
  line = 1,
  /** What `line` counts, for messages: CSV lines, or a sheet's rows. */
  unit: 'line' | 'row' = 'line',
  table: HeaderTable = HEADER_WORDS,
): ColumnPlan {
  const folded = headers.map(foldHeader);
  const columns: Partial<Record<Field, number>> = {};
  const taken = new Set<number>();

  const composites: Partial<Record<Field, Composite>> = {};
  // `template`: a --map template, composed (white space normalized) even with one part.
  const take = (field: Field, composite: Composite, template = false) => {
    columns[field] = composite.parts[0]!.column;
    for (const part of composite.parts) taken.add(part.column);
    if (template || composite.parts.length > 1 || composite.lead !== '' || composite.parts[0]!.after !== '') composites[field] = composite;
  };

  mapGiven(file, headers, map, line, take);

  const kind = recognizeExport(headers);
  if (kind !== undefined) {
    const found = exportTemplates(kind, headers, taken);
    for (const field of FIELDS) if (columns[field] === undefined && found[field] !== undefined) take(field, found[field]);
  }

  const readings = headerReadings(file, headers, folded, taken, columns, line, table);
  const language = fileLanguage(readings);
  const languages: Partial<Record<Field, Language>> = {};
  for (const field of FIELDS) {
    if (columns[field] !== undefined) continue;
    const best = bestColumns(field, readings, language);
    const [first, second] = best;
    if (first === undefined) continue;
    if (second !== undefined) {
      throw new InputError(
        `${shownPath(file)}: columns ${best.map((c) => c.index + 1).join(' and ')} are both ${JSON.stringify(headers[first.index])}; ` +
          'rename one so it is clear which is the ' +
          field,
        'duplicate_columns',
        { file, line },
      );
    }
    columns[field] = first.index;
    taken.add(first.index);
    // Named in the plan only where English would not have read it.
    if (first.language !== 'en' && !readings[first.index]!.some((r) => r.language === 'en')) languages[field] = first.language;
  }

  const missing = REQUIRED_FIELDS.filter((field) => columns[field] === undefined);
  if (missing.length > 0) {
    throw new InputError(
      `${shownPath(file)}: missing required column${missing.length > 1 ? 's' : ''} ${missing.join(', ')}` +
        `${kind === undefined ? '' : ` (recognized: ${kind.label}, which has no such column)`}; ` +
        `headers found${line > 1 ? ` (${unit} ${line})` : ''}: ${list(headers)}. ` +
        'Rename the columns or use --map field=Header (--header-row N if the header is another row).',
      'missing_columns',
      { file, line },
    );
  }
  const unknown = headers.filter((header, index) => !taken.has(index) && header.trim() !== '');
  return { headers, columns, unknown, language, languages, composites, ...(kind !== undefined && { recognized: recognizedOf(kind) }) };
}

/** The --map columns: a header (exact, else folded), or a template's parts. */
function mapGiven(
  file: string,
  headers: readonly string[],
  map: Partial<Record<Field, string>>,
  line: number,
  take: (field: Field, composite: Composite, template?: boolean) => void,
): void {
  const folded = headers.map(foldHeader);
  for (const field of FIELDS) {
    const wanted = map[field];
    if (wanted === undefined) continue;
    if (isTemplate(wanted)) {
      take(field, resolveTemplate(file, field, wanted, headers, line), true);
      continue;
    }
    const column = findColumn(headers, folded, wanted);
    if (column < 0) {
      throw new InputError(
        `${shownPath(file)}: --map ${field}=${wanted}: no such column; headers found: ${list(headers)}`,
        'map_unknown_header',
        { file, line },
      );
    }
    take(field, { template: wanted, lead: '', parts: [{ header: headers[column]!, after: '', column }] });
  }
}

/** Each column's readings (none for one --map took); a header two fields claim stops the run. */
function headerReadings(
  file: string,
  headers: readonly string[],
  folded: readonly string[],
  taken: ReadonlySet<number>,
  mapped: Partial<Record<Field, number>>,
  line: number,
  table: HeaderTable,
): HeaderReading[][] {
  const index = indexHeaders(table, foldHeader);
  return folded.map((name, column) => {
    if (taken.has(column)) return [];
    const found = (index.get(name) ?? []).filter((r) => mapped[r.field] === undefined);
    const fields = [...new Set(found.map((r) => r.field))];
    if (fields.length > 1) {
      const meanings = fields.map((field) => {
        const names = found.filter((r) => r.field === field).map((r) => LANGUAGE_NAMES[r.language]);
        return `the ${names.join(' and ')} header of ${field}`;
      });
      throw new InputError(
        `${shownPath(file)}: column ${column + 1} ${JSON.stringify(headers[column])} is ${meanings.join(' and ')}; ` +
          `say which with --map (${fields.map((field) => `--map ${field}=${headers[column]}`).join(' or ')})`,
        // The documented code for a column and a field that do not pair one to one.
        'duplicate_columns',
        { file, line },
      );
    }
    return found;
  });
}

/** The language most columns are headed in; English on a tie, and when none is (unknown languages). */
function fileLanguage(readings: readonly HeaderReading[][]): Language {
  let best: Language = 'en';
  let most = 0;
  for (const language of LANGUAGES) {
    const count = readings.filter((found) => found.some((r) => r.language === language)).length;
    if (count > most) [best, most] = [language, count];
  }
  return best;
}

/**
 * The columns that read as `field`, best first: the file's own language before English before
 * the others, then the word's place in its list. Two columns under the same best word are
 * returned together (a duplicate); else one.
 */
function bestColumns(field: Field, readings: readonly HeaderReading[][], language: Language): { index: number; language: Language }[] {
  const score = (r: HeaderReading) =>
    [r.language === language ? 0 : r.language === 'en' ? 1 : 2, r.rank, LANGUAGES.indexOf(r.language)] as const;
  let best: { index: number; language: Language; key: readonly number[] }[] = [];
  readings.forEach((found, index) => {
    for (const reading of found) {
      if (reading.field !== field) continue;
      const key = score(reading);
      const order = best.length === 0 ? -1 : compare(key, best[0]!.key);
      if (order < 0) best = [{ index, language: reading.language, key }];
      else if (order === 0 && !best.some((b) => b.index === index)) best.push({ index, language: reading.language, key });
    }
  });
  return best.map(({ index, language: lang }) => ({ index, language: lang }));
}

function compare(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return 0;
}

function list(headers: readonly string[]): string {
  return headers.length === 0 ? '(none)' : headers.map((h) => JSON.stringify(h)).join(', ');
}

/** What the header row must hold, as the reader tests rows for it (a title block above it). */
export function headerTest(map: Partial<Record<Field, string>>): HeaderTest {
  return {
    required: REQUIRED_FIELDS.map((field) => {
      const wanted = map[field];
      if (wanted === undefined) return headerWords(field).map(foldHeader);
      // A template's parts each stand in the header row; its first one is enough to find it.
      return [foldHeader(isTemplate(wanted) ? parseTemplate(field, wanted).parts[0]!.header : wanted)];
    }),
  };
}
