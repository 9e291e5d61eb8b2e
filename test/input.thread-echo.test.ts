/**
 * The reader thread's echoes (RawRecord.echo): the end of each record's results line, made on
 * the reader thread while it is ahead. A line written with an echo is the line written from the
 * values, byte for byte, whatever the values hold, in the results file as in formatLine.
 */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { packBatch, unpackBatch } from '../src/import/read/reader-thread.js';
import type { RawRecord } from '../src/import/read/types.js';
import { formatLine, openResults, type ResultLine } from '../src/import/record/results.js';
import { useInputFiles } from './input.helpers.js';

const { path } = useInputFiles();

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
  '日本語 😀',
  '"',
  ',',
];

function records(values: string[][]): RawRecord[] {
  return values.map((cells, i) => ({ row: i + 1, line: i + 2, values: cells }));
}

/** Every tricky value in every position, in rows of none to four cells. */
function trickyRows(): string[][] {
  const rows: string[][] = [[]];
  for (let i = 0; i < TRICKY.length; i++) {
    for (let width = 1; width <= 4; width++) rows.push(Array.from({ length: width }, (_, j) => TRICKY[(i + j * 5) % TRICKY.length]!));
  }
  return rows;
}

function line(record: RawRecord): ResultLine {
  return { row: record.row, outcome: 'valid', key: 'ccsb_0123', values: record.values, echo: record.echo };
}

describe('echoes made on the reader thread', () => {
  it('end each line as the values do, in formatLine and in a buffered results file', async () => {
    const sent = records(trickyRows());
    const packed = packBatch(sent, { mayHoldNul: false, echo: true });
    expect(packed.echo).toBeDefined();
    const received = unpackBatch(packed);
    expect(received.map((record) => record.values)).toEqual(sent.map((record) => record.values));
    for (const record of received) {
      expect(record.echo).toBeDefined();
      expect(formatLine(line(record))).toBe(formatLine({ ...line(record), echo: undefined }));
    }

    const write = async (name: string, lines: ResultLine[]) => {
      const file = path(name);
      const meta = { writtenBy: 'validate' as const, service: undefined, input: 'in.csv', startedAt: '2026-11-26T00:00:00Z' };
      const results = await openResults(file, { headers: ['a', 'b', 'c', 'd'], resume: false, overwrite: true, buffered: true, meta });
      // Enough lines to fill several 64 KiB blocks.
      for (let round = 0; round < 300; round++) for (const each of lines) results.write({ ...each, row: each.row + round * lines.length });
      await results.close({ sort: false });
      return readFile(file, 'utf8');
    };
    const withEchoes = await write('echoes.results.csv', received.map(line));
    expect(withEchoes.length).toBeGreaterThan(3 * 65_536);
    expect(withEchoes).toBe(await write('values.results.csv', received.map((record) => ({ ...line(record), echo: undefined }))));
  });

  it('come with a sheet batch holding a NUL (its values cross as arrays)', () => {
    const sent = records([['a\0b', '=x'], ['plain', 'two, three']]);
    const received = unpackBatch(packBatch(sent, { mayHoldNul: true, echo: true }));
    expect(received.map((record) => record.values)).toEqual([['a\0b', '=x'], ['plain', 'two, three']]);
    for (const record of received) {
      expect(record.echo).toBeDefined();
      expect(formatLine(line(record))).toBe(formatLine({ ...line(record), echo: undefined }));
    }
  });

  it('hold a value larger than the buffer they are written in', () => {
    const long = `"Łódź", ${'ż'.repeat(300_000)}`;
    const sent = records([['short'], [long, '=1'], ['after']]);
    const received = unpackBatch(packBatch(sent, { mayHoldNul: false, echo: true }));
    for (const record of received) expect(formatLine(line(record))).toBe(formatLine({ ...line(record), echo: undefined }));
  });

  it('are absent when the reader thread is the limit, and not used when a column is dropped', () => {
    const sent = records([['one', 'two', 'error text']]);
    const [bare] = unpackBatch(packBatch(sent, { mayHoldNul: false, echo: false }));
    expect(bare!.echo).toBeUndefined();
    const [echoed] = unpackBatch(packBatch(sent, { mayHoldNul: false, echo: true }));
    const { bytes, start, end } = echoed!.echo!;
    expect(bytes.toString('utf8', start, end)).toBe(',one,two,error text\n');
    // A re-imported --failed file's `error` column is not carried: the echo holds it, so it is not used.
    expect(formatLine(line(echoed!), 2)).toBe('1,valid,,,,ccsb_0123,,,,,,one,two\n');
  });
});
