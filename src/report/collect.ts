/**
 * What the review page shows, gathered while the rows stream by — and only that: a few sample
 * values per column, the first rows of each problem (counts beyond), the first duplicate
 * groups, the service's errors by code, one chart point a second. Memory stays flat whatever
 * the file's size or the number of bad rows.
 */
import type { Field } from '../import/fields.js';
import type { CompositeField } from '../import/row/composite.js';
import type { SourceInfo } from '../import/read/types.js';
import type { ResultLine } from '../import/record/results.js';
import { classifyIssue, type Problem } from './problems.js';
import { type Person, type ProblemHit, ProblemKind } from './value-groups.js';
import { Timeline } from './timeline.js';

/** Rows listed per group: the rest are counted. */
export const ROWS_PER_GROUP = 200;
/** Groups kept (problem codes, service error codes, duplicate keys): the rest are counted. */
const MAX_GROUPS = 200;
/**
 * Rows listed across all groups of one kind, whatever their number: the page's size stays a few
 * MB (a listed row is ~300 bytes of HTML) even when every column of every row is wrong its own way.
 */
const MAX_LISTED = 4000;
/** Duplicate rows listed under one first occurrence. */
const ROWS_PER_DUPLICATE = 20;
/** Sample values per column, and how many rows are looked at for them. */
const SAMPLES = { perColumn: 3, rows: 1000 } as const;
/** A value's characters kept for the page (a 1 MB cell must not make a 200 MB page). */
const MAX_VALUE = 200;

export interface ReportPlan {
  source: SourceInfo;
  headers: readonly string[];
  /** field → column index */
  columns: Partial<Record<Field, number>>;
  /** --map as given: those fields were matched by it. */
  map: Partial<Record<Field, string>>;
  unknown: readonly string[];
  dryRun: boolean;
  /** Fields built from several columns: parts and first results (composite-section.ts). */
  composites?: Partial<Record<Field, CompositeField>> | undefined;
  /** The export the header row was recognized as. */
  recognized?: string | undefined;
}

/** A list that keeps its first ROWS_PER_GROUP items and counts every one. */
export class Group<T> {
  total = 0;
  readonly items: T[] = [];
  constructor(readonly limit = ROWS_PER_GROUP) {}
  /** `room`: false when the page's budget is spent (the item is counted, not listed). */
  add(make: () => T, room = true): boolean {
    this.total++;
    if (!room || this.items.length >= this.limit) return false;
    this.items.push(make());
    return true;
  }
}

export interface ProblemRow {
  row: number;
  /** The header of the cell at fault ('' for a problem of the whole row). */
  column: string;
  /** The cell's value, cut to MAX_VALUE characters; undefined for a problem of the whole row. */
  value: string | undefined;
  message: string;
}

export interface DuplicateRow {
  row: number;
  name: string;
  email: string;
}

export interface ServiceErrorRow extends ProblemRow {
  status: number | undefined;
  requestId: string | undefined;
}

/** A map of groups that holds at most MAX_GROUPS keys; later keys are only counted. */
class Groups<T> {
  readonly map = new Map<string, Group<T>>();
  /** Items whose group could not be kept. */
  overflow = 0;
  #listed = 0;
  constructor(readonly limit = ROWS_PER_GROUP) {}
  add(key: string, make: () => T): void {
    let group = this.map.get(key);
    if (group === undefined) {
      if (this.map.size >= MAX_GROUPS) {
        this.overflow++;
        return;
      }
      group = new Group<T>(this.limit);
      this.map.set(key, group);
    }
    if (group.add(make, this.#listed < MAX_LISTED)) this.#listed++;
  }
}

/** The problems by kind: at most MAX_GROUPS kinds, MAX_LISTED values across them. */
class ProblemKinds {
  readonly map = new Map<string, ProblemKind>();
  /** Rows whose kind could not be kept. */
  overflow = 0;
  #listed = 0;
  add(code: string, hit: ProblemHit): void {
    let kind = this.map.get(code);
    if (kind === undefined) {
      if (this.map.size >= MAX_GROUPS) {
        this.overflow++;
        return;
      }
      kind = new ProblemKind();
      this.map.set(code, kind);
    }
    if (kind.add(hit, this.#listed < MAX_LISTED)) this.#listed++;
  }
}

/** Cells shown of a row on demand, and how much of each: the page stays a few MB whatever the file's width. */
const CELLS = { columns: 30, chars: 80 } as const;

export class ReportNotes {
  readonly samples: string[][];
  readonly problems = new ProblemKinds();
  readonly duplicates = new Groups<DuplicateRow>(ROWS_PER_DUPLICATE);
  duplicateTotal = 0;
  readonly serviceErrors = new Groups<ServiceErrorRow>();
  readonly timeline = new Timeline();
  readonly #byField: Map<string, number>;
  #sampleRows = 0;

  constructor(readonly plan: ReportPlan) {
    this.samples = plan.headers.map(() => []);
    this.#byField = new Map(Object.entries(plan.columns));
  }

  /** Every row read: the first non-empty values of each column, from the first rows. */
  row(values: readonly string[]): void {
    if (this.#sampleRows >= SAMPLES.rows) return;
    this.#sampleRows++;
    let full = true;
    for (let i = 0; i < this.samples.length; i++) {
      const kept = this.samples[i]!;
      if (kept.length >= SAMPLES.perColumn) continue;
      const text = (values[i] ?? '').trim();
      if (text !== '' && !kept.includes(text)) kept.push(cut(text));
      full &&= kept.length >= SAMPLES.perColumn;
    }
    if (full) this.#sampleRows = SAMPLES.rows;
  }

  invalid(row: number, values: readonly string[], issues: readonly string[]): void {
    for (const issue of issues) {
      const problem = classifyIssue(issue);
      this.problems.add(problem.code, this.#hit(row, values, problem));
    }
  }

  duplicate(row: number, values: readonly string[], firstRow: number): void {
    this.duplicateTotal++;
    this.duplicates.add(String(firstRow), () => ({ row, name: this.#cell(values, 'name'), email: this.#cell(values, 'email') }));
  }

  /** A row the service refused: grouped by its error code, the cell its `param` names marked. */
  failed(line: ResultLine): void {
    const code = line.errorCode ?? line.errorType ?? 'failed';
    this.serviceErrors.add(code, () => {
      const column = line.errorParam === undefined ? undefined : this.#byField.get(line.errorParam);
      return {
        row: line.line ?? line.row,
        column: column === undefined ? '' : (this.plan.headers[column] ?? ''),
        value: column === undefined ? undefined : cut(line.values[column] ?? ''),
        message: cut(line.errorMessage ?? ''),
        status: line.httpStatus,
        requestId: line.requestId,
      };
    });
  }

  /** A row's problem as its kind groups it; who the row is, and its cells, made only when kept. */
  #hit(line: number, values: readonly string[], problem: Problem): ProblemHit {
    const index = problem.field !== undefined ? this.#byField.get(problem.field) : problem.header !== undefined ? this.plan.headers.indexOf(problem.header) : -1;
    const whole = index === undefined || index < 0;
    return {
      column: whole ? '' : (this.plan.headers[index] ?? ''),
      value: whole ? undefined : cut(values[index] ?? ''),
      message: whole ? cut(problem.message) : cut(problem.message, 400),
      person: () => this.#person(line, values),
      cells: () => this.plan.headers.slice(0, CELLS.columns).map((header, i) => [cut(header, CELLS.chars), cut(values[i] ?? '', CELLS.chars)]),
    };
  }

  /** Who a row is: its name and e-mail cells as the file has them. */
  #person(line: number, values: readonly string[]): Person {
    return { line, name: this.#cell(values, 'name'), email: this.#cell(values, 'email') };
  }

  #cell(values: readonly string[], field: Field): string {
    const index = this.#byField.get(field);
    return index === undefined ? '' : cut(values[index] ?? '');
  }
}

function cut(text: string, max = MAX_VALUE): string {
  // A copy, not a slice: a slice of a batch's text would keep the whole batch alive.
  const kept = text.length <= max ? text : `${text.slice(0, max)}…`;
  return Buffer.from(kept, 'utf16le').toString('utf16le');
}
