/**
 * The review page's problems, gathered while the rows stream by: per kind of problem
 * (`country_unknown`), each value at fault once (`"Deutschland"`), with its count, its first
 * rows' numbers, who those rows are (name, e-mail) and the first row's other cells. Memory
 * stays flat: a kind keeps its first VALUES_PER_KIND values, a value its first few rows, and
 * the page a budget of values across kinds; everything past that is counted, not kept.
 */

/** Values listed per kind: the rest are counted. */
export const VALUES_PER_KIND = 200;
/** Row numbers kept per value. */
export const LINES_PER_VALUE = 20;
/** People (name, e-mail) kept per value. */
export const PEOPLE_PER_VALUE = 5;

/** Who a row is, as the file names them: enough to find the person without opening the file. */
export interface Person {
  /** The row's place as the file shows it: a CSV's line, a worksheet's row. */
  line: number;
  name: string;
  email: string;
}

/** One value at fault and the rows that hold it. */
export interface ValueGroup {
  /** The header of the cell at fault ('' for a problem of the whole row). */
  column: string;
  /** The value, cut for the page; undefined for a problem of the whole row. */
  value: string | undefined;
  /** The first row's problem, as the check said it (the suggestion is in it). */
  message: string;
  /** Rows with this value. */
  total: number;
  /** The first LINES_PER_VALUE rows' places, in file order. */
  lines: number[];
  /** The first PEOPLE_PER_VALUE rows' people. */
  people: Person[];
  /** The first row's cells, header and value (cut), for the page's "on demand" view. */
  cells: [string, string][];
}

/** What a row brings to its kind: built only when the value gets (or has) a group. */
export interface ProblemHit {
  column: string;
  value: string | undefined;
  message: string;
  person(): Person;
  cells(): [string, string][];
}

/** One kind of problem: every row counted, its values grouped. */
export class ProblemKind {
  /** Rows with this problem. */
  total = 0;
  /** Rows whose value got no group (past VALUES_PER_KIND, or the page's budget spent). */
  unlisted = 0;
  readonly values = new Map<string, ValueGroup>();

  /** One row; `room`: whether the page's budget allows a new value. True when a new value was listed. */
  add(hit: ProblemHit, room: boolean): boolean {
    this.total++;
    // A value is one value in one column; a problem of the whole row is grouped by what it says.
    const key = `${hit.column}\u0000${hit.value ?? `\u0001${hit.message}`}`;
    const group = this.values.get(key);
    if (group !== undefined) {
      group.total++;
      if (group.lines.length >= LINES_PER_VALUE) return false;
      const person = hit.person();
      group.lines.push(person.line);
      if (group.people.length < PEOPLE_PER_VALUE) group.people.push(person);
      return false;
    }
    if (!room || this.values.size >= VALUES_PER_KIND) {
      this.unlisted++;
      return false;
    }
    const person = hit.person();
    this.values.set(key, { column: hit.column, value: hit.value, message: hit.message, total: 1, lines: [person.line], people: [person], cells: hit.cells() });
    return true;
  }

  /** Most frequent first; ties in file order. */
  sorted(): ValueGroup[] {
    return [...this.values.values()].sort((a, b) => b.total - a.total || a.lines[0]! - b.lines[0]!);
  }
}
