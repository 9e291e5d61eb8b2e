/**
 * CSV formula injection (OWASP "CSV Injection"): a spreadsheet runs a cell that begins with
 * = + - @ (and, in some, tab or CR) as a formula. Prefixing `'` makes it text; the importer
 * strips that prefix again (unescapeFormula, used by import/normalize.ts), so export → import
 * round-trips.
 *
 * A spreadsheet splits a CSV on the user's list separator (`;` in much of Europe), which may
 * not be the file's. A quoted cell holding `;` stays one cell only where the quote opens a
 * field; mid-line, a `;` reader takes the quote as text and splits the cell there, and a line
 * break inside it starts a new row. So each segment of a cell after `,` `;` tab CR or LF is
 * escaped as the cell's start is: `Ann;=cmd()` is written `Ann;'=cmd()`.
 */

/**
 * A cell that starts with a trigger, possibly after apostrophes, gets one more `'`.
 * Escaping `'=x` too (as `''=x`) keeps the rule reversible — unescape strips one `'` from
 * /^'+[trigger]/ — and a spreadsheet then shows `'=x`, the real value.
 */
const NEEDS_PREFIX = /^'*[=+\-@\t\r]/;

/** Where a segment that needs the same `'` starts: after a list separator or line break. */
const SEGMENT_NEEDS_PREFIX = /([,;\t\r\n])(?=['"]*[=+\-@\t\r])/g;
/**
 * The same, as one test. A `"` may come first: where a reader on another separator meets
 * `;""=x` mid-line, it opens a quote there and reads `=x` after it.
 */
const SEGMENT_TRIGGER = /[,;\t\r\n]['"]*[=+\-@\t\r]/;

export function escapeFormula(value: string): string {
  const text = NEEDS_PREFIX.test(value) ? `'${value}` : value;
  return SEGMENT_TRIGGER.test(text) ? text.replace(SEGMENT_NEEDS_PREFIX, "$1'") : text;
}

/** Whether escapeFormula changes a value after its first character (most values: no). */
export function hasSegmentTrigger(value: string): boolean {
  return SEGMENT_TRIGGER.test(value);
}

const LOOKS_ESCAPED = /^'+[=+\-@\t\r]/;
const SEGMENT_LOOKS_ESCAPED = /([,;\t\r\n])(?='['"]*[=+\-@\t\r])/g;
const SEGMENT_ESCAPED = /([,;\t\r\n])'(?=['"]*[=+\-@\t\r])/g;
const ANY_SEGMENT_ESCAPED = /[,;\t\r\n]'['"]*[=+\-@\t\r]/;

/**
 * Undoes escapeFormula: one `'` goes from the start and from each segment that begins with
 * apostrophes and a trigger. A value with no `'` (nearly all) costs one scan.
 */
export function unescapeFormula(value: string): string {
  if (!value.includes("'")) return value;
  const text = value.charCodeAt(0) === 39 && LOOKS_ESCAPED.test(value) ? value.slice(1) : value;
  return ANY_SEGMENT_ESCAPED.test(text) ? text.replace(SEGMENT_ESCAPED, '$1') : text;
}

/**
 * For typed cells (xlsx), which are never formulas and need no escape: only a value that
 * already looks escaped (`'=x`, or `a;'=x` in a segment) gets one more `'` there, as the
 * importer strips one from it.
 */
export function keepLookalike(value: string): string {
  if (!value.includes("'")) return value;
  const text = value.charCodeAt(0) === 39 && LOOKS_ESCAPED.test(value) ? `'${value}` : value;
  return ANY_SEGMENT_ESCAPED.test(text) ? text.replace(SEGMENT_LOOKS_ESCAPED, "$1'") : text;
}
