/**
 * The reader thread's echoes (RawRecord.echo): a record's values as the results file writes
 * them, made on the reader thread while it is ahead. A line written from an echo is the line
 * written from the values, byte for byte, whatever the values hold.
 */
import { describe, expect, it } from 'vitest';
import { packBatch, unpackBatch } from '../src/import/read/reader-thread.js';
import type { RawRecord } from '../src/import/read/types.js';
import { formatLine, type ResultLine } from '../src/import/results.js';

const TRICKY = [
  'plain',
  '',
  ' spaced ',
  'comma, inside',
  'a "quoted" word',
  'line\nbreak',
  'carriage\rreturn',
  '=1+2',
  '+49 30 1234',
  '-minus',
  '@handle',
  '\ttab first',
  "'quote first",
  'Zoë Müller, Łódź',
  '日本語',
  '"',
  ',',
];

function records(values: string[][]): RawRecord[] {
  return values.map((cells, i) => ({ row: i + 1, line: i + 2, values: cells }));
}

/** Every tricky value in every position, rows of one to four cells. */
function trickyRows(): string[][] {
  const rows: string[][] = [];
  for (let i = 0; i < TRICKY.length; i++) {
    for (let width = 1; width <= 4; width++) rows.push(Array.from({ length: width }, (_, j) => TRICKY[(i + j * 5) % TRICKY.length]!));
  }
  return rows;
}

function line(record: RawRecord): ResultLine {
  return { row: record.row, outcome: 'valid', key: 'ccsb_0123', values: record.values, echo: record.echo };
}

describe('echoes made on the reader thread', () => {
  it('write the same results lines as the values they come with', () => {
    const sent = records(trickyRows());
    const packed = packBatch(sent, { mayHoldNul: false, echo: true });
    expect('echoes' in packed).toBe(true);
    const received = unpackBatch(packed);
    expect(received.map((record) => record.values)).toEqual(sent.map((record) => record.values));
    for (const record of received) {
      expect(record.echo).toBeDefined();
      expect(formatLine(line(record))).toBe(formatLine({ ...line(record), echo: undefined }));
    }
  });

  it('cross beside a sheet value holding a NUL (the batch crosses as arrays)', () => {
    const sent = records([['a\0b', '=x'], ['plain', 'two, three']]);
    const received = unpackBatch(packBatch(sent, { mayHoldNul: true, echo: true }));
    expect(received.map((record) => record.values)).toEqual([['a\0b', '=x'], ['plain', 'two, three']]);
    for (const record of received) expect(formatLine(line(record))).toBe(formatLine({ ...line(record), echo: undefined }));
  });

  it('are absent when the reader thread is the limit, and ignored when a column is dropped', () => {
    const sent = records([['one', 'two', 'error text']]);
    const bare = unpackBatch(packBatch(sent, { mayHoldNul: false, echo: false }));
    expect(bare[0]!.echo).toBeUndefined();
    const [echoed] = unpackBatch(packBatch(sent, { mayHoldNul: false, echo: true }));
    expect(echoed!.echo).toBe('one,two,error text');
    // A re-imported --failed file's `error` column is not carried: the echo holds it, so it is not used.
    expect(formatLine(line(echoed!), 2)).toBe('1,valid,,,,ccsb_0123,,,,,,one,two\n');
  });
});
