/**
 * Rows from code: plain objects (field → value, or the caller's own column names with `map`)
 * from an Iterable or AsyncIterable — a database cursor, a generator — read as a file's rows are,
 * so they get the same checks, keys, normalization, results file and pace. The first object's
 * keys are the header; values become text as a cell's would. Pulled as the import consumes
 * them: a million rows from a cursor stream through in flat memory.
 */
import { InputError } from '../../errors.js';
import type { RawRecord, RowSource } from './types.js';

/** What `importClients({ rows })` takes. */
export type RowsInput = Iterable<Record<string, unknown>> | AsyncIterable<Record<string, unknown>>;

/** Rows handed on together: the import's loop works a batch at a time. */
const BATCH = 256;

export async function openObjectRows(rows: RowsInput, name: string): Promise<RowSource> {
  const iterator = (Symbol.asyncIterator in rows ? rows : fromSync(rows))[Symbol.asyncIterator]();
  const first = await iterator.next();
  const headers = first.done === true ? [] : keysOf(first.value, 1, name);
  if (headers.length === 0) {
    await iterator.return?.();
    throw new InputError(`${name}: the rows are empty (no row, or a first row with no keys)`, 'input_empty', { file: name });
  }
  let closed = false;
  async function* batches(): AsyncGenerator<RawRecord[]> {
    let row = 1;
    let batch: RawRecord[] = [record(first.value as Record<string, unknown>, headers, row, name)];
    for (;;) {
      const next = await iterator.next();
      if (next.done === true || closed) break;
      batch.push(record(next.value, headers, ++row, name));
      if (batch.length >= BATCH) {
        yield batch;
        batch = [];
      }
    }
    if (batch.length > 0) yield batch;
  }
  return {
    info: {
      file: name,
      format: 'rows',
      encoding: 'utf-8',
      encodingSource: 'default',
      delimiter: ',',
      delimiterSource: 'default',
      header: { line: 0, skipped: [], source: 'first' },
      sizeBytes: 0,
    },
    headers,
    batches: batches(),
    bytesRead: () => 0,
    async close() {
      if (closed) return;
      closed = true;
      await iterator.return?.();
    },
  };
}

function keysOf(value: unknown, row: number, name: string): string[] {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new InputError(`${name}: row ${row} is ${describe(value)}, not an object of column → value`, 'input_format', { file: name });
  }
  return Object.keys(value);
}

/** The row's values in the header's order; a key the first row did not have is refused, by name. */
function record(value: Record<string, unknown>, headers: readonly string[], row: number, name: string): RawRecord {
  const keys = keysOf(value, row, name);
  if (keys.length > headers.length || keys.some((key) => !headers.includes(key))) {
    const extra = keys.filter((key) => !headers.includes(key));
    throw new InputError(
      `${name}: row ${row} has ${extra.map((key) => JSON.stringify(key)).join(', ')}, which the first row has not: give every row the first row's keys (an undefined value is an empty cell)`,
      'input_format',
      { file: name },
    );
  }
  return { row, line: row, values: headers.map((header) => cellText(value[header], header, row, name)) };
}

/** A value as a cell's text: numbers and booleans as written, a Date as its day (or its instant, if it has a time), nothing as empty. */
function cellText(value: unknown, header: string, row: number, name: string): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean') return String(value);
  if (value instanceof Date) {
    if (Number.isNaN(value.getTime())) throw new InputError(`${name}: row ${row}, ${JSON.stringify(header)}: an invalid Date`, 'input_format', { file: name });
    const iso = value.toISOString();
    return iso.endsWith('T00:00:00.000Z') ? iso.slice(0, 10) : iso;
  }
  throw new InputError(`${name}: row ${row}, ${JSON.stringify(header)} is ${describe(value)}: give text, a number or a Date`, 'input_format', { file: name });
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/** A sync iterable as an async one; its `return` reaches the sync iterator (yield* forwards it). */
async function* fromSync<T>(rows: Iterable<T>): AsyncGenerator<T> {
  yield* rows;
}
