/**
 * What a run tells its user beyond the counts: which rows are invalid and why (the first few on
 * stderr, more with --json; every one is in the results file), and which values were changed on
 * the way out (`Italy → IT`, dates read as DD/MM/YYYY), each with how often. Bounded: a file
 * with a million distinct bad values keeps only the first entries.
 */
import { FIELDS, type Field } from '../fields.js';

/** One thing wrong with an invalid row. */
export interface RowProblem {
  /** The header of the column at fault, when the problem is one column's. */
  column: string | undefined;
  /** The field at fault (`email`, `country`…), when the problem is one field's. */
  field: string | undefined;
  /** What is wrong and how to fix it, in words. */
  message: string;
}

/** An invalid row and every problem found in it. */
export interface InvalidRow {
  /** The data row, as the results file numbers it. */
  row: number;
  /** Where the row is in the file as a person sees it: its line (CSV) or worksheet row. */
  line: number;
  /** Every problem found in the row, each with its column. */
  problems: RowProblem[];
}

/** A value the run changed on its way out, and how often (`country` "Italy" → "IT" ×3). */
export interface Normalization {
  /** The field changed (`country`, `currency`, `application_date`…), or `(any)` for a change to any field (trimmed spaces). */
  field: string;
  /** The value as the file holds it; for `application_date`, the date form read (`DD/MM/YYYY`). */
  from: string;
  /** The value as sent; for `application_date`, `YYYY-MM-DD`. */
  to: string;
  /** How many times this change was made. */
  count: number;
}

/** Distinct value changes kept (countries and currencies: a few hundred at most in practice). */
const MAX_CHANGES = 1000;

export class RunNotes {
  readonly invalidRows: InvalidRow[] = [];
  invalidTotal = 0;
  readonly #keep: number;
  readonly #columns: Partial<Record<Field, string>>;
  /** By field, then by the value as written: each value's changes (one, in practice). */
  readonly #changes = new Map<string, Map<string, Normalization[]>>();
  /** The same changes in the order first seen (ties keep it when sorted). */
  readonly #seen: Normalization[] = [];

  /** `keep`: invalid rows listed; `columns`: field → header, to name the column of a problem. */
  constructor(keep: number, columns: Partial<Record<Field, string>>) {
    this.#keep = keep;
    this.#columns = columns;
  }

  invalid(row: number, line: number, issues: readonly string[]): void {
    this.invalidTotal++;
    if (this.invalidRows.length >= this.#keep) return;
    this.invalidRows.push({ row, line, problems: issues.map((issue) => this.#problem(issue)) });
  }

  /** One value changed on its way out: `field` from what the file holds to what is sent. */
  changed(field: string, from: string, to: string): void {
    // Looked up without building a key string: most rows of a file change the same way.
    let byValue = this.#changes.get(field);
    if (byValue === undefined) this.#changes.set(field, (byValue = new Map()));
    const changes = byValue.get(from);
    const known = changes?.find((change) => change.to === to);
    if (known) known.count++;
    else if (this.#seen.length < MAX_CHANGES) {
      const change = { field, from, to, count: 1 };
      if (changes) changes.push(change);
      else byValue.set(from, [change]);
      this.#seen.push(change);
    }
  }

  /** Most frequent first. */
  normalizations(): Normalization[] {
    return [...this.#seen].sort((a, b) => b.count - a.count);
  }

  /** validate-row's issues read `field: message`; other issues concern the whole row. */
  #problem(issue: string): RowProblem {
    const at = issue.indexOf(': ');
    const field = at > 0 ? issue.slice(0, at) : '';
    if (!(FIELDS as readonly string[]).includes(field)) return { column: undefined, field: undefined, message: issue };
    return { column: this.#columns[field as Field], field, message: issue.slice(at + 2) };
  }
}

/** `country "Italy" → "IT" ×1` (a date format: `application_date read as DD/MM/YYYY ×3`). */
export function describeNormalization(n: Normalization): string {
  if (n.field === 'application_date') return `${n.field} read as ${n.from} ×${n.count}`;
  if (n.field === '(any)') return `${n.from} ${n.to} ×${n.count}`;
  return `${n.field} ${JSON.stringify(n.from)} → ${JSON.stringify(n.to)} ×${n.count}`;
}
