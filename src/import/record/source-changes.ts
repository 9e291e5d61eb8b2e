/**
 * Before a resumed run sends anything: has its input changed since the results file's last run?
 * The sidecar holds the input's SHA-256 (provenance.ts); when today's differs, the rows whose
 * values differ from what the results file recorded for them are found and named. A row edited
 * between runs gets a new idempotency key, so without this a corrected address could become a
 * second client (the e-mail match catches most of those, not a row whose e-mail was the edit).
 */
import { csvSafeCell } from '../../infra/csv-text.js';
import { UsageError } from '../../errors.js';
import { shownPath } from '../../infra/printable.js';
import { quickPrint } from '../../infra/fingerprints.js';
import { openRows, type ReadOptions } from '../read/index.js';
import { hashFile, type SourceStamp, stampSource } from './provenance.js';
import { readResultRecords, RESULT_COLUMNS } from './results-read.js';

/** How many changed rows a message shows (their count is always given). */
const SHOWN = 10;

/** How a resumed run's input differs from what its results file's last run read. */
export interface SourceChanges {
  /** The SHA-256 (or size and time, when no hash was recorded) the last run saw, and today's. */
  was: string;
  /** Today's SHA-256 of the input. */
  now: string;
  /** Rows created by an earlier run whose values differ from their results line, the first 10, each with what changed. */
  shown: {
    /** The data row, as the results file numbers it. */
    row: number;
    /** Its line (CSV) or worksheet row in the input. */
    line: number;
    /** What changed, column by column: `city "Rome" → "Milan"` (at most three, then how many more). */
    what: string;
  }[];
  /** How many rows created by an earlier run now hold other values (all of them; `shown` lists the first). */
  changedRows: number;
  /** Rows created by an earlier run that the input no longer has. */
  goneRows: number;
  /** Rows not created yet (invalid, failed, not attempted…) that changed: fixed in place, sent as they are now. */
  otherChanged: number;
}

export interface SourceCheck {
  /** Today's SHA-256 of the input (hashed once, here, and handed on to the sidecar). */
  sha256: string | undefined;
  changes: SourceChanges | undefined;
}

/**
 * Compares the input with the last run's record of it. `recorded` is the sidecar's stamp of the
 * input; without one (a file written before sidecars recorded it) nothing can be compared.
 */
export async function checkSource(
  file: string,
  results: string,
  recorded: SourceStamp | undefined,
  read: ReadOptions,
  dropColumn: number | undefined,
): Promise<SourceCheck> {
  const sha256 = await hashFile(file);
  if (recorded === undefined || sha256 === undefined) return { sha256, changes: undefined };
  if (recorded.sha256 !== undefined && recorded.sha256 === sha256) return { sha256, changes: undefined };
  if (recorded.sha256 === undefined) {
    // Killed before the hash was known: size and time are what was recorded.
    const now = stampSource(file);
    if (now !== undefined && now.size === recorded.size && now.mtime === recorded.mtime) return { sha256, changes: undefined };
  }
  const was = recorded.sha256 ?? `${recorded.size} bytes, modified ${recorded.mtime}`;
  const rows = await diffRows(file, results, read, dropColumn);
  return { sha256, changes: { was, now: sha256, ...rows } };
}

/** The three passes: the results file's rows as prints, the input against them, then the old values of the rows shown. */
async function diffRows(
  file: string,
  results: string,
  read: ReadOptions,
  dropColumn: number | undefined,
): Promise<Pick<SourceChanges, 'shown' | 'changedRows' | 'goneRows' | 'otherChanged'>> {
  // A created row's print as is, any other's negated (and less one, so 0 stays apart).
  const recorded = new RowPrints();
  for await (const record of readResultRecords(results)) {
    const row = Number(record[0]);
    if (!Number.isInteger(row) || row < 1) continue;
    const print = printOf(record.slice(RESULT_COLUMNS.length));
    recorded.set(row, record[1] === 'created' ? print : -print - 1);
  }
  const source = await openRows(file, read);
  const changed: { row: number; line: number; values: string[] }[] = [];
  let changedRows = 0;
  let otherChanged = 0;
  let lastRow = 0;
  try {
    for await (const batch of source.batches) {
      for (const raw of batch) {
        lastRow = raw.row;
        const was = recorded.get(raw.row);
        if (was === undefined) continue;
        const values = asWritten(raw.values, dropColumn);
        const print = printOf(values);
        if (print === was || -print - 1 === was) continue;
        if (was < 0) {
          otherChanged++;
          continue;
        }
        changedRows++;
        if (changed.length < SHOWN) changed.push({ row: raw.row, line: raw.line, values });
      }
    }
  } finally {
    await source.close();
  }
  const old = new Map<number, string[]>();
  if (changed.length > 0) {
    const wanted = new Set(changed.map((c) => c.row));
    for await (const record of readResultRecords(results)) {
      const row = Number(record[0]);
      if (wanted.has(row)) old.set(row, record.slice(RESULT_COLUMNS.length));
    }
  }
  const shown = changed.map(({ row, line, values }) => ({ row, line, what: describeChange(source.headers, old.get(row), values, dropColumn) }));
  return { shown, changedRows, goneRows: recorded.createdAbove(lastRow), otherChanged };
}

/** The input's values as a results line holds them: formula-escaped, the dropped column left out. */
function asWritten(values: readonly string[], dropColumn: number | undefined): string[] {
  const out: string[] = [];
  for (let i = 0; i < values.length; i++) if (i !== dropColumn) out.push(cellText(values[i]!));
  return out;
}

/** A cell's text as csv-parse gives it back from csvSafeCell's output. */
function cellText(value: string): string {
  const safe = csvSafeCell(value);
  return safe.startsWith('"') ? safe.slice(1, -1).replaceAll('""', '"') : safe;
}

/** Trailing empty cells are not a change: a CSV writer may leave them out. */
function printOf(values: readonly string[]): number {
  let end = values.length;
  while (end > 0 && values[end - 1] === '') end--;
  const { hi, lo } = quickPrint(values.slice(0, end).join('\u0000'));
  return hi * 2 ** 21 + (lo >>> 11);
}

function describeChange(headers: readonly string[], was: readonly string[] | undefined, now: readonly string[], dropColumn: number | undefined): string {
  if (was === undefined) return 'values differ';
  const names = headers.filter((_, i) => i !== dropColumn);
  const parts: string[] = [];
  for (let i = 0; i < Math.max(was.length, now.length); i++) {
    const a = was[i] ?? '';
    const b = now[i] ?? '';
    if (a !== b) parts.push(`${names[i] ?? `column ${i + 1}`} ${JSON.stringify(clip(a))} → ${JSON.stringify(clip(b))}`);
  }
  return parts.length === 0 ? 'values differ' : parts.slice(0, 3).join('; ') + (parts.length > 3 ? `; ${parts.length - 3} more` : '');
}

function clip(text: string): string {
  return text.length > 40 ? `${text.slice(0, 39)}…` : text;
}

/** Row number → a 53-bit print of its values, in a growing typed array (a million rows: 8 MB). */
class RowPrints {
  #prints = new Float64Array(1024).fill(Number.NaN);
  #highest = 0;

  set(row: number, print: number): void {
    if (row >= this.#prints.length) {
      const grown = new Float64Array(Math.max(row + 1, this.#prints.length * 2)).fill(Number.NaN);
      grown.set(this.#prints);
      this.#prints = grown;
    }
    this.#prints[row] = print;
    if (row > this.#highest) this.#highest = row;
  }

  get(row: number): number | undefined {
    const print = this.#prints[row];
    return print === undefined || Number.isNaN(print) ? undefined : print;
  }

  /** Created rows recorded past `row`. */
  createdAbove(row: number): number {
    let count = 0;
    for (let r = row + 1; r <= this.#highest; r++) if (this.#prints[r]! >= 0) count++;
    return count;
  }
}

/** The refusal: what changed, row by row, and the two ways on. */
export function sourceChangedError(file: string, results: string, changes: SourceChanges): UsageError {
  const { shown, changedRows, goneRows } = changes;
  const lines = shown.map(({ row, line, what }) => `  row ${row} (line ${line}): ${what}`);
  if (changedRows > shown.length) lines.push(`  and ${changedRows - shown.length} more`);
  if (goneRows > 0) lines.push(`  ${goneRows} created row${goneRows === 1 ? '' : 's'} the results file records ${goneRows === 1 ? 'is' : 'are'} no longer in the input`);
  const rows = `${changedRows} row${changedRows === 1 ? '' : 's'} created by an earlier run`;
  return new UsageError(
    `${shownPath(file)} changed since ${shownPath(results)}'s last run (SHA-256 ${short(changes.was)} → ${short(changes.now)}): ` +
      `${rows} differ from what the results file recorded for them:\n${lines.join('\n')}\n` +
      'A row edited after its client was created has a new idempotency key and could become a second client. ' +
      'Undo the edits, or add --accept-changed-source to go on (rows already created stay skipped; an edited row whose e-mail the service holds is skipped as changed_since_created)',
    'source_changed',
  );
}

function short(text: string): string {
  return /^[0-9a-f]{64}$/.test(text) ? `${text.slice(0, 12)}…` : text;
}
