/**
 * CSV formula injection (OWASP "CSV Injection"): a spreadsheet runs a cell that begins with
 * = + - @ (and, in some, tab or CR) as a formula. Prefixing `'` makes it text; the importer
 * strips that prefix again (import/normalize.ts unescapeFormula), so export → import round-trips.
 */

/**
 * A cell that starts with a trigger, possibly after apostrophes, gets one more `'`.
 * Escaping `'=x` too (as `''=x`) keeps the rule reversible — unescape strips one `'` from
 * /^'+[trigger]/ — and a spreadsheet then shows `'=x`, the real value.
 */
const NEEDS_PREFIX = /^'*[=+\-@\t\r]/;

export function escapeFormula(value: string): string {
  return NEEDS_PREFIX.test(value) ? `'${value}` : value;
}

const LOOKS_ESCAPED = /^'+[=+\-@\t\r]/;

/**
 * For typed cells (xlsx), which are never formulas and need no escape: only a value that
 * already looks escaped (`'=x`) gets one more `'`, as the importer strips one from it.
 */
export function keepLookalike(value: string): string {
  return value.charCodeAt(0) === 39 && LOOKS_ESCAPED.test(value) ? `'${value}` : value;
}
