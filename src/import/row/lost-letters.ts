/**
 * Letters a single-byte save lost: Excel's "CSV" in windows-1252 writes `?` for a letter its
 * code page lacks (`Łukasz` → `?ukasz`). The row is read as the file says, so it would be sent
 * with the `?`; the run says which rows hold one and why. A `?` right before a letter is the
 * sign (a question mark ends a word, it does not start one).
 */
import type { Field } from '../fields.js';
import type { RawRecord, RowSource, SourceInfo } from '../read/index.js';
import type { ColumnPlan } from './columns.js';

const LOST = /\?\p{L}/u;
/** Rows named; the count goes on. */
const ROWS_KEPT = 20;

/**
 * Rows of a file saved in a single-byte encoding that hold a `?` where the saving program lost
 * a letter its code page lacks (`Łukasz` → `?ukasz`): they are sent as the file holds them.
 */
export interface LostLetters {
  /** The file's single-byte encoding: `windows-1252`. */
  encoding: string;
  /** The lines (a single-byte file is a CSV) of the rows holding a `?` before a letter, the first 20, as a person finds them in the file. */
  rows: number[];
  /** How many rows hold one (all of them; `rows` names the first). */
  count: number;
  /** The first such value, with its column. */
  example:
    | {
        /** The column's header. */
        column: string;
        /** The value as the file holds it, `?` and all. */
        value: string;
      }
    | undefined;
}

/** A CSV in a single-byte encoding: UTF-8 and UTF-16 have every letter. */
export function isSingleByte(info: SourceInfo): boolean {
  return info.format === 'csv' && !/^utf-?(8|16)/i.test(info.encoding);
}

/**
 * The source again, its rows' mapped text columns (not the e-mail, which the row check refuses
 * with a `?` anyway) watched as they pass; `found` fills as the run reads. Undefined for a file
 * that cannot lose letters this way.
 */
export function watchLostLetters(source: RowSource, plan: ColumnPlan): { source: RowSource; found: LostLetters } | undefined {
  if (!isSingleByte(source.info)) return undefined;
  const columns = (Object.entries(plan.columns) as [Field, number][]).filter(([field]) => field !== 'email');
  const found: LostLetters = { encoding: source.info.encoding, rows: [], count: 0, example: undefined };
  const look = (record: RawRecord) => {
    for (const [, index] of columns) {
      const value = record.values[index];
      if (value === undefined || !LOST.test(value)) continue;
      found.count++;
      if (found.rows.length < ROWS_KEPT) found.rows.push(record.line);
      found.example ??= { column: plan.headers[index] ?? '', value };
      return;
    }
  };
  async function* watched(): AsyncGenerator<RawRecord[]> {
    for await (const batch of source.batches) {
      for (const record of batch) look(record);
      yield batch;
    }
  }
  return { source: { ...source, batches: watched(), bytesRead: () => source.bytesRead(), close: () => source.close() }, found };
}

/** The warning: `lines 12, 28 hold "?" inside a word ("?ukasz Król" in "Name"): …`. */
export function describeLostLetters(found: LostLetters): string {
  const rows = found.rows.join(', ') + (found.count > found.rows.length ? ` and ${found.count - found.rows.length} more` : '');
  const example = found.example === undefined ? '' : ` (${JSON.stringify(found.example.value)} in ${JSON.stringify(found.example.column)})`;
  return (
    `line${found.count > 1 ? 's' : ''} ${rows} hold${found.count > 1 ? '' : 's'} "?" inside a word${example}: ` +
    `the program that saved this ${found.encoding} file had no such letter and wrote "?" instead; ` +
    'save it as .xlsx or "CSV UTF-8" and run again'
  );
}
